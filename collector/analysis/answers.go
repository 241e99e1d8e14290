package analysis

import (
	"sort"
	"time"

	"github.com/ctxaudit/ctxaudit/schema"
)

// reasonOrder is the order reasons are listed in: the most serious first.
var reasonOrder = []string{
	schema.ReasonAbsenceClaimOnPartialInput,
	schema.ReasonScopedAbsence,
	schema.ReasonSilentTruncation,
	schema.ReasonExplicitTruncation,
	schema.ReasonSuspectedTruncation,
	schema.ReasonNotFollowedUp,
	schema.ReasonMarkerUnderstated,
	schema.ReasonCleared,
	schema.ReasonRefused,
	schema.ReasonRecovered,
}

// kindReason is the reason code of an unrecovered truncation of a kind. A
// call marked truncated without a clear kind counts as suspected.
func kindReason(k schema.TruncationKind) string {
	switch k {
	case schema.KindSilent:
		return schema.ReasonSilentTruncation
	case schema.KindExplicit:
		return schema.ReasonExplicitTruncation
	}
	return schema.ReasonSuspectedTruncation
}

// reasonRisk is the risk each reason implies on its own (docs/design.md §5.5): an
// absence claim on incomplete input or unrecovered silent truncation is
// high; any other unrecovered truncation medium; recovered truncation low.
func reasonRisk(code string) schema.Risk {
	switch code {
	case schema.ReasonAbsenceClaimOnPartialInput, schema.ReasonSilentTruncation:
		return schema.RiskHigh
	case schema.ReasonRecovered:
		return schema.RiskLow
	}
	return schema.RiskMedium
}

// inputState is what judging an answer takes of one input as the session
// stood at the answer: whether it had been read in full, and whether the
// model had gone back for more of it.
type inputState struct{ recovered, followed bool }

// stateOf is input i's state as the tracker stands now.
func (tr *tracker) stateOf(i int) inputState {
	r := tr.coverage(i)
	return inputState{recovered: r.Known && r.V >= 1, followed: tr.calls[i].FollowedUp}
}

// judge fills the verdict fields of answer a from the state of each input
// as of the answer (state), and returns the sentence holding its absence
// claim, if any. Verdict is left for later: it names follow-ups that may come
// after the answer. everyPlace says the answer's place among the calls is
// not known, so a scoped absence claim is honest only if it is at every
// place: within what each incomplete input delivered.
func judge(a *schema.Answer, inputs []int, tr *tracker, state func(int) inputState, everyPlace bool) (claim string) {
	calls := make(map[string][]string)
	add := func(code, id string) {
		ids := calls[code]
		for _, x := range ids {
			if x == id {
				return
			}
		}
		calls[code] = append(ids, id)
	}
	a.IncompleteInputs = []string{}
	var incomplete []int
	for _, i := range inputs {
		c := &tr.calls[i]
		if !Truncated(c) {
			continue
		}
		st := state(i)
		if st.recovered {
			add(schema.ReasonRecovered, c.CallID)
			continue
		}
		a.IncompleteInputs = append(a.IncompleteInputs, c.CallID)
		incomplete = append(incomplete, i)
		add(kindReason(c.Kind), c.CallID)
		if !st.followed {
			add(schema.ReasonNotFollowedUp, c.CallID)
		}
		if c.MarkerUnderstated {
			add(schema.ReasonMarkerUnderstated, c.CallID)
		}
		switch c.Strategy {
		case schema.StrategyCleared:
			add(schema.ReasonCleared, c.CallID)
		case schema.StrategyRefused:
			add(schema.ReasonRefused, c.CallID)
		}
	}
	m, ok := JudgeAbsence(a.Text)
	a.Absence, a.AbsenceClause, a.AbsenceScope = schema.AbsenceNone, "", ""
	if ok {
		a.Absence, a.AbsenceClause, a.AbsenceScope = m.Absence, m.Clause, m.Scope
	}
	a.AbsenceClaim = a.Absence.IsClaim()
	honestScope := false
	if a.AbsenceClaim && len(a.IncompleteInputs) > 0 {
		ids := append([]string(nil), a.IncompleteInputs...)
		if a.Absence == schema.AbsenceScoped && scopeHonest(m.Range, incomplete, tr, everyPlace) {
			honestScope = true
			calls[schema.ReasonScopedAbsence] = ids
		} else {
			calls[schema.ReasonAbsenceClaimOnPartialInput] = ids
		}
	}
	a.Risk = schema.RiskNone
	a.Reasons = []string{}
	a.ReasonCalls = make(map[string][]string, len(calls))
	for _, code := range reasonOrder {
		ids, ok := calls[code]
		if !ok {
			continue
		}
		a.Reasons = append(a.Reasons, code)
		a.ReasonCalls[code] = ids
		if r := reasonRisk(code); r.Severity() > a.Risk.Severity() {
			a.Risk = r
		}
	}
	if honestScope && a.Risk.Severity() > schema.RiskMedium.Severity() {
		// The answer limited its claim to what it saw: the cut may have
		// hidden something, but the answer does not say otherwise.
		a.Risk = schema.RiskMedium
	}
	return m.Sentence
}

