package analysis

import (
	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ctxaudit/ctxaudit/schema"
)

// Verdict explains an analysed answer in one plain English sentence: what it
// claimed, which input it was built on, what of that input the model saw,
// whether it was told, and whether it went back for the rest. For example:
//
//	Answer at 12:03:41 says "There is no such setting."; it was built on
//	WebFetch of https://example.com/docs, which delivered a summary of the
//	first 100,000 of 195,757 chars with a notice, and the model never read
//	further.
//
// a must carry the fields Analyze fills (Risk, Reasons, ReasonCalls,
// IncompleteInputs); calls are the session's calls as stored (any order),
// used to describe the inputs named there and to know their order. Analyze
// sets Answer.Verdict to exactly this sentence; the postmortem CLI rebuilds
// it from stored rows.
func Verdict(a schema.Answer, calls []schema.ToolCall) string {
	return VerdictOf(a, calls, OrderOf(calls))
}

// VerdictOf is Verdict for a caller that holds only some of the session's
// calls — those a names, say — and learnt the order of all of them
// (OrderOf) apart: what the verdict can say about follow-ups depends on
// every call of the session, not only on the answer's inputs, and a
// sentence rebuilt from fewer calls would say more than the analysis did.
func VerdictOf(a schema.Answer, calls []schema.ToolCall, order CallOrder) string {
	byID := make(map[string]*schema.ToolCall, len(calls))
	for i := range calls {
		if _, dup := byID[calls[i].CallID]; !dup {
			byID[calls[i].CallID] = &calls[i]
		}
	}
	var claim string
	if a.AbsenceClaim {
		if m, ok := JudgeAbsence(a.Text); ok {
			claim = m.Sentence
		}
	}
	return verdict(&a, claim, func(id string) *schema.ToolCall { return byID[id] }, order)
}

// CallOrder is what is known of the order of a session's calls, which
// decides what a verdict can say about follow-ups (docs/design.md §4.12).
// The zero value knows nothing: every follow-up not found is hedged but
// where the call's own row knows it (ToolCall.FollowUpExact).
type CallOrder struct {
	// Timed: every call's time is known. An answer's place among the calls
	// is known when its time is too; otherwise the calls between the last
	// one known to precede it and the first known to follow it may have
	// come before or after it (placements), and the verdict does not say
	// which.
	Timed bool `json:"timed"`
	// Ordered: every call is placed among the others by its time or its
	// source line. With one that is not (a span without a time), a cut
	// call's follow-up may be that call, which analysis does not count:
	// "never read further" would say more than is known.
	Ordered bool `json:"ordered"`
}

// OrderOf is what calls — all of a session's, as stored — say of their
// order.
func OrderOf(calls []schema.ToolCall) CallOrder {
	o := CallOrder{Timed: true, Ordered: true}
	for i := range calls {
		if !schema.TimeKnown(calls[i].Timestamp) {
			o.Timed = false
			o.Ordered = o.Ordered && !unordered(&calls[i])
		}
	}
	return o
}

// NeverFollowedUp reports whether cut call c is known not to have been
// followed up: none was found, and the analysis that stored it did not find
// that not known (FollowUpUnknown) — where the session has a call nothing
// orders, only if that analysis marks every follow-up it cannot know
// (FollowUpExact): a row stored before it, or by a writer that does not
// know the mark, holds 0 either way. Every reader that says "never" asks
// this.
func (o CallOrder) NeverFollowedUp(c *schema.ToolCall) bool {
	return !c.FollowedUp && !c.FollowUpUnknown && (o.Ordered || c.FollowUpExact)
}

// placed reports whether answer a's place among the calls is known.
func (o CallOrder) placed(a *schema.Answer) bool { return o.Timed && schema.TimeKnown(a.Timestamp) }

// completenessNotKnown: nothing says whether input c was cut — its kind is
// unknown, or no record of it is at hand (an answer may name a call the
// analysis or the report never received), which is no ground to call it
// complete.
func completenessNotKnown(c *schema.ToolCall) bool { return c == nil || c.Kind == schema.KindUnknown }

