package chstore

import (
	"context"
	"fmt"
	"strings"
	"time"

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
	{"version", func(r *schema.ToolCall, v uint64) any { return v | analysedBit(r) }},
}

// analysedBit ranks a tool-call row whose session analysis is known above
// any row written without it, whatever the write order: a pass-through row
// replayed from a persistent queue after a crash (written again after the
// analysed row) must not replace the row that knows more. Write times
// (nanoseconds since 1970, below 2^61 until 2043) stay below the bit.
func analysedBit(r *schema.ToolCall) uint64 {
	if r.SessionCoverage.Known {
		return 1 << 62
	}
	return 0
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

// insert sends rows as one native batch with an explicit column list.
func insert[T any](ctx context.Context, s *Store, table string, cols []column[T], rows []T) error {
	if len(rows) == 0 {
		return nil
	}
	query := "INSERT INTO " + s.table(table) + " (" + columnNames(cols) + ")"
	batch, err := s.conn.PrepareBatch(ctx, query)
	if err != nil {
		return fmt.Errorf("insert into %s.%s: prepare: %w", s.database, table, err)
	}
	// One version per write: a later write of the same id replaces this one.
	version := uint64(time.Now().UnixNano())
	vals := make([]any, len(cols))
	for i := range rows {
		for j, c := range cols {
			vals[j] = s.redactValue(c.value(&rows[i], version))
		}
		if err := batch.Append(vals...); err != nil {
			_ = batch.Abort()
			return fmt.Errorf("insert into %s.%s: row %d: %w", s.database, table, i, err)
		}
	}
	if err := batch.Send(); err != nil {
		return fmt.Errorf("insert into %s.%s: send %d rows: %w", s.database, table, len(rows), err)
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
		out, _ := s.redactor.String(t)
		return out
	case []string:
		out, _ := s.redactStrings(t)
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

// WriteToolCalls inserts tool-call rows.
func (s *Store) WriteToolCalls(ctx context.Context, rows []schema.ToolCall) error {
	return insert(ctx, s, "tool_calls", toolCallColumns, rows)
}

// WriteAnswers inserts answer rows.
func (s *Store) WriteAnswers(ctx context.Context, rows []schema.Answer) error {
	return insert(ctx, s, "answers", answerColumns, rows)
}

// WriteSessions inserts session rows.
func (s *Store) WriteSessions(ctx context.Context, rows []schema.Session) error {
	return insert(ctx, s, "sessions", sessionColumns, rows)
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
	return insert(ctx, s, "tool_outputs", toolOutputColumns, out)
}
