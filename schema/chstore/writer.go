package chstore

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/ctxaudit/ctxaudit/schema"
)

// column maps one record field to one ClickHouse column. Keeping the name and
// the values side by side is what keeps the explicit INSERT column list (which
// 18.16 needs) and the appended values from drifting apart.
//
// values gives the column's values for every row of a batch at once, as the
// typed slice the driver appends in one call (batch.Column(i).Append).
// Appending row by row boxed every value into an interface the driver then
// switched on, per row and column, and allocated a pointer per known size:
// 4.5 times the allocations and about 15 % more client CPU per row
// (BenchmarkWriteToolCalls).
type column[T any] struct {
	name   string
	values func(rows []T, b *batchValues) any
}

// batchValues is what a column's values need besides the rows: the version
// each row is written with, and the store's redaction for text.
type batchValues struct {
	versions []uint64
	redact   func(string) (string, int)
}

// text is s with its secrets removed.
func (b *batchValues) text(s string) string {
	out, n := b.redact(s)
	if n == 0 {
		return s
	}
	return out
}

// texts is ss with its secrets removed: ss itself when it has none (the
// record's own slice is never changed).
func (b *batchValues) texts(ss []string) []string {
	var out []string
	for i, v := range ss {
		r, n := b.redact(v)
		if n > 0 && out == nil {
			out = append(make([]string, 0, len(ss)), ss[:i]...)
		}
		if out != nil {
			out = append(out, r)
		}
	}
	if out == nil {
		return ss
	}
	return out
}

// perRow builds a column of one value per row.
func perRow[T, V any](name string, value func(r *T, b *batchValues) V) column[T] {
	return column[T]{name, func(rows []T, b *batchValues) any {
		out := make([]V, len(rows))
		for i := range rows {
			out[i] = value(&rows[i], b)
		}
		return out
	}}
}

// stringColumn is a String or Enum8 column; every text is redacted on the
// way in: insert is the one place every row passes on its way to
// ClickHouse, from `ctxaudit ingest` and from the collector. Numbers, sizes
// and hashes were measured on the original text before they got here.
func stringColumn[T any](name string, f func(*T) string) column[T] {
	return perRow(name, func(r *T, b *batchValues) string { return b.text(f(r)) })
}

// stringsColumn is an Array(String) column, redacted.
func stringsColumn[T any](name string, f func(*T) []string) column[T] {
	return perRow(name, func(r *T, b *batchValues) []string { return b.texts(f(r)) })
}

// stringListsColumn is an Array(Array(String)) column, redacted.
func stringListsColumn[T any](name string, f func(*T) [][]string) column[T] {
	return perRow(name, func(r *T, b *batchValues) [][]string {
		lists := f(r)
		out := make([][]string, len(lists))
		for i, l := range lists {
			out[i] = b.texts(l)
		}
		return out
	})
}

// boolColumn is a UInt8 column holding 0 or 1.
func boolColumn[T any](name string, f func(*T) bool) column[T] {
	return perRow(name, func(r *T, _ *batchValues) uint8 { return b2u(f(r)) })
}

func uint8Column[T any](name string, f func(*T) uint8) column[T] {
	return perRow(name, func(r *T, _ *batchValues) uint8 { return f(r) })
}

func uint32Column[T any](name string, f func(*T) uint32) column[T] {
	return perRow(name, func(r *T, _ *batchValues) uint32 { return f(r) })
}

func uint64Column[T any](name string, f func(*T) uint64) column[T] {
	return perRow(name, func(r *T, _ *batchValues) uint64 { return f(r) })
}

func timeColumn[T any](name string, f func(*T) time.Time) column[T] {
	return perRow(name, func(r *T, _ *batchValues) time.Time { return f(r) })
}

