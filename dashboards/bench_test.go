package dashboards_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/ctxaudit/ctxaudit/dashboards/internal/grafana"
	"github.com/ctxaudit/ctxaudit/internal/chtest"
)

// BenchmarkPanels times every panel's and variable's query, expanded as
// Grafana sends it with every filter at All (the widest, slowest case), on a
// generated audit table. Figures in docs/grafana.md come from:
//
//	CTXAUDIT_BENCH_ROWS=10000000 go test -run '^$' -bench BenchmarkPanels -benchtime 5x -timeout 60m ./dashboards/
//
// Environment:
//
//	CTXAUDIT_BENCH_ROWS   tool calls to generate (default 100000, so `make bench` stays quick)
//	CTXAUDIT_BENCH_DAYS   days the data spans, ending now (default 30)
//	CTXAUDIT_BENCH_RANGE  dashboard time range in days, ending now (default 7, the dashboards' default)
//
// The data is generated server-side (INSERT … SELECT … FROM system.numbers):
// 100 calls per session, sessions spread evenly over the span, their ids
// random like UUIDs; harnesses, tools, models and projects with skewed
// shares; log-uniform original sizes from 55 B to 730 KB cut at per-tool caps; every truncation kind and strategy; one answer
// per five calls with ~6% high, 10% medium, 10% low risk; one session row per
// session; and 1% of the calls written a second time with a newer version
// and left unmerged, as after a re-ingestion. It then takes the rollups'
// snapshots (timed), and times each rollup-backed panel next to the exact
// query it replaced ("exact: …", testdata/exact_panels.json).
func BenchmarkPanels(b *testing.B) {
	rows := envInt(b, "CTXAUDIT_BENCH_ROWS", 100_000)
	days := envInt(b, "CTXAUDIT_BENCH_DAYS", 30)
	rangeDays := envInt(b, "CTXAUDIT_BENCH_RANGE", 7)
	ctx := context.Background()
	addr, store := chtest.NewDatabase(b)
	now := time.Now().UTC().Truncate(time.Second)
	start := time.Now()
	generate(b, ctx, store.Conn(), store.Database(), rows, days, now)
	b.Logf("generated %d tool calls over %d days in %s", rows, days, time.Since(start).Round(time.Second))
	// Snapshot the rollups as a periodic refresh would after the writes.
	start = time.Now()
	refreshed, err := store.RefreshRollups(ctx)
	if err != nil {
		b.Fatal(err)
	}
	refreshTime := time.Since(start)

	conn := grafanaConn(b, addr)
	from, to := now.Add(-time.Duration(rangeDays)*24*time.Hour), now
	session := benchSession(b, ctx, conn, rows/100/2)
	sc := scenario{
		name: "bench", from: from, to: to, interval: time.Duration(rangeDays) * 24 * time.Hour / 1000,
		pick: func(t testing.TB, v grafana.Variable, options []string) grafana.Selection {
			switch {
			case v.Name == "session_id":
				return grafana.Single(session)
			case v.Type == "textbox":
				return grafana.Single("")
			}
			return grafana.All(v.Multi, options)
		},
	}
	type timing struct {
		name      string
		best, avg time.Duration
		rows      int
	}
	var timings []timing
	exact := exactPanels(b)
	// A bounded panel's query without its bound, for comparison too.
	for uid, panels := range boundedPanels(b) {
		if exact[uid] == nil {
			exact[uid] = map[string]string{}
		}
		maps.Copy(exact[uid], panels)
	}
	for _, d := range loadDashboards(b) {
		vars := resolveVariables(b, ctx, conn, d, sc)
		req := grafana.Request{From: sc.from, To: sc.to, Interval: sc.interval, Vars: vars}
		type query struct {
			name, sql string
			interval  time.Duration
		}
		var queries []query
		for _, v := range d.Templating.List {
			if sql, _ := v.SQL(); sql != "" {
				queries = append(queries, query{"variable " + v.Name, sql, sc.interval})
			}
		}
		for _, p := range d.AllPanels() {
			// Grafana's $__interval is at least the panel's minimum interval.
			interval := sc.interval
			if p.Interval != "" {
				min, err := time.ParseDuration(p.Interval)
				if err != nil {
					b.Fatalf("%s panel %q: interval %q: %v", d.UID, p.Title, p.Interval, err)
				}
				interval = max(interval, min)
			}
			for _, tg := range p.Targets {
				queries = append(queries, query{p.Title, tg.RawSQL, interval})
			}
			// The exact query a rollup-backed panel replaced, for comparison.
			if sql, ok := exact[d.UID][p.Title]; ok {
				queries = append(queries, query{"exact: " + p.Title, sql, interval})
			}
		}
		for _, q := range queries {
			req := req
			req.Interval = q.interval
			sql, err := grafana.Expand(q.sql, req)
			if err != nil {
				b.Fatalf("%s %s: %v", d.UID, q.name, err)
			}
			name := d.UID + "/" + q.name
			b.Run(strings.ReplaceAll(name, " ", "_"), func(b *testing.B) {
				var total, best time.Duration
				var n, got int
				for b.Loop() {
					t0 := time.Now()
					res, err := runSQL(ctx, conn, sql)
					if err != nil {
						b.Fatalf("%v\n%s", err, sql)
					}
					d := time.Since(t0)
					total += d
					if n == 0 || d < best {
						best = d
					}
					n++
					got = len(res.Rows)
				}
				timings = append(timings, timing{name, best, total / time.Duration(max(n, 1)), got})
			})
		}
	}
	// Sorted by the best run: on a shared machine the mean also measures
	// the neighbours.
	slices.SortFunc(timings, func(a, b timing) int { return int(b.best - a.best) })
	var sb strings.Builder
	fmt.Fprintf(&sb, "rollups: %d day partitions snapshot in %s\n", len(refreshed), refreshTime.Round(time.Millisecond))
	fmt.Fprintf(&sb, "%d tool calls over %d days, dashboard range %d days, slowest first:\n", rows, days, rangeDays)
	fmt.Fprintf(&sb, "  %8s  %8s  %5s\n", "best", "mean", "rows")
	for _, t := range timings {
		fmt.Fprintf(&sb, "  %8s  %8s  %5d  %s\n", t.best.Round(time.Millisecond), t.avg.Round(time.Millisecond), t.rows, t.name)
	}
	// Printed, not logged: a parent benchmark's log is only shown with -v.
	fmt.Print(sb.String())
}