// verdict builds the sentence; claim is the sentence holding the answer's
// absence claim, or empty; order is what is known of the calls' order.
func verdict(a *schema.Answer, claim string, lookup func(string) *schema.ToolCall, order CallOrder) string {
	lead := "Answer"
	if schema.TimeKnown(a.Timestamp) {
		lead += " at " + a.Timestamp.UTC().Format("15:04:05")
	}
	if claim != "" {
		lead += ` says "` + clip(claim, 100) + `"; it`
	}
	switch a.Risk {
	case schema.RiskNone, "":
		switch n := len(a.InputCallIDs); n {
		case 0:
			return lead + " used no tool results."
		case 1:
			if c := lookup(a.InputCallIDs[0]); completenessNotKnown(c) {
				return lead + builtOn(a) + describe(a.InputCallIDs[0], lookup) +
					", whose completeness is unknown: nothing shows whether it was cut."
			}
			return lead + builtOn(a) + describe(a.InputCallIDs[0], lookup) + ", which was complete."
		default:
			unknown := 0
			for _, id := range a.InputCallIDs {
				if completenessNotKnown(lookup(id)) {
					unknown++
				}
			}
			if unknown > 0 {
				// Risk counts what is known to be missing; an input of
				// unknown completeness is not called complete.
				return lead + builtOn(a) + plural(n, "tool call") + ", none known to be cut; " +
					completenessUnknown(unknown, n) + "."
			}
			return lead + builtOn(a) + plural(n, "tool call") + ", all complete."
		}
	case schema.RiskLow:
		if ids := a.ReasonCalls[schema.ReasonRecovered]; len(ids) == 1 {
			return lead + builtOn(a) + describe(ids[0], lookup) +
				", which was cut at first but read in full before the answer."
		}
		return lead + builtOn(a) + plural(len(a.ReasonCalls[schema.ReasonRecovered]), "truncated input") +
			", all read in full before the answer."
	}
	id := worstInput(a)
	if id == "" {
		return lead + " is rated " + string(a.Risk) + "."
	}
	var b strings.Builder
	b.WriteString(lead)
	b.WriteString(builtOn(a))
	b.WriteString(describe(id, lookup))
	if c := lookup(id); c != nil {
		b.WriteString(", which delivered ")
		b.WriteString(delivery(c))
		b.WriteString(notice(c))
		b.WriteString(", and ")
		b.WriteString(followThrough(a, c, order))
	}
	if others := len(a.IncompleteInputs) - 1; others > 0 {
		b.WriteString(" (plus " + plural(others, "other incomplete input") + ")")
	}
	b.WriteString(".")
	return b.String()
}

// builtOn is " was built on ", or " may have been built on " when the
// answer's inputs are only the calls it may rest on (InputsUncertain): a
// verdict never names as an answer's input a call not known to be one.
func builtOn(a *schema.Answer) string {
	if a.InputsUncertain {
		return " may have been built on "
	}
	return " was built on "
}

// completenessUnknown is "1 of them of unknown completeness", or "all of
// unknown completeness".
func completenessUnknown(unknown, n int) string {
	if unknown == n {
		return "all of unknown completeness"
	}
	return strconv.Itoa(unknown) + " of them of unknown completeness"
}

// worstInput picks the incomplete input to explain: silent before suspected
// before explicit, then the earliest listed.
func worstInput(a *schema.Answer) string {
	for _, code := range [...]string{schema.ReasonSilentTruncation, schema.ReasonSuspectedTruncation, schema.ReasonExplicitTruncation} {
		if ids := a.ReasonCalls[code]; len(ids) > 0 {
			return ids[0]
		}
	}
	if len(a.IncompleteInputs) > 0 {
		return a.IncompleteInputs[0]
	}
	return ""
}

// describe names a call by tool and target: "WebFetch of https://…",
// "Bash `grep -r foo .`".
func describe(id string, lookup func(string) *schema.ToolCall) string {
	c := lookup(id)
	if c == nil {
		return "call " + id
	}
	label := TargetLabel(*c)
	tool := c.Tool
	if tool == "" {
		tool = "call " + c.CallID
	}
	if label == "" || label == c.Tool {
		return tool
	}
	if specFor(c.Tool).class == classShell {
		return tool + " `" + clip(label, 80) + "`"
	}
	return tool + " of " + clip(label, 120)
}

