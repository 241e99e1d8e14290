package dashboards_test

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/ctxaudit/ctxaudit/dashboards/internal/grafana"
	"github.com/ctxaudit/ctxaudit/schema"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

// A record whose time is not known is stored at 1970-01-01 (docs/design.md
// §3.2). The postmortem narrowed each panel to the partitions of the
// session's span, ±1 day: such a record lies outside it, and a session
// whose every record has no time has a span starting at 1970, whose day
// before wrapped around to 2106. Either way the postmortem showed less than
// the session holds — an answer of high risk missing from it. Every
// postmortem panel must show every record of the session, on 18.16 and on
// chDB 26.7, as `ctxaudit postmortem` does, a record without a time with
// none (not 1970). And answers whose inputs are only the calls they may
// rest on (inputs_uncertain) are graded at their worst: the overview and
// the postmortem count them, and say which they are. A call with neither a
// time nor a source line (a span without a time) may itself have been the
// follow-up of a cut call analysis found not followed up (docs/design.md
// §4.12): the postmortem then says "none known", as `ctxaudit postmortem`
// does, not "no", unless the cut call's row says its "not followed up" is
// known (followed_up_exact); a call without a time that its line orders
// changes nothing.
func TestPostmortemShowsRecordsWithoutTime(t *testing.T) {
	ctx := context.Background()
	e, addr, classic, modern := bothEngines(t)

	now := time.Now().UTC().Truncate(time.Second)
	type session struct {
		id    string
		timed bool
		lines bool // every call has its source line: none is unordered
		// exact: the cut call's row says its "not followed up" is known
		// (followed_up_exact); without it, as in a row stored before
		// migration 0012, an unordered call leaves it "none known".
		exact bool
		calls []schema.ToolCall
		ans   []schema.Answer
		meta  schema.Session
	}
	mk := func(id string, timed, lines bool) session {
		at := func(sec int) time.Time {
			if !timed {
				return time.Time{}
			}
			return now.Add(time.Duration(sec) * time.Second)
		}
		s := session{id: id, timed: timed, lines: lines}
		for i, ts := range []time.Time{at(1), {}, at(3)} {
			c := schema.ToolCall{SessionID: id, CallID: id + "-c" + string(rune('1'+i)), Tool: "Read", Timestamp: ts,
				Source: schema.HarnessClaudeCode, Turn: schema.KnownTurn(0), Analysis: schema.Analysis{Done: true, Records: 4}}
			c.Kind, c.Strategy = schema.KindNone, schema.StrategyNone
			if lines {
				c.SourceFile, c.SourceLine = "/logs/"+id+".jsonl", int64(i+1)
			}
			s.calls = append(s.calls, c)
		}
		s.calls[1].Truncated, s.calls[1].Kind, s.calls[1].Strategy = true, schema.KindSilent, schema.StrategyHead
		s.ans = []schema.Answer{{SessionID: id, MessageID: id + "-a1", Source: schema.HarnessClaudeCode, Turn: schema.KnownTurn(0),
			Text: "There is no such setting.", InputCallIDs: []string{s.calls[1].CallID}, InputsUncertain: true,
			IncompleteInputs: []string{s.calls[1].CallID}, Risk: schema.RiskHigh, AbsenceClaim: true, Absence: schema.AbsenceUnscoped,
			Reasons: []string{schema.ReasonAbsenceClaimOnPartialInput}, ReasonCalls: map[string][]string{schema.ReasonAbsenceClaimOnPartialInput: {s.calls[1].CallID}},
			Verdict:  "Answer says \"There is no such setting.\"; it may have been built on Read, which delivered only part of its output with no notice, and the model never read further.",
			Analysis: schema.Analysis{Done: true, Records: 4}}}
		if timed {
			// Two timed answers on the same cut call: one whose source named
			// it, one that only may rest on it.
			for i, uncertain := range []bool{false, true} {
				a := s.ans[0]
				a.MessageID, a.Timestamp, a.InputsUncertain = id+"-a"+string(rune('2'+i)), at(4+i), uncertain
				s.ans = append(s.ans, a)
			}
		}
		uncertain := 0
		for _, a := range s.ans {
			if a.InputsUncertain {
				uncertain++
			}
		}
		s.meta = schema.Session{SessionID: id, Source: schema.HarnessClaudeCode, StartedAt: at(1), EndedAt: at(3), ToolCalls: 3, TruncatedCalls: 1,
			SilentCalls: 1, Answers: len(s.ans), RiskyAnswers: len(s.ans), RiskyAnswersUncertain: schema.KnownInt(uncertain),
			MaxRisk: schema.RiskHigh, Turns: schema.Known(1), Analysis: schema.Analysis{Done: true, Records: 3 + len(s.ans)}}
		return s
	}
	marked := mk("no-time-marked", false, false)
	marked.exact, marked.calls[1].FollowUpExact = true, true
	sessions := []session{mk("timed-with-untimed", true, false), mk("no-time-at-all", false, false), mk("lines-only", false, true), marked}
	for _, st := range []*chstore.Store{classic, modern} {
		for _, s := range sessions {
			if err := st.WriteToolCalls(ctx, s.calls); err != nil {
				t.Fatal(err)
			}
			if err := st.WriteAnswers(ctx, s.ans); err != nil {
				t.Fatal(err)
			}
			if err := st.WriteSessions(ctx, []schema.Session{s.meta}); err != nil {
				t.Fatal(err)
			}
		}
	}

	// What the postmortem says of the cut call analysis found not followed
	// up, by whether every call of its session is ordered or its row knows
	// it.
	followUp := map[bool]string{true: "no", false: "none known"}
	var postmortem, overview *grafana.Dashboard
	for _, d := range loadDashboards(t) {
		switch d.UID {
		case postmortemUID:
			postmortem = d
		case overviewUID:
			overview = d
		}
	}
	for _, en := range []struct {
		name string
		conn driver.Conn
	}{
		{"ClickHouse 18.16", grafanaConn(t, addr)},
		{"chDB 26.7", e.ConnIn(modern.Database())},
	} {
		// The overview counts the timed answers: both high, one of them on
		// uncertain inputs; its list of sessions counts the session's: three
		// risky, two of them on uncertain inputs.
		for _, p := range overview.AllPanels() {
			if p.Title != "High-risk answers" && p.Title != "Riskiest recent sessions" {
				continue
			}
			sc := scenario{from: now.Add(-time.Hour), to: now.Add(time.Hour), interval: time.Minute,
				pick: func(t testing.TB, v grafana.Variable, options []string) grafana.Selection {
					if v.Type == "textbox" {
						return grafana.Single("")
					}
					return grafana.All(v.Multi, options)
				}}
			req := grafana.Request{From: sc.from, To: sc.to, Interval: sc.interval, Vars: resolveVariables(t, ctx, en.conn, overview, sc)}
			r := runExpanded(t, ctx, en.conn, en.name+": overview "+p.Title, p.Targets[0].RawSQL, req)
			if r != nil && p.Title == "Riskiest recent sessions" {
				ids, risky, uncertain := r.strings("session_id"), r.strings("risky_answers"), r.strings("risky_answers_uncertain")
				if !slices.Equal(ids, []string{"timed-with-untimed"}) || !slices.Equal(risky, []string{"3"}) || !slices.Equal(uncertain, []string{"2"}) {
					t.Errorf("%s: sessions %q with %q risky answers, %q of them on uncertain inputs; want the timed session, 3, 2", en.name, ids, risky, uncertain)
				}
				continue
			}
			if r != nil {
				high, _ := r.number("high_risk_answers")
				uncertain, _ := r.number("high_risk_inputs_uncertain")
				if high != 2 || uncertain != 1 {
					t.Errorf("%s: overview %d high-risk answers, %d of them on uncertain inputs; want 2, 1", en.name, int(high), int(uncertain))
				}
			}
		}
		for _, s := range sessions {
			req := grafana.Request{From: now.Add(-time.Hour), To: now.Add(time.Hour), Interval: time.Minute,
				Vars: map[string]grafana.Selection{"session_id": grafana.Single(s.id), "search": grafana.Single("")}}
			seen := 0
			for _, p := range postmortem.AllPanels() {
				where := en.name + ", " + s.id + ": panel " + p.Title
				r := runExpanded(t, ctx, en.conn, where, p.Targets[0].RawSQL, req)
				if r == nil {
					continue
				}
				switch p.Title {
				case "Verdict":
					if got := r.strings("max_risk"); !slices.Equal(got, []string{"high"}) {
						t.Errorf("%s: max_risk %q, want high: the answer without a time is the session's worst", where, got)
					}
				case "Tool calls":
					if n, _ := r.number("calls"); n != 3 {
						t.Errorf("%s: %v calls, want 3", where, n)
					}
					if n, _ := r.number("silent_calls"); n != 1 {
						t.Errorf("%s: %v silent calls, want the one without a time", where, n)
					}
					n, known := r.number("not_followed_up")
					if known != (s.lines || s.exact) || (known && n != 1) {
						t.Errorf("%s: not followed up %v (known %v); want 1 with every call ordered or the row marked exact, else unknown", where, n, known)
					}
				case "Tool-call timeline":
					if len(r.Rows) != 3 {
						t.Errorf("%s: %d rows, want 3", where, len(r.Rows))
					}
					// In time order: the call without a time first, shown with none.
					want := []bool{false, s.timed, s.timed}
					if got := known(r, "time"); !slices.Equal(got, want) {
						t.Errorf("%s: times shown %v, want %v: a call without a time has none", where, got, want)
					}
					for i, id := range r.strings("call_id") {
						want := ""
						if id == s.calls[1].CallID {
							want = followUp[s.lines || s.exact]
						}
						if got := r.strings("follow_up")[i]; got != want {
							t.Errorf("%s: call %s followed up %q, want %q", where, id, got, want)
						}
					}
				case "Answers", "Incomplete inputs behind risky answers":
					var ids []string
					var times []bool
					for _, a := range s.ans {
						ids, times = append(ids, a.MessageID), append(times, schema.TimeKnown(a.Timestamp))
					}
					if got := r.strings("message_id"); !slices.Equal(got, ids) {
						t.Errorf("%s: answers %q, want %q", where, got, ids)
					}
					timeCol := "time"
					if p.Title != "Answers" {
						timeCol = "answer_time"
					}
					if got := known(r, timeCol); !slices.Equal(got, times) {
						t.Errorf("%s: times shown %v, want %v: an answer without a time has none", where, got, times)
					}
					col, label := "inputs", map[bool]string{true: "may rest on", false: "known"}
					if p.Title != "Answers" {
						col, label = "input_of_answer", map[bool]string{true: "may be", false: "yes"}
					}
					var want []string
					for _, a := range s.ans {
						want = append(want, label[a.InputsUncertain])
					}
					if got := r.strings(col); !slices.Equal(got, want) {
						t.Errorf("%s: %s %q, want %q", where, col, got, want)
					}
					if p.Title != "Answers" {
						for _, got := range r.strings("follow_up") {
							if got != followUp[s.lines || s.exact] {
								t.Errorf("%s: input followed up %q, want %q", where, got, followUp[s.lines || s.exact])
							}
						}
					}
				case "Verdict of the worst answer":
					uncertain := 0
					for _, a := range s.ans {
						if a.InputsUncertain {
							uncertain++
						}
					}
					if n, _ := r.number("answers"); n != float64(len(s.ans)) {
						t.Errorf("%s: %v answers, want %d", where, n, len(s.ans))
					}
					if n, _ := r.number("risky_inputs_uncertain"); n != float64(uncertain) {
						t.Errorf("%s: %v of them on uncertain inputs, want %d", where, n, uncertain)
					}
				default:
					continue
				}
				seen++
			}
			if seen != 6 {
				t.Errorf("%s, %s: %d of the 6 panels checked found", en.name, s.id, seen)
			}
		}
	}
}

