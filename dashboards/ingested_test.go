package dashboards_test

import (
	"context"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/collector/ingest"
	"github.com/ctxaudit/ctxaudit/collector/transcript/transcripttest"
	"github.com/ctxaudit/ctxaudit/dashboards/internal/grafana"
	"github.com/ctxaudit/ctxaudit/internal/chtest"
)

// ingestedMustShowData are the panels that must show data for the real
// fixture sessions and the bundled example sessions, ingested as a user would.
var ingestedMustShowData = map[string][]string{
	overviewUID: {"Tool calls", "High-risk answers", "Tool calls and truncation rate", "Truncations by visibility",
		"Truncation rate by harness", "Truncation rate by tool", "Silent vs explicit vs suspected",
		"Context bytes delivered vs original", "Answers at risk", "Why answers are at risk", "Riskiest recent sessions"},
	"ctxaudit-disclosure": {"Truncation notices", "Disclosure quality by harness and tool", "Recent silent truncations"},
	"ctxaudit-postmortem": {"Verdict", "Tool calls", "Verdict of the worst answer", "Tool-call timeline", "Answers",
		"Incomplete inputs behind risky answers", "Session"},
}

// The example persisted-Grep session: a preview without the answer, and an
// absence claim.
const ingestedRiskySession = "55555555-0005-4005-8005-000000000005"

// TestQueriesOnIngestedSessions ingests the real fixtures and the example
// sessions through the ingest pipeline and runs every variable and panel
// query over their time range, with every variable at All.
func TestQueriesOnIngestedSessions(t *testing.T) {
	ctx := context.Background()
	addr, store := chtest.NewDatabase(t)
	paths := []string{transcripttest.FixturesDir(t), transcripttest.ExamplesDir(t)}
	if _, err := ingest.Run(ctx, paths, ingest.Options{}, store); err != nil {
		t.Fatal(err)
	}
	var from, to time.Time
	if err := store.Conn().QueryRow(ctx, "SELECT min(ts), max(ts) FROM "+store.Database()+".tool_calls").Scan(&from, &to); err != nil {
		t.Fatal(err)
	}
	from, to = from.Add(-time.Hour), to.Add(time.Hour)
	conn := grafanaConn(t, addr)

	for _, d := range loadDashboards(t) {
		t.Run(d.UID, func(t *testing.T) {
			sc := scenario{from: from, to: to, interval: time.Hour, pick: func(t testing.TB, v grafana.Variable, options []string) grafana.Selection {
				switch {
				case v.Type == "textbox":
					return grafana.Single("")
				case v.Name == "session_id":
					return grafana.Single(ingestedRiskySession)
				case v.IncludeAll:
					return grafana.All(v.Multi, options)
				}
				return grafana.Single(options[0])
			}}
			req := grafana.Request{From: from, To: to, Interval: time.Hour, Vars: resolveVariables(t, ctx, conn, d, sc)}
			want := map[string]bool{}
			for _, title := range ingestedMustShowData[d.UID] {
				want[title] = true
			}
			seen := map[string]bool{}
			for _, p := range d.AllPanels() {
				for _, tg := range p.Targets {
					sql, err := grafana.Expand(tg.RawSQL, req)
					if err != nil {
						t.Fatalf("panel %q: expand: %v", p.Title, err)
					}
					res, err := runSQL(ctx, conn, sql)
					if err != nil {
						t.Errorf("panel %q: %v\n%s", p.Title, err, sql)
						continue
					}
					checkResult(t, p, tg, res)
					if want[p.Title] {
						seen[p.Title] = true
						if !res.hasData() {
							t.Errorf("panel %q shows no data for the ingested sessions\n%s", p.Title, sql)
						}
					}
				}
			}
			for title := range want {
				if !seen[title] {
					t.Errorf("no panel titled %q", title)
				}
			}
		})
	}
}
