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

// judge fills the verdict fields of answer a from the state of the session
// just after its last input (tr has seen calls up to then), and returns the
// sentence holding its absence claim, if any. Verdict is left for later: it
// names follow-ups that may come after the answer.
func judge(a *schema.Answer, inputs []int, tr *tracker) (claim string) {
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
		if !isTruncated(c) {
			continue
		}
		if r := tr.coverage(i); r.Known && r.V >= 1 {
			add(schema.ReasonRecovered, c.CallID)
			continue
		}
		a.IncompleteInputs = append(a.IncompleteInputs, c.CallID)
		incomplete = append(incomplete, i)
		add(kindReason(c.Kind), c.CallID)
		if !c.FollowedUp { // as of now: the tracker has not seen later calls yet
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
		if a.Absence == schema.AbsenceScoped && scopeWithinSeen(m.Range, incomplete, tr) {
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
}

type turnKey struct {
	agent string
	turn  schema.Turn
}

func indexTurns(calls []schema.ToolCall) turnIndex {
	ix := turnIndex{byTurn: make(map[turnKey][]int), byThread: make(map[string][]int)}
	for i := range calls {
		c := &calls[i]
		k := turnKey{c.AgentID, c.Turn}
		ix.byTurn[k] = append(ix.byTurn[k], i)
		ix.byThread[c.AgentID] = append(ix.byThread[c.AgentID], i)
	}
	return ix
}

// deriveInputs finds an answer's inputs when the parser did not name them:
// the calls of its thread made up to the answer (index at most cutoff) that
// may be of its turn, except those issued by the answer's own message (text
// that precedes a tool call in one message was written before its result).
//
// A call may be of the answer's turn when both turns are known and equal, or
// when either is unknown: nothing tells where the turns of such records
// begin. So an answer of unknown turn may rest on any call of its thread
// made up to it, and one of a known turn on its turn's calls and on those
// of unknown turn. Leaving the latter out would call an answer that rests
// on them one that "used no tool results", or built only on complete ones.
// uncertain says so when the answer's turn or one of the inputs' turns is
// unknown: they are the calls the answer may rest on, not calls known to be
// its inputs (schema.Answer.InputsUncertain), and the verdict says "may have
// been built on" (verdict.go).
func deriveInputs(a *schema.Answer, cutoff int, calls []schema.ToolCall, ix turnIndex) (ids []string, uncertain bool) {
	ids = []string{}
	add := func(i int) {
		c := &calls[i]
		if c.CallID != "" && (a.MessageID == "" || c.MessageID != a.MessageID) {
			ids = append(ids, c.CallID)
			uncertain = uncertain || !a.Turn.Known || !c.Turn.Known
		}
	}
	if !a.Turn.Known {
		for _, i := range ix.byThread[a.AgentID] {
			if i > cutoff {
				break
			}
			add(i)
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
		if i > cutoff {
			break
		}
		add(i)
	}
	return ids, uncertain
}

// cutoffs gives, per answer, the index of the last call made up to it: the
// last call with a timestamp at or before the answer's, and never before the
// answer's own inputs. Calls are in issue order, so this is a prefix; the
// binary search runs over suffix minima so that a call with a stray early
// timestamp cannot hide the ones before it.
func cutoffs(answers []schema.Answer, calls []schema.ToolCall, byID map[string]int) []int {
	suffixMin := make([]time.Time, len(calls))
	for i := len(calls) - 1; i >= 0; i-- {
		suffixMin[i] = calls[i].Timestamp
		if i+1 < len(calls) && suffixMin[i+1].Before(suffixMin[i]) {
			suffixMin[i] = suffixMin[i+1]
		}
	}
	out := make([]int, len(answers))
	for j := range answers {
		a := &answers[j]
		k := -1
		if !a.Timestamp.IsZero() {
			k = sort.Search(len(calls), func(i int) bool { return suffixMin[i].After(a.Timestamp) }) - 1
		}
		for _, id := range a.InputCallIDs {
			if i, ok := byID[id]; ok {
				k = max(k, i)
			}
		}
		out[j] = k
	}
	return out
}
