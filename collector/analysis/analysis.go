// Package analysis follows a session through time: which later calls continued
// an earlier truncated one, how much of each original the model eventually
// saw, and, for each answer, which of its inputs were still incomplete when it
// was given and how risky that makes it (docs/design.md §4.12, §5).
//
// The model, in the order the files implement it:
//
//   - targets.go, tools.go, shell*.go: each call touches targets — a file, a
//     URL, a search's result list, a command's output, a saved full output —
//     each with a mode (read, search, meta, write) and the view it asked for
//     (Read offset/limit, fetch start_index, sed -n 'a,bp', tail -n +N …).
//   - coverage.go: what a call delivered of a target is its forensics' Shown
//     range where known, else the view it asked for if nothing was cut; a
//     target's coverage is the union of what was delivered over its total,
//     in the unit that has a total (unknown when none has).
//   - followthrough.go: a later call continues an earlier truncated one when
//     it reads a part of the same target the truncated call did not show, or
//     searches it (Searched: searched, not read). Targets are per agent
//     thread: a sub-agent's reading is not in the main model's context.
//   - answers.go, absence.go: an answer's inputs are judged with only the
//     calls made up to it; risk and reasons follow docs/design.md §5.
//   - verdict.go: the one-sentence explanation, shared with the CLI.
//
// It is pure: no database, collector or file-system imports, no global
// mutable state, and no panics on any input.
package analysis

import (
	"sort"
	"strconv"

	"github.com/ctxaudit/ctxaudit/schema"
)

// Session is everything analysis knows about one session, in order.
type Session struct {
	Meta schema.Session
	// Calls in the order they were issued (by timestamp, then source line).
	Calls []schema.ToolCall
	// Answers in order, with Turn, Timestamp, Text and InputCallIDs set by the parser.
	Answers []schema.Answer
	// Partial says these records do not start at the session's first one
	// (a bounded buffer that was restarted); it is stamped on every result.
	Partial bool
	// NotAnswers counts the messages known to be no answers (they called a
	// tool). They are part of what the analysis saw: a message taken for an
	// answer and then shown to call a tool whose call never completes
	// leaves one answer fewer and no call more, and without them the later
	// analysis, which knows more, would rank below the earlier one.
	NotAnswers int
	// Continues says the session went on past these records, and no later
	// analysis will see them beside what came after (a bounded buffer that
	// was dropped as the session grew past it): a cut call none of them
	// followed up may be followed up after them, so whether it was is not
	// known (FollowUpUnknown), rather than known not.
	Continues bool
}

// Analyze fills the follow-through fields of s.Calls (FollowedUp,
// FollowUpUnknown, ContinuationOf, SessionCoverage, Searched, and Target
// where the parser left it empty), the verdict fields of s.Answers
// (IncompleteInputs, AbsenceClaim, Risk, Reasons, ReasonCalls, Verdict, and
// InputCallIDs where the parser left them empty: the calls of the answer's
// turn and thread up to it) and the counts of s.Meta.
//
// Analyze is a pure function of the parser-set fields: it first clears every
// field it fills, so analysing a session that grew by later calls and answers
// — even one whose records carry the results of an earlier Analyze — gives
// the same result as analysing the whole afresh.
func Analyze(s *Session) {
	infos := make([]callInfo, len(s.Calls))
	for i := range s.Calls {
		infos[i] = newCallInfo(&s.Calls[i], i)
	}
	analyze(s, infos)
}

// callInfo is what analysis derives from one call alone.
type callInfo struct {
	acc []access
	// keys are the accesses' keys in the call's scope.
	keys []string
	// scope is the call's agent thread, or, for a call nothing orders
	// (unordered), a scope of its own.
	scope string
	label string
	// request identifies what was asked: tool and arguments.
	request string
}

// newCallInfo derives what analysis needs of call c, the i-th of its
// session.
func newCallInfo(c *schema.ToolCall, i int) callInfo {
	acc := accessesOf(c)
	scope := threadOf(c)
	if unordered(c) {
		// Not known to come before or after any other call, it neither
		// continues one nor is continued: its targets are its own (by its
		// place in the slice: call ids may be empty or repeated).
		scope = "\x01" + strconv.Itoa(i) + "\x00" + scope
	}
	keys := make([]string, len(acc))
	for i, a := range acc {
		keys[i] = scope + a.key
	}
	return callInfo{acc: acc, keys: keys, scope: scope, label: labelOf(acc), request: c.Tool + "\x00" + c.Arguments}
}

