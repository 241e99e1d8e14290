// Package chstoretest generates large, realistic audit tables inside
// ClickHouse for benchmarks and scale tests: millions of rows are produced
// server-side by INSERT … SELECT FROM system.numbers, so no data crosses the
// wire and a 10-million-call table takes under a minute on a laptop.
package chstoretest

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ctxaudit/ctxaudit/schema/chstore"
	"github.com/ctxaudit/ctxaudit/schema/migrations"
)

// Options shape a Fill. Zero fields take the defaults.
type Options struct {
	// Calls is the number of tool calls to insert.
	Calls int
	// CallsPerSession (default 50) and CallsPerTurn (default 10): every turn
	// ends in one answer whose inputs are the turn's calls.
	CallsPerSession int
	CallsPerTurn    int
	// FirstSession numbers the first session, so several fills can share a
	// database without colliding (see SessionID).
	FirstSession int
	// Start is the first session's start (default 2026-01-01 UTC); session k
	// starts SessionGap (default 25s) after session k-1, and its calls are
	// CallGap (default 9s) apart. With the defaults, 10 million calls are
	// 200,000 overlapping sessions over 58 days: 58 day partitions.
	Start      time.Time
	SessionGap time.Duration
	CallGap    time.Duration
}

func (o Options) withDefaults() Options {
	if o.CallsPerSession <= 0 {
		o.CallsPerSession = 50
	}
	if o.CallsPerTurn <= 0 {
		o.CallsPerTurn = 10
	}
	if o.Start.IsZero() {
		o.Start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if o.SessionGap <= 0 {
		o.SessionGap = 25 * time.Second
	}
	if o.CallGap <= 0 {
		o.CallGap = 9 * time.Second
	}
	return o
}

// Sessions is the number of sessions a fill with these options creates.
func (o Options) Sessions() int {
	o = o.withDefaults()
	return (o.Calls + o.CallsPerSession - 1) / o.CallsPerSession
}

// SessionID is the id of session k: a UUID-shaped MD5 of k, computed the
// same way the server computes it (UUIDNumToString(MD5(toString(k)))), so
// ids spread over the key space as real random session ids do.
func SessionID(k int) string {
	sum := md5.Sum([]byte(strconv.Itoa(k)))
	h := hex.EncodeToString(sum[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// Fill inserts o.Calls tool calls with their answers and session rows. One
// call in ten is truncated (a third of those silently), answers are graded
// by session, and every row has version 1.
func Fill(ctx context.Context, s *chstore.Store, o Options) error {
	o = o.withDefaults()
	if o.Calls <= 0 {
		return nil
	}
	db := migrations.QuoteIdent(s.Database())
	turns := (o.CallsPerSession + o.CallsPerTurn - 1) / o.CallsPerTurn
	vars := strings.NewReplacer(
		"{db}", db,
		"{calls}", strconv.Itoa(o.Calls),
		"{sessions}", strconv.Itoa(o.Sessions()),
		"{cps}", strconv.Itoa(o.CallsPerSession),
		"{cpt}", strconv.Itoa(o.CallsPerTurn),
		"{turns}", strconv.Itoa(turns),
		"{answers}", strconv.Itoa(o.Sessions()*turns),
		"{first}", strconv.Itoa(o.FirstSession),
		"{start}", strconv.FormatInt(o.Start.Unix(), 10),
		"{sgap}", strconv.FormatInt(int64(o.SessionGap/time.Second), 10),
		"{cgap}", strconv.FormatInt(int64(o.CallGap/time.Second), 10),
	)
	for _, q := range []struct{ what, sql string }{
		{"tool calls", fillToolCalls},
		{"answers", fillAnswers},
		{"sessions", fillSessions},
	} {
		if err := s.Conn().Exec(ctx, vars.Replace(q.sql)); err != nil {
			return fmt.Errorf("fill %s: %w", q.what, err)
		}
	}
	return nil
}

// In the statements, k is the session number and i the call's index in it.
// Every expression runs on ClickHouse 18.16. Nullable values are built with
// CAST(if(c, x, NULL) AS Nullable(UInt64)): 18.16 rejects toNullable inside if.
const fillToolCalls = `
INSERT INTO {db}.tool_calls (session_id, call_id, ts, ts_ns, tool, source, harness_version, model, project, cwd,
  git_branch, agent_id, sidechain, turn, message_id, arguments, target, is_error,
  original_bytes, original_chars, original_lines, original_tokens, original_source,
  context_bytes, context_chars, context_lines, context_tokens,
  truncated, truncation_kind, strategy, partial_by_request, shown_start, shown_end, shown_unit, total, reason,
  disclosure_range, disclosure_reason, disclosure_next, disclosure_score, next_hint, saved_ref, ref_version,
  marker, marker_understated, detector, followed_up, continuation_of, session_coverage, searched,
  original_sha256, context_sha256, source_file, source_line, version)
SELECT
  UUIDNumToString(toFixedString(MD5(toString(k)), 16)),
  concat('toolu_', lower(hex(MD5(concat(toString(k), ':', toString(i)))))),
  toDateTime({start} + k * {sgap} + i * {cgap}),
  toUInt32((number * 7919) % 1000000000),
  tool,
  arrayElement(['claude_code', 'codex', 'pi'], 1 + k % 3),
  '2.1.22', 'claude-opus-4-5-20251101', '-Users-dev-acme', '/Users/dev/acme', 'main', '', 0,
  toUInt32(intDiv(i, {cpt})),
  concat('msg_', lower(hex(MD5(concat(toString(k), ':', toString(i), ':m'))))),
  concat('{"file_path":"/Users/dev/acme/src/file', toString(number % 997), '.go"}'),
  concat('/Users/dev/acme/src/file', toString(number % 997), '.go'),
  0,
  CAST(orig AS Nullable(UInt64)), CAST(orig AS Nullable(UInt64)), CAST(20 + number % 5000 AS Nullable(UInt64)),
  CAST(intDiv(orig + 3, 4) AS Nullable(UInt64)),
  if(cut, 'marker', 'harness_metadata'),
  CAST(if(cut, 1000, orig) AS Nullable(UInt64)), CAST(if(cut, 1000, orig) AS Nullable(UInt64)),
  CAST(if(cut, 20, 20 + number % 5000) AS Nullable(UInt64)), CAST(if(cut, 250, intDiv(orig + 3, 4)) AS Nullable(UInt64)),
  cut, if(cut, if(number % 30 = 0, 'silent', 'explicit'), 'none'), if(cut, 'head', 'none'), 0,
  CAST(if(cut, 0, NULL) AS Nullable(UInt64)), CAST(if(cut, 1000, NULL) AS Nullable(UInt64)), if(cut, 'chars', ''),
  CAST(if(cut, orig, NULL) AS Nullable(UInt64)), if(cut, 'cap_chars', ''),
  cut, cut, 0, if(cut, 2, 0), '', '', '',
  if(cut, concat('... [', toString(orig - 1000), ' characters truncated] ...'), ''), 0, 'bench', 0, '',
  CAST(if(cut, 1000 / orig, 1) AS Nullable(Float64)), 0,
  '', '', '/bench/session.jsonl', i + 1,
  toUInt64(1)
FROM (
  SELECT number, {first} + intDiv(number, {cps}) AS k, number % {cps} AS i,
    arrayElement(['Read', 'Bash', 'Grep', 'WebFetch', 'Edit'], 1 + number % 5) AS tool,
    number % 10 = 0 AS cut, toUInt64(1000 + number % 200000) AS orig
  FROM system.numbers LIMIT {calls}
)`

const fillAnswers = `
INSERT INTO {db}.answers (session_id, message_id, ts, ts_ns, turn, source, model, agent_id, sidechain, text,
  input_call_ids, incomplete_inputs, absence_claim, risk, reasons, reason_calls, verdict, version)
SELECT
  UUIDNumToString(toFixedString(MD5(toString(k)), 16)),
  concat('msg_', lower(hex(MD5(concat(toString(k), ':', toString(t), ':answer'))))),
  toDateTime({start} + k * {sgap} + ((t + 1) * {cpt} - 1) * {cgap} + 5),
  0, toUInt32(t),
  arrayElement(['claude_code', 'codex', 'pi'], 1 + k % 3), 'claude-opus-4-5-20251101', '', 0,
  if(claim, 'There is no such setting in the configuration reference.', 'The setting is documented under api.timeout.'),
  arrayMap(j -> concat('toolu_', lower(hex(MD5(concat(toString(k), ':', toString(t * {cpt} + j)))))), range({cpt})),
  [first_call],
  claim,
  arrayElement(['none', 'low', 'medium', 'high'], 1 + k % 4),
  if(claim, ['absence_claim_on_partial_input', 'explicit_truncation', 'not_followed_up'], ['explicit_truncation', 'not_followed_up']),
  if(claim, [[first_call], [first_call], [first_call]], [[first_call], [first_call]]),
  'generated',
  toUInt64(1)
FROM (
  SELECT {first} + intDiv(number, {turns}) AS k, number % {turns} AS t, k % 4 = 3 AS claim,
    concat('toolu_', lower(hex(MD5(concat(toString(k), ':', toString(t * {cpt})))))) AS first_call
  FROM system.numbers LIMIT {answers}
)`

const fillSessions = `
INSERT INTO {db}.sessions (session_id, source, harness_version, model, project, cwd, git_branch, started_at, ended_at,
  source_file, turns, tool_calls, truncated_calls, silent_calls, answers, risky_answers, compactions, max_risk,
  input_tokens, output_tokens, version)
SELECT
  UUIDNumToString(toFixedString(MD5(toString(k)), 16)),
  arrayElement(['claude_code', 'codex', 'pi'], 1 + k % 3), '2.1.22', 'claude-opus-4-5-20251101',
  '-Users-dev-acme', '/Users/dev/acme', 'main',
  toDateTime({start} + k * {sgap} - 20), toDateTime({start} + k * {sgap} + ({cps} - 1) * {cgap} + 5),
  '/bench/session.jsonl', {turns}, {cps}, intDiv({cps}, 10), intDiv({cps}, 30), {turns}, if(k % 4 = 0, 0, {turns}), 0,
  arrayElement(['none', 'low', 'medium', 'high'], 1 + k % 4), 100000, 5000, toUInt64(1)
FROM (SELECT {first} + number AS k FROM system.numbers LIMIT {sessions})`

// Rewrite inserts every stored row of one session again with its version
// raised by one, as a re-ingestion or re-analysis does: until the parts
// merge, each row is on disk twice and reads must deduplicate.
func Rewrite(ctx context.Context, s *chstore.Store, sessionID string) error {
	for _, table := range []string{"tool_calls", "answers", "sessions"} {
		rows, err := s.Conn().Query(ctx, "SELECT name FROM system.columns WHERE database = ? AND table = ?", s.Database(), table)
		if err != nil {
			return fmt.Errorf("columns of %s: %w", table, err)
		}
		var cols, exprs []string
		for rows.Next() {
			var name string
			if err := rows.Scan(&name); err != nil {
				rows.Close()
				return fmt.Errorf("columns of %s: %w", table, err)
			}
			cols = append(cols, migrations.QuoteIdent(name))
			expr := migrations.QuoteIdent(name)
			if name == "version" {
				expr += " + 1"
			}
			exprs = append(exprs, expr)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("columns of %s: %w", table, err)
		}
		t := migrations.QuoteIdent(s.Database()) + "." + migrations.QuoteIdent(table)
		q := "INSERT INTO " + t + " (" + strings.Join(cols, ", ") + ") SELECT " + strings.Join(exprs, ", ") +
			" FROM " + t + " WHERE session_id = ?"
		if err := s.Conn().Exec(ctx, q, sessionID); err != nil {
			return fmt.Errorf("rewrite %s of %s: %w", table, sessionID, err)
		}
	}
	return nil
}