func envInt(b testing.TB, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(strings.ReplaceAll(s, "_", ""))
	if err != nil || n <= 0 {
		b.Fatalf("%s=%q: want a positive integer", name, s)
	}
	return n
}

// generate fills db with rows tool calls (and their answers and sessions)
// spread over the days before now, server-side.
func generate(b testing.TB, ctx context.Context, conn driver.Conn, db string, rows, days int, now time.Time) {
	b.Helper()
	sessions := max(rows/100, 1)
	span := days * 86400
	r := strings.NewReplacer("{db}", db, "{start}", strconv.FormatInt(now.Unix()-int64(span), 10), "{span}", strconv.Itoa(span),
		"{sessions}", strconv.Itoa(sessions), "{rows}", strconv.Itoa(rows), "{answers}", strconv.Itoa(rows/5), "{session_id}", benchSessionID)
	for _, q := range []string{genCalls, genAnswers, genSessions} {
		if err := conn.Exec(ctx, r.Replace(q)); err != nil {
			b.Fatalf("generate: %v", err)
		}
	}
	// Let the merges the bulk insert started finish, so timings do not depend
	// on them (bounded: a busy server is timed as it is).
	for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		res, err := runSQL(ctx, conn, "SELECT count() FROM system.merges WHERE database = '"+db+"'")
		if err != nil {
			b.Fatal(err)
		}
		if res.Rows[0][0].(uint64) == 0 {
			break
		}
	}
	// Re-write 1% of the calls with a newer version, as a re-ingestion would;
	// they stay unmerged, so FINAL has duplicates to collapse.
	var cols []string
	res, err := runSQL(ctx, conn, "SELECT name FROM system.columns WHERE database = '"+db+"' AND table = 'tool_calls' AND name != 'version'")
	if err != nil {
		b.Fatal(err)
	}
	for _, row := range res.Rows {
		cols = append(cols, row[0].(string))
	}
	list := strings.Join(cols, ", ")
	if err := conn.Exec(ctx, "INSERT INTO "+db+".tool_calls ("+list+", version) SELECT "+list+", 2 FROM "+db+".tool_calls WHERE cityHash64(call_id) % 100 = 7"); err != nil {
		b.Fatalf("generate duplicates: %v", err)
	}
}