// nullableColumn is a Nullable column: NULL where known is false, never a
// zero. The known values live in one array per column instead of one
// allocation each.
func nullableColumn[T, V any](name string, f func(*T) (v V, known bool)) column[T] {
	return column[T]{name, func(rows []T, _ *batchValues) any {
		vals := make([]V, len(rows))
		out := make([]*V, len(rows))
		for i := range rows {
			if v, known := f(&rows[i]); known {
				vals[i] = v
				out[i] = &vals[i]
			}
		}
		return out
	}}
}

// countColumn is a Nullable(UInt64) size: NULL when unknown (Count.Stored).
func countColumn[T any](name string, f func(*T) schema.Count) column[T] {
	return nullableColumn(name, func(r *T) (uint64, bool) { return f(r).Stored() })
}

// count32Column is a Nullable(UInt32) count: NULL when unknown (or past
// UInt32, which Session.Validate refuses before a row gets here).
func count32Column[T any](name string, f func(*T) schema.Count) column[T] {
	return nullableColumn(name, func(r *T) (uint32, bool) { c := f(r); return uint32(c.N), c.Known && c.N <= math.MaxUint32 })
}

// turnColumn is a Nullable(UInt32) turn: NULL when unknown, never turn 0.
func turnColumn[T any](name string, f func(*T) schema.Turn) column[T] {
	return nullableColumn(name, func(r *T) (uint32, bool) { t := f(r); return t.N, t.Known })
}

// ratioColumn is a Nullable(Float64): NULL when unknown (or no share).
func ratioColumn[T any](name string, f func(*T) schema.Ratio) column[T] {
	return nullableColumn(name, func(r *T) (float64, bool) { return f(r).Stored() })
}

