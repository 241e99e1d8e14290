package dashboards_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/ctxaudit/ctxaudit/dashboards/internal/grafana"
	"github.com/ctxaudit/ctxaudit/internal/chdbtest"
	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/schema"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

// boundedPanels reads testdata/bounded_panels.json: dashboard uid → panel
// title → the panel's query without its bound. These panels list rows
// ("the 100 latest …") and read the rollup only to find from which hour on
// the range holds enough of them, so that tool_calls FINAL is read for the
// recent end of the range instead of all of it.
func boundedPanels(t testing.TB) map[string]map[string]string {
	return panelQueries(t, "testdata/bounded_panels.json")
}

// boundPrefix opens the bound of a bounded panel's tool_calls reads.
const boundPrefix = "AND ts >= ("

// panelBound is the first bound subquery of sql: `SELECT <bound>` gives the
// time from which the panel reads tool_calls.
func panelBound(t testing.TB, sql string) string {
	t.Helper()
	i := strings.Index(sql, boundPrefix)
	if i < 0 {
		t.Fatalf("no %q in\n%s", boundPrefix, sql)
	}
	start := i + len(boundPrefix) - 1
	depth := 0
	for j := start; j < len(sql); j++ {
		switch sql[j] {
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return sql[start : j+1]
			}
		}
	}
	t.Fatalf("unbalanced bound in\n%s", sql)
	return ""
}

// Each bounded panel is its exact query with one bound added, in every
// tool_calls read it has.
func TestBoundedPanelsAreTheirExactQueries(t *testing.T) {
	bounded := boundedPanels(t)
	seen := 0
	for _, d := range loadDashboards(t) {
		for _, p := range d.AllPanels() {
			want, ok := bounded[d.UID][p.Title]
			if !ok {
				continue
			}
			seen++
			sql := p.Targets[0].RawSQL
			bound := panelBound(t, sql)
			stripped := sql
			for strings.Contains(stripped, boundPrefix) {
				b := panelBound(t, stripped)
				i := strings.Index(stripped, boundPrefix)
				// The bound's line, its indentation and its newline go.
				lineStart := strings.LastIndexByte(stripped[:i], '\n') + 1
				end := i + len(boundPrefix) - 1 + len(b)
				if strings.Join(strings.Fields(b), " ") != strings.Join(strings.Fields(bound), " ") {
					t.Errorf("%s panel %q: the bounds of its tool_calls reads differ", d.UID, p.Title)
				}
				stripped = stripped[:lineStart] + stripped[end+1:]
			}
			if stripped != want {
				t.Errorf("%s panel %q without its bound is not its exact query:\n%s", d.UID, p.Title, stripped)
			}
			if n, reads := strings.Count(sql, boundPrefix), strings.Count(sql, "FROM tool_calls FINAL"); n != reads {
				t.Errorf("%s panel %q: %d bounds for %d tool_calls reads", d.UID, p.Title, n, reads)
			}
		}
	}
	n := 0
	for _, m := range bounded {
		n += len(m)
	}
	if seen != n || n == 0 {
		t.Errorf("%d bounded panels, %d matched to panels", n, seen)
	}
}

// recentSilentCalls writes, per hour over the days before now, silent calls
// of two tools (and a call that was not cut): enough that the 100 latest lie
// in the last day.
func recentSilentCalls(now time.Time, hours int) []schema.ToolCall {
	var calls []schema.ToolCall
	for h := range hours {
		at := now.Add(-time.Duration(h+1) * time.Hour)
		for i, tool := range []string{"Read", "Bash", "Bash"} {
			c := schema.ToolCall{
				SessionID: fmt.Sprintf("bounded-%03d", h/10), CallID: fmt.Sprintf("bounded-%03d-%d", h, i), Tool: tool,
				// Two calls share a timestamp: the order is settled by the ids.
				Timestamp: at.Add(time.Duration(i/2) * 17 * time.Minute), Source: schema.HarnessClaudeCode,
				Model: "claude-sonnet-4-5", Project: "ctxaudit", Target: fmt.Sprintf("/src/file%d.go", h),
				Forensics: schema.Forensics{Original: orig(9000+uint64(h), schema.SourceHarnessMetadata), Context: sizes(4000),
					Truncated: true, Kind: schema.KindSilent, Strategy: schema.StrategyHead, Reason: "cap_chars", Detector: "fixture"},
			}
			calls = append(calls, c)
		}
		calls = append(calls, schema.ToolCall{
			SessionID: fmt.Sprintf("bounded-%03d", h/10), CallID: fmt.Sprintf("bounded-%03d-whole", h), Tool: "Read",
			Timestamp: at.Add(5 * time.Minute), Source: schema.HarnessClaudeCode, Model: "claude-sonnet-4-5", Project: "ctxaudit",
			Forensics: schema.Forensics{Original: orig(100, schema.SourceHarnessMetadata), Context: sizes(100),
				Kind: schema.KindNone, Strategy: schema.StrategyNone, Detector: "fixture"},
		})
	}
	return calls
}

// A bounded panel shows what its exact query shows — before any snapshot,
// with fresh snapshots (where the bound cuts the range), with a filter, and
// after the latest day was re-written so its snapshot is stale — and the
// bound moves back past the hours it cannot count.
func TestBoundedPanelsEqualExactQueries(t *testing.T) {
	addr, store := chtest.NewDatabase(t)
	testBoundedPanels(t, store, grafanaConn(t, addr))
}

// The same on current ClickHouse (chDB 26.7), whose rollups use the modern
// rendering.
func TestBoundedPanelsEqualExactQueriesOnChDB(t *testing.T) {
	e := chdbtest.Open(t)
	store := e.NewStore(t)
	testBoundedPanels(t, store, e.ConnIn(store.Database()))
}