// known says, row by row, whether column col holds a time (not NULL).
func known(r *result, col string) []bool {
	var out []bool
	for _, v := range r.strings(col) {
		out = append(out, v != "")
	}
	return out
}

// A session without answers has no risk to rate. The postmortem's Verdict
// read `none` for it — max() of no rows is the enum's first value — which
// is the rating of an answer built on complete inputs: a claim about
// answers that do not exist. Both verdict panels say "no answers", on 18.16
// and on chDB 26.7; a session with an answer of risk none still reads none.
func TestPostmortemVerdictOfSessionWithoutAnswers(t *testing.T) {
	ctx := context.Background()
	e, addr, classic, modern := bothEngines(t)
	now := time.Now().UTC().Truncate(time.Second)
	done := schema.Analysis{Done: true, Records: 1}
	call := func(session string) schema.ToolCall {
		c := schema.ToolCall{SessionID: session, CallID: session + "-c1", Tool: "Read", Timestamp: now,
			Source: schema.HarnessClaudeCode, Turn: schema.KnownTurn(0), Analysis: done}
		c.Kind, c.Strategy = schema.KindNone, schema.StrategyNone
		return c
	}
	meta := func(session string, answers int) schema.Session {
		return schema.Session{SessionID: session, Source: schema.HarnessClaudeCode, StartedAt: now, EndedAt: now,
			ToolCalls: 1, Answers: answers, MaxRisk: schema.RiskNone, Turns: schema.Known(1), Analysis: done}
	}
	answered := schema.Answer{SessionID: "answered", MessageID: "answered-a1", Source: schema.HarnessClaudeCode, Timestamp: now,
		Turn: schema.KnownTurn(0), Text: "It reads a.go.", InputCallIDs: []string{"answered-c1"}, IncompleteInputs: []string{},
		Risk: schema.RiskNone, Reasons: []string{}, Verdict: "Answer was built on Read, which was complete.", Analysis: done}
	for _, st := range []*chstore.Store{classic, modern} {
		if err := st.WriteToolCalls(ctx, []schema.ToolCall{call("unanswered"), call("answered")}); err != nil {
			t.Fatal(err)
		}
		if err := st.WriteAnswers(ctx, []schema.Answer{answered}); err != nil {
			t.Fatal(err)
		}
		if err := st.WriteSessions(ctx, []schema.Session{meta("unanswered", 0), meta("answered", 1)}); err != nil {
			t.Fatal(err)
		}
	}
	var postmortem *grafana.Dashboard
	for _, d := range loadDashboards(t) {
		if d.UID == postmortemUID {
			postmortem = d
		}
	}
	for _, en := range []struct {
		name string
		conn driver.Conn
	}{
		{"ClickHouse 18.16", grafanaConn(t, addr)},
		{"chDB 26.7", e.ConnIn(modern.Database())},
	} {
		for session, want := range map[string]string{"unanswered": "no answers", "answered": "none"} {
			req := grafana.Request{From: now.Add(-time.Hour), To: now.Add(time.Hour), Interval: time.Minute,
				Vars: map[string]grafana.Selection{"session_id": grafana.Single(session), "search": grafana.Single("")}}
			seen := 0
			for _, p := range postmortem.AllPanels() {
				if p.Title != "Verdict" && p.Title != "Verdict of the worst answer" {
					continue
				}
				where := en.name + ", " + session + ": panel " + p.Title
				if r := runExpanded(t, ctx, en.conn, where, p.Targets[0].RawSQL, req); r != nil {
					if got := r.strings("max_risk"); !slices.Equal(got, []string{want}) {
						t.Errorf("%s: max_risk %q, want %q", where, got, want)
					}
					seen++
				}
			}
			if seen != 2 {
				t.Errorf("%s, %s: %d of the 2 verdict panels found", en.name, session, seen)
			}
		}
	}
}

