package chstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/ctxaudit/ctxaudit/schema"
)

// column maps one record field to one ClickHouse column. Keeping the name and
// the value side by side is what keeps the explicit INSERT column list (which
// 18.16 needs) and the appended values from drifting apart.
type column[T any] struct {
	name  string
	value func(r *T, version uint64) any
}

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// seconds truncates to the DateTime column's resolution.
func seconds(t time.Time) time.Time { return t.UTC().Truncate(time.Second) }

// eventTime is a record's ts: the driver stores it at the column's
// resolution, whole seconds in the 18.16 rendering (DateTime) and
// milliseconds in the modern one (DateTime64(3)). ts_ns always holds the
// nanoseconds of the second, so a record reads back the same from both.
func eventTime(t time.Time) time.Time { return t.UTC() }

func nanos(t time.Time) uint32 { return uint32(t.Nanosecond()) }

func nonEmpty[E ~string](v, def E) E {
	if v == "" {
		return def
	}
	return v
}

var toolCallColumns = []column[schema.ToolCall]{
	{"session_id", func(r *schema.ToolCall, _ uint64) any { return r.SessionID }},
	{"call_id", func(r *schema.ToolCall, _ uint64) any { return r.CallID }},
	{"ts", func(r *schema.ToolCall, _ uint64) any { return eventTime(r.Timestamp) }},
	{"ts_ns", func(r *schema.ToolCall, _ uint64) any { return nanos(r.Timestamp) }},
	{"tool", func(r *schema.ToolCall, _ uint64) any { return r.Tool }},
	{"source", func(r *schema.ToolCall, _ uint64) any { return string(r.Source) }},
	{"harness_version", func(r *schema.ToolCall, _ uint64) any { return r.HarnessVersion }},
	{"model", func(r *schema.ToolCall, _ uint64) any { return r.Model }},
	{"project", func(r *schema.ToolCall, _ uint64) any { return r.Project }},
	{"cwd", func(r *schema.ToolCall, _ uint64) any { return r.Cwd }},
	{"git_branch", func(r *schema.ToolCall, _ uint64) any { return r.GitBranch }},
	{"agent_id", func(r *schema.ToolCall, _ uint64) any { return r.AgentID }},
	{"sidechain", func(r *schema.ToolCall, _ uint64) any { return b2u(r.Sidechain) }},
	{"turn", func(r *schema.ToolCall, _ uint64) any { return uint32(max(r.Turn, 0)) }},
	{"message_id", func(r *schema.ToolCall, _ uint64) any { return r.MessageID }},
	{"arguments", func(r *schema.ToolCall, _ uint64) any { return r.Arguments }},
	{"target", func(r *schema.ToolCall, _ uint64) any { return r.Target }},
	{"is_error", func(r *schema.ToolCall, _ uint64) any { return b2u(r.IsError) }},
	{"original_bytes", func(r *schema.ToolCall, _ uint64) any { return r.Original.Bytes.Ptr() }},
	{"original_chars", func(r *schema.ToolCall, _ uint64) any { return r.Original.Chars.Ptr() }},
	{"original_lines", func(r *schema.ToolCall, _ uint64) any { return r.Original.Lines.Ptr() }},
	{"original_tokens", func(r *schema.ToolCall, _ uint64) any { return r.Original.Tokens.Ptr() }},
	{"original_source", func(r *schema.ToolCall, _ uint64) any {
		return string(nonEmpty(r.Original.Source, schema.SourceUnknown))
	}},
	{"original_precision", func(r *schema.ToolCall, _ uint64) any { return precisionValue(r.Original.Precision) }},
	{"context_bytes", func(r *schema.ToolCall, _ uint64) any { return r.Context.Bytes.Ptr() }},
	{"context_chars", func(r *schema.ToolCall, _ uint64) any { return r.Context.Chars.Ptr() }},
	{"context_lines", func(r *schema.ToolCall, _ uint64) any { return r.Context.Lines.Ptr() }},
	{"context_tokens", func(r *schema.ToolCall, _ uint64) any { return r.Context.Tokens.Ptr() }},
	{"truncated", func(r *schema.ToolCall, _ uint64) any { return b2u(r.Truncated) }},
	{"truncation_kind", func(r *schema.ToolCall, _ uint64) any { return string(nonEmpty(r.Kind, schema.KindUnknown)) }},
	{"strategy", func(r *schema.ToolCall, _ uint64) any { return string(nonEmpty(r.Strategy, schema.StrategyNone)) }},
	{"partial_by_request", func(r *schema.ToolCall, _ uint64) any { return b2u(r.PartialByRequest) }},
	{"shown_start", func(r *schema.ToolCall, _ uint64) any { return r.Shown.Start.Ptr() }},
	{"shown_end", func(r *schema.ToolCall, _ uint64) any { return r.Shown.End.Ptr() }},
	{"shown_unit", func(r *schema.ToolCall, _ uint64) any { return string(r.Shown.Unit) }},
	{"shown_tail_start", func(r *schema.ToolCall, _ uint64) any { return r.ShownTail.Start.Ptr() }},
	{"shown_tail_end", func(r *schema.ToolCall, _ uint64) any { return r.ShownTail.End.Ptr() }},
	{"shown_tail_unit", func(r *schema.ToolCall, _ uint64) any { return string(r.ShownTail.Unit) }},
	{"shown_tail_is_end", func(r *schema.ToolCall, _ uint64) any { return b2u(r.ShownTailIsEnd) }},
	{"total", func(r *schema.ToolCall, _ uint64) any { return r.Total.Ptr() }},
	{"reason", func(r *schema.ToolCall, _ uint64) any { return r.Reason }},
	{"disclosure_range", func(r *schema.ToolCall, _ uint64) any { return b2u(r.Disclosure.Range) }},
	{"disclosure_reason", func(r *schema.ToolCall, _ uint64) any { return b2u(r.Disclosure.Reason) }},
	{"disclosure_next", func(r *schema.ToolCall, _ uint64) any { return b2u(r.Disclosure.Next) }},
	{"disclosure_score", func(r *schema.ToolCall, _ uint64) any { return uint8(r.Disclosure.Score()) }},
	{"next_hint", func(r *schema.ToolCall, _ uint64) any { return r.NextHint }},
	{"saved_ref", func(r *schema.ToolCall, _ uint64) any { return r.SavedRef }},
	{"ref_version", func(r *schema.ToolCall, _ uint64) any { return r.RefVersion }},
	{"refetched_source", func(r *schema.ToolCall, _ uint64) any { return b2u(r.RefetchedSource) }},
	{"marker", func(r *schema.ToolCall, _ uint64) any { return r.Marker }},
	{"marker_understated", func(r *schema.ToolCall, _ uint64) any { return b2u(r.MarkerUnderstated) }},
	{"detector", func(r *schema.ToolCall, _ uint64) any { return r.Detector }},
	{"followed_up", func(r *schema.ToolCall, _ uint64) any { return b2u(r.FollowedUp) }},
	{"continuation_of", func(r *schema.ToolCall, _ uint64) any { return r.ContinuationOf }},
	{"session_coverage", func(r *schema.ToolCall, _ uint64) any { return r.SessionCoverage.Ptr() }},
	{"coverage_upper_bound", func(r *schema.ToolCall, _ uint64) any { return b2u(r.CoverageUpperBound) }},
	{"coverage_mixed_versions", func(r *schema.ToolCall, _ uint64) any { return b2u(r.CoverageMixedVersions) }},
	{"searched", func(r *schema.ToolCall, _ uint64) any { return b2u(r.Searched) }},
	{"original_sha256", func(r *schema.ToolCall, _ uint64) any { return r.OriginalSHA256 }},
	{"context_sha256", func(r *schema.ToolCall, _ uint64) any { return r.ContextSHA256 }},
	{"source_file", func(r *schema.ToolCall, _ uint64) any { return r.SourceFile }},
	{"source_line", func(r *schema.ToolCall, _ uint64) any { return uint64(max(r.SourceLine, 0)) }},
	{"version", func(_ *schema.ToolCall, v uint64) any { return v }},
}

