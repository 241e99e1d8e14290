package report

import (
	"fmt"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ctxaudit/ctxaudit/collector/analysis"
	"github.com/ctxaudit/ctxaudit/schema"
)

// The phrasing shared by the text and Markdown renderers. Both say the same
// things in the same words; only the layout differs.

// event is one line of the timeline: a tool call or an answer.
type event struct {
	turn   schema.Turn
	at     time.Time
	call   *schema.ToolCall
	answer *schema.Answer
}

// timeline interleaves calls and answers by turn, then time; at the same
// instant a call comes before the answer built on it. Records of unknown
// turn come last, by time.
func timeline(pm *Postmortem) []event {
	evs := make([]event, 0, len(pm.ToolCalls)+len(pm.Answers))
	for i := range pm.ToolCalls {
		c := &pm.ToolCalls[i]
		evs = append(evs, event{turn: c.Turn, at: c.Timestamp, call: c})
	}
	for i := range pm.Answers {
		a := &pm.Answers[i]
		evs = append(evs, event{turn: a.Turn, at: a.Timestamp, answer: a})
	}
	sort.SliceStable(evs, func(i, j int) bool {
		a, b := evs[i], evs[j]
		if a.turn != b.turn {
			return a.turn.Less(b.turn)
		}
		if !a.at.Equal(b.at) {
			return a.at.Before(b.at)
		}
		return a.call != nil && b.answer != nil
	})
	return evs
}

// followers maps a call id to the later calls that continued it.
func followers(calls []schema.ToolCall) map[string][]string {
	m := map[string][]string{}
	for i := range calls {
		if c := &calls[i]; c.ContinuationOf != "" {
			m[c.ContinuationOf] = append(m[c.ContinuationOf], c.CallID)
		}
	}
	return m
}

// toolTitle is "Grep upload", "Bash `go test ./...`", "Read /path".
func toolTitle(c *schema.ToolCall) string {
	tool := c.Tool
	if tool == "" {
		tool = "(unnamed tool)"
	}
	label := analysis.TargetLabel(*c)
	if label == "" || label == c.Tool {
		return tool
	}
	return tool + " " + clip(label, 90)
}

// sizes is "104,262 bytes · 101,862 chars · 1,200 lines · ≈26,066 tokens",
// with "?" for each unknown figure and "≈" before a token figure that is
// the estimate from bytes (docs/design.md §3.3), not a count.
func sizes(s schema.Sizes) string {
	tokens := count(s.Tokens)
	if s.TokensEstimated() {
		tokens = "≈" + tokens
	}
	return count(s.Bytes) + " bytes · " + count(s.Chars) + " chars · " + count(s.Lines) + " lines · " + tokens + " tokens"
}

// headline is the one figure a reader compares first: chars, else bytes,
// else lines, else tokens.
func headline(s schema.Sizes) string {
	for _, f := range []struct {
		n    schema.Count
		unit string
	}{{s.Chars, "chars"}, {s.Bytes, "bytes"}, {s.Lines, "lines"}, {s.Tokens, "tokens"}} {
		if f.n.Known {
			return num(f.n.N) + " " + f.unit
		}
	}
	return "unknown"
}

// cutSummary says whether and how the output was cut: "explicit
// spill_to_file (too_large)", "partial by request", "complete".
func cutSummary(c *schema.ToolCall) string {
	switch {
	case c.Truncated:
		s := orDefault(string(c.Kind), "unknown") + " " + orDefault(string(c.Strategy), "none")
		if c.Reason != "" {
			s += " (" + c.Reason + ")"
		}
		return s
	case c.PartialByRequest:
		return "partial by request"
	case c.Kind == schema.KindUnknown:
		return "unknown: nothing shows whether it was cut"
	}
	return "complete"
}

