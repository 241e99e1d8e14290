package analysis

import (
	"slices"

	"github.com/ctxaudit/ctxaudit/schema"
)

// Analyzer analyses a session that grows: the collector adds calls and
// answers as a transcript is tailed and asks for the result whenever it
// flushes. What analysis derives from a call alone (its targets, from its
// arguments and shell command) is worked out once, when the call is added;
// each Result re-runs only the session sweep, which is linear in the calls
// (plus a sort of the answers). Result after any sequence of additions
// equals Analyze of the same calls and answers in the same order.
//
// An Analyzer is not safe for concurrent use.
type Analyzer struct {
	meta    schema.Session
	calls   []schema.ToolCall
	infos   []callInfo
	answers []schema.Answer
}

// NewAnalyzer starts a session with its metadata (ids, source, times, and
// any counts the parser already knows, such as Compactions).
func NewAnalyzer(meta schema.Session) *Analyzer {
	return &Analyzer{meta: meta}
}

// SetMeta replaces the session metadata, e.g. when EndedAt moves.
func (z *Analyzer) SetMeta(meta schema.Session) { z.meta = meta }

// AddCalls appends calls, in issue order, after those already added.
func (z *Analyzer) AddCalls(calls ...schema.ToolCall) {
	for _, c := range calls {
		z.calls = append(z.calls, c)
		z.infos = append(z.infos, newCallInfo(&z.calls[len(z.calls)-1]))
	}
}

// AddAnswers appends answers, in order, after those already added.
func (z *Analyzer) AddAnswers(answers ...schema.Answer) {
	for _, a := range answers {
		a.InputCallIDs = slices.Clone(a.InputCallIDs)
		z.answers = append(z.answers, a)
	}
}

// Len reports how many calls and answers have been added.
func (z *Analyzer) Len() (calls, answers int) { return len(z.calls), len(z.answers) }

// Result analyses everything added so far and returns it as a new Session;
// the Analyzer keeps its own copy and can keep growing.
func (z *Analyzer) Result() Session {
	s := Session{
		Meta:    z.meta,
		Calls:   slices.Clone(z.calls),
		Answers: make([]schema.Answer, len(z.answers)),
	}
	for i, a := range z.answers {
		a.InputCallIDs = slices.Clone(a.InputCallIDs)
		s.Answers[i] = a
	}
	analyze(&s, z.infos)
	return s
}
