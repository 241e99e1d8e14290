package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/ctxaudit/ctxaudit/schema"
)

// WriteText renders pm for a terminal: a header, the timeline, the answers
// with their risk and reasons, the --expect findings, and the verdicts.
func WriteText(w io.Writer, pm *Postmortem) error {
	b := bufio.NewWriter(w)
	t := textWriter{b: b}
	t.header(pm)
	t.timeline(pm)
	t.answers(pm)
	t.expect(pm)
	t.verdicts(pm)
	if err := b.Flush(); err != nil {
		return fmt.Errorf("write postmortem: %w", err)
	}
	return nil
}

// textWriter writes to a bufio.Writer, which keeps the first error and
// turns later writes into no-ops; WriteText reports it from Flush.
type textWriter struct{ b *bufio.Writer }

func (t textWriter) line(format string, args ...any) {
	fmt.Fprintf(t.b, format, args...)
	t.b.WriteByte('\n')
}

// field writes an indented "label  value" line with the labels aligned.
func (t textWriter) field(indent, label, value string) {
	t.line("%s%-10s %s", indent, label, value)
}

func (t textWriter) header(pm *Postmortem) {
	s := &pm.Session
	t.line("Postmortem of session %s", pm.SessionID)
	src := harness(s)
	if s.Model != "" {
		src += " · model " + s.Model
	}
	t.field("  ", "source", src)
	if p := orDefault(s.Cwd, s.Project); p != "" {
		if s.GitBranch != "" {
			p += " · branch " + s.GitBranch
		}
		t.field("  ", "project", p)
	}
	t.field("  ", "time", span(s.StartedAt, s.EndedAt))
	t.field("  ", "recorded", recorded(pm))
	if pm.Answer != "" && len(pm.Answers) == 1 {
		t.field("  ", "scope", fmt.Sprintf("answer %s and the calls of its turn (turn %s)", pm.Answer, pm.Answers[0].Turn))
	}
}

func (t textWriter) timeline(pm *Postmortem) {
	t.line("")
	t.line("Timeline")
	if len(pm.ToolCalls) == 0 && len(pm.Answers) == 0 {
		t.line("  (no tool calls or answers recorded)")
		return
	}
	next := followers(pm.ToolCalls)
	first, turn, date := true, schema.Turn{}, day(pm.Session.StartedAt)
	const sub = "              "
	for _, ev := range timeline(pm) {
		if first || ev.turn != turn {
			first, turn = false, ev.turn
			t.line("")
			t.line("Turn %s", turn)
		}
		if d := day(ev.at); d != date && schema.TimeKnown(ev.at) {
			date = d
			t.line("  -- %s --", d)
		}
		if a := ev.answer; a != nil {
			t.line("  %s  answer %s%s: risk %s", clock(a.Timestamp), a.MessageID, agentTag(a.Sidechain, a.AgentID), a.Risk)
			continue
		}
		c := ev.call
		t.line("  %s  %s  %s%s", clock(c.Timestamp), toolTitle(c), c.CallID, agentTag(c.Sidechain, c.AgentID))
		t.field(sub, "original", originalSizes(c.Original)+"  "+source(c))
		t.field(sub, "context", sizes(c.Context))
		cut := cutSummary(c)
		if s := shown(c); s != "" {
			cut += "; shown " + s
		}
		t.field(sub, "cut", cut)
		if c.Truncated || c.Marker != "" {
			d := c.Disclosure
			t.field(sub, "told", fmt.Sprintf("where %s · why %s · how to continue %s", yesNo(d.Range), yesNo(d.Reason), yesNo(d.Next)))
		}
		if c.Marker != "" {
			m := quote(c.Marker, 120)
			if n := understatedNote(c); n != "" {
				m += "  " + n
			}
			t.field(sub, "marker", m)
		}
		if c.SavedRef != "" {
			t.field(sub, "saved to", c.SavedRef)
		}
		if f := followUp(c, next[c.CallID], pm.Order); f != "" {
			t.field(sub, "follow-up", f)
		}
	}
}

func (t textWriter) answers(pm *Postmortem) {
	t.line("")
	t.line("Answers")
	if len(pm.Answers) == 0 {
		t.line("  (no answers recorded: nothing was built on these calls)")
		return
	}
	const sub = "    "
	field := func(label, value string) { t.line("%s%-17s %s", sub, label, value) }
	for i := range pm.Answers {
		a := &pm.Answers[i]
		t.line("")
		t.line("  %s at %s (turn %s)%s: risk %s", a.MessageID, clock(a.Timestamp), a.Turn, agentTag(a.Sidechain, a.AgentID), a.Risk)
		t.line("%s%s", sub, quote(a.Text, 400))
		field("absence", absenceText(a, func(s string) string { return quote(s, 160) }))
		field(inputsLabel(a), idList(a.InputCallIDs))
		field("incomplete inputs", idList(a.IncompleteInputs))
		if len(a.Reasons) == 0 {
			field("reasons", "none")
		}
		for j, r := range a.Reasons {
			label := ""
			if j == 0 {
				label = "reasons"
			}
			field(label, r+": "+idList(a.ReasonCalls[r]))
		}
	}
}

func (t textWriter) expect(pm *Postmortem) {
	e := pm.Expect
	if e == nil {
		return
	}
	byID := indexCalls(pm.ToolCalls)
	t.line("")
	t.line("Expected text %s", quote(e.Text, 80))
	const sub = "  "
	t.line("%s%-22s %s", sub, "in an original", idList(callNames(e.FoundInOriginal, byID)))
	t.line("%s%-22s %s", sub, "in what the model saw", idList(callNames(e.FoundInContext, byID)))
	cut := idList(callNames(e.CutFrom, byID)) + cutNote(e)
	t.line("%s%-22s %s", sub, "cut from", cut)
	if len(e.OriginalUnavailable) > 0 {
		t.line("%s%-22s %s: truncated, original not stored in full, so not searched", sub, "unknown", idList(callNames(e.OriginalUnavailable, byID)))
	}
}

func (t textWriter) verdicts(pm *Postmortem) {
	if len(pm.Answers) == 0 {
		return
	}
	t.line("")
	t.line("Verdict")
	for i := range pm.Answers {
		t.line("  %s", pm.Answers[i].Verdict)
	}
}

func idList(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}
