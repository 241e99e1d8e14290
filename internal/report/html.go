package report

import (
	"bufio"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"

	"github.com/ctxaudit/ctxaudit/schema"
)

// The HTML form: one self-contained page (inline CSS, no script, no
// network: a Content-Security-Policy forbids every load) with the session's
// timeline, and for every call a bar of the original output with the parts
// that entered the model's context drawn on it. It says what the text form
// says, in the same words (describe.go); the drawing adds where in the
// original the context came from, and never more than the record knows: a
// part whose position is not recorded is drawn as approximate and says so.

//go:embed html.tmpl
var htmlTemplateText string

var htmlTemplate = template.Must(template.New("postmortem").Parse(htmlTemplateText))

// WriteHTML renders pm as one self-contained HTML page.
func WriteHTML(w io.Writer, pm *Postmortem) error {
	b := bufio.NewWriter(w)
	if err := htmlTemplate.Execute(b, htmlPage(pm)); err != nil {
		return fmt.Errorf("write postmortem HTML: %w", err)
	}
	if err := b.Flush(); err != nil {
		return fmt.Errorf("write postmortem HTML: %w", err)
	}
	return nil
}

// page is what the template draws.
type page struct {
	SessionID string
	Header    [][2]string
	Turns     []htmlTurn
	Answers   []htmlAnswer
	Expect    *htmlExpect
	Legend    []legendItem
}

type htmlTurn struct {
	N      schema.Turn // "unknown" in the page when unknown
	Events []htmlEvent
}

// htmlEvent is a call or, with Answer set, an answer in the timeline.
type htmlEvent struct {
	Call   *htmlCall
	Answer *htmlAnswer
}

type htmlCall struct {
	ID, Anchor, Clock, Title, Agent string
	Kind, Strategy                  string
	// Class colours the bar: complete, explicit, silent, request, unknown.
	Class         string
	Original      string
	Context       string
	Cut           string
	Shown         string
	Bar           bar
	Told          []mark
	Marker        string
	Understated   bool
	SavedRef      string
	FollowUp      string
	Continues     *link
	FollowedBy    []link
	ExpectHit     string // "cut", "context" or ""
	ExpectLabel   string
	IncompleteFor []link // answers this call was an incomplete input of
}

// bar is the original output drawn as 100% wide; Parts are what entered
// the context, in percent of it.
type bar struct {
	// Known: the original's size is known, so the parts are to scale.
	Known bool
	Parts []part
	// Note says what the drawing cannot: "nothing of the original: a
	// summary", "the split between head and tail is not recorded".
	Note string
	// Gap is the middle of the widest part not shown, in percent, where an
	// --expect hit in the cut part is pinned; Mid is the middle of the
	// widest part shown.
	Gap, Mid float64
}

type part struct {
	Left, Width float64
	Label       string
	Approx      bool
}

// Style is the part's CSS position, computed here so the template only
// inserts numbers.
func (p part) Style() template.CSS {
	return template.CSS(fmt.Sprintf("left:%s%%;width:%s%%", pct(p.Left), pct(max(p.Width, 0.4))))
}

func pinStyle(at float64) template.CSS {
	return template.CSS("left:" + pct(at) + "%")
}

// GapStyle and MidStyle place the --expect pin.
func (b bar) GapStyle() template.CSS { return pinStyle(b.Gap) }
func (b bar) MidStyle() template.CSS { return pinStyle(b.Mid) }