var answerColumns = []column[schema.Answer]{
	{"session_id", func(r *schema.Answer, _ uint64) any { return r.SessionID }},
	{"message_id", func(r *schema.Answer, _ uint64) any { return r.MessageID }},
	{"ts", func(r *schema.Answer, _ uint64) any { return eventTime(r.Timestamp) }},
	{"ts_ns", func(r *schema.Answer, _ uint64) any { return nanos(r.Timestamp) }},
	{"turn", func(r *schema.Answer, _ uint64) any { return uint32(max(r.Turn, 0)) }},
	{"source", func(r *schema.Answer, _ uint64) any { return string(r.Source) }},
	{"model", func(r *schema.Answer, _ uint64) any { return r.Model }},
	{"agent_id", func(r *schema.Answer, _ uint64) any { return r.AgentID }},
	{"sidechain", func(r *schema.Answer, _ uint64) any { return b2u(r.Sidechain) }},
	{"text", func(r *schema.Answer, _ uint64) any { return r.Text }},
	{"input_call_ids", func(r *schema.Answer, _ uint64) any { return nonNil(r.InputCallIDs) }},
	{"incomplete_inputs", func(r *schema.Answer, _ uint64) any { return nonNil(r.IncompleteInputs) }},
	{"absence_claim", func(r *schema.Answer, _ uint64) any { return b2u(r.AbsenceClaim) }},
	{"absence", func(r *schema.Answer, _ uint64) any { return string(nonEmpty(r.Absence, schema.AbsenceUnknown)) }},
	{"absence_clause", func(r *schema.Answer, _ uint64) any { return r.AbsenceClause }},
	{"absence_scope", func(r *schema.Answer, _ uint64) any { return r.AbsenceScope }},
	{"risk", func(r *schema.Answer, _ uint64) any { return string(nonEmpty(r.Risk, schema.RiskNone)) }},
	{"reasons", func(r *schema.Answer, _ uint64) any { return nonNil(r.Reasons) }},
	{"reason_calls", func(r *schema.Answer, _ uint64) any {
		out := make([][]string, len(r.Reasons))
		for i, reason := range r.Reasons {
			out[i] = nonNil(r.ReasonCalls[reason])
		}
		return out
	}},
	{"verdict", func(r *schema.Answer, _ uint64) any { return r.Verdict }},
	{"retracted", func(r *schema.Answer, _ uint64) any { return b2u(r.Retracted) }},
	{"version", func(_ *schema.Answer, v uint64) any { return v }},
}