// benchSessionID is the id of generated session number s: 32 hex digits,
// random as harnesses' UUIDs are, so that the sessions of a day partition
// are spread over its whole primary key as real ones are (sequential ids
// would let a lookup of a few sessions skip most of each partition).
const benchSessionID = "concat('bench-', lower(hex(cityHash64(s, 98))), lower(hex(cityHash64(s, 99))))"

// benchSession asks the server for the id of generated session number s.
func benchSession(b testing.TB, ctx context.Context, conn driver.Conn, s int) string {
	b.Helper()
	res, err := runSQL(ctx, conn, "SELECT "+benchSessionID+" FROM (SELECT toUInt64("+strconv.Itoa(s)+") AS s)")
	if err != nil || len(res.Rows) != 1 {
		b.Fatalf("id of bench session %d: %v", s, err)
	}
	return res.Rows[0][0].(string)
}

const genCalls = `
INSERT INTO {db}.tool_calls (session_id, call_id, ts, ts_ns, tool, source, harness_version, model, project, cwd, git_branch, turn, message_id, target, is_error,
  original_bytes, original_chars, original_lines, original_tokens, original_source, context_bytes, context_chars, context_lines, context_tokens,
  truncated, truncation_kind, strategy, partial_by_request, shown_start, shown_end, shown_unit, total, reason,
  disclosure_range, disclosure_reason, disclosure_next, disclosure_score, next_hint, saved_ref, marker, marker_understated, detector,
  followed_up, session_coverage, version)
SELECT session_id, call_id, ts, ts_ns, tool, source, harness_version, model, project, cwd, git_branch, turn, message_id, target, is_error,
  original_bytes, original_bytes, if(isNull(original_bytes), NULL, intDiv(original_bytes, 60) + 1), if(isNull(original_bytes), NULL, intDiv(original_bytes + 3, 4)), original_source,
  context_bytes, context_bytes, intDiv(context_bytes, 60) + 1, intDiv(context_bytes + 3, 4),
  truncated, truncation_kind, strategy, 0, if(truncated, 0, NULL), if(truncated, context_bytes, NULL), if(truncated, 'bytes', ''), if(truncated, original_bytes, NULL), if(truncated, reason, ''),
  d_range, d_reason, d_next, d_range + d_reason + d_next, if(d_next, 'Use offset to continue', ''), if(strategy = 'spill_to_file', concat('/tmp/out/', call_id, '.txt'), ''),
  if(kind_code = 1, '[output truncated]', ''), understated, 'bench',
  followed_up, if(truncated, if(followed_up, 1., toFloat64(context_bytes) / original_bytes), NULL), 1
FROM
(
  SELECT *,
    if(kind_code > 0, 1, 0) AS truncated,
    arrayElement(['none', 'explicit', 'silent', 'suspected'], kind_code + 1) AS truncation_kind,
    if(kind_code = 0, 'none', strategy0) AS strategy,
    if(kind_code = 1 AND dr_u < 0.85, 1, 0) AS d_range,
    if(kind_code = 1 AND dr_u < 0.6, 1, 0) AS d_reason,
    if(kind_code = 1 AND dr_u < (if(tool IN ('WebFetch', 'shell_command'), 0.2, 0.7)), 1, 0) AS d_next,
    if(kind_code = 1 AND tool IN ('Bash', 'bash') AND dr_u > 0.8, 1, 0) AS understated,
    if(kind_code > 0 AND fu_u < (if(tool = 'WebFetch', 0.1, 0.5)), 1, 0) AS followed_up
  FROM
  (
    SELECT *,
      if(isNull(original_bytes), if(raw_bytes > cap AND u3 < 0.5, toUInt64(cap), raw_bytes), least(original_bytes, toUInt64(cap))) AS context_bytes,
      multiIf(isNull(original_bytes), if(raw_bytes > cap AND u3 < 0.5, 3, 0), original_bytes <= cap, 0, tool = 'WebFetch' OR u3 < 0.04, 2, 1) AS kind_code,
      if(isNull(original_bytes), 'unknown', 'harness_metadata') AS original_source,
      multiIf(tool = 'WebFetch', 'summary', tool IN ('Read', 'read'), 'paginated', tool IN ('Bash', 'shell_command'), 'head_tail', tool = 'bash', 'tail', u3 < 0.3, 'spill_to_file', 'head') AS strategy0,
      multiIf(tool = 'WebFetch', 'summarised', tool IN ('Read', 'read'), 'cap_lines', 'cap_chars') AS reason
    FROM
    (
      SELECT *,
        toUInt64(exp(4 + 9.5 * u1)) AS raw_bytes,
        if(u2 < 0.08, NULL, raw_bytes) AS original_bytes,
        multiIf(tool IN ('Read', 'read'), 100000, tool = 'WebFetch', 40000, tool IN ('Bash', 'bash'), 30000, tool = 'shell_command', 10000, tool IN ('Grep', 'grep'), 20000, 50000) AS cap,
        multiIf(tool IN ('Read', 'read', 'Edit', 'apply_patch'), concat('/home/dev/', project, '/src/file', toString(cityHash64(number, 4) % 3000), '.go'),
                tool = 'WebFetch', concat('https://docs.example.com/', toString(cityHash64(number, 4) % 500)),
                tool IN ('Grep', 'grep', 'Glob'), concat('pattern', toString(cityHash64(number, 4) % 200)),
                concat('go test ./pkg', toString(cityHash64(number, 4) % 50), '/...')) AS target
      FROM
      (
        SELECT number,
          intDiv(number, 100) AS s,
          {session_id} AS session_id,
          concat('call-', toString(number)) AS call_id,
          toDateTime({start} + intDiv(s * {span}, {sessions}) + (number % 100) * 9) AS ts,
          toUInt32(cityHash64(number, 9) % 1000000000) AS ts_ns,
          cityHash64(s, 1) % 100 AS sh,
          multiIf(sh < 55, 'claude_code', sh < 80, 'codex', sh < 92, 'pi', sh < 96, 'gemini_cli', 'opencode') AS source,
          multiIf(source = 'claude_code', arrayElement(['Read','Read','Read','Read','Grep','Grep','Bash','Bash','Bash','WebFetch','Glob','Edit'], 1 + cityHash64(number, 2) % 12),
                  source = 'codex', arrayElement(['shell_command','shell_command','shell_command','shell_command','shell_command','shell_command','shell_command','read','apply_patch','apply_patch'], 1 + cityHash64(number, 2) % 10),
                  source = 'pi', arrayElement(['read','read','bash','bash','grep'], 1 + cityHash64(number, 2) % 5),
                  arrayElement(['read_file','run_shell_command','web_fetch'], 1 + cityHash64(number, 2) % 3)) AS tool,
          concat(source, '-1.', toString(cityHash64(s, 5) % 4)) AS harness_version,
          multiIf(source = 'claude_code', arrayElement(['claude-sonnet-4-5', 'claude-opus-4-1'], 1 + cityHash64(s, 6) % 2),
                  source = 'codex', arrayElement(['gpt-5-codex', 'gpt-5'], 1 + cityHash64(s, 6) % 2),
                  source = 'pi', 'claude-sonnet-4-5', 'gemini-2.5-pro') AS model,
          concat('proj-', toString(cityHash64(s, 3) % 40)) AS project,
          concat('/home/dev/', project) AS cwd,
          'main' AS git_branch,
          toUInt32(intDiv(number % 100, 5)) AS turn,
          concat('msg-', toString(intDiv(number, 2))) AS message_id,
          toUInt8(cityHash64(number, 7) % 50 = 0) AS is_error,
          (cityHash64(number, 11) % 10000) / 10000. AS u1,
          (cityHash64(number, 12) % 10000) / 10000. AS u2,
          (cityHash64(number, 13) % 10000) / 10000. AS u3,
          (cityHash64(number, 14) % 10000) / 10000. AS dr_u,
          (cityHash64(number, 15) % 10000) / 10000. AS fu_u
        FROM system.numbers LIMIT {rows}
      )
    )
  )
)
`