// The disclosure dashboard's list of recent silent truncations says whether
// the model followed each up. A call analysis found not followed up is
// "none known", not "no", when its session holds a call with neither a time
// nor a source line — that call may have been the follow-up (docs/design.md
// §4.12) — unless its row says its "not followed up" is known
// (followed_up_exact, which rows stored before migration 0012 lack), and
// "no" when the session's calls are all ordered, by time or by line; on
// 18.16 and on chDB 26.7.
func TestRecentSilentTruncationsHedgeOnUnorderedCalls(t *testing.T) {
	ctx := context.Background()
	e, addr, classic, modern := bothEngines(t)
	now := time.Now().UTC().Truncate(time.Second)
	done := schema.Analysis{Done: true, Records: 2}
	session := func(id string, other func(*schema.ToolCall)) []schema.ToolCall {
		cut := schema.ToolCall{SessionID: id, CallID: id + "-cut", Tool: "Read", Timestamp: now.Add(-10 * time.Minute),
			Source: schema.HarnessClaudeCode, Turn: schema.KnownTurn(0), Analysis: done}
		cut.Truncated, cut.Kind, cut.Strategy = true, schema.KindSilent, schema.StrategyHead
		rest := cut
		rest.CallID, rest.Truncated, rest.Kind, rest.Strategy = id+"-other", false, schema.KindNone, schema.StrategyNone
		other(&rest)
		return []schema.ToolCall{cut, rest}
	}
	want := map[string]string{"unordered": "none known", "marked": "no", "by-line": "no", "timed": "no"}
	marked := session("marked", func(c *schema.ToolCall) { c.Timestamp = time.Time{} })
	marked[0].FollowUpExact = true
	calls := slices.Concat(
		session("unordered", func(c *schema.ToolCall) { c.Timestamp = time.Time{} }),
		marked,
		session("by-line", func(c *schema.ToolCall) {
			c.Timestamp, c.SourceFile, c.SourceLine = time.Time{}, "/logs/by-line.jsonl", 7
		}),
		session("timed", func(c *schema.ToolCall) { c.Timestamp = now.Add(-5 * time.Minute) }),
	)
	for _, st := range []*chstore.Store{classic, modern} {
		if err := st.WriteToolCalls(ctx, calls); err != nil {
			t.Fatal(err)
		}
	}
	var disclosure *grafana.Dashboard
	for _, d := range loadDashboards(t) {
		if d.UID == disclosureUID {
			disclosure = d
		}
	}
	var panel *grafana.Panel
	for _, p := range disclosure.AllPanels() {
		if p.Title == "Recent silent truncations" {
			panel = &p
		}
	}
	if panel == nil {
		t.Fatal("no Recent silent truncations panel")
	}
	for _, en := range []struct {
		name string
		conn driver.Conn
	}{
		{"ClickHouse 18.16", grafanaConn(t, addr)},
		{"chDB 26.7", e.ConnIn(modern.Database())},
	} {
		sc := scenario{from: now.Add(-time.Hour), to: now.Add(time.Hour), interval: time.Minute,
			pick: pickAll}
		req := grafana.Request{From: sc.from, To: sc.to, Interval: sc.interval, Vars: resolveVariables(t, ctx, en.conn, disclosure, sc)}
		r := runExpanded(t, ctx, en.conn, en.name+": Recent silent truncations", panel.Targets[0].RawSQL, req)
		if r == nil {
			continue
		}
		got := map[string]string{}
		for i, id := range r.strings("session_id") {
			got[id] = r.strings("follow_up")[i]
		}
		if !maps.Equal(got, want) {
			t.Errorf("%s: followed up by session %v, want %v", en.name, got, want)
		}
	}
}
