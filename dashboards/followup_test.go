package dashboards_test

// A call the collector wrote as it read it has followed_up 0 until the
// session's analysis judges it (its version then has bit 63 set). The
// follow-up figures of the overview and the disclosure dashboard must count
// judged calls only: such a call is neither followed up nor not, and a rate
// over no judged call is unknown (NULL), not 0. The coverage by the end of
// the session, which the analysis fills too, likewise counts judged calls
// only, and a listed call not judged yet says so.

import (
	"context"
	"fmt"
	"maps"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/ctxaudit/ctxaudit/dashboards/internal/grafana"
	"github.com/ctxaudit/ctxaudit/schema"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

// TestFollowUpCountsOnlyAnalysedCalls runs the panels on the fixture (whose
// session without a sessions row has truncated calls no analysis judged,
// one of them flagged followed up and one the only truncation of its tool)
// on ClickHouse 18.16 and on chDB 26.7: first before any snapshot, from
// tool_calls FINAL, then with fresh snapshots, from the rollup alone.
func TestFollowUpCountsOnlyAnalysedCalls(t *testing.T) {
	ctx := context.Background()
	e, addr, classic, modern := bothEngines(t)
	now := time.Now().UTC().Truncate(time.Hour)
	fx := loadFixtureAt(t, ctx, classic, now)
	loadFixtureAt(t, ctx, modern, now)

	// The fixture must hold what the figures below tell apart: unjudged
	// truncations overall, a tool whose unjudged call says followed up
	// (Read under claude_code), and a tool with no judged truncation.
	cc := string(schema.HarnessClaudeCode)
	read, search := fx.FollowUp[toolHarness{cc, "Read"}], fx.FollowUp[toolHarness{cc, "WebSearch"}]
	if fx.FollowUp[toolHarness{}].Unjudged < 3 || read.Judged == 0 || read.Unjudged == 0 || search.Judged != 0 || search.Unjudged == 0 {
		t.Fatalf("the fixture lacks unjudged truncations: %+v", fx.FollowUp)
	}

	day := 24 * time.Hour
	sc := scenario{name: "whole-days", from: now.Add(-30 * time.Hour).Truncate(day).Add(-day), to: now.Add(2 * day).Truncate(day), interval: time.Hour,
		pick: pickAll}
	ds := loadDashboards(t)
	for _, en := range []struct {
		name  string
		store *chstore.Store
		conn  driver.Conn
	}{
		{"ClickHouse 18.16", classic, grafanaConn(t, addr)},
		{"chDB 26.7", modern, e.ConnIn(modern.Database())},
	} {
		t.Run(en.name, func(t *testing.T) {
			run := func(stage string, rollupOnly bool) {
				for _, d := range ds {
					if d.UID == postmortemUID {
						continue // one session's calls, checked in dashboards_test.go
					}
					vars := resolveVariables(t, ctx, en.conn, d, sc)
					req := grafana.Request{From: sc.from, To: sc.to, Interval: sc.interval, Vars: vars}
					for _, p := range d.AllPanels() {
						sql := p.Targets[0].RawSQL
						if rollupOnly {
							if _, exact := exactPanels(t)[d.UID][p.Title]; !exact {
								continue
							}
							sql = baseSide.ReplaceAllString(sql, "FROM tool_calls FINAL${1}WHERE 0 = 1 AND ")
						}
						where := stage + ": " + d.UID + " panel " + p.Title
						if r := runExpanded(t, ctx, en.conn, where, sql, req); r != nil {
							checkFollowUp(t, where, fx, d.UID, p.Title, r)
						}
					}
				}
			}
			run("tool_calls FINAL", false)
			if _, err := en.store.RefreshRollups(ctx); err != nil {
				t.Fatal(err)
			}
			run("rollup", true)
		})
	}
}

// checkFollowUp checks the figures of panel title that depend on the
// session's analysis against the fixture's.
func checkFollowUp(t *testing.T, where string, fx fixture, uid, title string, r *result) {
	t.Helper()
	switch uid + "/" + title {
	case overviewUID + "/Tool calls":
		checkRate(t, where, fx.FollowUp[toolHarness{}], r, 0)
	case disclosureUID + "/Disclosure quality by harness and tool":
		// Every tool, also those without truncations (no rate either).
		for i := range r.Rows {
			k := toolHarness{r.text(i, "harness"), r.text(i, "tool")}
			checkRate(t, fmt.Sprintf("%s, %s (%s)", where, k.Tool, k.Source), fx.FollowUp[k], r, i)
		}
	case disclosureUID + "/Silent share and follow-up rate, by tool":
		want := map[string]followUp{}
		for k, f := range fx.FollowUp {
			if k.Tool != "" {
				want[k.Tool+" ("+k.Source+")"] = f
			}
		}
		if len(r.Rows) != len(want) {
			t.Errorf("%s: %d tools, want the %d with truncations", where, len(r.Rows), len(want))
		}
		for i := range r.Rows {
			th := r.text(i, "tool_harness")
			checkRate(t, where+", "+th, want[th], r, i)
		}
	case overviewUID + "/Coverage of truncated outputs":
		var got float64
		for i := range r.Rows {
			n, _ := r.float(i, "by_session_end")
			got += n
		}
		if want := float64(fx.CoveredByEnd); got != want {
			t.Errorf("%s: %v truncated calls with a coverage by the end of the session, want %v (those the analysis judged)", where, got, want)
		}
	case disclosureUID + "/Recent silent truncations":
		unjudged := 0
		for i := range r.Rows {
			got := r.text(i, "follow_up")
			if r.text(i, "session_id") == fx.OrphanSession {
				unjudged++
				if got != "not analysed yet" {
					t.Errorf("%s: a call no analysis judged says followed up %q, want not analysed yet", where, got)
				}
			} else if got != "yes" && got != "no" {
				t.Errorf("%s: a judged call says followed up %q", where, got)
			}
		}
		if unjudged == 0 {
			t.Errorf("%s: the silent call not analysed yet is not listed", where)
		}
	}
}

// checkRate compares row i's follow_up_rate with f: Followed / Judged, or
// NULL when nothing was judged.
func checkRate(t *testing.T, where string, f followUp, r *result, i int) {
	t.Helper()
	got, known := r.float(i, "follow_up_rate")
	switch {
	case f.Judged == 0 && known:
		t.Errorf("%s: follow-up rate %v over no judged truncation (%d not analysed yet), want NULL", where, got, f.Unjudged)
	case f.Judged > 0 && !known:
		t.Errorf("%s: follow-up rate NULL, want %d/%d", where, f.Followed, f.Judged)
	case f.Judged > 0 && math.Abs(got-float64(f.Followed)/float64(f.Judged)) > 1e-9:
		t.Errorf("%s: follow-up rate %v, want %d/%d, the judged truncations only (%d not analysed yet)", where, got, f.Followed, f.Judged, f.Unjudged)
	}
}

// float returns row i's value of column col; false for NULL (or NaN, which
// an engine may give for 0/0).
func (r *result) float(i int, col string) (float64, bool) {
	c := r.column(col)
	if c < 0 {
		return 0, false
	}
	v := reflect.ValueOf(r.Rows[i][c])
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return 0, false
		}
		v = v.Elem()
	}
	switch {
	case v.CanInt():
		return float64(v.Int()), true
	case v.CanUint():
		return float64(v.Uint()), true
	case v.CanFloat():
		return v.Float(), !math.IsNaN(v.Float())
	}
	return 0, false
}