const genAnswers = `
INSERT INTO {db}.answers (session_id, message_id, ts, ts_ns, turn, source, model, text, input_call_ids, incomplete_inputs, absence_claim, risk, reasons, reason_calls, verdict, version)
SELECT session_id, message_id, ts, 0, turn, source, model,
  if(absence_claim, 'There is no such setting in the configuration.', 'The handler is defined in server.go.'),
  [c1, c2], if(risk IN ('medium', 'high'), [c1], emptyArrayString()), absence_claim, risk,
  multiIf(risk = 'high' AND absence_claim, ['absence_claim_on_partial_input', 'silent_truncation', 'not_followed_up'],
          risk = 'high', ['silent_truncation', 'not_followed_up'],
          risk = 'medium', ['explicit_truncation', 'not_followed_up'],
          risk = 'low', ['recovered_before_answer'], emptyArrayString()),
  multiIf(risk = 'high' AND absence_claim, [[c1], [c1], [c1]], risk = 'high', [[c1], [c1]], risk = 'medium', [[c1], [c1]], risk = 'low', [[c1]], arraySlice([[c1]], 1, 0)),
  concat('Answer is rated ', toString(risk), '.'), 1
FROM
(
  SELECT number, intDiv(number, 20) AS s, {session_id} AS session_id,
    concat('answer-', toString(number)) AS message_id,
    toDateTime({start} + intDiv(s * {span}, {sessions}) + (number % 20) * 45 + 40) AS ts,
    toUInt32(number % 20) AS turn,
    cityHash64(s, 1) % 100 AS sh,
    multiIf(sh < 55, 'claude_code', sh < 80, 'codex', sh < 92, 'pi', sh < 96, 'gemini_cli', 'opencode') AS source,
    multiIf(source = 'claude_code', arrayElement(['claude-sonnet-4-5', 'claude-opus-4-1'], 1 + cityHash64(s, 6) % 2),
            source = 'codex', arrayElement(['gpt-5-codex', 'gpt-5'], 1 + cityHash64(s, 6) % 2),
            source = 'pi', 'claude-sonnet-4-5', 'gemini-2.5-pro') AS model,
    concat('call-', toString(s * 100 + (number % 20) * 5)) AS c1,
    concat('call-', toString(s * 100 + (number % 20) * 5 + 1)) AS c2,
    (cityHash64(number, 21) % 1000) / 1000. AS u,
    multiIf(u < 0.06, 'high', u < 0.16, 'medium', u < 0.26, 'low', 'none') AS risk,
    toUInt8(risk = 'high' AND u < 0.03) AS absence_claim
  FROM system.numbers LIMIT {answers}
)
`

