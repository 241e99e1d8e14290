package chstore

// Read queries for the postmortem tools (`ctxaudit sessions`, `ctxaudit
// postmortem`).
//
// Cost model. tool_calls and answers are ORDER BY (session_id, id) and
// PARTITION BY day of ts. A condition on session_id alone selects a key
// range in every active part, and ClickHouse reads whole granules (8,192
// rows), so a lookup by session touches a granule per part of the whole
// table: ~650,000 rows on 10 million calls over 58 days. Every per-session
// read therefore first learns the session's time span (SessionSpan:
// min/max(ts), two narrow columns) and then bounds ts by it, so partition
// pruning leaves only the days the session ran on. The session_id condition
// goes in PREWHERE, so the wide columns are read only for granules that hold
// the session.
//
// Deduplication. The tables are ReplacingMergeTree(version) and may hold
// not-yet-merged duplicates. Per-session reads keep the latest version with
// `ORDER BY key, version DESC LIMIT 1 BY key` rather than FINAL. With the ts
// bound both cost the same; LIMIT 1 BY is also right when two versions of a
// row landed in different partitions, which FINAL (a per-partition merge)
// would return twice.
//
// Measured on 18.16 (BenchmarkSessionRead: 10 million calls over 58 days,
// one 50-call session stored twice; two runs): span 31–45 ms; the session's
// calls with the ts bound 14–15 ms with LIMIT 1 BY and 12–17 ms with FINAL,
// without the bound 88–109 ms and 88–95 ms; FINAL with neither PREWHERE nor
// the bound took 3 to 5 s.
//
// Paging. A session can have hundreds of thousands of calls; they are read
// in pages of primary-key ranges, never in one result (see pagedQuery.run).

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/ctxaudit/ctxaudit/schema"
)

// DefaultPageSize is the number of rows per round trip of a paged read.
const DefaultPageSize = 10000

// maxIDsPerQuery bounds an IN list, keeping the query text well under the
// server's max_query_size (256 KiB by default).
const maxIDsPerQuery = 1000

// TimeRange is the span of one table's rows for a session. Rows counts stored
// rows, not-yet-merged duplicates included: it tells "none" from "some", not
// how many.
type TimeRange struct {
	From, To time.Time
	Rows     uint64
}

// SessionSpan is where one session's rows lie in time.
type SessionSpan struct {
	SessionID string
	Calls     TimeRange
	Answers   TimeRange
}

// Found reports whether the session has any stored call or answer.
func (sp SessionSpan) Found() bool { return sp.Calls.Rows > 0 || sp.Answers.Rows > 0 }

// SessionSpan reads the time span of a session's calls and answers: the
// bound that lets every later read of the session prune partitions.
func (s *Store) SessionSpan(ctx context.Context, sessionID string) (SessionSpan, error) {
	sp := SessionSpan{SessionID: sessionID}
	query := "SELECT 'calls' AS what, min(ts), max(ts), count() FROM " + s.table("tool_calls") + " WHERE session_id = ?" +
		" UNION ALL SELECT 'answers' AS what, min(ts), max(ts), count() FROM " + s.table("answers") + " WHERE session_id = ?"
	rows, err := s.conn.Query(ctx, query, sessionID, sessionID)
	if err != nil {
		return sp, fmt.Errorf("query time span of session %s: %w", sessionID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			what     string
			from, to time.Time
			n        uint64
		)
		if err := rows.Scan(&what, &from, &to, &n); err != nil {
			return sp, fmt.Errorf("scan time span of session %s: %w", sessionID, err)
		}
		// Whole seconds on every rendering (ts is DateTime64(3) on modern
		// servers): the span is a bound for partition pruning, not a value.
		r := TimeRange{From: from.UTC().Truncate(time.Second), To: to.UTC().Truncate(time.Second), Rows: n}
		if n == 0 {
			r = TimeRange{}
		}
		if what == "calls" {
			sp.Calls = r
		} else {
			sp.Answers = r
		}
	}
	if err := rows.Err(); err != nil {
		return sp, fmt.Errorf("read time span of session %s: %w", sessionID, err)
	}
	return sp, nil
}

