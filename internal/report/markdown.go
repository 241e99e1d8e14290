package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/ctxaudit/ctxaudit/schema"
)

// WriteMarkdown renders pm as a Markdown section ready to paste into a
// postmortem document: a summary table, the timeline as a table, the
// answers, the --expect findings and the verdicts.
func WriteMarkdown(w io.Writer, pm *Postmortem) error {
	b := bufio.NewWriter(w)
	m := mdWriter{b: b}
	m.header(pm)
	m.timeline(pm)
	m.answers(pm)
	m.expect(pm)
	m.verdicts(pm)
	if err := b.Flush(); err != nil {
		return fmt.Errorf("write postmortem: %w", err)
	}
	return nil
}

type mdWriter struct{ b *bufio.Writer }

func (m mdWriter) line(format string, args ...any) {
	fmt.Fprintf(m.b, format, args...)
	m.b.WriteByte('\n')
}

func (m mdWriter) header(pm *Postmortem) {
	s := &pm.Session
	m.line("## Postmortem: session %s", code(pm.SessionID))
	m.line("")
	m.line("| | |")
	m.line("|---|---|")
	m.line("| Source | %s |", cell(harness(s)))
	if s.Model != "" {
		m.line("| Model | %s |", cellCode(s.Model))
	}
	if p := orDefault(s.Cwd, s.Project); p != "" {
		v := cellCode(p)
		if s.GitBranch != "" {
			v += " (branch " + cellCode(s.GitBranch) + ")"
		}
		m.line("| Project | %s |", v)
	}
	m.line("| Time | %s |", cell(span(s.StartedAt, s.EndedAt)))
	m.line("| Recorded | %s |", cell(recorded(pm)))
	if pm.Answer != "" && len(pm.Answers) == 1 {
		m.line("| Scope | answer %s and the calls of its turn (turn %s) |", cellCode(pm.Answer), pm.Answers[0].Turn)
	}
}

func (m mdWriter) timeline(pm *Postmortem) {
	m.line("")
	m.line("### Timeline")
	m.line("")
	if len(pm.ToolCalls) == 0 && len(pm.Answers) == 0 {
		m.line("No tool calls or answers recorded.")
		return
	}
	m.line("Sizes are the original output versus what entered the model's context. *Told* is whether what the model saw said where it was cut, why, and how to get the rest.")
	m.line("")
	m.line("| Turn | Time | Call | Original | In context | Truncation | Told (where / why / next) | Follow-up |")
	m.line("|---|---|---|---|---|---|---|---|")
	next := followers(pm.ToolCalls)
	var notes []string
	for _, ev := range timeline(pm) {
		if a := ev.answer; a != nil {
			m.line("| %s | %s | **answer** %s%s | | | | | risk **%s** |", a.Turn, clock(a.Timestamp),
				cellCode(a.MessageID), escapePipes(agentTag(a.Sidechain, a.AgentID)), a.Risk)
			continue
		}
		c := ev.call
		call := "**" + cell(orDefault(c.Tool, "(unnamed tool)")) + "**"
		if title := toolTitle(c); title != c.Tool {
			call += " " + cellCode(strings.TrimPrefix(title, c.Tool+" "))
		}
		call += "<br>" + cellCode(c.CallID) + escapePipes(agentTag(c.Sidechain, c.AgentID))
		cut := cell(cutSummary(c))
		if c.Truncated {
			cut = "**" + cut + "**"
		}
		if s := shown(c); s != "" {
			cut += "<br>shown " + cell(s)
		}
		told := ""
		if c.Truncated || c.Marker != "" {
			d := c.Disclosure
			told = yesNo(d.Range) + " / " + yesNo(d.Reason) + " / " + yesNo(d.Next)
		}
		m.line("| %s | %s | %s | %s | %s | %s | %s | %s |", c.Turn, clock(c.Timestamp), call,
			cell(originalHeadline(c.Original)), cell(headline(c.Context)), cut, told, cell(followUp(c, next[c.CallID], pm.Order)))
		if n := callNote(c); n != "" {
			notes = append(notes, n)
		}
	}
	if len(notes) > 0 {
		m.line("")
		m.line("The cut calls in full: sizes, the notice the model saw, where the full output was saved.")
		m.line("")
		for _, n := range notes {
			m.line("%s", n)
		}
	}
}