// shown is "chars 0–1,982 of 101,862" or "lines 1–2,000 of 2,600", or empty
// when no unit is known.
func shown(c *schema.ToolCall) string {
	if c.Shown.Unit == schema.UnitNone {
		return ""
	}
	if !c.Shown.Start.Known && !c.Shown.End.Known {
		if c.Total.Known {
			return "part of " + totalOf(c) + " " + string(c.Shown.Unit)
		}
		return ""
	}
	return string(c.Shown.Unit) + " " + count(c.Shown.Start) + "–" + count(c.Shown.End) + tailOf(c) + " of " + totalOf(c) + tailNote(c)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// followUp says whether the model went back for the rest of a cut output,
// and how much of it it saw over the session. order is what every call of
// the session says of their order: with a call analysis cannot order, a
// call not followed up may have been, by that call
// (analysis.CallOrder.NeverFollowedUp).
func followUp(c *schema.ToolCall, next []string, order analysis.CallOrder) string {
	var s string
	switch {
	case !analysis.Truncated(c):
		if c.ContinuationOf != "" {
			s = "continues " + c.ContinuationOf
			if c.RefetchedSource {
				s += ", fetching the source again"
			}
			return s
		}
		return ""
	case c.FollowedUp && c.Searched:
		s = "searched the full output"
		if len(next) > 0 {
			s += " (" + strings.Join(next, ", ") + ")"
		}
		s += ", not read"
	case c.FollowedUp:
		s = "followed up"
		if len(next) > 0 {
			s += " by " + strings.Join(next, ", ")
		} else {
			s += " outside this scope"
		}
	case !c.Analysis.Done:
		// A call as read: only session analysis tells whether a later
		// call went back, and none has judged this one yet.
		return "unknown: the session's analysis has not judged this call yet"
	case !order.NeverFollowedUp(c):
		s = "none known: a call without a time or line to order it may have gone back for the rest"
	default:
		s = "none: the model never went back for the rest"
	}
	if n := coverageNote(c); n != "" {
		s += "; " + n
	}
	return s
}

// percent never rounds a partial share up to 100% or down to 0%.
func percent(v float64) string {
	switch {
	case v >= 1:
		return "100%"
	case v <= 0:
		return "0%"
	}
	p := v * 100
	switch {
	case p < 1:
		return "<1%"
	case p > 99:
		return ">99%"
	}
	return strconv.FormatFloat(p, 'f', 0, 64) + "%"
}

// recorded summarises the session's stored counts, or, with no session row
// stored yet or one that counts fewer records than are stored, those of the
// records at hand.
func recorded(pm *Postmortem) string {
	s := &pm.Session
	c := counts(s, worstOnlyMay(pm))
	switch {
	case !pm.SessionStored:
		return c + " (no session row stored yet: counted from the records below)"
	case pm.SessionRecounted:
		return c + " (counted from the records below: the stored session row counts fewer, as a collector that dropped the session's buffer before its end wrote it)"
	}
	return c
}

// worstOnlyMay reports whether every answer of the session's worst risk
// rests on uncertain inputs: the session is that risky only if they rest on
// the calls they may. Known only when the postmortem holds every answer
// (no --answer scope).
func worstOnlyMay(pm *Postmortem) bool {
	if pm.Answer != "" || pm.Session.MaxRisk.Severity() <= schema.RiskNone.Severity() {
		return false
	}
	worst := 0
	for i := range pm.Answers {
		a := &pm.Answers[i]
		if a.Risk != pm.Session.MaxRisk {
			continue
		}
		if !a.InputsUncertain {
			return false
		}
		worst++
	}
	return worst > 0
}

func counts(s *schema.Session, worstOnlyMay bool) string {
	calls := plural(s.ToolCalls, "tool call")
	if s.TruncatedCalls > 0 {
		calls += " (" + strconv.Itoa(s.TruncatedCalls) + " truncated"
		if s.SilentCalls > 0 {
			calls += ", " + strconv.Itoa(s.SilentCalls) + " silently"
		}
		calls += ")"
	}
	answers := plural(s.Answers, "answer")
	if s.Answers > 0 {
		answers += ", worst risk " + orDefault(string(s.MaxRisk), "none")
		if worstOnlyMay {
			answers += " (only answers on uncertain inputs)"
		}
	}
	turns := "turns unknown"
	if s.Turns.Known {
		turns = plural(int(min(s.Turns.N, math.MaxInt32)), "turn")
	}
	return turns + ", " + calls + ", " + answers
}

// span is "2026-01-15 14:30:20 – 14:30:46 UTC", repeating the date only
// when the session crosses midnight.
func span(from, to time.Time) string {
	if !schema.TimeKnown(from) {
		return "unknown"
	}
	from, to = from.UTC(), to.UTC()
	s := from.Format("2006-01-02 15:04:05")
	switch {
	case !schema.TimeKnown(to) || to.Equal(from):
	case to.Format("2006-01-02") == from.Format("2006-01-02"):
		s += " – " + to.Format("15:04:05")
	default:
		s += " – " + to.Format("2006-01-02 15:04:05")
	}
	return s + " UTC"
}

// clock is t's time of day, or "--:--:--" when t is no time (a record whose
// timestamp was malformed, stored as 1970-01-01: schema.TimeKnown).
func clock(t time.Time) string {
	if !schema.TimeKnown(t) {
		return "--:--:--"
	}
	return t.UTC().Format("15:04:05")
}

// inputsLabel names an answer's inputs: "inputs", or "may rest on" when they
// are only the calls it may rest on (schema.Answer.InputsUncertain).
func inputsLabel(a *schema.Answer) string {
	if a.InputsUncertain {
		return "may rest on"
	}
	return "inputs"
}

func day(t time.Time) string { return t.UTC().Format("2006-01-02") }

func harness(s *schema.Session) string {
	h := orDefault(string(s.Source), "unknown source")
	if s.HarnessVersion != "" {
		h += " " + s.HarnessVersion
	}
	return h
}

func count(c schema.Count) string {
	if !c.Known {
		return "?"
	}
	return num(c.N)
}

// english formats numbers with thousands separators.
var english = message.NewPrinter(language.English)

// num formats n with thousands separators: 156000 → "156,000".
func num(n uint64) string { return english.Sprint(n) }

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// oneLine collapses runs of white space, newlines included, to one space.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// clip shortens s to at most n runes on one line, marking the cut with "…".
func clip(s string, n int) string {
	s = oneLine(s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// quote renders a marker or answer for a single line: Go-quoted so that
// newlines show as \n, and clipped.
func quote(s string, n int) string {
	q := strconv.Quote(s)
	if utf8.RuneCountInString(q) <= n {
		return q
	}
	r := []rune(q)
	return string(r[:n-2]) + "…\""
}

// callName is "toolu_01… (Grep)" for lists of call ids.
func callNames(ids []string, byID map[string]*schema.ToolCall) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id
		if c, ok := byID[id]; ok && c.Tool != "" {
			out[i] += " (" + c.Tool + ")"
		}
	}
	return out
}

func indexCalls(calls []schema.ToolCall) map[string]*schema.ToolCall {
	m := make(map[string]*schema.ToolCall, len(calls))
	for i := range calls {
		m[calls[i].CallID] = &calls[i]
	}
	return m
}

// agentTag marks sub-agent records, whose context is not the main model's:
// " [sub-agent a4d534b]", with its leading space, or "".
func agentTag(sidechain bool, agent string) string {
	if !sidechain && agent == "" {
		return ""
	}
	if agent == "" {
		return " [sub-agent]"
	}
	return fmt.Sprintf(" [sub-agent %s]", agent)
}

// cutNote explains a non-empty cut_from: the text was in the part of those
// outputs the model never saw, unless it saw it through another call.
func cutNote(e *Expect) string {
	switch {
	case len(e.CutFrom) == 0:
		return ""
	case len(e.FoundInContext) == 0:
		return ": it was in the part the model never saw"
	}
	return ": cut away there, though the model saw it through " + strings.Join(e.FoundInContext, ", ")
}