// SessionRow returns a session's row at its latest version; found is false
// when the session has none (the collector may not have written it yet).
// Unlike Session it avoids FINAL and puts session_id in PREWHERE: on 18.16,
// with 200,000 sessions, 23–55 ms against 0.2–0.4 s.
func (s *Store) SessionRow(ctx context.Context, sessionID string) (schema.Session, bool, error) {
	query := "SELECT " + columnNames(sessionColumns) + " FROM " + s.table("sessions") +
		" PREWHERE session_id = ? ORDER BY version DESC LIMIT 1"
	rows, err := s.conn.Query(ctx, query, sessionID)
	if err != nil {
		return schema.Session{}, false, fmt.Errorf("query session %s: %w", sessionID, err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return schema.Session{}, false, fmt.Errorf("query session %s: %w", sessionID, err)
		}
		return schema.Session{}, false, nil
	}
	sess, err := scanSession(rows)
	if err != nil {
		return sess, false, fmt.Errorf("scan session %s: %w", sessionID, err)
	}
	return sess, true, nil
}

// CallFilter narrows SessionToolCalls. The zero value reads every call.
type CallFilter struct {
	// Turns keeps only calls of these turns (sub-agent calls belong to the
	// turn that spawned them); the unknown turn keeps the calls whose turn
	// is unknown.
	Turns []schema.Turn
	// CallIDs keeps only these calls.
	CallIDs []string
	// PageSize is the number of rows per round trip (default DefaultPageSize).
	PageSize int
}

// SessionToolCalls returns the calls of the session sp describes, each at its
// latest version, in call order (ts, then source line, then id). It reads
// only the days of sp and pages through the session by call_id.
func (s *Store) SessionToolCalls(ctx context.Context, sp SessionSpan, f CallFilter) ([]schema.ToolCall, error) {
	return s.sessionToolCalls(ctx, sp, f, readVariant{})
}