// callNote is the list item giving a call's full sizes, marker and saved
// path, which do not fit the table.
func callNote(c *schema.ToolCall) string {
	if !c.Truncated && c.Marker == "" && c.SavedRef == "" {
		return ""
	}
	s := "- " + code(c.CallID) + ": original " + originalSizes(c.Original) + " " + source(c) +
		"; in context " + sizes(c.Context) + "."
	switch {
	case c.Marker != "":
		s += " Notice: " + code(clip(c.Marker, 160))
		if n := understatedNote(c); n != "" {
			s += " " + n
		}
		s += "."
	case c.Truncated:
		s += " No notice: the model was not told."
	}
	if c.SavedRef != "" {
		s += " Saved to " + code(c.SavedRef) + "."
	}
	return s
}

func (m mdWriter) answers(pm *Postmortem) {
	m.line("")
	m.line("### Answers")
	if len(pm.Answers) == 0 {
		m.line("")
		m.line("No answers recorded: nothing was built on these calls.")
		return
	}
	for i := range pm.Answers {
		a := &pm.Answers[i]
		m.line("")
		m.line("#### %s at %s (turn %s)%s: risk **%s**", code(a.MessageID), clock(a.Timestamp), a.Turn, agentTag(a.Sidechain, a.AgentID), a.Risk)
		m.line("")
		for _, l := range strings.Split(strings.TrimSpace(a.Text), "\n") {
			m.line("> %s", l)
		}
		m.line("")
		m.line("- Absence: %s", absenceText(a, func(s string) string { return "“" + clip(s, 160) + "”" }))
		if a.InputsUncertain {
			m.line("- May rest on: %s", codeList(a.InputCallIDs))
		} else {
			m.line("- Inputs: %s", codeList(a.InputCallIDs))
		}
		m.line("- Incomplete inputs: %s", codeList(a.IncompleteInputs))
		if len(a.Reasons) == 0 {
			m.line("- Reasons: none")
			continue
		}
		m.line("- Reasons:")
		for _, r := range a.Reasons {
			m.line("  - %s: %s", code(r), codeList(a.ReasonCalls[r]))
		}
	}
}

func (m mdWriter) expect(pm *Postmortem) {
	e := pm.Expect
	if e == nil {
		return
	}
	byID := indexCalls(pm.ToolCalls)
	m.line("")
	m.line("### Expected text %s", code(e.Text))
	m.line("")
	m.line("- In an original: %s", codeCalls(e.FoundInOriginal, byID))
	m.line("- In what the model saw: %s", codeCalls(e.FoundInContext, byID))
	switch {
	case len(e.CutFrom) > 0 && len(e.FoundInContext) == 0:
		m.line("- **Cut from: %s. The text was in the part the model never saw.**", codeCalls(e.CutFrom, byID))
	case len(e.CutFrom) > 0:
		m.line("- Cut from: %s, though the model saw it through %s.", codeCalls(e.CutFrom, byID), codeList(e.FoundInContext))
	default:
		m.line("- Cut from: none")
	}
	if len(e.OriginalUnavailable) > 0 {
		m.line("- Not searchable: %s (truncated, original not stored in full)", codeCalls(e.OriginalUnavailable, byID))
	}
}

func (m mdWriter) verdicts(pm *Postmortem) {
	if len(pm.Answers) == 0 {
		return
	}
	m.line("")
	m.line("### Verdict")
	m.line("")
	for i := range pm.Answers {
		m.line("- %s", oneLine(pm.Answers[i].Verdict))
	}
}

// code renders s as an inline code span, choosing a fence longer than any
// run of backticks in it (CommonMark), on one line.
func code(s string) string {
	s = oneLine(s)
	if s == "" {
		return ""
	}
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || fence != "`" {
		s = " " + s + " "
	}
	return fence + s + fence
}

// cellCode is code for a table cell, where GFM needs every pipe escaped,
// code spans included.
func cellCode(s string) string { return escapePipes(code(s)) }

// cell makes plain text safe inside a table cell.
func cell(s string) string { return escapePipes(oneLine(s)) }

func escapePipes(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func codeList(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = code(id)
	}
	return strings.Join(out, ", ")
}

func codeCalls(ids []string, byID map[string]*schema.ToolCall) string {
	if len(ids) == 0 {
		return "none"
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = code(id)
		if c, ok := byID[id]; ok && c.Tool != "" {
			out[i] += " (" + c.Tool + ")"
		}
	}
	return strings.Join(out, ", ")
}