// versionColumn is the version each row is written with (see version.go).
func versionColumn[T any]() column[T] {
	return column[T]{"version", func(_ []T, b *batchValues) any { return b.versions }}
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
	stringColumn("session_id", func(r *schema.ToolCall) string { return r.SessionID }),
	stringColumn("call_id", func(r *schema.ToolCall) string { return r.CallID }),
	timeColumn("ts", func(r *schema.ToolCall) time.Time { return eventTime(r.Timestamp) }),
	uint32Column("ts_ns", func(r *schema.ToolCall) uint32 { return nanos(r.Timestamp) }),
	stringColumn("tool", func(r *schema.ToolCall) string { return r.Tool }),
	stringColumn("source", func(r *schema.ToolCall) string { return string(r.Source) }),
	stringColumn("harness_version", func(r *schema.ToolCall) string { return r.HarnessVersion }),
	stringColumn("model", func(r *schema.ToolCall) string { return r.Model }),
	stringColumn("project", func(r *schema.ToolCall) string { return r.Project }),
	stringColumn("cwd", func(r *schema.ToolCall) string { return r.Cwd }),
	stringColumn("git_branch", func(r *schema.ToolCall) string { return r.GitBranch }),
	stringColumn("agent_id", func(r *schema.ToolCall) string { return r.AgentID }),
	boolColumn("sidechain", func(r *schema.ToolCall) bool { return r.Sidechain }),
	turnColumn("turn", func(r *schema.ToolCall) schema.Turn { return r.Turn }),
	stringColumn("message_id", func(r *schema.ToolCall) string { return r.MessageID }),
	stringColumn("arguments", func(r *schema.ToolCall) string { return r.Arguments }),
	stringColumn("target", func(r *schema.ToolCall) string { return r.Target }),
	boolColumn("is_error", func(r *schema.ToolCall) bool { return r.IsError }),
	countColumn("original_bytes", func(r *schema.ToolCall) schema.Count { return r.Original.Bytes }),
	countColumn("original_chars", func(r *schema.ToolCall) schema.Count { return r.Original.Chars }),
	countColumn("original_lines", func(r *schema.ToolCall) schema.Count { return r.Original.Lines }),
	countColumn("original_tokens", func(r *schema.ToolCall) schema.Count { return r.Original.Tokens }),
	stringColumn("original_source", func(r *schema.ToolCall) string {
		return string(nonEmpty(r.Original.Source, schema.SourceUnknown))
	}),
	stringColumn("original_precision", func(r *schema.ToolCall) string { return precisionValue(r.Original.Precision) }),
	countColumn("context_bytes", func(r *schema.ToolCall) schema.Count { return r.Context.Bytes }),
	countColumn("context_chars", func(r *schema.ToolCall) schema.Count { return r.Context.Chars }),
	countColumn("context_lines", func(r *schema.ToolCall) schema.Count { return r.Context.Lines }),
	countColumn("context_tokens", func(r *schema.ToolCall) schema.Count { return r.Context.Tokens }),
	boolColumn("truncated", func(r *schema.ToolCall) bool { return r.Truncated }),
	stringColumn("truncation_kind", func(r *schema.ToolCall) string { return string(nonEmpty(r.Kind, schema.KindUnknown)) }),
	stringColumn("strategy", func(r *schema.ToolCall) string { return string(nonEmpty(r.Strategy, schema.StrategyNone)) }),
	boolColumn("partial_by_request", func(r *schema.ToolCall) bool { return r.PartialByRequest }),
	countColumn("shown_start", func(r *schema.ToolCall) schema.Count { return r.Shown.Start }),
	countColumn("shown_end", func(r *schema.ToolCall) schema.Count { return r.Shown.End }),
	stringColumn("shown_unit", func(r *schema.ToolCall) string { return string(r.Shown.Unit) }),
	countColumn("shown_tail_start", func(r *schema.ToolCall) schema.Count { return r.ShownTail.Start }),
	countColumn("shown_tail_end", func(r *schema.ToolCall) schema.Count { return r.ShownTail.End }),
	stringColumn("shown_tail_unit", func(r *schema.ToolCall) string { return string(r.ShownTail.Unit) }),
	boolColumn("shown_tail_is_end", func(r *schema.ToolCall) bool { return r.ShownTailIsEnd }),
	countColumn("total", func(r *schema.ToolCall) schema.Count { return r.Total }),
	stringColumn("reason", func(r *schema.ToolCall) string { return r.Reason }),
	boolColumn("disclosure_range", func(r *schema.ToolCall) bool { return r.Disclosure.Range }),
	boolColumn("disclosure_reason", func(r *schema.ToolCall) bool { return r.Disclosure.Reason }),
	boolColumn("disclosure_next", func(r *schema.ToolCall) bool { return r.Disclosure.Next }),
	uint8Column("disclosure_score", func(r *schema.ToolCall) uint8 { return uint8(r.Disclosure.Score()) }),
	stringColumn("next_hint", func(r *schema.ToolCall) string { return r.NextHint }),
	stringColumn("saved_ref", func(r *schema.ToolCall) string { return r.SavedRef }),
	stringColumn("ref_version", func(r *schema.ToolCall) string { return r.RefVersion }),
	boolColumn("refetched_source", func(r *schema.ToolCall) bool { return r.RefetchedSource }),
	stringColumn("marker", func(r *schema.ToolCall) string { return r.Marker }),
	boolColumn("marker_understated", func(r *schema.ToolCall) bool { return r.MarkerUnderstated }),
	stringColumn("detector", func(r *schema.ToolCall) string { return r.Detector }),
	nullableColumn("followed_up", func(r *schema.ToolCall) (uint8, bool) { return b2u(r.FollowedUp), !r.FollowUpUnknown }),
	boolColumn("followed_up_exact", func(r *schema.ToolCall) bool { return r.FollowUpExact }),
	stringColumn("continuation_of", func(r *schema.ToolCall) string { return r.ContinuationOf }),
	ratioColumn("session_coverage", func(r *schema.ToolCall) schema.Ratio { return r.SessionCoverage }),
	boolColumn("coverage_upper_bound", func(r *schema.ToolCall) bool { return r.CoverageUpperBound }),
	boolColumn("coverage_mixed_versions", func(r *schema.ToolCall) bool { return r.CoverageMixedVersions }),
	boolColumn("searched", func(r *schema.ToolCall) bool { return r.Searched }),
	stringColumn("original_sha256", func(r *schema.ToolCall) string { return r.OriginalSHA256 }),
	stringColumn("context_sha256", func(r *schema.ToolCall) string { return r.ContextSHA256 }),
	stringColumn("source_file", func(r *schema.ToolCall) string { return r.SourceFile }),
	uint64Column("source_line", func(r *schema.ToolCall) uint64 { return uint64(max(r.SourceLine, 0)) }),
	versionColumn[schema.ToolCall](),
}

