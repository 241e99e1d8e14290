package dashboards_test

// Every dashboard variable and panel, with its macros expanded as Grafana
// sends it, on both engines: the ClickHouse 18.16 server (18.16 rendering of
// the schema, rows written through the driver) and chDB 26.7 (modern
// rendering, the same rows as INSERT … FORMAT JSONEachRow). Each must give
// the same result, row for row.

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/dashboards/internal/grafana"
	"github.com/ctxaudit/ctxaudit/internal/chdbtest"
	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

// canonical renders a result for comparison across engines. Values compare
// by what they mean, not by the Go type an engine picked: integers as
// decimals, floats to 12 significant digits (aggregation order may change
// the last bits), times in UTC at the 18.16 rendering's resolution (the
// modern ts keeps milliseconds that an 18.16 DateTime cannot hold).
func canonical(r *result) []string {
	out := []string{strings.Join(r.Columns, " | ")}
	for _, row := range r.Rows {
		vals := make([]string, len(row))
		for i, v := range row {
			vals[i] = canonicalValue(reflect.ValueOf(v))
		}
		out = append(out, strings.Join(vals, " | "))
	}
	return out
}

func canonicalValue(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Invalid:
		return "NULL"
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return "NULL"
		}
		return canonicalValue(v.Elem())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(v.Uint(), 10)
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Sprint(f)
		}
		if f == math.Trunc(f) && math.Abs(f) < 1e15 {
			return strconv.FormatInt(int64(f), 10)
		}
		return strconv.FormatFloat(f, 'g', 12, 64)
	case reflect.Slice, reflect.Array:
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = canonicalValue(v.Index(i))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case reflect.Bool:
		if v.Bool() {
			return "1"
		}
		return "0"
	}
	if t, ok := v.Interface().(time.Time); ok {
		return t.UTC().Truncate(time.Second).Format("2006-01-02 15:04:05")
	}
	return fmt.Sprint(v.Interface())
}

func TestPanelsOnBothEngines(t *testing.T) {
	ctx := context.Background()
	e, addr, classic, modern := bothEngines(t)
	now := time.Now().UTC().Truncate(time.Hour)
	fx := loadFixtureAt(t, ctx, classic, now)
	if fx2 := loadFixtureAt(t, ctx, modern, now); !reflect.DeepEqual(fx, fx2) {
		t.Fatalf("the fixture differs between engines: %+v vs %+v", fx, fx2)
	}
	// Each engine computes its own rollups from its own rows.
	for _, s := range []*chstore.Store{classic, modern} {
		if _, err := s.RefreshRollups(ctx); err != nil {
			t.Fatal(err)
		}
	}
	c18 := grafanaConn(t, addr)
	c26 := e.ConnIn(modern.Database())

	ds := loadDashboards(t)
	panels, variables := 0, 0
	for _, sc := range scenarios(fx) {
		t.Run(sc.name, func(t *testing.T) {
			for _, d := range ds {
				t.Run(d.UID, func(t *testing.T) {
					vars := resolveVariables(t, ctx, c18, d, sc)
					if vars26 := resolveVariables(t, ctx, c26, d, sc); !reflect.DeepEqual(vars, vars26) {
						t.Errorf("variables differ between engines:\n18.16: %+v\n26.7:  %+v", vars, vars26)
					}
					variables += len(vars)
					req := grafana.Request{From: sc.from, To: sc.to, Interval: sc.interval, Vars: vars}
					for _, p := range d.AllPanels() {
						for _, tg := range p.Targets {
							sql, err := grafana.Expand(tg.RawSQL, req)
							if err != nil {
								t.Errorf("panel %q: expand: %v", p.Title, err)
								continue
							}
							r18, err := runSQL(ctx, c18, sql)
							if err != nil {
								t.Errorf("panel %q on 18.16: %v\n%s", p.Title, err, sql)
								continue
							}
							r26, err := runSQL(ctx, c26, sql)
							if err != nil {
								t.Errorf("panel %q on chDB 26.7: %v\n%s", p.Title, err, sql)
								continue
							}
							checkResult(t, p, tg, r26)
							a, b := canonical(r18), canonical(r26)
							if !reflect.DeepEqual(a, b) && reflect.DeepEqual(sortedRows(a), sortedRows(b)) {
								// Same rows in another order: the panel's ORDER BY
								// leaves some tied, and each engine breaks ties its
								// own way. A panel lists its rows in one order, on
								// every server and at every refresh.
								t.Errorf("panel %q: the same rows in another order on each engine; its ORDER BY leaves ties:\n18.16:\n  %s\n26.7:\n  %s",
									p.Title, strings.Join(a, "\n  "), strings.Join(b, "\n  "))
								continue
							}
							if !reflect.DeepEqual(a, b) {
								t.Errorf("panel %q differs between engines:\n18.16:\n  %s\n26.7:\n  %s\n%s", p.Title,
									strings.Join(a, "\n  "), strings.Join(b, "\n  "), sql)
							}
							panels++
						}
					}
				})
			}
		})
	}
	if panels == 0 || variables == 0 {
		t.Fatalf("compared %d panel queries and %d variables", panels, variables)
	}
	t.Logf("%d panel queries and %d variable resolutions gave the same results on both engines", panels, variables)
}

// sortedRows is a canonical result with its rows (after the header) sorted.
func sortedRows(r []string) []string {
	out := append([]string{r[0]}, r[1:]...)
	slices.Sort(out[1:])
	return out
}

// bothEngines gives a migrated store on ClickHouse 18.16 (at addr, a fresh
// database) and one on chDB 26.7 (e), for tests that run the same panels on
// both.
func bothEngines(t *testing.T) (e *chdbtest.Engine, addr string, classic, modern *chstore.Store) {
	t.Helper()
	e = chdbtest.Open(t)
	addr = chtest.Address(t)
	classic = chtest.OpenStore(t, addr)
	if _, err := classic.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return e, addr, classic, e.NewStore(t)
}