func pct(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

type mark struct {
	Name string
	Yes  bool
}

type link struct{ Href, Text string }

type htmlAnswer struct {
	ID, Anchor, Clock, Agent, Risk, Text, Verdict string
	InputsLabel                                   string
	Turn                                          schema.Turn
	AbsenceClaim                                  bool
	Inputs, Incomplete                            []link
	Reasons                                       []htmlReason
}

type htmlReason struct {
	Reason string
	Calls  []link
}

type htmlExpect struct {
	Text                                    string
	InOriginal, InContext, CutFrom, Unknown []link
	CutNote                                 string
}

type legendItem struct{ Class, Label string }

func htmlPage(pm *Postmortem) page {
	s := &pm.Session
	p := page{SessionID: pm.SessionID}
	src := harness(s)
	if s.Model != "" {
		src += " · model " + s.Model
	}
	p.Header = append(p.Header, [2]string{"source", src})
	if proj := orDefault(s.Cwd, s.Project); proj != "" {
		if s.GitBranch != "" {
			proj += " · branch " + s.GitBranch
		}
		p.Header = append(p.Header, [2]string{"project", proj})
	}
	p.Header = append(p.Header, [2]string{"time", span(s.StartedAt, s.EndedAt)}, [2]string{"recorded", recorded(pm)})
	if pm.Answer != "" && len(pm.Answers) == 1 {
		p.Header = append(p.Header, [2]string{"scope", fmt.Sprintf("answer %s and the calls of its turn (turn %s)", pm.Answer, pm.Answers[0].Turn)})
	}
	p.Legend = []legendItem{
		{"complete", "complete: all of it entered the context"},
		{"explicit", "cut, and the model was told"},
		{"silent", "cut without a word"},
		{"request", "part by request: the call asked for this part"},
		{"unknown", "original size unknown"},
	}

	byID := indexCalls(pm.ToolCalls)
	callLink := func(id string) link {
		text := id
		if c, ok := byID[id]; ok && c.Tool != "" {
			text += " (" + c.Tool + ")"
		}
		return link{Href: "#" + anchor("call", id), Text: text}
	}
	links := func(ids []string) []link {
		out := make([]link, len(ids))
		for i, id := range ids {
			out[i] = callLink(id)
		}
		return out
	}

	hits := map[string]string{}
	if e := pm.Expect; e != nil {
		for _, id := range e.FoundInContext {
			hits[id] = "context"
		}
		for _, id := range e.CutFrom {
			hits[id] = "cut"
		}
		p.Expect = &htmlExpect{Text: e.Text, InOriginal: links(e.FoundInOriginal), InContext: links(e.FoundInContext),
			CutFrom: links(e.CutFrom), Unknown: links(e.OriginalUnavailable), CutNote: strings.TrimPrefix(cutNote(e), ": ")}
	}

	incompleteFor := map[string][]link{}
	for i := range pm.Answers {
		a := &pm.Answers[i]
		for _, id := range a.IncompleteInputs {
			incompleteFor[id] = append(incompleteFor[id], link{Href: "#" + anchor("answer", a.MessageID), Text: "answer " + a.MessageID})
		}
	}
	answers := make(map[*schema.Answer]*htmlAnswer, len(pm.Answers))
	for i := range pm.Answers {
		a := &pm.Answers[i]
		ha := &htmlAnswer{
			ID: a.MessageID, Anchor: anchor("answer", a.MessageID), Clock: clock(a.Timestamp), Agent: agentTag(a.Sidechain, a.AgentID),
			Risk: orDefault(string(a.Risk), "none"), Text: a.Text, Verdict: a.Verdict, Turn: a.Turn, AbsenceClaim: a.AbsenceClaim,
			InputsLabel: inputsLabel(a), Inputs: links(a.InputCallIDs), Incomplete: links(a.IncompleteInputs),
		}
		for _, r := range a.Reasons {
			ha.Reasons = append(ha.Reasons, htmlReason{Reason: r, Calls: links(a.ReasonCalls[r])})
		}
		answers[a] = ha
		p.Answers = append(p.Answers, *ha)
	}

	next := followers(pm.ToolCalls)
	for _, ev := range timeline(pm) {
		if len(p.Turns) == 0 || p.Turns[len(p.Turns)-1].N != ev.turn {
			p.Turns = append(p.Turns, htmlTurn{N: ev.turn})
		}
		t := &p.Turns[len(p.Turns)-1]
		if ev.answer != nil {
			t.Events = append(t.Events, htmlEvent{Answer: answers[ev.answer]})
			continue
		}
		c := ev.call
		hc := &htmlCall{
			ID: c.CallID, Anchor: anchor("call", c.CallID), Clock: clock(c.Timestamp), Title: toolTitle(c),
			Agent: agentTag(c.Sidechain, c.AgentID), Kind: orDefault(string(c.Kind), "unknown"), Strategy: orDefault(string(c.Strategy), "none"),
			Class:    barClass(c),
			Original: originalSizes(c.Original) + "  " + source(c),
			Context:  sizes(c.Context), Cut: cutSummary(c), Shown: shown(c), Bar: drawBar(c),
			Marker: c.Marker, Understated: c.MarkerUnderstated, SavedRef: c.SavedRef,
			FollowUp: followUp(c, next[c.CallID], pm.Order), ExpectHit: hits[c.CallID], IncompleteFor: incompleteFor[c.CallID],
		}
		if c.Truncated || c.Marker != "" {
			d := c.Disclosure
			hc.Told = []mark{{"where", d.Range}, {"why", d.Reason}, {"how to continue", d.Next}}
		}
		if c.ContinuationOf != "" {
			l := callLink(c.ContinuationOf)
			hc.Continues = &l
		}
		for _, id := range next[c.CallID] {
			hc.FollowedBy = append(hc.FollowedBy, callLink(id))
		}
		switch hc.ExpectHit {
		case "cut":
			hc.ExpectLabel = fmt.Sprintf("%q was in the part cut away (where in it is not recorded)", pm.Expect.Text)
		case "context":
			hc.ExpectLabel = fmt.Sprintf("%q reached the model here", pm.Expect.Text)
		}
		t.Events = append(t.Events, htmlEvent{Call: hc})
	}
	return p
}

// anchor is a fragment id for a call or answer: ids are harness ids, so
// anything outside [A-Za-z0-9_-] is replaced to keep it a plain token.
func anchor(kind, id string) string {
	var b strings.Builder
	b.WriteString(kind + "-")
	for _, r := range id {
		if r == '-' || r == '_' || ('0' <= r && r <= '9') || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') {
			b.WriteRune(r)
		} else {
			fmt.Fprintf(&b, "_%x", r)
		}
	}
	return b.String()
}

