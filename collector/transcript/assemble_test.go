package transcript

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/schema"
)

func TestMergeSession(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	main := schema.Session{SessionID: "s", Model: "m", StartedAt: t0, EndedAt: t0.Add(time.Hour), InputTokens: schema.Known(10), OutputTokens: schema.Known(1),
		Compactions: schema.Known(0)}
	MergeSession(&main, schema.Session{SessionID: "other", Model: "x", GitBranch: "dev", StartedAt: t0.Add(-time.Minute),
		EndedAt: t0.Add(2 * time.Hour), InputTokens: schema.Known(5), OutputTokens: schema.Known(2), Compactions: schema.Known(1)})
	want := schema.Session{SessionID: "s", Model: "m", GitBranch: "dev", StartedAt: t0.Add(-time.Minute),
		EndedAt: t0.Add(2 * time.Hour), InputTokens: schema.Known(15), OutputTokens: schema.Known(3), Compactions: schema.Known(1)}
	if main != want {
		t.Fatalf("merged %+v\nwant %+v", main, want)
	}
	// A thread whose compactions nobody showed leaves the session's unknown;
	// one whose usage nobody reported leaves its tokens as they were.
	MergeSession(&main, schema.Session{SessionID: "spans"})
	if main.Compactions.Known || main.InputTokens != schema.Known(15) {
		t.Fatalf("merged with a thread of unknown figures: compactions %s, input tokens %s; want unknown, 15", main.Compactions, main.InputTokens)
	}
}

func TestAssemble(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	calls := []schema.ToolCall{
		{CallID: "sub", Sidechain: true, AgentID: "a1", Turn: schema.KnownTurn(0), Timestamp: t0.Add(2 * time.Second), SourceFile: "agent-a1.jsonl", SourceLine: 3},
		{CallID: "late", Turn: schema.KnownTurn(2), Timestamp: t0.Add(3 * time.Second), SourceFile: "main.jsonl", SourceLine: 9},
		{CallID: "tie-b", Turn: schema.KnownTurn(2), Timestamp: t0, SourceFile: "main.jsonl", SourceLine: 5},
		{CallID: "tie-a", Turn: schema.KnownTurn(2), Timestamp: t0, SourceFile: "main.jsonl", SourceLine: 4},
	}
	answers := []schema.Answer{
		{MessageID: "m2", Timestamp: t0.Add(5 * time.Second)},
		{MessageID: "m1", Sidechain: true, AgentID: "a1", Timestamp: t0.Add(4 * time.Second)},
	}
	Assemble(calls, answers, map[string]schema.Turn{"a1": schema.KnownTurn(2)})
	var order []string
	for _, c := range calls {
		order = append(order, c.CallID)
	}
	if got := order; len(got) != 4 || got[0] != "tie-a" || got[1] != "tie-b" || got[2] != "sub" || got[3] != "late" {
		t.Fatalf("call order %v, want [tie-a tie-b sub late]", got)
	}
	if calls[2].Turn != schema.KnownTurn(2) || answers[0].MessageID != "m1" || answers[0].Turn != schema.KnownTurn(2) {
		t.Fatalf("sub-agent records not placed in the spawning turn: call turn %s, answers %+v", calls[2].Turn, answers)
	}
}

// A main-thread answer relays a sub-agent's report: the calls the sub-agent
// made before it, in its turn, become its inputs (Claude Code 2.1.328 Agent
// with run_in_background false, testdata/lab/claude-code@2.1.328/subagent-bash-over-cap).
func TestAssembleSubAgentCallsAreInputsOfTheRelayingAnswer(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC)
	calls := []schema.ToolCall{
		{CallID: "agent", Tool: "Agent", Turn: schema.KnownTurn(0), Timestamp: t0},
		{CallID: "sub-bash", Tool: "Bash", AgentID: "a1", Sidechain: true, Turn: schema.KnownTurn(7), Timestamp: t0.Add(time.Second)},
		{CallID: "late-sub", Tool: "Bash", AgentID: "a1", Sidechain: true, Turn: schema.KnownTurn(7), Timestamp: t0.Add(time.Minute)},
	}
	answers := []schema.Answer{
		{MessageID: "sub-answer", AgentID: "a1", Sidechain: true, Turn: schema.KnownTurn(7), Timestamp: t0.Add(2 * time.Second), InputCallIDs: []string{"sub-bash"}},
		{MessageID: "main-answer", Turn: schema.KnownTurn(0), Timestamp: t0.Add(3 * time.Second), InputCallIDs: []string{"agent"}},
	}
	Assemble(calls, answers, map[string]schema.Turn{"a1": schema.KnownTurn(0)})
	var main schema.Answer
	for _, a := range answers {
		if a.MessageID == "main-answer" {
			main = a
		}
	}
	if got := strings.Join(main.InputCallIDs, ","); got != "agent,sub-bash" {
		t.Fatalf("main answer inputs %s, want agent,sub-bash (not the sub-agent call made after it)", got)
	}
	for _, a := range answers {
		if a.MessageID == "sub-answer" && strings.Join(a.InputCallIDs, ",") != "sub-bash" {
			t.Fatalf("sub-agent answer inputs changed: %v", a.InputCallIDs)
		}
	}
}