var sessionColumns = []column[schema.Session]{
	{"session_id", func(r *schema.Session, _ uint64) any { return r.SessionID }},
	{"source", func(r *schema.Session, _ uint64) any { return string(r.Source) }},
	{"harness_version", func(r *schema.Session, _ uint64) any { return r.HarnessVersion }},
	{"model", func(r *schema.Session, _ uint64) any { return r.Model }},
	{"project", func(r *schema.Session, _ uint64) any { return r.Project }},
	{"cwd", func(r *schema.Session, _ uint64) any { return r.Cwd }},
	{"git_branch", func(r *schema.Session, _ uint64) any { return r.GitBranch }},
	{"started_at", func(r *schema.Session, _ uint64) any { return seconds(r.StartedAt) }},
	{"ended_at", func(r *schema.Session, _ uint64) any { return seconds(r.EndedAt) }},
	{"source_file", func(r *schema.Session, _ uint64) any { return r.SourceFile }},
	{"turns", func(r *schema.Session, _ uint64) any { return uint32(max(r.Turns, 0)) }},
	{"tool_calls", func(r *schema.Session, _ uint64) any { return uint32(max(r.ToolCalls, 0)) }},
	{"truncated_calls", func(r *schema.Session, _ uint64) any { return uint32(max(r.TruncatedCalls, 0)) }},
	{"silent_calls", func(r *schema.Session, _ uint64) any { return uint32(max(r.SilentCalls, 0)) }},
	{"answers", func(r *schema.Session, _ uint64) any { return uint32(max(r.Answers, 0)) }},
	{"risky_answers", func(r *schema.Session, _ uint64) any { return uint32(max(r.RiskyAnswers, 0)) }},
	{"compactions", func(r *schema.Session, _ uint64) any { return uint32(max(r.Compactions, 0)) }},
	{"max_risk", func(r *schema.Session, _ uint64) any { return string(nonEmpty(r.MaxRisk, schema.RiskNone)) }},
	{"input_tokens", func(r *schema.Session, _ uint64) any { return r.InputTokens }},
	{"output_tokens", func(r *schema.Session, _ uint64) any { return r.OutputTokens }},
	{"version", func(_ *schema.Session, v uint64) any { return v }},
}