// barClass colours a call's bar by how the context relates to the
// original: all of it, cut with a notice, cut silently, a part the call
// asked for, or not known.
func barClass(c *schema.ToolCall) string {
	switch {
	case c.Truncated && c.Kind == schema.KindExplicit:
		return "explicit"
	case c.Truncated:
		return "silent"
	case c.PartialByRequest:
		return "request"
	case c.Kind == schema.KindNone:
		return "complete"
	}
	return "unknown"
}

// drawBar places what entered the context on the original: from the
// recorded shown range when there is one, else from the ratio of the
// sizes, by strategy (head, tail, head+tail, preview). A summary, refusal
// or cleared output put nothing of the original in the context.
func drawBar(c *schema.ToolCall) bar {
	if !c.Truncated && !c.PartialByRequest {
		if c.Kind == schema.KindNone {
			return bar{Known: true, Parts: []part{{Left: 0, Width: 100, Label: "all of it"}}, Mid: 50}
		}
		return bar{Note: "whether it was cut is not known", Gap: 50, Mid: 50}
	}
	_, sized := contextShare(c)
	sized = sized || c.Total.Known
	switch c.Strategy {
	case schema.StrategySummary:
		return bar{Known: sized, Note: "nothing of the original verbatim: the model saw a summary of it", Gap: 50, Mid: 50}
	case schema.StrategyRefused:
		return bar{Known: sized, Note: "nothing: the output was refused", Gap: 50, Mid: 50}
	case schema.StrategyCleared:
		return bar{Known: sized, Note: "nothing: the output was cleared from the context", Gap: 50, Mid: 50}
	case schema.StrategyResized:
		return bar{Known: sized, Note: "the whole image, at fewer pixels: it was resized before it was sent", Gap: 50, Mid: 50}
	}
	if l, r, ok := shownRange(c); ok && c.Strategy != schema.StrategyHeadTail {
		b := bar{Known: true, Parts: []part{{Left: l, Width: r - l, Label: partName(c.Strategy) + ": " + shown(c)}}}
		return withPins(b)
	}
	share, ok := contextShare(c)
	if !ok {
		return bar{Note: "the original's size is not known, so the part shown cannot be drawn to scale", Gap: 50, Mid: 50}
	}
	w := share * 100
	var b bar
	switch c.Strategy {
	case schema.StrategyTail:
		b = bar{Known: true, Parts: []part{{Left: 100 - w, Width: w, Label: "tail"}}}
	case schema.StrategyHeadTail:
		b = bar{Known: true, Parts: []part{{Left: 0, Width: w / 2, Label: "head", Approx: true}, {Left: 100 - w/2, Width: w / 2, Label: "tail", Approx: true}},
			Note: "head and tail: their sizes together are known, the split between them is not, so it is drawn even"}
	case schema.StrategySpillToFile:
		b = bar{Known: true, Parts: []part{{Left: 0, Width: w, Label: "preview"}}}
	default:
		b = bar{Known: true, Parts: []part{{Left: 0, Width: w, Label: "head"}}}
		if c.Strategy != schema.StrategyHead {
			b.Parts[0].Approx = true
			b.Note = "where in the original this part lies is not recorded; drawn from the start"
		}
	}
	return withPins(b)
}