// A call whose time is not known stands where its line does: after the
// calls on earlier lines of its file, with their latest time. One that
// nothing places — a span, a file's first line — comes first. Neither is
// given a time.
func TestAssembleOrdersUntimedCallsByTheirLines(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	calls := []schema.ToolCall{
		{CallID: "b3", Timestamp: t0.Add(3 * time.Second), SourceFile: "b.jsonl", SourceLine: 3},
		{CallID: "a9", Timestamp: t0.Add(9 * time.Second), SourceFile: "a.jsonl", SourceLine: 9},
		{CallID: "a7-untimed", SourceFile: "a.jsonl", SourceLine: 7},
		{CallID: "a5", Timestamp: t0.Add(5 * time.Second), SourceFile: "a.jsonl", SourceLine: 5},
		{CallID: "a2", Timestamp: t0.Add(2 * time.Second), SourceFile: "a.jsonl", SourceLine: 2},
		{CallID: "a1-untimed", SourceFile: "a.jsonl", SourceLine: 1},
		{CallID: "span-untimed", Timestamp: time.Unix(0, 0).UTC()},
		{CallID: "b6", Timestamp: t0.Add(6 * time.Second), SourceFile: "b.jsonl", SourceLine: 6},
	}
	Assemble(calls, nil, nil)
	var order []string
	for _, c := range calls {
		order = append(order, c.CallID)
	}
	want := []string{"a1-untimed", "span-untimed", "a2", "b3", "a5", "a7-untimed", "b6", "a9"}
	if !slices.Equal(order, want) {
		t.Errorf("call order %v; want %v", order, want)
	}
	for _, c := range calls {
		if strings.HasSuffix(c.CallID, "-untimed") && schema.TimeKnown(c.Timestamp) {
			t.Errorf("call %s was given the time %s", c.CallID, c.Timestamp)
		}
	}
}

// Where the sub-agent call's time or the answer's is not known, the call is
// not known to come before the answer, nor after it: it is added as one the
// answer may rest on, and the answer's inputs are marked uncertain — left
// out, a cut the sub-agent never recovered from would not count against
// the answer that relays it.
func TestAssembleUntimedSubAgentCallsAreUncertainInputs(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name          string
		call, answer  time.Time
		want          string
		wantUncertain bool
	}{
		{"both timed, call before", t0.Add(time.Second), t0.Add(2 * time.Second), "agent,sub", false},
		{"both timed, call after", t0.Add(3 * time.Second), t0.Add(2 * time.Second), "agent", false},
		{"call without a time", time.Time{}, t0.Add(2 * time.Second), "agent,sub", true},
		{"answer without a time", t0.Add(3 * time.Second), time.Unix(0, 0).UTC(), "agent,sub", true},
	} {
		calls := []schema.ToolCall{
			{CallID: "agent", Tool: "Agent", Turn: schema.KnownTurn(0), Timestamp: t0},
			{CallID: "sub", Tool: "Bash", AgentID: "a1", Sidechain: true, Turn: schema.KnownTurn(7), Timestamp: tc.call},
		}
		answers := []schema.Answer{{MessageID: "main", Turn: schema.KnownTurn(0), Timestamp: tc.answer, InputCallIDs: []string{"agent"}}}
		Assemble(calls, answers, map[string]schema.Turn{"a1": schema.KnownTurn(0)})
		if got := strings.Join(answers[0].InputCallIDs, ","); got != tc.want || answers[0].InputsUncertain != tc.wantUncertain {
			t.Errorf("%s: inputs %s, uncertain %v; want %s, %v", tc.name, got, answers[0].InputsUncertain, tc.want, tc.wantUncertain)
		}
	}
}
