package dashboards_test

// The panels that read tool_call_rollup must show exactly what the same
// panel computed from tool_calls FINAL shows. testdata/exact_panels.json
// holds those exact queries: each rollup-backed panel's query as it was
// before the rollups, reading tool_calls FINAL only (with medianExact, the
// exact median both now compute). Every panel is compared with its exact
// query, row for row, in every scenario, at each stage of a rollup's life:
// before any snapshot, fresh, stale after calls were re-written and added,
// and refreshed again.

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/ctxaudit/ctxaudit/dashboards/internal/grafana"
	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/schema"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

// exactPanels reads testdata/exact_panels.json: dashboard uid → panel title → SQL.
func exactPanels(t testing.TB) map[string]map[string]string {
	return panelQueries(t, "testdata/exact_panels.json")
}

// panelQueries reads a file of queries by dashboard uid and panel title.
func panelQueries(t testing.TB, file string) map[string]map[string]string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]map[string]string
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return out
}

// Every panel that reads the rollup has an exact query to be compared with
// (or is a bounded panel, see boundedPanels), and every exact query belongs
// to such a panel.
func TestRollupPanelsHaveExactQueries(t *testing.T) {
	exact, bounded := exactPanels(t), boundedPanels(t)
	seen := 0
	for _, d := range loadDashboards(t) {
		for _, p := range d.AllPanels() {
			for _, tg := range p.Targets {
				_, ok := exact[d.UID][p.Title]
				_, bounds := bounded[d.UID][p.Title]
				reads := strings.Contains(tg.RawSQL, "FROM tool_call_rollup\n")
				switch {
				case bounds:
					// Reads the rollup only for its bound, tested in bounded_test.go.
				case reads && !ok:
					t.Errorf("%s panel %q reads tool_call_rollup but has no exact query in testdata/exact_panels.json", d.UID, p.Title)
				case ok && !reads:
					t.Errorf("%s panel %q has an exact query but does not read tool_call_rollup", d.UID, p.Title)
				case ok:
					seen++
					if strings.Contains(exact[d.UID][p.Title], "tool_call_rollup") {
						t.Errorf("exact query of %q reads the rollup", p.Title)
					}
				}
			}
		}
	}
	n := 0
	for _, m := range exact {
		n += len(m)
	}
	if seen != n {
		t.Errorf("%d exact queries, %d matched to panels", n, seen)
	}
}

// blockRead is how a panel reads a partition's newest block number.
var blockRead = regexp.MustCompile(`toUInt64\(max\(max_block_number\)\)( \+ (\d+))?`)