// scopeHonest reports whether a scoped claim keeps within what the
// incomplete inputs delivered: within what one of them delivered, or, when
// everyPlace, within what each did — the answer may have come right after
// any one of them.
func scopeHonest(r ScopeRange, incomplete []int, tr *tracker, everyPlace bool) bool {
	if !everyPlace {
		return scopeWithinSeen(r, incomplete, tr)
	}
	for _, i := range incomplete {
		if !scopeWithinSeen(r, []int{i}, tr) {
			return false
		}
	}
	return true
}

// scopeWithinSeen reports whether a scoped claim's range lies within what
// the incomplete inputs delivered. A scope without a range ("in what I read",
// "the preview", "讀到的部分") is about what was seen by construction. A
// range in a unit no input measured cannot be checked and is taken at its
// word; a range that reaches past what every input in that unit delivered is
// not honest: the claim speaks for lines the model never saw.
func scopeWithinSeen(r ScopeRange, incomplete []int, tr *tracker) bool {
	if !r.Known {
		return true
	}
	measured := false
	for _, i := range incomplete {
		c := &tr.calls[i]
		sh := c.Shown
		if sh.Unit != r.Unit || !sh.Start.Known || !sh.End.Known {
			continue
		}
		measured = true
		rng := r
		if r.FromEnd {
			var ok bool
			if rng, ok = lastRange(r, c); !ok {
				continue // where the output ends is not known: unchecked, not honest
			}
		}
		if rng.Start >= sh.Start.N && rng.End <= sh.End.N {
			return true
		}
		if t := c.ShownTail; t.Unit == r.Unit && t.Start.Known && t.End.Known && rng.Start >= t.Start.N && rng.End <= t.End.N {
			return true
		}
	}
	return !measured
}

// lastRange places "the last N" of r on call c's output: it ends where the
// output ends — the shown tail's end when it is the output's end, else the
// output's total. ok is false when neither is known.
func lastRange(r ScopeRange, c *schema.ToolCall) (ScopeRange, bool) {
	var end uint64
	switch {
	case c.ShownTailIsEnd && c.ShownTail.Unit == r.Unit && c.ShownTail.End.Known:
		end = c.ShownTail.End.N
	case c.Total.Known && c.Original.Precision != schema.PrecisionLowerBound:
		end = c.Total.N
	default:
		return ScopeRange{}, false
	}
	out := ScopeRange{Known: true, Unit: r.Unit, End: end}
	if r.Unit == schema.UnitLines {
		// Lines count from 1, End inclusive: the last N end at line end.
		out.Start = end - min(r.End, end) + 1
	} else {
		out.Start = end - min(r.End, end)
	}
	return out, true
}

// inputIndices are the calls named by an answer's InputCallIDs; ids that
// match no call are skipped.
func inputIndices(a *schema.Answer, byID map[string]int) []int {
	var out []int
	for _, id := range a.InputCallIDs {
		if i, ok := byID[id]; ok {
			out = append(out, i)
		}
	}
	return out
}

// turnIndex indexes calls by thread and turn, for deriveInputs.
type turnIndex struct {
	// byTurn: the calls of one thread and turn, in issue order; the calls
	// whose turn is unknown are one group (the zero schema.Turn).
	byTurn map[turnKey][]int
	// byThread: all the calls of one thread, in issue order.
	byThread map[string][]int
	// lastUnordered is the index of the last unordered call, or -1.
	lastUnordered int
}

type turnKey struct {
	agent string
	turn  schema.Turn
}

func indexTurns(calls []schema.ToolCall) turnIndex {
	ix := turnIndex{byTurn: make(map[turnKey][]int), byThread: make(map[string][]int), lastUnordered: -1}
	for i := range calls {
		c := &calls[i]
		if unordered(c) {
			ix.lastUnordered = i
		}
		k := turnKey{c.AgentID, c.Turn}
		ix.byTurn[k] = append(ix.byTurn[k], i)
		ix.byThread[c.AgentID] = append(ix.byThread[c.AgentID], i)
	}
	return ix
}