func testBoundedPanels(t *testing.T, store *chstore.Store, conn driver.Conn) {
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Hour)
	const hours = 96 // 4 days, 3 silent calls an hour: 100 in about 34 hours
	calls := recentSilentCalls(now, hours)
	if err := store.WriteToolCalls(ctx, calls); err != nil {
		t.Fatal(err)
	}
	bounded := boundedPanels(t)
	ds := loadDashboards(t)
	all := pickAll
	onlyBash := func(t testing.TB, v grafana.Variable, options []string) grafana.Selection {
		if v.Name == "tool" {
			if !slices.Contains(options, "Bash") {
				t.Fatalf("tool options %q lack Bash", options)
			}
			return grafana.Multi("Bash")
		}
		return grafana.All(v.Multi, options)
	}
	from, to := now.Add(-hours*time.Hour-time.Hour), now.Add(23*time.Minute)
	scs := []scenario{
		{name: "all", from: from, to: to, interval: time.Hour, pick: all},
		{name: "bash", from: from, to: to, interval: time.Hour, pick: onlyBash},
		{name: "cut-hours", from: from.Add(7 * time.Minute), to: now.Add(-40*time.Hour - 13*time.Minute), interval: time.Hour, pick: all},
	}
	// compare runs every bounded panel in every scenario against its exact
	// query and returns the bounds it read, by scenario.
	compare := func(stage string) map[string]time.Time {
		t.Helper()
		bounds := map[string]time.Time{}
		for _, sc := range scs {
			for _, d := range ds {
				if bounded[d.UID] == nil {
					continue
				}
				vars := resolveVariables(t, ctx, conn, d, sc)
				req := grafana.Request{From: sc.from, To: sc.to, Interval: sc.interval, Vars: vars}
				for _, p := range d.AllPanels() {
					want, ok := bounded[d.UID][p.Title]
					if !ok {
						continue
					}
					where := stage + "/" + sc.name + "/" + d.UID + " panel " + p.Title
					got := runExpanded(t, ctx, conn, where, p.Targets[0].RawSQL, req)
					ref := runExpanded(t, ctx, conn, where+" (exact)", want, req)
					if got == nil || ref == nil {
						continue
					}
					if len(ref.Rows) == 0 {
						t.Errorf("%s: the exact query shows nothing; the scenario tests nothing", where)
					}
					if g, w := canonical(got), canonical(ref); !slices.Equal(g, w) {
						t.Errorf("%s: the bounded panel differs from the exact query\n got: %q\nwant: %q", where, g, w)
					}
					b := runExpanded(t, ctx, conn, where+" (bound)", "SELECT "+panelBound(t, p.Targets[0].RawSQL), req)
					if b == nil || len(b.Rows) != 1 {
						t.Fatalf("%s: the bound gives no single value", where)
					}
					switch v := b.Rows[0][0].(type) {
					case time.Time:
						bounds[sc.name] = v
					case *time.Time:
						if v == nil {
							t.Fatalf("%s: the bound is NULL", where)
						}
						bounds[sc.name] = *v
					default:
						t.Fatalf("%s: the bound is a %T, not a time", where, v)
					}
				}
			}
		}
		return bounds
	}

	// No snapshot: nothing is counted, and the whole range is read.
	for name, b := range compare("no-snapshot") {
		if !b.Equal(time.Unix(0, 0)) {
			t.Errorf("no-snapshot/%s: bound %s, want none (1970) before any snapshot", name, b)
		}
	}
	if _, err := store.RefreshRollups(ctx); err != nil {
		t.Fatal(err)
	}
	fresh := compare("fresh")
	// 3 silent calls an hour (2 of them Bash): the 100 latest begin 34 hours
	// back, the 100 latest Bash calls 50 hours back — at the hour, as the
	// rollup counts whole hours only.
	for name, back := range map[string]int{"all": 34, "bash": 50} {
		if want := now.Add(-time.Duration(back) * time.Hour); !fresh[name].Equal(want) {
			t.Errorf("fresh/%s: bound %s, want %s", name, fresh[name], want)
		}
	}
	// The cut range's last whole hour begins 42 hours back (the cut hour
	// after it is not counted): its 100 latest begin 34 hours before that.
	if want := now.Add(-75 * time.Hour); !fresh["cut-hours"].Equal(want) {
		t.Errorf("fresh/cut-hours: bound %s, want %s", fresh["cut-hours"], want)
	}

	// The latest silent calls are re-written as not cut: their day's
	// snapshot goes stale, its hours count nothing, and the panel must not
	// show them.
	var rewritten []schema.ToolCall
	for _, c := range calls[:12] {
		if c.Forensics.Kind == schema.KindSilent {
			c.Forensics = schema.Forensics{Original: orig(100, schema.SourceHarnessMetadata), Context: sizes(100),
				Kind: schema.KindNone, Strategy: schema.StrategyNone, Detector: "fixture"}
			rewritten = append(rewritten, c)
		}
	}
	time.Sleep(2 * time.Millisecond) // a later write clock than the first write's
	if err := store.WriteToolCalls(ctx, rewritten); err != nil {
		t.Fatal(err)
	}
	stale := compare("stale")
	if !stale["all"].Before(fresh["all"]) {
		t.Errorf("stale/all: bound %s, want before the fresh bound %s (the stale day counts nothing)", stale["all"], fresh["all"])
	}
	if _, err := store.RefreshRollups(ctx); err != nil {
		t.Fatal(err)
	}
	compare("refreshed")
}