var answerColumns = []column[schema.Answer]{
	stringColumn("session_id", func(r *schema.Answer) string { return r.SessionID }),
	stringColumn("message_id", func(r *schema.Answer) string { return r.MessageID }),
	timeColumn("ts", func(r *schema.Answer) time.Time { return eventTime(r.Timestamp) }),
	uint32Column("ts_ns", func(r *schema.Answer) uint32 { return nanos(r.Timestamp) }),
	turnColumn("turn", func(r *schema.Answer) schema.Turn { return r.Turn }),
	stringColumn("source", func(r *schema.Answer) string { return string(r.Source) }),
	stringColumn("model", func(r *schema.Answer) string { return r.Model }),
	stringColumn("agent_id", func(r *schema.Answer) string { return r.AgentID }),
	boolColumn("sidechain", func(r *schema.Answer) bool { return r.Sidechain }),
	stringColumn("text", func(r *schema.Answer) string { return r.Text }),
	stringsColumn("input_call_ids", func(r *schema.Answer) []string { return nonNil(r.InputCallIDs) }),
	stringsColumn("incomplete_inputs", func(r *schema.Answer) []string { return nonNil(r.IncompleteInputs) }),
	boolColumn("absence_claim", func(r *schema.Answer) bool { return r.AbsenceClaim }),
	stringColumn("absence", func(r *schema.Answer) string { return string(nonEmpty(r.Absence, schema.AbsenceUnknown)) }),
	stringColumn("absence_clause", func(r *schema.Answer) string { return r.AbsenceClause }),
	stringColumn("absence_scope", func(r *schema.Answer) string { return r.AbsenceScope }),
	stringColumn("risk", func(r *schema.Answer) string { return string(nonEmpty(r.Risk, schema.RiskNone)) }),
	stringsColumn("reasons", func(r *schema.Answer) []string { return nonNil(r.Reasons) }),
	stringListsColumn("reason_calls", func(r *schema.Answer) [][]string {
		out := make([][]string, len(r.Reasons))
		for i, reason := range r.Reasons {
			out[i] = nonNil(r.ReasonCalls[reason])
		}
		return out
	}),
	stringColumn("verdict", func(r *schema.Answer) string { return r.Verdict }),
	boolColumn("retracted", func(r *schema.Answer) bool { return r.Retracted }),
	boolColumn("inputs_uncertain", func(r *schema.Answer) bool { return r.InputsUncertain }),
	versionColumn[schema.Answer](),
}

