package analysis

import (
	"slices"
	"strings"
	"testing"

	"github.com/ctxaudit/ctxaudit/schema"
)

// Calls from spans that do not say their turn: the session's turn count is
// unknown, not 1 (every call "in turn 0"). A call may be of an answer's turn
// when both turns are known and equal or either is unknown, so an answer of
// unknown turn rests on every call of its thread made up to it, and one of
// a known turn on that turn's calls and those of unknown turn.
func TestUnknownTurns(t *testing.T) {
	unknownTurn := func(c *schema.ToolCall) { c.Turn = schema.Turn{} }
	s := Session{
		Calls: []schema.ToolCall{
			call("c1", "Read", `{"file_path":"/repo/a.go"}`, 1, unknownTurn),
			call("c2", "Read", `{"file_path":"/repo/b.go"}`, 2, unknownTurn, cut(schema.KindSilent, schema.StrategyHead, schema.UnitLines, 1, 100, 500)),
			call("c3", "Read", `{"file_path":"/repo/c.go"}`, 3, turn(1)),
			call("c0", "Read", `{"file_path":"/repo/e.go"}`, 3, turn(0)),
			call("c4", "Read", `{"file_path":"/repo/d.go"}`, 5, unknownTurn),
		},
		Answers: []schema.Answer{
			answer("m1", 4, "It reads b.go."),
			answer("m2", 4, "It reads c.go."),
		},
	}
	s.Answers[1].Turn = schema.KnownTurn(1)
	Analyze(&s)

	if s.Meta.Turns.Known {
		t.Errorf("session turns %s; want unknown: three calls and an answer do not say theirs", s.Meta.Turns)
	}
	if got := s.Answers[0].InputCallIDs; !slices.Equal(got, []string{"c1", "c2", "c3", "c0"}) {
		t.Errorf("answer of unknown turn rests on %v; want every call of its thread made before it, [c1 c2 c3 c0]", got)
	}
	if got := s.Answers[0].IncompleteInputs; !slices.Equal(got, []string{"c2"}) {
		t.Errorf("incomplete inputs %v; want [c2]", got)
	}
	if got := s.Answers[1].InputCallIDs; !slices.Equal(got, []string{"c1", "c2", "c3"}) {
		t.Errorf("answer of turn 1 rests on %v; want its turn's call and those of unknown turn made before it, [c1 c2 c3]", got)
	}
	if s.Answers[1].Risk != schema.RiskHigh {
		t.Errorf("answer of turn 1 is rated %s; want high: c2, silently cut, may be of its turn", s.Answers[1].Risk)
	}
	for _, a := range s.Answers {
		if !a.InputsUncertain || !strings.Contains(a.Verdict, " may have been built on ") {
			t.Errorf("answer %s: inputs_uncertain %v, verdict %q; want its inputs marked as the calls it may rest on", a.MessageID, a.InputsUncertain, a.Verdict)
		}
	}
	if s.Answers[0].Turn.Known || s.Calls[0].Turn.Known {
		t.Errorf("analysis gave a turn to records that had none: answer %s, call %s", s.Answers[0].Turn, s.Calls[0].Turn)
	}
}

// An answer that does not say its turn, beside calls that do (a chat span
// without ctxaudit.turn among tool spans that carry it), rests on its
// thread's calls made up to it; it did not "use no tool results".
func TestAnswerOfUnknownTurnAmongKnownTurns(t *testing.T) {
	s := Session{
		Calls: []schema.ToolCall{
			call("c1", "Read", `{"file_path":"/repo/a.go"}`, 1, turn(0), cut(schema.KindSilent, schema.StrategyHead, schema.UnitLines, 1, 100, 500)),
			call("c2", "Read", `{"file_path":"/repo/b.go"}`, 2, turn(0)),
			call("c3", "Read", `{"file_path":"/repo/c.go"}`, 9, turn(1)),
		},
		Answers: []schema.Answer{answer("m1", 5, "There is no retry setting.")},
	}
	Analyze(&s)

	a := s.Answers[0]
	if !slices.Equal(a.InputCallIDs, []string{"c1", "c2"}) {
		t.Errorf("inputs %v; want the calls of its thread made before it, [c1 c2]", a.InputCallIDs)
	}
	if a.Risk != schema.RiskHigh || !slices.Contains(a.Reasons, schema.ReasonAbsenceClaimOnPartialInput) {
		t.Errorf("risk %s, reasons %v; want high with %s", a.Risk, a.Reasons, schema.ReasonAbsenceClaimOnPartialInput)
	}
	if strings.Contains(a.Verdict, "used no tool results") || !strings.Contains(a.Verdict, "; it may have been built on Read") || !a.InputsUncertain {
		t.Errorf("verdict %q (inputs_uncertain %v); want one that says which cut input the answer may have been built on", a.Verdict, a.InputsUncertain)
	}
}

