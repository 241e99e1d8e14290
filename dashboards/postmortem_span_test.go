package dashboards_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/ctxaudit/ctxaudit/collector/analysis"
	"github.com/ctxaudit/ctxaudit/dashboards/internal/grafana"
	"github.com/ctxaudit/ctxaudit/schema"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

// A collector that drops a session's buffer before the session ends (past
// max_calls_per_session, or evicted without storage) writes the session's
// row from what it held first, and the later buffer's row ranks below it
// (docs/design.md §10.3): the stored row ends where the first buffer did,
// while tool_calls holds the calls after it, maybe the next day. The
// session's postmortem must show every stored call, on 18.16 and on chDB
// 26.7, and count them as `ctxaudit postmortem` and `sessions` do — by the
// rule session analysis counts by, under which a call cut at its own
// request is not truncated and a refused one is.
func TestPostmortemShowsEveryCallOfASessionThatWentOn(t *testing.T) {
	ctx := context.Background()
	e, addr, classic, modern := bothEngines(t)

	t0 := time.Now().UTC().Add(-30 * time.Hour).Truncate(time.Second)
	call := func(session, id string, at time.Duration, kind schema.TruncationKind) schema.ToolCall {
		c := schema.ToolCall{SessionID: session, CallID: id, Tool: "Read", Timestamp: t0.Add(at), Source: schema.HarnessClaudeCode,
			Turn: schema.KnownTurn(0), Analysis: schema.Analysis{Done: true, Records: 9}}
		c.Kind, c.Truncated, c.Strategy = kind, kind != schema.KindNone, schema.StrategyNone
		if c.Truncated {
			c.Strategy = schema.StrategyHead
		}
		return c
	}
	split := []schema.ToolCall{
		call("split", "toolu_1", 0, schema.KindExplicit),
		call("split", "toolu_2", time.Minute, schema.KindNone),
		call("split", "toolu_3", 2*time.Minute, schema.KindSilent),
		// Cut because the model asked for a part: partial by request, not
		// truncated, and not counted as cut.
		call("split", "toolu_4", 3*time.Minute, schema.KindSilent),
		// Refused: counted as cut although not marked truncated.
		call("split", "toolu_5", 4*time.Minute, schema.KindNone),
		// A call without a time: counted, widens nothing.
		call("split", "toolu_6", 0, schema.KindNone),
		// The next day, more than a day after the first buffer's row ends.
		call("split", "toolu_7", 26*time.Hour, schema.KindNone),
	}
	split[3].Truncated, split[3].PartialByRequest = false, true
	split[4].Strategy = schema.StrategyRefused
	split[5].Timestamp = time.Time{}
	answer := func(id string, at time.Duration, risk schema.Risk) schema.Answer {
		return schema.Answer{SessionID: "split", MessageID: id, Timestamp: t0.Add(at), Turn: schema.KnownTurn(0),
			Source: schema.HarnessClaudeCode, Risk: risk, Verdict: "rests on a cut read", Analysis: schema.Analysis{Done: true, Records: 9}}
	}
	answers := []schema.Answer{
		answer("msg_1", 5*time.Minute+300*time.Millisecond, schema.RiskHigh),
		answer("msg_2", 6*time.Minute, schema.RiskMedium),
		// Taken back: not an answer, so neither counted nor spanned.
		answer("msg_3", 30*time.Minute, schema.RiskHigh),
		// The next day's answer.
		answer("msg_4", 26*time.Hour+time.Minute, schema.RiskLow),
	}
	answers[1].InputsUncertain = true
	answers[2].Retracted = true
	meta := schema.Session{SessionID: "split", Source: schema.HarnessClaudeCode, Cwd: "/srv/app", StartedAt: t0, Turns: schema.Known(1)}
	first := analysis.Counts(meta, split[:2], nil)
	first.EndedAt, first.Analysis = t0.Add(time.Minute), schema.Analysis{Done: true, Records: 2}
	later := analysis.Counts(meta, split[2:], answers[:2])
	later.StartedAt, later.EndedAt, later.Analysis = t0.Add(2*time.Minute), t0.Add(6*time.Minute), schema.Analysis{Done: true, Partial: true, Records: 6}

	stores := []*chstore.Store{classic, modern}
	for _, st := range stores {
		for _, err := range []error{
			st.WriteToolCalls(ctx, split),
			st.WriteAnswers(ctx, answers),
			st.WriteSessions(ctx, []schema.Session{first}),
			st.WriteSessions(ctx, []schema.Session{later}),
		} {
			if err != nil {
				t.Fatal(err)
			}
		}
		if row, _, err := st.SessionRow(ctx, "split"); err != nil || row.ToolCalls != 2 || row.Answers != 0 {
			t.Fatalf("stored row: %d calls, %d answers (%v); want the first buffer's 2 and 0: the test shows nothing", row.ToolCalls, row.Answers, err)
		}
	}

	var postmortem *grafana.Dashboard
	for _, d := range loadDashboards(t) {
		if d.UID == postmortemUID {
			postmortem = d
		}
	}
	for i, en := range []struct {
		name string
		conn driver.Conn
	}{
		{"ClickHouse 18.16", grafanaConn(t, addr)},
		{"chDB 26.7", e.ConnIn(modern.Database())},
	} {
		cli := cliCounts(t, ctx, stores[i], "split")
		if cli[0] != fmt.Sprint(len(split)) {
			t.Fatalf("%s: ctxaudit counts %s calls; want all %d: the test shows nothing", en.name, cli[0], len(split))
		}
		preq := grafana.Request{From: t0.Add(-time.Hour), To: t0.Add(27 * time.Hour), Interval: time.Minute,
			Vars: map[string]grafana.Selection{"session_id": grafana.Single("split"), "search": grafana.Single("")}}
		for _, p := range postmortem.AllPanels() {
			where := en.name + ": postmortem panel " + p.Title
			switch p.Title {
			case "Tool calls":
				r := runExpanded(t, ctx, en.conn, where, p.Targets[0].RawSQL, preq)
				if r == nil {
					continue
				}
				got := make([]string, 0, 3)
				for _, col := range []string{"calls", "truncated_calls", "silent_calls"} {
					got = append(got, r.strings(col)...)
				}
				if !slices.Equal(got, cli[:3]) {
					t.Errorf("%s: calls, truncated, silent %q; want %q as ctxaudit counts them", where, got, cli[:3])
				}
			case "Tool-call timeline":
				r := runExpanded(t, ctx, en.conn, where, p.Targets[0].RawSQL, preq)
				if r == nil {
					continue
				}
				var ids []string
				for _, c := range split {
					ids = append(ids, c.CallID)
				}
				if got := r.strings("call_id"); !slices.Equal(sorted(got), sorted(ids)) {
					t.Errorf("%s: calls %q; want every stored call %q", where, got, ids)
				}
			case "Answers":
				r := runExpanded(t, ctx, en.conn, where, p.Targets[0].RawSQL, preq)
				if r == nil {
					continue
				}
				if got, want := r.strings("message_id"), []string{"msg_1", "msg_2", "msg_4"}; !slices.Equal(got, want) {
					t.Errorf("%s: answers %q; want every answer not taken back %q", where, got, want)
				}
			}
		}
	}
}

func sorted(s []string) []string { return slices.Sorted(slices.Values(s)) }

// cliCounts is what `ctxaudit postmortem` and `sessions` count of a
// session — calls, truncated, silent — reading its records as the CLI
// does, and recounting its row from them.
func cliCounts(t *testing.T, ctx context.Context, st *chstore.Store, id string) []string {
	t.Helper()
	row, found, err := st.SessionRow(ctx, id)
	if err != nil || !found {
		t.Fatalf("session %s: row found %v, %v", id, found, err)
	}
	calls, err := st.ToolCalls(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	answers, err := st.Answers(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := analysis.Recount(row, calls, answers)
	return []string{fmt.Sprint(s.ToolCalls), fmt.Sprint(s.TruncatedCalls), fmt.Sprint(s.SilentCalls)}
}