// delivery says what of the original entered the context.
func delivery(c *schema.ToolCall) string {
	u := string(c.Shown.Unit)
	total := c.Total
	if !total.Known && c.Shown.Unit != schema.UnitNone {
		total = c.Original.Sizes.In(c.Shown.Unit)
	}
	of := totalText(c, total)
	switch c.Strategy {
	case schema.StrategyRefused:
		if total.Known && u != "" && of != num(total.N) {
			return "nothing (" + of + " " + u + " were refused as too large)"
		}
		if total.Known && u != "" {
			return "nothing (its " + of + " " + u + " were refused as too large)"
		}
		return "nothing (the output was refused as too large)"
	case schema.StrategyCleared:
		return "content that was later cleared from the context"
	case schema.StrategyResized:
		return "a smaller copy of the image (resized before it was sent)"
	case schema.StrategyHeadTail:
		if total.Known && u != "" {
			return "only the start and end of " + of + " " + u
		}
		return "only the start and end of its output"
	}
	part := "only part of its output"
	sp, positioned := shownSpan(c.Shown)
	switch {
	case positioned && total.Known && sp.lo == 0:
		part = "the first " + num(min(sp.hi, total.N)) + " of " + of + " " + u
	case positioned && total.Known && sp.hi >= total.N:
		part = "the last " + num(total.N-min(sp.lo, total.N)) + " of " + of + " " + u
	case positioned && total.Known:
		part = rangeText(sp, c.Shown.Unit) + " of " + of
	case positioned:
		part = rangeText(sp, c.Shown.Unit) + " of an unknown total"
	case total.Known && u != "":
		if ctx := c.Context.In(c.Shown.Unit); ctx.Known {
			part = num(ctx.N) + " of " + of + " " + u
		}
	}
	switch c.Strategy {
	case schema.StrategySummary:
		return "a summary of " + part
	case schema.StrategySpillToFile:
		if c.SavedRef != "" {
			return "a preview of " + part + " (the rest saved to " + clip(c.SavedRef, 120) + ")"
		}
		return "a preview of " + part
	}
	return part
}

// totalText is the total as the verdict says it: "at least 30,016" when it
// is a lower-bound original, "about 454,963" when it was read from a size
// label, the plain figure otherwise.
func totalText(c *schema.ToolCall, total schema.Count) string {
	if !total.Known {
		return ""
	}
	if o := c.Original.Sizes.In(c.Shown.Unit); o.Known && o.N == total.N {
		switch c.Original.Precision {
		case schema.PrecisionLowerBound:
			return "at least " + num(total.N)
		case schema.PrecisionApproximate:
			return "about " + num(total.N)
		}
	}
	return num(total.N)
}

// rangeText is "lines 2,001–4,000" (1-based, as people number lines) or
// "chars 100,000–150,000".
func rangeText(sp span, u schema.Unit) string {
	lo := sp.lo
	if u == schema.UnitLines {
		lo++
	}
	return string(u) + " " + num(lo) + "–" + num(sp.hi)
}

// notice says whether the model was told.
func notice(c *schema.ToolCall) string {
	switch c.Kind {
	case schema.KindSilent:
		return " with no notice"
	case schema.KindExplicit:
		switch {
		case c.MarkerUnderstated && c.Original.Precision == schema.PrecisionLowerBound:
			// Counted after a cap: understated unless the output ended there.
			return " with a notice that may understate how much was cut"
		case c.MarkerUnderstated:
			return " with a notice that understated how much was cut"
		}
		return " with a notice"
	}
	return " with no notice but the shape of a cut"
}

// followThrough says whether the model went back for the rest before it
// answered. When the answer's place among the calls is not known, a
// follow-up is not known to come after it, nor a read in full before it:
// the verdict judged the answer at its worst place, and says only what
// holds at every place. When a call is unordered, a cut call not followed
// up may have been followed up by it.
func followThrough(a *schema.Answer, c *schema.ToolCall, order CallOrder) string {
	placed := order.placed(a)
	for _, id := range a.ReasonCalls[schema.ReasonNotFollowedUp] {
		if id == c.CallID {
			switch {
			case order.NeverFollowedUp(c):
				return "the model never read further"
			case !c.FollowedUp:
				return "the model is not known to have read further"
			case placed:
				return "the model read further only after answering"
			}
			return "the model read further, not known whether before answering"
		}
	}
	if !placed {
		return "the model went back for more but may not have seen all of it when it answered"
	}
	return "the model went back for more but had not seen all of it when it answered"
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// english formats numbers with thousands separators.
var english = message.NewPrinter(language.English)

// num formats n with thousands separators: 156000 → "156,000".
func num(n uint64) string { return english.Sprint(n) }

// clip shortens s to at most n runes, marking the cut with "…". It cuts
// at the last space of the kept part when there is one in its last
// quarter, so a quoted answer does not end mid-word; a long unbroken run
// (a path, a URL, CJK text) is cut where it reaches n.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)[:n-1]
	for i := len(r) - 1; i >= len(r)*3/4; i-- {
		if r[i] == ' ' {
			return strings.TrimRight(string(r[:i]), ",;:") + "…"
		}
	}
	return string(r) + "…"
}