func (s *Store) sessionToolCalls(ctx context.Context, sp SessionSpan, f CallFilter, v readVariant) ([]schema.ToolCall, error) {
	if sp.Calls.Rows == 0 {
		return nil, nil
	}
	q := pagedQuery{
		table: "tool_calls", key: "call_id", columns: columnNames(toolCallColumns),
		sessionID: sp.SessionID, span: sp.Calls, pageSize: f.PageSize, variant: v,
	}
	if len(f.Turns) > 0 {
		var known []any
		unknown := false
		for _, t := range f.Turns {
			if t.Known {
				known = append(known, t.N)
			} else {
				unknown = true
			}
		}
		// A call's turn can change between its versions (a sub-agent's
		// call, read in its own file's turn, is placed in the turn that
		// spawned it once analysed): the filter applies to each call's
		// latest version, never picks an older one that knew less.
		switch {
		case len(known) > 0 && unknown:
			q.latest = append(q.latest, "(turn IN ? OR turn IS NULL)")
			q.latestArgs = append(q.latestArgs, clickhouse.GroupSet{Value: known})
		case len(known) > 0:
			q.latest = append(q.latest, "turn IN ?")
			q.latestArgs = append(q.latestArgs, clickhouse.GroupSet{Value: known})
		default:
			q.latest = append(q.latest, "turn IS NULL")
		}
	}
	var out []schema.ToolCall
	err := q.forEachIDChunk(f.CallIDs, func(q pagedQuery) error {
		return q.run(ctx, s, func(rows driver.Rows) error {
			c, err := scanToolCall(rows)
			if err != nil {
				return err
			}
			out = append(out, c)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("read tool calls of session %s: %w", sp.SessionID, err)
	}
	sort.SliceStable(out, func(i, j int) bool { return callBefore(&out[i], &out[j]) })
	return out, nil
}

// SessionCallPlaces returns every call of the session sp describes, at its
// latest version, with only what places it among the others set: CallID,
// Timestamp, SourceFile, SourceLine. It is for a reader that reads some of
// a session's calls in full and must still know the order of all of them
// (a postmortem scoped to one answer: analysis.OrderOf).
func (s *Store) SessionCallPlaces(ctx context.Context, sp SessionSpan) ([]schema.ToolCall, error) {
	if sp.Calls.Rows == 0 {
		return nil, nil
	}
	q := pagedQuery{
		table: "tool_calls", key: "call_id", columns: "call_id, ts, ts_ns, source_file, source_line",
		sessionID: sp.SessionID, span: sp.Calls,
	}
	var out []schema.ToolCall
	err := q.run(ctx, s, func(rows driver.Rows) error {
		var (
			c    schema.ToolCall
			ts   time.Time
			tsNs uint32
			line uint64
		)
		if err := rows.Scan(&c.CallID, &ts, &tsNs, &c.SourceFile, &line); err != nil {
			return err
		}
		c.Timestamp = rowTime(ts, tsNs)
		c.SourceLine = int64(line)
		out = append(out, c)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the places of the calls of session %s: %w", sp.SessionID, err)
	}
	return out, nil
}

// SessionAnswers returns the answers of the session sp describes, each at its
// latest version, in time order; a message whose latest version is a
// retraction is no answer and is left out.
func (s *Store) SessionAnswers(ctx context.Context, sp SessionSpan) ([]schema.Answer, error) {
	if sp.Answers.Rows == 0 {
		return nil, nil
	}
	q := pagedQuery{
		table: "answers", key: "message_id", columns: columnNames(answerColumns),
		sessionID: sp.SessionID, span: sp.Answers,
	}
	var out []schema.Answer
	err := q.run(ctx, s, func(rows driver.Rows) error {
		a, err := scanAnswer(rows)
		if err != nil {
			return err
		}
		if !a.Retracted { // the message was not an answer after all
			out = append(out, a)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read answers of session %s: %w", sp.SessionID, err)
	}
	sortAnswers(out)
	return out, nil
}

// sortAnswers orders answers by time, then message id.
func sortAnswers(answers []schema.Answer) {
	sort.SliceStable(answers, func(i, j int) bool {
		if !answers[i].Timestamp.Equal(answers[j].Timestamp) {
			return answers[i].Timestamp.Before(answers[j].Timestamp)
		}
		return answers[i].MessageID < answers[j].MessageID
	})
}

func callBefore(a, b *schema.ToolCall) bool {
	if !a.Timestamp.Equal(b.Timestamp) {
		return a.Timestamp.Before(b.Timestamp)
	}
	if a.SourceLine != b.SourceLine {
		return a.SourceLine < b.SourceLine
	}
	return a.CallID < b.CallID
}

// pagedQuery reads one session's rows of a table in primary-key order, a
// page at a time, keeping the latest version of each key.
type pagedQuery struct {
	table, key, columns string
	sessionID           string
	span                TimeRange
	where               []string
	args                []any
	// latest are conditions on each key's latest version, applied after
	// the versions are collapsed (a condition in where would skip the
	// latest version and keep an older one).
	latest     []string
	latestArgs []any
	pageSize   int
	// variant is always the zero value outside the benchmark that compares
	// query shapes (export_test.go).
	variant readVariant
}

// readVariant selects an alternative query shape, for measurement only.
type readVariant struct {
	// final deduplicates with FINAL instead of LIMIT 1 BY.
	final bool
	// noSpan drops the ts bound, so no partition is pruned.
	noSpan bool
}

// forEachIDChunk runs fn once with no id condition when ids is empty, else
// once per chunk of ids with `key IN chunk` added.
func (q pagedQuery) forEachIDChunk(ids []string, fn func(pagedQuery) error) error {
	if len(ids) == 0 {
		return fn(q)
	}
	return inChunks(ids, func(set clickhouse.GroupSet, _ int) error {
		cq := q
		cq.where = append(append([]string(nil), q.where...), q.key+" IN ?")
		cq.args = append(append([]any(nil), q.args...), set)
		return fn(cq)
	})
}

// run reads the rows in scope; scan reads one row. A session that fits in
// one page is read with one query. A bigger one is read in pages of key
// ranges: first its distinct keys (one narrow column), then each page with
// both ends bound, so every page reads only its own granules. Keyset paging
// with just a lower bound would re-read the rest of the session for every
// page (18.16 cannot stop reading at LIMIT in key order), which is
// quadratic in the session's size.
func (q pagedQuery) run(ctx context.Context, s *Store, scan func(driver.Rows) error) error {
	size := q.pageSize
	if size <= 0 {
		size = DefaultPageSize
	}
	if q.span.Rows <= uint64(size) { // Rows counts duplicates: an upper bound
		return q.page(ctx, s, "", "", scan)
	}
	keys, err := q.keys(ctx, s)
	if err != nil {
		return err
	}
	for start := 0; start < len(keys); start += size {
		lo, hi := keys[start], keys[min(start+size, len(keys))-1]
		if err := q.page(ctx, s, lo, hi, scan); err != nil {
			return err
		}
	}
	return nil
}

// from is the FROM … PREWHERE … WHERE clause shared by the page and key
// queries, with extra conditions appended, and its arguments.
func (q pagedQuery) from(s *Store, extra []string, extraArgs ...any) (string, []any) {
	var conds []string
	args := []any{q.sessionID}
	if !q.variant.noSpan {
		// ts is bound as Unix seconds: toDateTime(UInt32) means the same
		// on every server version, whatever its time zone. The bound only
		// prunes partitions (session_id selects the rows), so its upper end
		// is the second after the span: a DateTime64(3) ts in the span's
		// last second is inside it, as a DateTime one is. It is "<=", not
		// "< next second": ClickHouse 26.7 prunes a partition wrongly for
		// a DateTime64 column "<" a DateTime constant (seen on chDB
		// 26.7.2.1: the row at 11:31:15.050 was missed by ts < 11:31:16).
		conds = append(conds, "ts >= toDateTime(?)", "ts <= toDateTime(?)")
		args = append(args, q.span.From.Unix(), q.span.To.Unix()+1)
	}
	conds = append(append(conds, q.where...), extra...)
	args = append(append(args, q.args...), extraArgs...)
	clause := " FROM " + s.table(q.table)
	if q.variant.final {
		clause += " FINAL"
	}
	clause += " PREWHERE session_id = ?"
	if len(conds) > 0 {
		clause += " WHERE " + strings.Join(conds, " AND ")
	}
	return clause, args
}

// keys lists the distinct keys in scope, in key order.
func (q pagedQuery) keys(ctx context.Context, s *Store) ([]string, error) {
	from, args := q.from(s, nil)
	rows, err := s.conn.Query(ctx, "SELECT DISTINCT "+q.key+from+" ORDER BY "+q.key, args...)
	if err != nil {
		return nil, fmt.Errorf("list %s of %s.%s: %w", q.key, s.database, q.table, err)
	}
	defer rows.Close()
	var keys []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, fmt.Errorf("list %s of %s.%s: %w", q.key, s.database, q.table, err)
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list %s of %s.%s: %w", q.key, s.database, q.table, err)
	}
	return keys, nil
}

// page reads the rows with keys in [lo, hi], or all rows in scope when lo
// and hi are empty, at their latest versions.
func (q pagedQuery) page(ctx context.Context, s *Store, lo, hi string, scan func(driver.Rows) error) error {
	var from string
	var args []any
	if lo == "" && hi == "" {
		from, args = q.from(s, nil)
	} else {
		from, args = q.from(s, []string{q.key + " >= ?", q.key + " <= ?"}, lo, hi)
	}
	query := "SELECT " + q.columns + from + " ORDER BY " + q.key
	if !q.variant.final {
		query += ", version DESC LIMIT 1 BY " + q.key
	}
	if len(q.latest) > 0 {
		query = "SELECT " + q.columns + " FROM (" + query + ") WHERE " + strings.Join(q.latest, " AND ") +
			" ORDER BY " + q.key
		args = append(args, q.latestArgs...)
	}
	rows, err := s.conn.Query(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("query %s.%s from %s %q: %w", s.database, q.table, q.key, lo, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return fmt.Errorf("read %s.%s from %s %q: %w", s.database, q.table, q.key, lo, err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read %s.%s from %s %q: %w", s.database, q.table, q.key, lo, err)
	}
	return nil
}

// SessionFilter selects sessions for ListSessions. The zero value lists the
// most recent sessions of any source and risk.
type SessionFilter struct {
	// ActiveSince keeps sessions that started or ended at or after it.
	ActiveSince time.Time
	// MinRisk keeps sessions whose worst answer is at least this risky.
	MinRisk schema.Risk
	// Source keeps one harness's sessions.
	Source schema.Harness
	// Limit bounds the result (default 100).
	Limit int
}

// Matches reports whether s passes the filter as ListSessions applies it
// to a row: active since ActiveSince (in whole seconds, as rows hold
// times), at least MinRisk, of Source.
func (f SessionFilter) Matches(s *schema.Session) bool {
	if f.Source != "" && s.Source != f.Source {
		return false
	}
	if !f.ActiveSince.IsZero() && s.LastActive().Unix() < max(f.ActiveSince.Unix(), 0) {
		return false
	}
	return f.MinRisk == "" || s.MaxRisk.Severity() >= f.MinRisk.Severity()
}

// ListSessions returns the sessions matching f, the most recently active
// first. The sessions table holds one row per session, so this reads it
// whole: it first keeps each session's latest version (LIMIT 1 BY, which
// unlike FINAL also collapses versions that sit in different day
// partitions because a session's start moved), then filters, so that a
// stale version can never match a filter on max_risk. On 18.16 this took
// the same time as FINAL (0.3 s for 200,000 sessions on a busy machine).
func (s *Store) ListSessions(ctx context.Context, f SessionFilter) ([]schema.Session, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	cols := columnNames(sessionColumns)
	inner := "SELECT " + cols + " FROM " + s.table("sessions")
	var args []any
	if f.Source != "" {
		inner += " WHERE source = ?" // the same in every version of a session
		args = append(args, string(f.Source))
	}
	inner += " ORDER BY session_id, version DESC LIMIT 1 BY session_id"
	var conds []string
	if !f.ActiveSince.IsZero() {
		conds = append(conds, "greatest(started_at, ended_at) >= toDateTime(?)")
		args = append(args, max(f.ActiveSince.Unix(), 0))
	}
	if f.MinRisk != "" {
		// The Enum8 values are the severities (none=0 … high=3).
		conds = append(conds, "toInt8(max_risk) >= ?")
		args = append(args, f.MinRisk.Severity())
	}
	query := "SELECT " + cols + " FROM (" + inner + ")"
	if len(conds) > 0 {
		query += " WHERE " + strings.Join(conds, " AND ")
	}
	query += " ORDER BY greatest(started_at, ended_at) DESC, session_id LIMIT " + fmt.Sprint(limit)
	rows, err := s.conn.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	defer rows.Close()
	var out []schema.Session
	for rows.Next() {
		sess, err := scanSession(rows)
		if err != nil {
			return nil, fmt.Errorf("list sessions: %w", err)
		}
		out = append(out, sess)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return out, nil
}

// SessionRows returns the latest row of each of the sessions that has one,
// in no particular order. session_id leads the table's key, so this reads
// a granule per part for each chunk of ids, not the whole table as
// ListSessions does.
func (s *Store) SessionRows(ctx context.Context, sessionIDs []string) ([]schema.Session, error) {
	query := "SELECT " + columnNames(sessionColumns) + " FROM " + s.table("sessions") +
		" PREWHERE session_id IN ? ORDER BY session_id, version DESC LIMIT 1 BY session_id"
	var out []schema.Session
	err := inChunks(sessionIDs, func(set clickhouse.GroupSet, n int) error {
		err := s.eachRow(ctx, query, []any{set}, func(rows driver.Rows) error {
			sess, err := scanSession(rows)
			if err != nil {
				return err
			}
			out = append(out, sess)
			return nil
		})
		if err != nil {
			return fmt.Errorf("read the rows of %d sessions: %w", n, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// PartialSessions returns those of the sessions that have a stored call or
// answer analysed by a buffer that did not see the session from its start
// — a processor that dropped the session's buffer and held what came after
// in a new one (docs/design.md §10.3): the analysed bit of its version set
// and the complete bit clear. The exporter recounts those. It asks the
// records, not the sessions table: there a partial row is merged away once
// the first buffer's row, which outranks it, lands after it, while a
// record's partial version stays until a complete analysis of the same
// record replaces it. Only records at or after since count, and those
// without a time; since, the earliest start of the sessions asked about,
// lets ClickHouse skip the days before it.
func (s *Store) PartialSessions(ctx context.Context, sessionIDs []string, since time.Time) ([]string, error) {
	scope := " PREWHERE session_id IN ? WHERE " + partiallyAnalysed + " AND " + sinceOrUntimed
	query := "SELECT DISTINCT session_id FROM (SELECT session_id FROM " + s.table("tool_calls") + scope +
		" UNION ALL SELECT session_id FROM " + s.table("answers") + scope + ")"
	from := max(since.Unix(), 0)
	var out []string
	err := inChunks(sessionIDs, func(set clickhouse.GroupSet, n int) error {
		err := s.eachRow(ctx, query, []any{set, from, set, from}, func(rows driver.Rows) error {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			out = append(out, id)
			return nil
		})
		if err != nil {
			return fmt.Errorf("find partial records of %d sessions: %w", n, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// sinceOrUntimed keeps the records at or after its parameter (a Unix time)
// and those without a time, stored as the epoch in the first partition.
const sinceOrUntimed = "(ts >= toDateTime(?) OR ts < toDateTime(86400))"

// StoredRecords are the stored calls and answers of one session.
type StoredRecords struct {
	Calls   []schema.ToolCall
	Answers []schema.Answer
}

// The columns CountedRecords reads: what session counting (analysis.Recount)
// reads of a record, and the order calls and answers are listed in. A call
// is counted by its turn and graded by truncated, partial_by_request,
// truncation_kind and strategy (analysis.Truncated); an answer by its turn,
// risk and inputs_uncertain, and left out when retracted. The other
// columns — arguments, an answer's text, the sizes — are most of a row, and
// a recount read them only to drop them.
const (
	countedCallColumns   = "session_id, call_id, ts, ts_ns, source_line, turn, truncated, partial_by_request, truncation_kind, strategy"
	countedAnswerColumns = "session_id, message_id, ts, ts_ns, turn, risk, inputs_uncertain, retracted"
)

// CountedRecords returns the stored calls and answers of each of the
// sessions (those with none are absent) as session counting reads them —
// their ids, times and turns, a call's truncated, partial_by_request, kind
// and strategy, an answer's risk and inputs_uncertain; every other field is
// its zero value — each at its latest version, in the orders
// SessionToolCalls and SessionAnswers return them, an answer whose latest
// version is a retraction left out. It is for analysis.Recount, and a
// recount over them is the recount over the whole records
// (TestContinuedSessionsOnBothEngines). Only records at or after since
// count, and those without a time; since, the earliest start of the
// sessions, lets ClickHouse skip the days before it. Two queries for up to
// maxIDsPerQuery sessions, where reading them one by one (SessionSpan,
// SessionToolCalls, SessionAnswers) takes three or four each: the exporter
// recounts every session of a push that went on past a dropped buffer,
// thousands at a time when a collector held fewer sessions than were
// active, and `ctxaudit sessions` every session it lists that undercounts.
func (s *Store) CountedRecords(ctx context.Context, sessionIDs []string, since time.Time) (map[string]StoredRecords, error) {
	scope := " PREWHERE session_id IN ? WHERE " + sinceOrUntimed
	callQuery := "SELECT " + countedCallColumns + " FROM " + s.table("tool_calls") + scope +
		" ORDER BY session_id, call_id, version DESC LIMIT 1 BY session_id, call_id"
	answerQuery := "SELECT " + countedAnswerColumns + " FROM " + s.table("answers") + scope +
		" ORDER BY session_id, message_id, version DESC LIMIT 1 BY session_id, message_id"
	from := max(since.Unix(), 0)
	out := map[string]StoredRecords{}
	err := inChunks(sessionIDs, func(set clickhouse.GroupSet, n int) error {
		err := s.eachRow(ctx, callQuery, []any{set, from}, func(rows driver.Rows) error {
			c, err := scanCountedCall(rows)
			if err != nil {
				return err
			}
			r := out[c.SessionID]
			r.Calls = append(r.Calls, c)
			out[c.SessionID] = r
			return nil
		})
		if err != nil {
			return fmt.Errorf("read the tool calls of %d sessions: %w", n, err)
		}
		err = s.eachRow(ctx, answerQuery, []any{set, from}, func(rows driver.Rows) error {
			a, retracted, err := scanCountedAnswer(rows)
			if err != nil || retracted { // the message was not an answer after all
				return err
			}
			r := out[a.SessionID]
			r.Answers = append(r.Answers, a)
			out[a.SessionID] = r
			return nil
		})
		if err != nil {
			return fmt.Errorf("read the answers of %d sessions: %w", n, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, r := range out {
		sort.SliceStable(r.Calls, func(i, j int) bool { return callBefore(&r.Calls[i], &r.Calls[j]) })
		sortAnswers(r.Answers)
	}
	return out, nil
}

// ContinuedSessions returns the sessions that went on after a collector
// dropped their buffer (docs/design.md §10.3), the most recently active
// first, at most limit of them: those with a call or an answer analysed
// by a buffer that did not see the session from its start — a version
// with the analysed bit set and the complete bit clear (version.go). Such a
// session's stored row may count fewer records than are stored and end
// before its last one, so a listing by rows alone can leave it out. Only
// records at or after since count, and those without a time; source, if
// set, keeps one harness's.
//
// A row of a record that a complete analysis replaced since still counts
// until its part is merged: the result is the sessions whose rows may
// undercount, and the caller compares counts before recounting.
//
// It reads version and ts of the period's days (BenchmarkSessionRead,
// 10 million calls over 58 days on 18.16: 42 ms for all of them, 6 ms for
// the last day's).
func (s *Store) ContinuedSessions(ctx context.Context, since time.Time, source schema.Harness, limit int) ([]string, error) {
	scope := " WHERE " + partiallyAnalysed + " AND " + sinceOrUntimed
	from := max(since.Unix(), 0)
	args := []any{from}
	if source != "" {
		scope += " AND source = ?"
		args = append(args, string(source))
	}
	query := "SELECT session_id, max(ts) AS last FROM (SELECT session_id, ts FROM " + s.table("tool_calls") + scope +
		" UNION ALL SELECT session_id, ts FROM " + s.table("answers") + scope + ")" +
		" GROUP BY session_id ORDER BY last DESC, session_id LIMIT " + fmt.Sprint(max(limit, 0))
	var out []string
	err := s.eachRow(ctx, query, append(args, args...), func(rows driver.Rows) error {
		var (
			id   string
			last time.Time
		)
		if err := rows.Scan(&id, &last); err != nil {
			return err
		}
		out = append(out, id)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("find sessions that went on after a dropped buffer: %w", err)
	}
	return out, nil
}

// eachRow runs query and calls scan for each row it returns, until scan
// fails.
func (s *Store) eachRow(ctx context.Context, query string, args []any, scan func(driver.Rows) error) error {
	rows, err := s.conn.Query(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// inChunks calls fn with ids as IN-list parameters of at most
// maxIDsPerQuery ids each, and how many each holds, until fn fails.
func inChunks(ids []string, fn func(set clickhouse.GroupSet, n int) error) error {
	for start := 0; start < len(ids); start += maxIDsPerQuery {
		chunk := ids[start:min(start+maxIDsPerQuery, len(ids))]
		set := make([]any, len(chunk))
		for i, id := range chunk {
			set[i] = id
		}
		if err := fn(clickhouse.GroupSet{Value: set}, len(chunk)); err != nil {
			return err
		}
	}
	return nil
}

// RecordCounts is how many calls and answers the store holds of a session,
// each counted once whatever its versions; a message whose latest version
// is a retraction is no answer.
type RecordCounts struct {
	Calls, Answers int
}

// StoredRecordCounts counts the stored calls and answers of each of the
// sessions (those with none are absent from the result): `ctxaudit
// sessions` compares them with the sessions' rows to find a row that counts
// fewer (docs/design.md §10.3). Only records at or after since count, and
// those without a time; since, the earliest start of the sessions asked
// about, lets ClickHouse skip the days before it — a lookup by session_id
// alone reads a granule per part of the whole table.
func (s *Store) StoredRecordCounts(ctx context.Context, sessionIDs []string, since time.Time) (map[string]RecordCounts, error) {
	out := make(map[string]RecordCounts, len(sessionIDs))
	scope := " WHERE session_id IN ? AND " + sinceOrUntimed
	query := "SELECT 'calls', session_id, uniqExact(call_id) FROM " + s.table("tool_calls") + scope + " GROUP BY session_id" +
		" UNION ALL SELECT 'answers', session_id, countIf(retracted = 0) FROM (SELECT session_id, argMax(retracted, version) AS retracted FROM " +
		s.table("answers") + scope + " GROUP BY session_id, message_id) GROUP BY session_id"
	from := max(since.Unix(), 0)
	err := inChunks(sessionIDs, func(ids clickhouse.GroupSet, n int) error {
		err := s.eachRow(ctx, query, []any{ids, from, ids, from}, func(rows driver.Rows) error {
			var (
				what, id string
				count    uint64
			)
			if err := rows.Scan(&what, &id, &count); err != nil {
				return err
			}
			c := out[id]
			if what == "calls" {
				c.Calls = int(count)
			} else {
				c.Answers = int(count)
			}
			out[id] = c
			return nil
		})
		if err != nil {
			return fmt.Errorf("count stored records of %d sessions: %w", n, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// TextMatch is what SearchToolOutputs found in one stored output text.
type TextMatch struct {
	// Contains: the stored text holds the needle.
	Contains bool
	// Capped: the stored text is a prefix of the output (it was longer than
	// the storage cap), so a miss does not prove absence.
	Capped bool
}

// SearchToolOutputs looks for needle (case-sensitive, as written) in the
// stored tool_outputs texts with the given SHA-256 hashes. Hashes with no
// stored text are absent from the result. Texts are content-addressed and
// identical across versions, so no deduplication is needed.
func (s *Store) SearchToolOutputs(ctx context.Context, hashes []string, needle string) (map[string]TextMatch, error) {
	out := make(map[string]TextMatch, len(hashes))
	seen := make(map[string]bool, len(hashes))
	var uniq []string
	for _, h := range hashes {
		if h != "" && !seen[h] {
			seen[h] = true
			uniq = append(uniq, h)
		}
	}
	query := "SELECT sha256, max(position(text, ?) > 0), max(capped) FROM " + s.table("tool_outputs") +
		" PREWHERE sha256 IN ? GROUP BY sha256"
	err := inChunks(uniq, func(set clickhouse.GroupSet, _ int) error {
		return s.eachRow(ctx, query, []any{needle, set}, func(rows driver.Rows) error {
			var (
				sha             string
				found, isCapped uint8
			)
			if err := rows.Scan(&sha, &found, &isCapped); err != nil {
				return err
			}
			out[sha] = TextMatch{Contains: found == 1, Capped: isCapped == 1}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("search tool outputs: %w", err)
	}
	return out, nil
}