// threadOf is the prefix of the keys of call c's accesses in its agent
// thread: a sub-agent reading the rest of a file does not put it in the
// main thread's context.
func threadOf(c *schema.ToolCall) string { return c.AgentID + "\x00" }

// unordered reports whether nothing places call c among the session's
// other calls: its time is not known and no source line orders it (a span
// without a time). Issue order puts such a call first by assumption only
// (transcript.Assemble), so analysis takes nothing from that place: the call
// takes no part in follow-through (followthrough.go) and is only a call an
// answer may rest on (deriveInputs), judged at its worst.
func unordered(c *schema.ToolCall) bool {
	return !schema.TimeKnown(c.Timestamp) && c.SourceFile == ""
}

func analyze(s *Session, infos []callInfo) {
	calls, answers := s.Calls, s.Answers
	byID := make(map[string]int, len(calls))
	for i := range calls {
		c := &calls[i]
		c.FollowedUp, c.FollowUpUnknown, c.ContinuationOf, c.Searched = false, false, "", false
		// This analysis marks every follow-up it cannot know, so its "not
		// followed up" is known (ToolCall.FollowUpExact).
		c.FollowUpExact = Truncated(c)
		c.SessionCoverage = schema.Ratio{}
		c.CoverageUpperBound, c.CoverageMixedVersions = false, false
		if c.Target == "" {
			c.Target = infos[i].label
		}
		if _, dup := byID[c.CallID]; !dup && c.CallID != "" {
			byID[c.CallID] = i
		}
	}

	// Sweep the calls once; judge each answer right after the last call
	// known to precede it (its placement's lo), so that "at answer time"
	// sees exactly the calls made up to it.
	place := placements(answers, calls, byID)
	var turns turnIndex
	for j := range answers {
		if len(answers[j].InputCallIDs) == 0 {
			if turns.byTurn == nil {
				turns = indexTurns(calls)
			}
			answers[j].InputCallIDs, answers[j].InputsUncertain = deriveInputs(&answers[j], place[j], calls, turns)
		}
	}
	order := make([]int, len(answers))
	inputs := make([][]int, len(answers))
	// An answer with inputs not known to precede it (after its lo) is
	// judged once the sweep is over, at its worst: each input as the
	// session stood when the input was made (asMade), the others as at lo.
	var later map[int]map[int]inputState
	var asMade map[int]bool
	for j := range order {
		order[j] = j
		inputs[j] = inputIndices(&answers[j], byID)
		for _, i := range inputs[j] {
			if i > place[j].lo || answers[j].InputsUncertain && unordered(&calls[i]) {
				if later == nil {
					later, asMade = make(map[int]map[int]inputState), make(map[int]bool)
				}
				later[j] = nil
				if Truncated(&calls[i]) {
					asMade[i] = false
				}
			}
		}
	}
	sort.SliceStable(order, func(x, y int) bool { return place[order[x]].lo < place[order[y]].lo })
	tr := newTracker(calls, infos)
	next := 0
	claims := make([]string, len(answers))
	judgeUpTo := func(i int) {
		for ; next < len(order) && place[order[next]].lo <= i; next++ {
			j := order[next]
			if _, ok := later[j]; ok {
				at := make(map[int]inputState)
				for _, k := range inputs[j] {
					if k <= place[j].lo {
						at[k] = tr.stateOf(k)
					}
				}
				later[j] = at
				continue
			}
			claims[j] = judge(&answers[j], inputs[j], tr, tr.stateOf, false)
		}
	}
	judgeUpTo(-1)
	for i := range calls {
		tr.add(i)
		if _, ok := asMade[i]; ok {
			asMade[i] = tr.stateOf(i).recovered
		}
		judgeUpTo(i)
	}
	judgeUpTo(len(calls))
	for j, at := range later {
		claims[j] = judge(&answers[j], inputs[j], tr, func(k int) inputState {
			if st, ok := at[k]; ok {
				return st
			}
			// Not yet followed up when made: nothing after it was seen.
			return inputState{recovered: asMade[k]}
		}, true)
	}

	for i := range calls {
		c := &calls[i]
		c.SessionCoverage, c.CoverageUpperBound, c.CoverageMixedVersions = tr.coverageOf(i)
	}
	lookup := func(id string) *schema.ToolCall {
		if i, ok := byID[id]; ok {
			return &calls[i]
		}
		return nil
	}
	known := OrderOf(calls)
	if !known.Ordered {
		// A call nothing orders takes no part in follow-through, so a cut
		// call none of the others followed up may have been followed up by
		// it: not known, rather than not, where it would have continued
		// the cut call (docs/design.md §4.12).
		markFollowUpsUnknown(calls, infos)
	}
	if s.Continues {
		for i := range calls {
			if c := &calls[i]; !c.FollowedUp && Truncated(c) {
				c.FollowUpUnknown = true
			}
		}
	}
	for j := range answers {
		answers[j].Verdict = verdict(&answers[j], claims[j], lookup, known)
	}
	count(s)
	stamp(s)
}