// Inputs are uncertain only when analysis had to take the calls that may be
// of the answer's turn: not when every turn is known, nor when the source
// named them, whatever the turns say.
func TestInputsUncertainOnlyWhenTurnsAreNot(t *testing.T) {
	s := Session{
		Calls: []schema.ToolCall{
			call("c1", "Read", `{"file_path":"/repo/a.go"}`, 1, turn(0)),
			call("c2", "Read", `{"file_path":"/repo/b.go"}`, 2),
			call("c3", "Read", `{"file_path":"/repo/c.go"}`, 3, turn(1)),
		},
		Answers: []schema.Answer{
			answer("known", 2, "It reads a.go."),
			answer("named", 2, "It reads b.go.", "c2"),
			answer("alone", 4, "It reads c.go."),
		},
	}
	s.Answers[0].Turn = schema.KnownTurn(0)
	s.Answers[2].Turn = schema.KnownTurn(1)
	s.Calls[1].AgentID = "sub" // its own thread: not a call answer "known" may rest on
	s.Answers[1].AgentID = "sub"
	Analyze(&s)

	for _, tc := range []struct {
		id        string
		inputs    []string
		uncertain bool
	}{
		{"known", []string{"c1"}, false},
		{"named", []string{"c2"}, false},
		{"alone", []string{"c3"}, false},
	} {
		var a schema.Answer
		for _, x := range s.Answers {
			if x.MessageID == tc.id {
				a = x
			}
		}
		if !slices.Equal(a.InputCallIDs, tc.inputs) || a.InputsUncertain != tc.uncertain {
			t.Errorf("answer %s: inputs %v, uncertain %v; want %v, %v", tc.id, a.InputCallIDs, a.InputsUncertain, tc.inputs, tc.uncertain)
		}
		if strings.Contains(a.Verdict, "may have been") {
			t.Errorf("answer %s: verdict %q hedges inputs that are known", tc.id, a.Verdict)
		}
	}
}

// A session's turn count: what its transcript counted, at least the turns
// its records name; without a count, one more than the highest turn when
// every record's is known.
func TestTurnCount(t *testing.T) {
	known := func(n int) callOpt { return turn(n) }
	for _, tc := range []struct {
		name    string
		counted schema.Count
		calls   []schema.ToolCall
		want    schema.Count
	}{
		{"counted, no records", schema.Known(0), nil, schema.Known(0)},
		{"counted, more than the records show", schema.Known(5), []schema.ToolCall{call("a", "Read", "{}", 1, known(2))}, schema.Known(5)},
		{"counted, fewer than the records show", schema.Known(1), []schema.ToolCall{call("a", "Read", "{}", 1, known(2))}, schema.Known(3)},
		{"counted, a record of unknown turn", schema.Known(4), []schema.ToolCall{call("a", "Read", "{}", 1)}, schema.Known(4)},
		{"not counted, turns known", schema.Unknown, []schema.ToolCall{call("a", "Read", "{}", 1, known(0)), call("b", "Read", "{}", 2, known(3))}, schema.Known(4)},
		{"not counted, one turn unknown", schema.Unknown, []schema.ToolCall{call("a", "Read", "{}", 1, known(0)), call("b", "Read", "{}", 2)}, schema.Unknown},
		{"not counted, no records", schema.Unknown, nil, schema.Unknown},
	} {
		s := Session{Meta: schema.Session{Turns: tc.counted}, Calls: tc.calls}
		Analyze(&s)
		if s.Meta.Turns != tc.want {
			t.Errorf("%s: turns %s, want %s", tc.name, s.Meta.Turns, tc.want)
		}
	}
}