var sessionColumns = []column[schema.Session]{
	stringColumn("session_id", func(r *schema.Session) string { return r.SessionID }),
	stringColumn("source", func(r *schema.Session) string { return string(r.Source) }),
	stringColumn("harness_version", func(r *schema.Session) string { return r.HarnessVersion }),
	stringColumn("model", func(r *schema.Session) string { return r.Model }),
	stringColumn("project", func(r *schema.Session) string { return r.Project }),
	stringColumn("cwd", func(r *schema.Session) string { return r.Cwd }),
	stringColumn("git_branch", func(r *schema.Session) string { return r.GitBranch }),
	timeColumn("started_at", func(r *schema.Session) time.Time { return seconds(r.StartedAt) }),
	timeColumn("ended_at", func(r *schema.Session) time.Time { return seconds(r.EndedAt) }),
	stringColumn("source_file", func(r *schema.Session) string { return r.SourceFile }),
	count32Column("turns", func(r *schema.Session) schema.Count { return r.Turns }),
	uint32Column("tool_calls", func(r *schema.Session) uint32 { return uint32(max(r.ToolCalls, 0)) }),
	uint32Column("truncated_calls", func(r *schema.Session) uint32 { return uint32(max(r.TruncatedCalls, 0)) }),
	uint32Column("silent_calls", func(r *schema.Session) uint32 { return uint32(max(r.SilentCalls, 0)) }),
	uint32Column("answers", func(r *schema.Session) uint32 { return uint32(max(r.Answers, 0)) }),
	uint32Column("risky_answers", func(r *schema.Session) uint32 { return uint32(max(r.RiskyAnswers, 0)) }),
	count32Column("risky_answers_uncertain", func(r *schema.Session) schema.Count { return r.RiskyAnswersUncertain }),
	count32Column("compactions", func(r *schema.Session) schema.Count { return r.Compactions }),
	stringColumn("max_risk", func(r *schema.Session) string { return string(nonEmpty(r.MaxRisk, schema.RiskNone)) }),
	countColumn("input_tokens", func(r *schema.Session) schema.Count { return r.InputTokens }),
	countColumn("output_tokens", func(r *schema.Session) schema.Count { return r.OutputTokens }),
	versionColumn[schema.Session](),
}

var toolOutputColumns = []column[schema.ToolOutput]{
	stringColumn("sha256", func(r *schema.ToolOutput) string { return r.SHA256 }),
	uint64Column("bytes", func(r *schema.ToolOutput) uint64 { return r.Bytes }),
	stringColumn("text", func(r *schema.ToolOutput) string { return r.Text }),
	boolColumn("capped", func(r *schema.ToolOutput) bool { return r.Capped }),
	uint32Column("redactions", func(r *schema.ToolOutput) uint32 { return uint32(max(r.Redactions, 0)) }),
	timeColumn("first_seen", func(r *schema.ToolOutput) time.Time { return seconds(r.FirstSeen) }),
	versionColumn[schema.ToolOutput](),
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
	// validate reports a value of a row its columns cannot hold (nil: any
	// row can be written).
	validate func(*T) error
}

var (
	toolCallsTable   = table[schema.ToolCall]{"tool_calls", toolCallColumns, toolCallKey, toolCallRank, (*schema.ToolCall).Validate}
	answersTable     = table[schema.Answer]{"answers", answerColumns, answerKey, answerRank, (*schema.Answer).Validate}
	sessionsTable    = table[schema.Session]{"sessions", sessionColumns, sessionKey, sessionRank, (*schema.Session).Validate}
	toolOutputsTable = table[schema.ToolOutput]{"tool_outputs", toolOutputColumns, toolOutputKey, toolOutputRank, nil}
)

// RejectedRowsError reports rows a write left out because a value of theirs
// is not one their table can hold (schema's Validate); the other rows of the
// write were written. ClickHouse refuses a whole INSERT for one such value,
// so without this one bad row would lose every row sent with it.
type RejectedRowsError struct {
	Table string
	Rows  int
	// First names the first row left out, by its id, and its value.
	First string
}

func (e *RejectedRowsError) Error() string {
	return fmt.Sprintf("%d rows not written to %s, e.g. %s", e.Rows, e.Table, e.First)
}

// validRows is rows without those t cannot hold, and the error reporting
// them. rows itself is not changed.
func validRows[T any](t table[T], rows []T) ([]T, *RejectedRowsError) {
	if t.validate == nil {
		return rows, nil
	}
	var out []T
	var rejected *RejectedRowsError
	for i := range rows {
		err := t.validate(&rows[i])
		if err == nil {
			if rejected != nil {
				out = append(out, rows[i])
			}
			continue
		}
		if rejected == nil {
			rejected = &RejectedRowsError{Table: t.name, First: fmt.Sprintf("%s: %v", strings.ReplaceAll(t.key(&rows[i]), "\x00", "/"), err)}
			out = append(make([]T, 0, len(rows)-1), rows[:i]...)
		}
		rejected.Rows++
	}
	if rejected == nil {
		return rows, nil
	}
	return out, rejected
}