// stamp records on every result what analysis it reflects, so that a store
// never lets it replace a result that knew more of the session.
func stamp(s *Session) {
	st := schema.Analysis{Done: true, Partial: s.Partial, Records: len(s.Calls) + len(s.Answers) + s.NotAnswers}
	for i := range s.Calls {
		s.Calls[i].Analysis = st
	}
	for i := range s.Answers {
		s.Answers[i].Analysis = st
	}
	s.Meta.Analysis = st
}

// Counts is meta with the counts session analysis gives calls and answers
// (tool_calls, truncated_calls, silent_calls, answers, risky_answers,
// risky_answers_uncertain, max_risk, turns): the report's stand-in for a
// session row not stored yet counts by the same rules.
func Counts(meta schema.Session, calls []schema.ToolCall, answers []schema.Answer) schema.Session {
	s := Session{Meta: meta, Calls: calls, Answers: answers}
	count(&s)
	return s.Meta
}

// count fills the session counts of s.Meta.
func count(s *Session) {
	m := &s.Meta
	m.ToolCalls, m.TruncatedCalls, m.SilentCalls = len(s.Calls), 0, 0
	m.Answers, m.RiskyAnswers, m.MaxRisk = len(s.Answers), 0, schema.RiskNone
	uncertain := uint64(0)
	turns := turnCount{}
	for i := range s.Calls {
		c := &s.Calls[i]
		if Truncated(c) {
			m.TruncatedCalls++
			if c.Kind == schema.KindSilent {
				m.SilentCalls++
			}
		}
		turns.add(c.Turn)
	}
	for i := range s.Answers {
		a := &s.Answers[i]
		if a.Risk.Severity() >= schema.RiskMedium.Severity() {
			m.RiskyAnswers++
			if a.InputsUncertain {
				uncertain++
			}
		}
		if a.Risk.Severity() > m.MaxRisk.Severity() {
			m.MaxRisk = a.Risk
		}
		turns.add(a.Turn)
	}
	m.RiskyAnswersUncertain = schema.Known(uncertain)
	m.Turns = turns.of(m.Turns)
}

// turnCount finds a session's turns from the turns of its records.
type turnCount struct {
	n, records int
	unknown    bool // a record's turn is unknown
}

func (t *turnCount) add(turn schema.Turn) {
	t.records++
	if !turn.Known {
		t.unknown = true
		return
	}
	t.n = max(t.n, int(turn.N)+1)
}

// of is the session's turn count given what its source counted (a
// transcript counts its user prompts; a span seldom says): at least the
// turns its records name. Without a count from the source it is known only
// when every record's turn is, and there is a record: a call of unknown
// turn may have been in any number of turns.
func (t *turnCount) of(counted schema.Count) schema.Count {
	switch {
	case counted.Known:
		return schema.Known(max(counted.N, uint64(t.n)))
	case t.unknown || t.records == 0:
		return schema.Unknown
	}
	return schema.KnownInt(t.n)
}