const genSessions = `
INSERT INTO {db}.sessions (session_id, source, harness_version, model, project, cwd, git_branch, started_at, ended_at, source_file, turns, tool_calls, truncated_calls, silent_calls, answers, risky_answers, compactions, max_risk, input_tokens, output_tokens, version)
SELECT {session_id}, source, concat(source, '-1.', toString(cityHash64(s, 5) % 4)), model, project, concat('/home/dev/', project), 'main',
  toDateTime({start} + intDiv(s * {span}, {sessions})), toDateTime({start} + intDiv(s * {span}, {sessions}) + 99 * 9), '',
  20, 100, toUInt32(cityHash64(s, 31) % 30), toUInt32(cityHash64(s, 32) % 4), 20, toUInt32(cityHash64(s, 33) % 6),
  toUInt32(cityHash64(s, 34) % 2), arrayElement(['none', 'low', 'medium', 'high'], 1 + cityHash64(s, 35) % 4), 1000000, 20000, 1
FROM
(
  SELECT number AS s, cityHash64(s, 1) % 100 AS sh,
    multiIf(sh < 55, 'claude_code', sh < 80, 'codex', sh < 92, 'pi', sh < 96, 'gemini_cli', 'opencode') AS source,
    multiIf(source = 'claude_code', arrayElement(['claude-sonnet-4-5', 'claude-opus-4-1'], 1 + cityHash64(s, 6) % 2),
            source = 'codex', arrayElement(['gpt-5-codex', 'gpt-5'], 1 + cityHash64(s, 6) % 2),
            source = 'pi', 'claude-sonnet-4-5', 'gemini-2.5-pro') AS model,
    concat('proj-', toString(cityHash64(s, 3) % 40)) AS project
  FROM system.numbers LIMIT {sessions}
)
`