// insert sends rows as one native batch with an explicit column list, one
// row per id, each versioned by what it knows and this write's clock value.
// Rows with a value their table cannot hold are left out and reported as a
// *RejectedRowsError once the others are written.
func insert[T any](ctx context.Context, s *Store, t table[T], rows []T) error {
	rows, rejected := validRows(t, rows)
	if err := insertValid(ctx, s, t, rows); err != nil {
		return err
	}
	if rejected != nil {
		return rejected
	}
	return nil
}

func insertValid[T any](ctx context.Context, s *Store, t table[T], rows []T) error {
	if len(rows) == 0 {
		return nil
	}
	rows = bestPerKey(rows, t.key, t.rank)
	omittable, err := s.omittableColumns(ctx, t.name)
	if err != nil {
		return fmt.Errorf("insert into %s.%s: %w", s.database, t.name, err)
	}
	clock := s.clock.tick()
	vals := batchValues{versions: make([]uint64, len(rows)), redact: s.redactor.String}
	for i := range rows {
		vals.versions[i] = version(t.rank(&rows[i]), clock)
	}
	// The columns this batch sends: all but those holding only their
	// default (sparse.go).
	names := make([]string, 0, len(t.cols))
	values := make([]any, 0, len(t.cols))
	for _, c := range t.cols {
		v := c.values(rows, &vals)
		if omittable[c.name] && allZero(v) {
			continue
		}
		names, values = append(names, c.name), append(values, v)
	}
	query := "INSERT INTO " + s.table(t.name) + " (" + strings.Join(names, ", ") + ")"
	batch, err := s.conn.PrepareBatch(ctx, query)
	if err != nil {
		return fmt.Errorf("insert into %s.%s: prepare: %w", s.database, t.name, err)
	}
	for j, v := range values {
		if err := batch.Column(j).Append(v); err != nil {
			_ = batch.Abort()
			return fmt.Errorf("insert into %s.%s: column %s: %w", s.database, t.name, names[j], err)
		}
	}
	if err := batch.Send(); err != nil {
		return fmt.Errorf("insert into %s.%s: send %d rows: %w", s.database, t.name, len(rows), err)
	}
	return nil
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
//
// A database that holds no output text has no link to carry (see
// anyStoredOutputs), and is not searched for one: that search was most of
// ClickHouse's work under a collector's load (docs/performance.md).
func (s *Store) carryLinks(ctx context.Context, rows []schema.ToolCall) ([]schema.ToolCall, error) {
	var missing []int
	for i := range rows {
		if rows[i].OriginalSHA256 == "" || rows[i].ContextSHA256 == "" {
			missing = append(missing, i)
		}
	}
	if len(missing) == 0 {
		return rows, nil
	}
	if stored, err := s.anyStoredOutputs(ctx); err != nil || !stored {
		return rows, err
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

// anyStoredOutputs reports whether tool_outputs holds any text. Links are
// written only with the texts they name, and the texts first
// (collector/ingest), so while it holds none no row has a link. Once it
// holds one the answer is kept: texts are only removed with their days
// (prune), and searching when there is nothing to find costs time, never a
// link.
func (s *Store) anyStoredOutputs(ctx context.Context) (bool, error) {
	if s.outputsStored.Load() {
		return true, nil
	}
	var n uint64
	if err := s.conn.QueryRow(ctx, "SELECT count() FROM "+s.table("tool_outputs")).Scan(&n); err != nil {
		return false, fmt.Errorf("count stored tool outputs: %w", err)
	}
	if n > 0 {
		s.outputsStored.Store(true)
	}
	return n > 0, nil
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