var toolOutputColumns = []column[schema.ToolOutput]{
	{"sha256", func(r *schema.ToolOutput, _ uint64) any { return r.SHA256 }},
	{"bytes", func(r *schema.ToolOutput, _ uint64) any { return r.Bytes }},
	{"text", func(r *schema.ToolOutput, _ uint64) any { return r.Text }},
	{"capped", func(r *schema.ToolOutput, _ uint64) any { return b2u(r.Capped) }},
	{"redactions", func(r *schema.ToolOutput, _ uint64) any { return uint32(max(r.Redactions, 0)) }},
	{"first_seen", func(r *schema.ToolOutput, _ uint64) any { return seconds(r.FirstSeen) }},
	{"version", func(_ *schema.ToolOutput, v uint64) any { return v }},
}

// precisionValue is the original_precision Enum8 value: 'unknown' stands for
// no precision (no original size known).
func precisionValue(p schema.Precision) string {
	if p == schema.PrecisionNone {
		return "unknown"
	}
	return string(p)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func columnNames[T any](cols []column[T]) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.name
	}
	return strings.Join(names, ", ")
}

// table describes how rows of one record type are written: the columns,
// the record's stable id and what a row knows (see version.go).
type table[T any] struct {
	name string
	cols []column[T]
	key  func(*T) string
	rank func(*T) uint64
}

var (
	toolCallsTable   = table[schema.ToolCall]{"tool_calls", toolCallColumns, toolCallKey, toolCallRank}
	answersTable     = table[schema.Answer]{"answers", answerColumns, answerKey, answerRank}
	sessionsTable    = table[schema.Session]{"sessions", sessionColumns, sessionKey, sessionRank}
	toolOutputsTable = table[schema.ToolOutput]{"tool_outputs", toolOutputColumns, toolOutputKey, toolOutputRank}
)

// insert sends rows as one native batch with an explicit column list, one
// row per id, each versioned by what it knows and this write's clock value.
func insert[T any](ctx context.Context, s *Store, t table[T], rows []T) error {
	if len(rows) == 0 {
		return nil
	}
	rows = bestPerKey(rows, t.key, t.rank)
	query := "INSERT INTO " + s.table(t.name) + " (" + columnNames(t.cols) + ")"
	batch, err := s.conn.PrepareBatch(ctx, query)
	if err != nil {
		return fmt.Errorf("insert into %s.%s: prepare: %w", s.database, t.name, err)
	}
	clock := s.clock.tick()
	vals := make([]any, len(t.cols))
	for i := range rows {
		v := version(t.rank(&rows[i]), clock)
		for j, c := range t.cols {
			vals[j] = s.redactValue(c.value(&rows[i], v))
		}
		if err := batch.Append(vals...); err != nil {
			_ = batch.Abort()
			return fmt.Errorf("insert into %s.%s: row %d: %w", s.database, t.name, i, err)
		}
	}
	if err := batch.Send(); err != nil {
		return fmt.Errorf("insert into %s.%s: send %d rows: %w", s.database, t.name, len(rows), err)
	}
	return nil
}

// redactValue removes secrets from a text value (String and Array(String)
// columns alike): this is the one place every row passes on its way to
// ClickHouse, from `ctxaudit ingest` and from the collector. Numbers, sizes
// and hashes were measured on the original text before they got here.
func (s *Store) redactValue(v any) any {
	switch t := v.(type) {
	case string:
		out, n := s.redactor.String(t)
		if n == 0 {
			return v // as it came: boxing out again would allocate, for every string of every row
		}
		return out
	case []string:
		out, changed := s.redactStrings(t)
		if !changed {
			return v
		}
		return out
	case [][]string:
		var out [][]string
		for i, inner := range t {
			r, changed := s.redactStrings(inner)
			if changed && out == nil {
				out = append(make([][]string, 0, len(t)), t[:i]...)
			}
			if out != nil {
				out = append(out, r)
			}
		}
		if out == nil {
			return t
		}
		return out
	}
	return v
}

// redactStrings returns ss, or a redacted copy if any element held a secret
// (the record's own slice is never changed).
func (s *Store) redactStrings(ss []string) ([]string, bool) {
	var out []string
	for i, v := range ss {
		r, n := s.redactor.String(v)
		if n > 0 && out == nil {
			out = append(make([]string, 0, len(ss)), ss[:i]...)
		}
		if out != nil {
			out = append(out, r)
		}
	}
	if out == nil {
		return ss, false
	}
	return out, true
}

// WriteToolCalls inserts tool-call rows. A row without content links gets
// those the stored row of the same call has (see carryLinks).
func (s *Store) WriteToolCalls(ctx context.Context, rows []schema.ToolCall) error {
	rows, err := s.carryLinks(ctx, rows)
	if err != nil {
		return err
	}
	return insert(ctx, s, toolCallsTable, rows)
}