// deriveInputs finds an answer's inputs when the parser did not name them:
// the calls of its thread that may have been made before the answer (index
// at most p.hi) and may be of its turn, except those issued by the answer's
// own message (text that precedes a tool call in one message was written
// before its result).
//
// A call may be of the answer's turn when both turns are known and equal, or
// when either is unknown: nothing tells where the turns of such records
// begin. So an answer of unknown turn may rest on any call of its thread
// made up to it, and one of a known turn on its turn's calls and on those
// of unknown turn. Leaving the latter out would call an answer that rests
// on them one that "used no tool results", or built only on complete ones.
// An unordered call (analysis.go) may have been made at any time: it is
// one an answer of its thread may rest on wherever it stands.
// uncertain says so when the answer's turn or one of the inputs' turns is
// unknown, or when one of the inputs is not known to precede the answer
// (index above p.lo, or unordered): they are the calls the answer may rest
// on, not calls known to be its inputs (schema.Answer.InputsUncertain), and
// the verdict says "may have been built on" (verdict.go).
func deriveInputs(a *schema.Answer, p placement, calls []schema.ToolCall, ix turnIndex) (ids []string, uncertain bool) {
	ids = []string{}
	add := func(i int) {
		c := &calls[i]
		if c.CallID != "" && (a.MessageID == "" || c.MessageID != a.MessageID) {
			ids = append(ids, c.CallID)
			uncertain = uncertain || !a.Turn.Known || !c.Turn.Known || i > p.lo || unordered(c)
		}
	}
	if !a.Turn.Known {
		for _, i := range ix.byThread[a.AgentID] {
			if i > max(p.hi, ix.lastUnordered) {
				break
			}
			if i <= p.hi || unordered(&calls[i]) {
				add(i)
			}
		}
		return ids, uncertain
	}
	// Merge the turn's calls with those of unknown turn, in issue order.
	same, unknown := ix.byTurn[turnKey{a.AgentID, a.Turn}], ix.byTurn[turnKey{agent: a.AgentID}]
	for len(same) > 0 || len(unknown) > 0 {
		var i int
		if len(unknown) == 0 || (len(same) > 0 && same[0] < unknown[0]) {
			i, same = same[0], same[1:]
		} else {
			i, unknown = unknown[0], unknown[1:]
		}
		if i > max(p.hi, ix.lastUnordered) {
			break
		}
		if i <= p.hi || unordered(&calls[i]) {
			add(i)
		}
	}
	return ids, uncertain
}

// placement is where an answer stands among the session's calls, which are
// in issue order: after calls[:lo+1] for certain, and perhaps after calls up
// to hi too (lo <= hi). The calls in between are those whose time is not
// known and that are not known to come after it; an answer whose own time is
// not known may come after any call but the ones its source named.
type placement struct{ lo, hi int }

// placements places each answer: lo is the last call with a known time at
// or before the answer's (never before the answer's own inputs), hi the
// last call before the first one known to come after it. Calls are in issue
// order, so lo is a prefix; the binary search runs over the suffix minima of
// the known times so that a call with a stray early timestamp cannot hide
// the ones before it. A call without a time is placed by that order alone —
// treated as the earliest, it made every call before it an input, even ones
// timed after the answer.
func placements(answers []schema.Answer, calls []schema.ToolCall, byID map[string]int) []placement {
	// suffixMin[i] is the earliest known time among calls[i:], zero if none.
	suffixMin := make([]time.Time, len(calls)+1)
	// nextKnown[i] is the first call at or after i with a known time, or
	// len(calls).
	nextKnown := make([]int, len(calls)+1)
	nextKnown[len(calls)] = len(calls)
	for i := len(calls) - 1; i >= 0; i-- {
		suffixMin[i], nextKnown[i] = suffixMin[i+1], nextKnown[i+1]
		if t := calls[i].Timestamp; schema.TimeKnown(t) {
			nextKnown[i] = i
			if suffixMin[i].IsZero() || t.Before(suffixMin[i]) {
				suffixMin[i] = t
			}
		}
	}
	out := make([]placement, len(answers))
	for j := range answers {
		a := &answers[j]
		named := -1
		for _, id := range a.InputCallIDs {
			if i, ok := byID[id]; ok {
				named = max(named, i)
			}
		}
		if !schema.TimeKnown(a.Timestamp) {
			out[j] = placement{lo: named, hi: max(named, len(calls)-1)}
			continue
		}
		lo := sort.Search(len(calls), func(i int) bool {
			return suffixMin[i].IsZero() || suffixMin[i].After(a.Timestamp)
		}) - 1
		lo = max(lo, named)
		out[j] = placement{lo: lo, hi: nextKnown[lo+1] - 1}
	}
	return out
}