// text returns row i's value of column col as text ("" for NULL).
func (r *result) text(i int, col string) string {
	c := r.column(col)
	if c < 0 {
		return ""
	}
	v := reflect.ValueOf(r.Rows[i][c])
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return ""
		}
		v = v.Elem()
	}
	return fmt.Sprint(v.Interface())
}

// TestFollowUpRatesLeaveUnknownFollowUpsOut: a cut call whose follow-up the
// analysis found not known (followed_up NULL: its session holds a call
// nothing orders, which may have read the rest) counts neither as followed
// up nor as not — from tool_calls FINAL and from the rollup, on 18.16 and on
// chDB 26.7 — and a listed one says "none known" by its NULL alone.
func TestFollowUpRatesLeaveUnknownFollowUpsOut(t *testing.T) {
	ctx := context.Background()
	e, addr, classic, modern := bothEngines(t)
	// The calls lie inside the last full hour and the range covers it
	// whole, so that the rollup's hourly rows hold them whatever the time
	// of day the test runs at.
	hour := time.Now().UTC().Truncate(time.Hour).Add(-time.Hour)
	done := schema.Analysis{Done: true, Records: 3}
	var calls []schema.ToolCall
	for i, state := range []string{"followed", "not", "unknown"} {
		c := schema.ToolCall{SessionID: "rates", CallID: "rates-" + state, Tool: "Read", Timestamp: hour.Add(time.Duration(10+i) * time.Minute),
			Source: schema.HarnessClaudeCode, Turn: schema.KnownTurn(0), Analysis: done}
		c.Truncated, c.Kind, c.Strategy = true, schema.KindSilent, schema.StrategyHead
		c.FollowedUp, c.FollowUpUnknown, c.Target = state == "followed", state == "unknown", "/repo/"+state+".go"
		calls = append(calls, c)
	}
	for _, st := range []*chstore.Store{classic, modern} {
		if err := st.WriteToolCalls(ctx, calls); err != nil {
			t.Fatal(err)
		}
	}
	panels := map[string]bool{"Tool calls": true, "Disclosure quality by harness and tool": true, "Silent share and follow-up rate, by tool": true}
	sc := scenario{from: hour.Add(-time.Hour), to: hour.Add(2 * time.Hour), interval: time.Minute,
		pick: pickAll}
	for _, en := range []struct {
		name  string
		store *chstore.Store
		conn  driver.Conn
	}{
		{"ClickHouse 18.16", classic, grafanaConn(t, addr)},
		{"chDB 26.7", modern, e.ConnIn(modern.Database())},
	} {
		for _, stage := range []string{"tool_calls FINAL", "rollup"} {
			if stage == "rollup" {
				if _, err := en.store.RefreshRollups(ctx); err != nil {
					t.Fatal(err)
				}
			}
			rates := 0
			for _, d := range loadDashboards(t) {
				if d.UID != overviewUID && d.UID != disclosureUID {
					continue
				}
				req := grafana.Request{From: sc.from, To: sc.to, Interval: sc.interval, Vars: resolveVariables(t, ctx, en.conn, d, sc)}
				for _, p := range d.AllPanels() {
					sql, where := p.Targets[0].RawSQL, en.name+", "+stage+": "+p.Title
					if stage == "rollup" {
						sql = baseSide.ReplaceAllString(sql, "FROM tool_calls FINAL${1}WHERE 0 = 1 AND ")
					}
					switch {
					case panels[p.Title]:
						r := runExpanded(t, ctx, en.conn, where, sql, req)
						if r == nil {
							continue
						}
						if len(r.Rows) != 1 {
							t.Errorf("%s: %d rows, want the one tool", where, len(r.Rows))
							continue
						}
						rates++
						if got, known := r.float(0, "follow_up_rate"); !known || math.Abs(got-0.5) > 1e-9 {
							t.Errorf("%s: follow-up rate %v (known %v), want 1/2: the call whose follow-up is not known counts neither way", where, got, known)
						}
					case p.Title == "Recent silent truncations" && stage == "tool_calls FINAL":
						r := runExpanded(t, ctx, en.conn, where, sql, req)
						if r == nil {
							continue
						}
						got := map[string]string{}
						for i, target := range r.strings("target") {
							got[target] = r.strings("follow_up")[i]
						}
						want := map[string]string{"/repo/followed.go": "yes", "/repo/not.go": "no", "/repo/unknown.go": "none known"}
						if !maps.Equal(got, want) {
							t.Errorf("%s: followed up by target %v, want %v", where, got, want)
						}
					}
				}
			}
			if rates != len(panels) {
				t.Errorf("%s, %s: %d follow-up rates checked, want %d", en.name, stage, rates, len(panels))
			}
		}
	}
}