// carryLinks fills the content links (original_sha256, context_sha256) a
// row lacks from the stored rows of the same call. The links name the texts
// of the call's own output, which a later write of the call — a collector
// that stores no content re-analysing a session an ingest with
// --store-content loaded — does not change; without this, that write, which
// knows more of the session, would drop them. rows is not modified.
func (s *Store) carryLinks(ctx context.Context, rows []schema.ToolCall) ([]schema.ToolCall, error) {
	var missing []int
	for i := range rows {
		if rows[i].OriginalSHA256 == "" || rows[i].ContextSHA256 == "" {
			missing = append(missing, i)
		}
	}
	var out []schema.ToolCall
	q := "SELECT session_id, call_id, argMaxIf(original_sha256, version, original_sha256 != ''), " +
		"argMaxIf(context_sha256, version, context_sha256 != '') FROM " + s.table("tool_calls") +
		" PREWHERE session_id IN ? WHERE call_id IN ? AND (original_sha256 != '' OR context_sha256 != '')" +
		" GROUP BY session_id, call_id"
	for start := 0; start < len(missing); start += maxIDsPerQuery {
		chunk := missing[start:min(start+maxIDsPerQuery, len(missing))]
		var sessions, calls []any
		seenSession, seenCall := map[string]bool{}, map[string]bool{}
		for _, i := range chunk {
			r := &rows[i]
			if !seenSession[r.SessionID] {
				seenSession[r.SessionID] = true
				sessions = append(sessions, r.SessionID)
			}
			if !seenCall[r.CallID] {
				seenCall[r.CallID] = true
				calls = append(calls, r.CallID)
			}
		}
		stored, err := s.storedLinks(ctx, q, sessions, calls)
		if err != nil {
			return nil, err
		}
		for _, i := range chunk {
			l, ok := stored[toolCallKey(&rows[i])]
			if !ok {
				continue
			}
			if out == nil {
				out = append([]schema.ToolCall(nil), rows...)
			}
			r := &out[i]
			if r.OriginalSHA256 == "" {
				r.OriginalSHA256 = l[0]
			}
			if r.ContextSHA256 == "" {
				r.ContextSHA256 = l[1]
			}
		}
	}
	if out == nil {
		return rows, nil
	}
	return out, nil
}

// storedLinks runs carryLinks' query: session and call id -> the stored
// original and context hashes.
func (s *Store) storedLinks(ctx context.Context, q string, sessions, calls []any) (map[string][2]string, error) {
	res, err := s.conn.Query(ctx, q, clickhouse.GroupSet{Value: sessions}, clickhouse.GroupSet{Value: calls})
	if err != nil {
		return nil, fmt.Errorf("read stored content links of %d calls: %w", len(calls), err)
	}
	defer res.Close()
	out := map[string][2]string{}
	for res.Next() {
		var sid, cid string
		var l [2]string
		if err := res.Scan(&sid, &cid, &l[0], &l[1]); err != nil {
			return nil, fmt.Errorf("read stored content links: %w", err)
		}
		out[sid+"\x00"+cid] = l
	}
	if err := res.Err(); err != nil {
		return nil, fmt.Errorf("read stored content links: %w", err)
	}
	return out, nil
}

// WriteAnswers inserts answer rows.
func (s *Store) WriteAnswers(ctx context.Context, rows []schema.Answer) error {
	return insert(ctx, s, answersTable, rows)
}

// WriteSessions inserts session rows.
func (s *Store) WriteSessions(ctx context.Context, rows []schema.Session) error {
	return insert(ctx, s, sessionsTable, rows)
}

// WriteToolOutputs inserts stored output texts. A secret the caller's
// redaction missed (a pattern configured here only) is redacted and counted
// in the row's redactions.
func (s *Store) WriteToolOutputs(ctx context.Context, rows []schema.ToolOutput) error {
	out := rows
	for i := range rows {
		text, n := s.redactor.String(rows[i].Text)
		if n == 0 {
			continue
		}
		if &out[0] == &rows[0] {
			out = append([]schema.ToolOutput(nil), rows...)
		}
		out[i].Text, out[i].Redactions = text, out[i].Redactions+n
	}
	return insert(ctx, s, toolOutputsTable, out)
}