// partName is what the drawn part of the original is called.
func partName(s schema.Strategy) string {
	switch s {
	case schema.StrategyHead:
		return "head"
	case schema.StrategyTail:
		return "tail"
	case schema.StrategySpillToFile:
		return "preview"
	case schema.StrategyPaginated:
		return "page"
	}
	return "part"
}

// shownRange is the recorded shown range in percent of the total.
func shownRange(c *schema.ToolCall) (l, r float64, ok bool) {
	if c.Shown.Unit == schema.UnitNone || !c.Total.Known || c.Total.N == 0 || (!c.Shown.Start.Known && !c.Shown.End.Known) {
		return 0, 0, false
	}
	t := float64(c.Total.N)
	start, end := 0.0, t
	if c.Shown.Start.Known {
		start = float64(c.Shown.Start.N)
		// Lines are numbered from 1 ("lines 1–2,000 of 2,600"), the
		// other units are offsets from 0 ("chars 0–1,982").
		if c.Shown.Unit == schema.UnitLines && start >= 1 {
			start--
		}
	}
	if c.Shown.End.Known {
		end = float64(c.Shown.End.N)
	}
	start, end = min(max(start, 0), t), min(max(end, 0), t)
	if end < start {
		return 0, 0, false
	}
	return start / t * 100, end / t * 100, true
}

// contextShare is context / original in the first unit both know.
func contextShare(c *schema.ToolCall) (float64, bool) {
	o, x := c.Original.Sizes, c.Context
	for _, pair := range [][2]schema.Count{{o.Chars, x.Chars}, {o.Bytes, x.Bytes}, {o.Lines, x.Lines}, {o.Tokens, x.Tokens}} {
		if pair[0].Known && pair[1].Known && pair[0].N > 0 {
			return min(float64(pair[1].N)/float64(pair[0].N), 1), true
		}
	}
	return 0, false
}

// withPins finds where --expect pins go: the middle of the widest part
// shown, and of the widest part not shown.
func withPins(b bar) bar {
	best := -1.0
	for _, p := range b.Parts {
		if p.Width > best {
			best, b.Mid = p.Width, p.Left+p.Width/2
		}
	}
	gapAt, gapW, pos := 50.0, -1.0, 0.0
	for _, p := range b.Parts {
		if w := p.Left - pos; w > gapW {
			gapW, gapAt = w, pos+w/2
		}
		pos = max(pos, p.Left+p.Width)
	}
	if w := 100 - pos; w > gapW {
		gapAt = pos + w/2
	}
	b.Gap = gapAt
	return b
}