// Every panel compares a snapshot's base_block with the partition's newest
// block number tagged with the generation RefreshRollups writes: a panel
// that compared the plain number would take a snapshot of an older
// generation (one without truncated_analysed, from before migration 0008)
// for fresh, and one comparing another generation would never use the
// rollup at all.
func TestRollupPanelsReadTheCurrentGeneration(t *testing.T) {
	want := strconv.FormatUint(chstore.RollupBlockBase, 10)
	n := 0
	for _, d := range loadDashboards(t) {
		for _, p := range d.AllPanels() {
			for _, tg := range p.Targets {
				for _, m := range blockRead.FindAllStringSubmatch(tg.RawSQL, -1) {
					n++
					if m[2] != want {
						t.Errorf("%s panel %q reads %q, want max_block_number + %s (chstore.RollupBlockBase)", d.UID, p.Title, m[0], want)
					}
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no panel reads max_block_number")
	}
}

func TestRollupPanelsEqualExactQueries(t *testing.T) {
	ctx := context.Background()
	addr, store := chtest.NewDatabase(t)
	now := time.Now().UTC().Truncate(time.Hour)
	fx := loadFixtureAt(t, ctx, store, now)
	conn := grafanaConn(t, addr)
	exact := exactPanels(t)
	ds := loadDashboards(t)

	freshDays := func() uint64 {
		t.Helper()
		res, err := runSQL(ctx, conn, "SELECT count() FROM tool_call_rollup_days WHERE (day, base_block) IN "+
			"(SELECT toUInt32(partition), toUInt64(max(max_block_number)) + "+strconv.FormatUint(chstore.RollupBlockBase, 10)+
			" FROM system.parts WHERE database = currentDatabase() AND table = 'tool_calls' AND active GROUP BY partition)")
		if err != nil {
			t.Fatal(err)
		}
		return res.Rows[0][0].(uint64)
	}
	// Every scenario where the rollup is in play; the fixture's own
	// scenarios (variables, quoting, empty range) once it is fresh.
	wide := rollupScenarios(fx, now)
	full := append(slices.Clone(wide), scenarios(fx)...)
	compare := func(stage string, scs []scenario) int {
		t.Helper()
		n := 0
		for _, sc := range scs {
			for _, d := range ds {
				if exact[d.UID] == nil {
					continue
				}
				vars := resolveVariables(t, ctx, conn, d, sc)
				req := grafana.Request{From: sc.from, To: sc.to, Interval: sc.interval, Vars: vars}
				for _, p := range d.AllPanels() {
					want, ok := exact[d.UID][p.Title]
					if !ok {
						continue
					}
					where := stage + "/" + sc.name + "/" + d.UID + " panel " + p.Title
					got := runExpanded(t, ctx, conn, where, p.Targets[0].RawSQL, req)
					ref := runExpanded(t, ctx, conn, where+" (exact)", want, req)
					if got == nil || ref == nil {
						continue
					}
					if g, w := canonical(got), canonical(ref); !slices.Equal(g, w) {
						t.Errorf("%s: the rollup-backed panel differs from the exact query\n got: %q\nwant: %q", where, g, w)
					}
					n++
				}
			}
		}
		return n
	}

	// No snapshot yet: every day comes from tool_calls.
	if n := freshDays(); n != 0 {
		t.Fatalf("%d fresh days before any refresh", n)
	}
	compared := compare("no-snapshot", wide[:2])

	days, err := store.RefreshRollups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(days) < 2 {
		t.Fatalf("refreshed %v, want the fixture's days (at least 2)", days)
	}
	if n := freshDays(); n != uint64(len(days)) {
		t.Fatalf("%d fresh days after refreshing %d", n, len(days))
	}
	compared += compare("fresh", full)
	compared += compareRollupOnly(t, ctx, conn, ds, exact, wide[:2])

	// Re-write a call of a fresh day with other values and add one: that
	// day's snapshot goes stale and the panels must read it from tool_calls.
	before := freshDays()
	rewriteFixtureCalls(t, ctx, store, now)
	if n := freshDays(); n >= before {
		t.Fatalf("%d fresh days after re-writing calls, want fewer than %d", n, before)
	}
	compared += compare("stale", wide)

	again, err := store.RefreshRollups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(again) == 0 || len(again) >= len(days) {
		t.Fatalf("second refresh redid %v, want only the re-written days", again)
	}
	if n := freshDays(); n != uint64(len(days)) {
		t.Fatalf("%d fresh days after the second refresh, want %d", n, len(days))
	}
	compared += compare("refreshed", wide)
	if none, err := store.RefreshRollups(ctx); err != nil || len(none) != 0 {
		t.Fatalf("a refresh with nothing written since redid %v (%v)", none, err)
	}
	t.Logf("%d panel results compared with their exact queries", compared)
}

func runExpanded(t *testing.T, ctx context.Context, conn driver.Conn, where, sql string, req grafana.Request) *result {
	t.Helper()
	expanded, err := grafana.Expand(sql, req)
	if err != nil {
		t.Errorf("%s: expand: %v", where, err)
		return nil
	}
	res, err := runSQL(ctx, conn, expanded)
	if err != nil {
		t.Errorf("%s: %v\n%s", where, err, expanded)
		return nil
	}
	return res
}

// rollupScenarios are ranges and intervals that select each part of the
// rollup: whole days (the day rows), whole hours of partial days (the hour
// rows), ranges cutting hours (tool_calls for the cut hours), and the
// whole-hour intervals under which time series read the hour rows.
func rollupScenarios(fx fixture, now time.Time) []scenario {
	all := pickAll
	oneTool := func(t testing.TB, v grafana.Variable, options []string) grafana.Selection {
		if v.Name == "tool" {
			return grafana.Multi(first(options, 1)...)
		}
		return grafana.All(v.Multi, options)
	}
	day := 24 * time.Hour
	startOfDay := now.Add(-30 * time.Hour).Truncate(day)
	return []scenario{
		{name: "whole-days-hourly", from: startOfDay.Add(-day), to: now.Add(2 * day).Truncate(day), interval: time.Hour, pick: all},
		{name: "whole-days-daily", from: startOfDay.Add(-day), to: now.Add(2 * day).Truncate(day), interval: day, pick: all},
		{name: "whole-hours", from: now.Add(-29 * time.Hour), to: now.Add(-time.Hour), interval: 2 * time.Hour, pick: all},
		{name: "cut-hours", from: now.Add(-30*time.Hour + 7*time.Minute), to: now.Add(-26*time.Hour - 13*time.Minute), interval: time.Hour, pick: all},
		{name: "cut-hours-one-tool", from: now.Add(-30*time.Hour + 7*time.Minute), to: now.Add(time.Hour), interval: 3 * time.Hour, pick: oneTool},
		{name: "fixture-range-hourly", from: fx.From, to: fx.To, interval: time.Hour, pick: oneTool},
	}
}

// rewriteFixtureCalls writes, in the fixture's first day, a new version of
// one call with other values (a silent WebFetch becomes an explicit, fully
// disclosed cut with a smaller original) and one new call.
func rewriteFixtureCalls(t testing.TB, ctx context.Context, store *chstore.Store, now time.Time) {
	t.Helper()
	at := now.Add(-30 * time.Hour).Add(2*time.Minute + 123*time.Millisecond)
	rewritten := schema.ToolCall{
		SessionID: "cc-absence-webfetch", CallID: "cc-2", Tool: "WebFetch", Timestamp: at, Source: schema.HarnessClaudeCode,
		HarnessVersion: "2.1.6", Model: "claude-sonnet-4-5", Project: "ctxaudit", Cwd: "/home/dev/ctxaudit", GitBranch: "main",
		MessageID: "msg-cc-2", Target: "https://docs.example.com/config",
		Forensics: schema.Forensics{Original: orig(120000, schema.SourceHarnessMetadata), Context: sizes(100000), Truncated: true,
			Kind: schema.KindExplicit, Strategy: schema.StrategySummary, Reason: "summarised",
			Disclosure: schema.Disclosure{Range: true, Reason: true, Next: true}, Detector: "fixture"},
		SourceFile: "/fixtures/cc-absence-webfetch.jsonl", SourceLine: 3,
	}
	added := rewritten
	added.CallID, added.MessageID, added.Timestamp = "cc-2b", "msg-cc-2b", at.Add(time.Minute)
	added.Forensics = schema.Forensics{Original: orig(9000, schema.SourceHarnessMetadata), Context: sizes(4000), Truncated: true,
		Kind: schema.KindSilent, Strategy: schema.StrategyHead, Reason: "cap_chars", Detector: "fixture"}
	time.Sleep(2 * time.Millisecond) // a later write clock than the fixture's
	if err := store.WriteToolCalls(ctx, []schema.ToolCall{rewritten, added}); err != nil {
		t.Fatalf("re-write fixture calls: %v", err)
	}
}

// baseSide is where a rollup-backed panel reads tool_calls itself.
var baseSide = regexp.MustCompile(`FROM tool_calls FINAL(\s+)WHERE `)

// compareRollupOnly runs every rollup-backed panel with its tool_calls part
// emptied, on ranges of whole days that are all fresh: the rollup alone must
// then give the exact figures, so the panels do read it.
func compareRollupOnly(t *testing.T, ctx context.Context, conn driver.Conn, ds []*grafana.Dashboard, exact map[string]map[string]string, scs []scenario) int {
	t.Helper()
	n := 0
	for _, sc := range scs {
		for _, d := range ds {
			if exact[d.UID] == nil {
				continue
			}
			vars := resolveVariables(t, ctx, conn, d, sc)
			req := grafana.Request{From: sc.from, To: sc.to, Interval: sc.interval, Vars: vars}
			for _, p := range d.AllPanels() {
				want, ok := exact[d.UID][p.Title]
				if !ok {
					continue
				}
				where := "rollup-only/" + sc.name + "/" + d.UID + " panel " + p.Title
				sql := p.Targets[0].RawSQL
				if len(baseSide.FindAllString(sql, -1)) != 1 {
					t.Errorf("%s: want one tool_calls part", where)
					continue
				}
				got := runExpanded(t, ctx, conn, where, baseSide.ReplaceAllString(sql, "FROM tool_calls FINAL${1}WHERE 0 = 1 AND "), req)
				ref := runExpanded(t, ctx, conn, where+" (exact)", want, req)
				if got == nil || ref == nil {
					continue
				}
				if g, w := canonical(got), canonical(ref); !slices.Equal(g, w) {
					t.Errorf("%s: the rollup alone differs from the exact query\n got: %q\nwant: %q", where, g, w)
				}
				n++
			}
		}
	}
	return n
}
