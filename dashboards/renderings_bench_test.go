package dashboards_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/dashboards/internal/grafana"
	"github.com/ctxaudit/ctxaudit/internal/chdbtest"
	"github.com/ctxaudit/ctxaudit/schema/migrations"
)

// BenchmarkRenderingsOnChDB measures on chDB 26.7 what the modern rendering
// of the schema saves over the 18.16 rendering on the same engine: bytes on
// disk per table and per million tool calls, and the time of every panel
// and variable query. Both databases get the same generated data as
// BenchmarkPanels (see generate), are merged to one part per partition
// (OPTIMIZE … FINAL: storage at rest, duplicates collapsed), and every query
// is run benchtime times on each, keeping the best. Figures in
// docs/performance.md come from:
//
//	CTXAUDIT_BENCH_ROWS=1000000 go test -tags chdb -run '^$' -bench RenderingsOnChDB -benchtime 3x ./dashboards/
//
// (with CHDB_LIB_PATH set, as make sets it)
//
// The environment is BenchmarkPanels'.
func BenchmarkRenderingsOnChDB(b *testing.B) {
	rows := envInt(b, "CTXAUDIT_BENCH_ROWS", 100_000)
	days := envInt(b, "CTXAUDIT_BENCH_DAYS", 30)
	rangeDays := envInt(b, "CTXAUDIT_BENCH_RANGE", 7)
	ctx := context.Background()
	e := chdbtest.Open(b)
	now := time.Now().UTC().Truncate(time.Second)
	renderings := []migrations.ServerVersion{migrations.Classic, {Major: 26, Minor: 7}}
	dbs := make([]string, len(renderings))
	for i, v := range renderings {
		db := e.NewDatabase(b)
		dbs[i] = db
		all, err := migrations.All()
		if err != nil {
			b.Fatal(err)
		}
		for _, m := range all {
			stmts, err := m.StatementsFor(db, v)
			if err != nil {
				b.Fatal(err)
			}
			for _, q := range stmts {
				if err := e.Exec(q); err != nil {
					b.Fatal(err)
				}
			}
		}
		start := time.Now()
		generate(b, ctx, e.Conn(), db, rows, days, now)
		for _, t := range []string{"tool_calls", "answers", "sessions"} {
			if err := e.Exec("OPTIMIZE TABLE " + db + "." + t + " FINAL"); err != nil {
				b.Fatal(err)
			}
		}
		b.Logf("%s rendering: generated and merged %d tool calls in %s", v.Rendering(), rows, time.Since(start).Round(time.Second))
	}

	var sb strings.Builder
	fmt.Fprintf(&sb, "chDB %s, %d tool calls over %d days; bytes on disk (active parts), 18.16 rendering vs modern:\n", e.Version(), rows, days)
	for _, t := range []string{"tool_calls", "answers", "sessions"} {
		var size [2]uint64
		for i, db := range dbs {
			var n uint64
			if err := e.Conn().QueryRow(ctx, "SELECT toUInt64(sum(bytes_on_disk)) FROM system.parts WHERE database = ? AND table = ? AND active", db, t).Scan(&n); err != nil {
				b.Fatal(err)
			}
			size[i] = n
		}
		fmt.Fprintf(&sb, "  %-12s %12d  %12d  (%.0f%%)  per 1M calls: %.1f MiB → %.1f MiB\n", t, size[0], size[1],
			100*float64(size[1])/float64(size[0]), perMillion(size[0], rows), perMillion(size[1], rows))
	}
	fmt.Fprintf(&sb, "  tool_calls columns, compressed bytes (largest in the 18.16 rendering first):\n")
	type col struct {
		name   string
		before uint64
		after  uint64
	}
	var cols []col
	for i, db := range dbs {
		res, err := runSQL(ctx, e.Conn(), "SELECT name, data_compressed_bytes FROM system.columns WHERE database = '"+db+"' AND table = 'tool_calls'")
		if err != nil {
			b.Fatal(err)
		}
		for j, r := range res.Rows {
			if i == 0 {
				cols = append(cols, col{name: r[0].(string), before: r[1].(uint64)})
			} else {
				cols[j].after = r[1].(uint64)
			}
		}
	}
	slices.SortFunc(cols, func(a, b col) int { return int(b.before) - int(a.before) })
	if len(cols) > 0 && cols[0].before == 0 {
		fmt.Fprintf(&sb, "    (not tracked: the parts are compact, one file for all columns)\n")
		cols = nil
	}
	for _, c := range cols[:min(14, len(cols))] {
		fmt.Fprintf(&sb, "    %-18s %10d → %10d\n", c.name, c.before, c.after)
	}

	from, to := now.Add(-time.Duration(rangeDays)*24*time.Hour), now
	session := benchSession(b, ctx, e.Conn(), rows/100/2)
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
		name string
		best [2]time.Duration
	}
	var timings []timing
	var total [2]time.Duration
	for _, d := range loadDashboards(b) {
		var queries []struct{ name, sql string }
		for _, v := range d.Templating.List {
			if sql, _ := v.SQL(); sql != "" {
				queries = append(queries, struct{ name, sql string }{"variable " + v.Name, sql})
			}
		}
		for _, p := range d.AllPanels() {
			for _, tg := range p.Targets {
				queries = append(queries, struct{ name, sql string }{p.Title, tg.RawSQL})
			}
		}
		vars := resolveVariables(b, ctx, e.ConnIn(dbs[0]), d, sc)
		req := grafana.Request{From: sc.from, To: sc.to, Interval: sc.interval, Vars: vars}
		for _, q := range queries {
			sql, err := grafana.Expand(q.sql, req)
			if err != nil {
				b.Fatalf("%s %s: %v", d.UID, q.name, err)
			}
			tm := timing{name: d.UID + "/" + q.name}
			b.Run(strings.ReplaceAll(tm.name, " ", "_"), func(b *testing.B) {
				for b.Loop() {
					for i, db := range dbs {
						t0 := time.Now()
						if _, err := runSQL(ctx, e.ConnIn(db), sql); err != nil {
							b.Fatalf("%v\n%s", err, sql)
						}
						if dt := time.Since(t0); tm.best[i] == 0 || dt < tm.best[i] {
							tm.best[i] = dt
						}
					}
				}
			})
			total[0] += tm.best[0]
			total[1] += tm.best[1]
			timings = append(timings, tm)
		}
	}
	slices.SortFunc(timings, func(a, b timing) int { return int(b.best[0] - a.best[0]) })
	fmt.Fprintf(&sb, "dashboard range %d days; best of each query, 18.16 rendering vs modern, slowest first:\n", rangeDays)
	for _, t := range timings {
		fmt.Fprintf(&sb, "  %8s  %8s  %s\n", t.best[0].Round(time.Millisecond), t.best[1].Round(time.Millisecond), t.name)
	}
	fmt.Fprintf(&sb, "  %8s  %8s  all %d queries\n", total[0].Round(time.Millisecond), total[1].Round(time.Millisecond), len(timings))
	fmt.Print(sb.String())
}

func perMillion(bytes uint64, rows int) float64 {
	return float64(bytes) * 1e6 / float64(rows) / (1 << 20)
}
