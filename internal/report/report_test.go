package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/collector/analysis"
	"github.com/ctxaudit/ctxaudit/schema"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var t0 = time.Date(2026, 3, 9, 23, 59, 50, 0, time.UTC)

// sample is a synthetic postmortem that exercises what the scenario goldens
// in internal/cli do not: a session crossing midnight, a sub-agent, sizes
// unknown, a cleared result, text that needs escaping in Markdown, and an
// answer with no tool input.
func sample() Input {
	sess := schema.Session{
		SessionID: "sess-1", Source: schema.HarnessClaudeCode, HarnessVersion: "2.1.22", Model: "claude-opus-4-5",
		Cwd: "/srv/app", GitBranch: "fix|pipes", StartedAt: t0.Add(-time.Minute), EndedAt: t0.Add(3 * time.Minute),
		Turns: schema.Known(2), ToolCalls: 3, TruncatedCalls: 2, SilentCalls: 1, Answers: 2, RiskyAnswers: 1, MaxRisk: schema.RiskHigh,
	}
	bash := schema.ToolCall{
		SessionID: "sess-1", CallID: "toolu_bash", Tool: "Bash", Timestamp: t0, Turn: schema.KnownTurn(0),
		Arguments: "{\"command\":\"grep -r `token` . | head\"}",
		Forensics: schema.Forensics{
			Original:  schema.Original{Sizes: schema.Sizes{Bytes: schema.Known(140000), Chars: schema.Known(140000), Lines: schema.Unknown, Tokens: schema.Known(35000)}, Source: schema.SourceHarnessMetadata},
			Context:   schema.Sizes{Bytes: schema.Known(10040), Chars: schema.Known(10040), Lines: schema.Known(247), Tokens: schema.Known(2510)},
			Truncated: true, Kind: schema.KindExplicit, Strategy: schema.StrategyHeadTail, Reason: "cap_chars",
			Shown: schema.Range{Unit: schema.UnitChars}, Total: schema.Known(140000),
			Disclosure: schema.Disclosure{Range: true},
			Marker:     "... [20012 characters truncated] ...\n| with a pipe",
			// The notice owns up to 20,012 chars of 130,000.
			MarkerUnderstated: true,
		},
		SessionCoverage: schema.KnownRatio(10000.0 / 140000),
		ContextSHA256:   "ctx-bash", OriginalSHA256: "orig-bash",
	}
	sub := schema.ToolCall{
		SessionID: "sess-1", CallID: "toolu_sub", Tool: "WebFetch", Timestamp: t0.Add(20 * time.Second), Turn: schema.KnownTurn(0),
		AgentID: "a4d534b", Sidechain: true, Target: "https://example.com/docs",
		Forensics: schema.Forensics{
			Original: schema.Original{Source: schema.SourceUnknown}, Context: schema.Sizes{Chars: schema.Known(900)},
			Truncated: true, Kind: schema.KindSilent, Strategy: schema.StrategySummary, Reason: "summarised",
			Shown: schema.Range{Start: schema.Known(0), End: schema.Known(100000), Unit: schema.UnitChars},
		},
		ContextSHA256: "ctx-sub",
	}
	read := schema.ToolCall{
		SessionID: "sess-1", CallID: "toolu_read", Tool: "Read", Timestamp: t0.Add(30 * time.Second), Turn: schema.KnownTurn(0),
		Arguments: `{"file_path":"/srv/app/main.go"}`,
		Forensics: schema.Forensics{
			Original: schema.Original{Sizes: schema.Sizes{Bytes: schema.Known(120), Chars: schema.Known(120), Lines: schema.Known(6), Tokens: schema.Known(30)}, Source: schema.SourceHarnessMetadata},
			Context:  schema.Sizes{Bytes: schema.Known(120), Chars: schema.Known(120), Lines: schema.Known(6), Tokens: schema.Known(30)},
			Kind:     schema.KindNone, Strategy: schema.StrategyNone,
		},
		SessionCoverage: schema.KnownRatio(1), ContextSHA256: "ctx-read",
	}
	high := schema.Answer{
		SessionID: "sess-1", MessageID: "msg_high", Timestamp: t0.Add(40 * time.Second), Turn: schema.KnownTurn(0),
		Text:         "There is no `token` flag.\nSee | the docs.",
		InputCallIDs: []string{"toolu_bash", "toolu_sub", "toolu_read"}, IncompleteInputs: []string{"toolu_bash", "toolu_sub"},
		AbsenceClaim: true, Absence: schema.AbsenceUnscoped, AbsenceClause: "There is no `token` flag.", Risk: schema.RiskHigh,
		Reasons: []string{schema.ReasonAbsenceClaimOnPartialInput, schema.ReasonSilentTruncation, schema.ReasonExplicitTruncation,
			schema.ReasonNotFollowedUp, schema.ReasonMarkerUnderstated},
		ReasonCalls: map[string][]string{
			schema.ReasonAbsenceClaimOnPartialInput: {"toolu_bash", "toolu_sub"},
			schema.ReasonSilentTruncation:           {"toolu_sub"},
			schema.ReasonExplicitTruncation:         {"toolu_bash"},
			schema.ReasonNotFollowedUp:              {"toolu_bash", "toolu_sub"},
			schema.ReasonMarkerUnderstated:          {"toolu_bash"},
		},
	}
	chat := schema.Answer{
		SessionID: "sess-1", MessageID: "msg_chat", Timestamp: t0.Add(3 * time.Minute), Turn: schema.KnownTurn(1),
		Text: "Done.", Absence: schema.AbsenceNone, Risk: schema.RiskNone,
	}
	// A stored session, analysed: every record says what analysis it reflects.
	analysed := schema.Analysis{Done: true, Records: 5}
	bash.Analysis, sub.Analysis, read.Analysis = analysed, analysed, analysed
	high.Analysis, chat.Analysis = analysed, analysed
	calls := []schema.ToolCall{bash, sub, read}
	return Input{Session: sess, Calls: calls, Answers: []schema.Answer{high, chat}, SessionStored: true, Order: analysis.OrderOf(calls)}
}

func samplePostmortem() Postmortem {
	pm := Build(sample())
	pm.Expect = FindExpected("token | flag", pm.ToolCalls, map[string]StoredText{
		"orig-bash": {Contains: true}, "ctx-bash": {}, "ctx-sub": {}, "ctx-read": {},
	})
	return pm
}

func TestRenderGolden(t *testing.T) {
	pm := samplePostmortem()
	for _, tc := range []struct {
		file   string
		render func(*bytes.Buffer, *Postmortem) error
	}{
		{"sample.txt.golden", func(b *bytes.Buffer, pm *Postmortem) error { return WriteText(b, pm) }},
		{"sample.md.golden", func(b *bytes.Buffer, pm *Postmortem) error { return WriteMarkdown(b, pm) }},
	} {
		t.Run(tc.file, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.render(&b, &pm); err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", tc.file), b.String())
		})
	}
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func TestBuildRebuildsVerdictsAndFillsNils(t *testing.T) {
	in := sample()
	in.Answers[1].Reasons, in.Answers[1].ReasonCalls = nil, nil
	in.Answers[0].Verdict = "stale"
	pm := Build(in)
	v := pm.Answers[0].Verdict
	for _, want := range []string{`says "There is no ` + "`token`" + ` flag."`, "WebFetch of https://example.com/docs", "with no notice", "(plus 1 other incomplete input)"} {
		if !strings.Contains(v, want) {
			t.Errorf("verdict lacks %q: %s", want, v)
		}
	}
	if pm.Answers[1].Verdict != "Answer at 00:02:50 used no tool results." {
		t.Errorf("verdict of an answer without inputs = %q", pm.Answers[1].Verdict)
	}
	if pm.Answers[1].Reasons == nil || pm.Answers[1].ReasonCalls == nil || pm.Answers[1].InputCallIDs == nil {
		t.Error("nil slices would marshal as null, not []")
	}
	if in.Answers[0].Verdict != "stale" {
		t.Error("Build modified its input")
	}
}

func TestFindExpected(t *testing.T) {
	call := func(id string, truncated bool, strategy schema.Strategy, ctx, orig string) schema.ToolCall {
		return schema.ToolCall{CallID: id, ContextSHA256: ctx, OriginalSHA256: orig,
			Forensics: schema.Forensics{Truncated: truncated, Strategy: strategy}}
	}
	for _, tc := range []struct {
		name                          string
		call                          schema.ToolCall
		stored                        map[string]StoredText
		original, context, cut, unavl bool
	}{
		{"cut from the saved original", call("c", true, schema.StrategySpillToFile, "x", "o"),
			map[string]StoredText{"x": {}, "o": {Contains: true}}, true, false, true, false},
		{"seen in full", call("c", false, schema.StrategyNone, "x", ""),
			map[string]StoredText{"x": {Contains: true}}, true, true, false, false},
		{"seen in a head, original not stored", call("c", true, schema.StrategyHead, "x", ""),
			map[string]StoredText{"x": {Contains: true}}, true, true, false, false},
		{"in a summary is not proof of the original", call("c", true, schema.StrategySummary, "x", ""),
			map[string]StoredText{"x": {Contains: true}}, false, true, false, false},
		{"truncated, original never stored", call("c", true, schema.StrategyHead, "x", ""),
			map[string]StoredText{"x": {}}, false, false, false, true},
		{"truncated, original capped before the text", call("c", true, schema.StrategyHead, "x", "o"),
			map[string]StoredText{"x": {}, "o": {Capped: true}}, false, false, false, true},
		{"truncated, original searched in full", call("c", true, schema.StrategyHead, "x", "o"),
			map[string]StoredText{"x": {}, "o": {}}, false, false, false, false},
		{"nothing stored, not truncated", call("c", false, schema.StrategyNone, "", ""),
			nil, false, false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := FindExpected("needle", []schema.ToolCall{tc.call}, tc.stored)
			got := [4]bool{len(e.FoundInOriginal) == 1, len(e.FoundInContext) == 1, len(e.CutFrom) == 1, len(e.OriginalUnavailable) == 1}
			want := [4]bool{tc.original, tc.context, tc.cut, tc.unavl}
			if got != want {
				t.Fatalf("original/context/cut/unavailable = %v, want %v", got, want)
			}
		})
	}
}

// TestJSONContract checks the docs/design.md §8.4 shape of the JSON form: unknown
// sizes are null, lists are never null, and expect is present only when asked.
func TestJSONContract(t *testing.T) {
	pm := samplePostmortem()
	var b bytes.Buffer
	if err := WriteJSON(&b, &pm); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		SessionID string `json:"session_id"`
		Source    string `json:"source"`
		ToolCalls []struct {
			CallID   string                     `json:"call_id"`
			Original map[string]json.RawMessage `json:"original"`
			Shown    map[string]json.RawMessage `json:"shown"`
			Total    json.RawMessage            `json:"total"`
			Coverage json.RawMessage            `json:"session_coverage"`
		} `json:"tool_calls"`
		Answers []map[string]json.RawMessage `json:"answers"`
		Expect  map[string]json.RawMessage   `json:"expect"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.SessionID != "sess-1" || doc.Source != "claude_code" || len(doc.ToolCalls) != 3 || len(doc.Answers) != 2 {
		t.Fatalf("doc = %+v", doc)
	}
	sub := doc.ToolCalls[1]
	for _, k := range []string{"bytes", "chars", "lines", "tokens"} {
		if string(sub.Original[k]) != "null" {
			t.Errorf("unknown original.%s = %s, want null", k, sub.Original[k])
		}
	}
	if string(sub.Total) != "null" || string(sub.Coverage) != "null" || string(sub.Shown["end"]) != "100000" {
		t.Errorf("sub-agent call: total %s coverage %s shown %v", sub.Total, sub.Coverage, sub.Shown)
	}
	if string(doc.Answers[1]["reasons"]) != "[]" || string(doc.Answers[1]["incomplete_inputs"]) != "[]" {
		t.Errorf("empty lists: reasons %s incomplete_inputs %s", doc.Answers[1]["reasons"], doc.Answers[1]["incomplete_inputs"])
	}
	var cut, inContext []string
	if err := json.Unmarshal(doc.Expect["cut_from"], &cut); err != nil || len(cut) != 1 || cut[0] != "toolu_bash" {
		t.Errorf("expect.cut_from = %s", doc.Expect["cut_from"])
	}
	if err := json.Unmarshal(doc.Expect["found_in_context"], &inContext); err != nil || inContext == nil || len(inContext) != 0 {
		t.Errorf("expect.found_in_context = %s, want []", doc.Expect["found_in_context"])
	}
	pm.Expect = nil
	b.Reset()
	if err := WriteJSON(&b, &pm); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), `"expect"`) {
		t.Error("expect present without --expect")
	}
}

// The stand-in for a session row not stored yet counts by the rules
// session analysis counts by, and claims no turn count: the records of a
// scope do not say how many prompts the session had.
func TestSessionFromRecords(t *testing.T) {
	in := sample()
	low := in.Answers[1]
	low.MessageID, low.Risk = "msg_low", schema.RiskLow // low risk is not a risky answer
	// Cut by its kind alone, as a span may report it: truncated all the same.
	cut := in.Calls[2]
	cut.CallID, cut.Truncated, cut.Kind = "toolu_cut", false, schema.KindSilent
	calls := append(append([]schema.ToolCall(nil), in.Calls...), cut)
	got := analysis.SessionFromRecords("sess-1", calls, append(in.Answers, low))
	want := schema.Session{
		SessionID: "sess-1", Source: in.Calls[0].Source, StartedAt: t0, EndedAt: t0.Add(3 * time.Minute),
		Turns: schema.Unknown, ToolCalls: 4, TruncatedCalls: 3, SilentCalls: 2, Answers: 3, RiskyAnswers: 1, RiskyAnswersUncertain: schema.Known(0), MaxRisk: schema.RiskHigh,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
}

// With no session row stored and calls not analysed yet (a collector that
// has written calls as it read them), the report says what it does not
// know: its counts are the records', and whether the model went back for a
// cut output is unknown, in every form.
func TestUnanalysedRecordsSayWhatIsUnknown(t *testing.T) {
	in := sample()
	in.SessionStored = false
	for i := range in.Calls {
		in.Calls[i].Analysis = schema.Analysis{}
		in.Calls[i].FollowedUp, in.Calls[i].Searched = false, false
	}
	in.Session = analysis.SessionFromRecords("sess-1", in.Calls, in.Answers)
	pm := Build(in)
	for name, render := range map[string]func(*bytes.Buffer, *Postmortem) error{
		"text":     func(b *bytes.Buffer, pm *Postmortem) error { return WriteText(b, pm) },
		"markdown": func(b *bytes.Buffer, pm *Postmortem) error { return WriteMarkdown(b, pm) },
		"html":     func(b *bytes.Buffer, pm *Postmortem) error { return WriteHTML(b, pm) },
	} {
		var b bytes.Buffer
		if err := render(&b, &pm); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if !strings.Contains(out, "no session row stored yet") || !strings.Contains(out, "turns unknown") {
			t.Errorf("%s: the session summary does not say it is the records' and its turn count unknown", name)
		}
		if strings.Contains(out, "never went back") {
			t.Errorf("%s: says the model never went back for a call no analysis judged", name)
		}
		if !strings.Contains(out, "has not judged this call yet") {
			t.Errorf("%s: does not say the follow-up is unknown", name)
		}
	}
	var b bytes.Buffer
	if err := WriteJSON(&b, &pm); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		SessionStored *bool `json:"session_stored"`
		Session       struct {
			Turns json.RawMessage `json:"turns"`
		} `json:"session"`
		ToolCalls []map[string]json.RawMessage `json:"tool_calls"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.SessionStored == nil || *doc.SessionStored || string(doc.Session.Turns) != "null" {
		t.Errorf("session_stored %v, turns %s; want false and null", doc.SessionStored, doc.Session.Turns)
	}
	for _, c := range doc.ToolCalls {
		if string(c["analysed"]) != "false" || string(c["followed_up"]) != "null" || string(c["searched"]) != "null" {
			t.Errorf("call %s: analysed %s followed_up %s searched %s; want false, null, null", c["call_id"], c["analysed"], c["followed_up"], c["searched"])
		}
	}
}

func TestPercentNeverRoundsToTheEnds(t *testing.T) {
	for v, want := range map[float64]string{0: "0%", 0.001: "<1%", 0.013: "1%", 0.5: "50%", 0.995: ">99%", 1: "100%", 1.2: "100%"} {
		if got := percent(v); got != want {
			t.Errorf("percent(%v) = %s, want %s", v, got, want)
		}
	}
}

func TestCodeSpan(t *testing.T) {
	for in, want := range map[string]string{
		"plain":       "`plain`",
		"a|b":         "`a|b`",
		"has `ticks`": "`` has `ticks` ``",
		"two\nlines":  "`two lines`",
		"":            "",
	} {
		if got := code(in); got != want {
			t.Errorf("code(%q) = %s, want %s", in, got, want)
		}
	}
}

// The text, Markdown and JSON forms number a turn the same way: "Turn N"
// in the text is "turn": N in the JSON.
func TestTurnNumbersAgree(t *testing.T) {
	pm := samplePostmortem()
	var js bytes.Buffer
	if err := WriteJSON(&js, &pm); err != nil {
		t.Fatal(err)
	}
	var decoded struct {
		Answers []struct {
			MessageID string `json:"message_id"`
			Turn      int    `json:"turn"`
		} `json:"answers"`
	}
	if err := json.Unmarshal(js.Bytes(), &decoded); err != nil {
		t.Fatal(err)
	}
	var text, md bytes.Buffer
	if err := WriteText(&text, &pm); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkdown(&md, &pm); err != nil {
		t.Fatal(err)
	}
	for _, a := range decoded.Answers {
		want := fmt.Sprintf("%s at ", a.MessageID)
		turn := fmt.Sprintf("(turn %d)", a.Turn)
		if !strings.Contains(text.String(), want) || !strings.Contains(text.String(), turn) {
			t.Errorf("text lacks %q with %q", want, turn)
		}
		if !strings.Contains(md.String(), turn) {
			t.Errorf("markdown lacks %q", turn)
		}
		if !strings.Contains(text.String(), fmt.Sprintf("\nTurn %d\n", a.Turn)) {
			t.Errorf("text lacks the heading Turn %d of the JSON's turn", a.Turn)
		}
	}
}

// Records whose source did not say their turn: every form says the turn is
// unknown — null in the JSON, "unknown" in the text, Markdown and HTML —
// and none calls it turn 0. They come after the known turns, by time.
func TestUnknownTurnIsSaidUnknown(t *testing.T) {
	in := sample()
	in.Session.Turns = schema.Unknown
	in.Calls[2].Turn = schema.Turn{}
	in.Answers[1].Turn = schema.Turn{}
	pm := Build(in)

	js, text, md, page := renderAll(t, &pm)
	var decoded struct {
		Session struct {
			Turns *int `json:"turns"`
		} `json:"session"`
		Answers []struct {
			MessageID string `json:"message_id"`
			Turn      *int   `json:"turn"`
		} `json:"answers"`
		ToolCalls []struct {
			CallID string `json:"call_id"`
			Turn   *int   `json:"turn"`
		} `json:"tool_calls"`
	}
	if err := json.Unmarshal(js.Bytes(), &decoded); err != nil {
		t.Fatal(err)
	}
	if decoded.Session.Turns != nil {
		t.Errorf("JSON session turns %d, want null", *decoded.Session.Turns)
	}
	for _, c := range decoded.ToolCalls {
		if known := c.Turn != nil; known != (c.CallID != "toolu_read") {
			t.Errorf("JSON call %s turn %v: want null only for toolu_read", c.CallID, c.Turn)
		}
	}
	for _, a := range decoded.Answers {
		if known := a.Turn != nil; known != (a.MessageID != "msg_chat") {
			t.Errorf("JSON answer %s turn %v: want null only for msg_chat", a.MessageID, a.Turn)
		}
	}
	txt := text.String()
	for _, want := range []string{"turns unknown,", "\nTurn 0\n", "\nTurn unknown\n", "msg_chat at 00:02:50 (turn unknown)"} {
		if !strings.Contains(txt, want) {
			t.Errorf("text lacks %q:\n%s", want, txt)
		}
	}
	if strings.Index(txt, "\nTurn unknown\n") < strings.Index(txt, "\nTurn 0\n") || strings.Count(txt, "\nTurn 0\n") != 1 {
		t.Errorf("the unknown turn must come once, after turn 0:\n%s", txt)
	}
	if !strings.Contains(md.String(), "| unknown |") || !strings.Contains(md.String(), "(turn unknown)") {
		t.Errorf("markdown lacks the unknown turn:\n%s", md.String())
	}
	if !strings.Contains(page.String(), `data-turn="unknown"`) || !strings.Contains(page.String(), "(turn unknown)") {
		t.Error("the HTML page lacks the unknown turn")
	}
	if got := analysis.SessionFromRecords("sess-1", in.Calls, in.Answers).Turns; got.Known {
		t.Errorf("a session summarised from records of unknown turn has %s turns", got)
	}
}

// Records whose time is not known — the zero time as a parser leaves it,
// the epoch as a stored row reads back — are shown without one in every
// form: no "00:00:00", no 1970 day, no session starting then. An answer
// whose inputs are only the calls it may rest on says so in every form.
func TestUnknownTimeIsSaidUnknown(t *testing.T) {
	in := sample()
	in.SessionStored = false
	in.Calls[2].Timestamp = time.Time{}
	in.Answers[1].Timestamp = time.Unix(0, 0).UTC()
	in.Answers[0].InputsUncertain = true
	in.Session = analysis.SessionFromRecords(in.Session.SessionID, in.Calls, in.Answers)
	if got, want := in.Session.StartedAt, t0; !got.Equal(want) {
		t.Errorf("session from records starts at %s, want %s: records without a time widen nothing", got, want)
	}
	pm := Build(in)

	js, text, md, page := renderAll(t, &pm)
	var doc struct {
		Session   map[string]json.RawMessage   `json:"session"`
		ToolCalls []map[string]json.RawMessage `json:"tool_calls"`
		Answers   []map[string]json.RawMessage `json:"answers"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, r := range append(doc.ToolCalls, doc.Answers...) {
		id := string(r["call_id"])
		if id == "" {
			id = string(r["message_id"])
		}
		untimed := id == `"toolu_read"` || id == `"msg_chat"`
		if got := string(r["timestamp"]); (got == "null") != untimed || strings.Contains(got, "1970") || strings.Contains(got, "0001") {
			t.Errorf("JSON %s: timestamp %s; want null exactly for the records without a time", id, got)
		}
		if string(r["analysed"]) == "" && string(r["inputs_uncertain"]) == "" {
			t.Errorf("JSON %s lost its fields: %v", id, r)
		}
	}
	if got := string(doc.Session["started_at"]); got == "null" || strings.Contains(got, "1970") {
		t.Errorf("JSON session started_at %s; want the earliest known time", got)
	}
	for form, out := range map[string]string{"json": js.String(), "text": text.String(), "markdown": md.String(), "html": page.String()} {
		for _, wrong := range []string{"00:00:00", "1970"} {
			if strings.Contains(out, wrong) {
				t.Errorf("%s says %q for a record without a time:\n%s", form, wrong, out)
			}
		}
		if !strings.Contains(out, "--:--:--") && form != "json" {
			t.Errorf("%s does not mark the records without a time:\n%s", form, out)
		}
	}
	if !strings.Contains(text.String(), "msg_chat at --:--:-- (turn 1)") || !strings.Contains(text.String(), "    may rest on ") {
		t.Errorf("text: want msg_chat without a time and msg_high's inputs as the calls it may rest on:\n%s", text.String())
	}
	if !strings.Contains(md.String(), "- May rest on: ") || !strings.Contains(page.String(), "<dt>may rest on</dt>") {
		t.Errorf("markdown and HTML must say msg_high may rest on its inputs")
	}
	if n := strings.Count(text.String(), "    inputs "); n != 1 {
		t.Errorf("text: %d answers with certain inputs, want msg_chat's only", n)
	}
}

// A session whose worst answers all rest on uncertain inputs is that risky
// only if they rest on the calls they may: the summary says so, and says
// nothing when one of them is known to, or when the postmortem holds one
// answer only (--answer).
func TestWorstRiskOnUncertainInputsIsSaid(t *testing.T) {
	const note = "worst risk high (only answers on uncertain inputs)"
	for _, tc := range []struct {
		name      string
		uncertain bool
		scope     string
		want      bool
	}{
		{"certain", false, "", false},
		{"uncertain", true, "", true},
		{"uncertain, one answer", true, "msg_high", false},
	} {
		in := sample()
		in.Answers[0].InputsUncertain = tc.uncertain
		in.AnswerID = tc.scope
		pm := Build(in)
		var text bytes.Buffer
		if err := WriteText(&text, &pm); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(text.String(), note); got != tc.want {
			t.Errorf("%s: says %q: %v, want %v\n%s", tc.name, note, got, tc.want, text.String())
		}
	}
}

// renderAll renders pm in every form: JSON, text, Markdown and HTML.
func renderAll(t *testing.T, pm *Postmortem) (js, text, md, page *bytes.Buffer) {
	t.Helper()
	js, text, md, page = new(bytes.Buffer), new(bytes.Buffer), new(bytes.Buffer), new(bytes.Buffer)
	for _, w := range []struct {
		write func(io.Writer, *Postmortem) error
		to    *bytes.Buffer
	}{{WriteJSON, js}, {WriteText, text}, {WriteMarkdown, md}, {WriteHTML, page}} {
		if err := w.write(w.to, pm); err != nil {
			t.Fatal(err)
		}
	}
	return js, text, md, page
}

// A call that nothing orders — no time, no source line: a span sent
// without one — may have gone back for the rest of a cut output, and
// analysis does not count it as having done so (docs/design.md §4.12). The
// report does not say the model "never went back" then, in any form — also
// when that call is outside the report's scope (--answer), which is why the
// order comes from every call of the session (Input.Order), not from the
// calls in scope.
func TestUnorderedCallLeavesFollowUpUnknown(t *testing.T) {
	in := sample()
	pm := Build(in)
	_, text, _, _ := renderAll(t, &pm)
	if !strings.Contains(text.String(), "never went back for the rest") {
		t.Fatalf("the sample has no cut call left without a follow-up:\n%s", text.String())
	}

	unordered := func(in *Input) []schema.ToolCall {
		c := in.Calls[len(in.Calls)-1]
		c.CallID, c.Turn, c.Timestamp, c.SourceFile, c.SourceLine = "toolu_span", schema.KnownTurn(1), time.Time{}, "", 0
		return append(slices.Clone(in.Calls), c)
	}
	for _, scoped := range []bool{false, true} {
		in = sample()
		all := unordered(&in)
		in.Order = analysis.OrderOf(all)
		if !scoped {
			in.Calls = all
		}
		pm = Build(in)
		_, text, md, page := renderAll(t, &pm)
		for form, out := range map[string]string{"text": text.String(), "markdown": md.String(), "html": page.String()} {
			if strings.Contains(out, "never went back") || !strings.Contains(out, "none known: a call without a time or line to order it may have gone back for the rest") {
				t.Errorf("scoped %v: %s with a call of no place says the model never went back, or not that it is unknown:\n%s", scoped, form, out)
			}
		}
		if v := pm.Answers[0].Verdict; strings.Contains(v, "never read further") || !strings.Contains(v, "is not known to have read further") {
			t.Errorf("scoped %v: verdict %q says more of the follow-up than the session's calls show", scoped, v)
		}
		if got := cutNotFollowedUpJSON(t, &pm); len(got) == 0 || slices.ContainsFunc(got, func(v string) bool { return v != "null" }) {
			t.Errorf("scoped %v: the JSON gives the cut calls not followed up followed_up %v, want null: a false says more than the rows", scoped, got)
		}
	}

	// The rows the analysis stored say it themselves (followed_up NULL):
	// every form hedges on the call even where no unordered call is at hand.
	in = sample()
	for i := range in.Calls {
		if c := &in.Calls[i]; c.Truncated && !c.FollowedUp {
			c.FollowUpUnknown = true
		}
	}
	pm = Build(in)
	_, text, md, page := renderAll(t, &pm)
	for form, out := range map[string]string{"text": text.String(), "markdown": md.String(), "html": page.String()} {
		if strings.Contains(out, "never went back") || !strings.Contains(out, "none known: a call without a time or line to order it may have gone back for the rest") {
			t.Errorf("stored unknown: %s says the model never went back, or not that it is unknown:\n%s", form, out)
		}
	}
	if got := cutNotFollowedUpJSON(t, &pm); len(got) == 0 || slices.ContainsFunc(got, func(v string) bool { return v != "null" }) {
		t.Errorf("stored unknown: the JSON gives the cut calls not followed up followed_up %v, want null", got)
	}
	if v := pm.Answers[0].Verdict; strings.Contains(v, "never read further") || !strings.Contains(v, "is not known to have read further") {
		t.Errorf("stored unknown: verdict %q says more of the follow-up than the stored calls do", v)
	}
}

// cutNotFollowedUpJSON is the followed_up JSON value of each truncated call
// of pm that was not followed up.
func cutNotFollowedUpJSON(t *testing.T, pm *Postmortem) []string {
	t.Helper()
	var js bytes.Buffer
	if err := WriteJSON(&js, pm); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		ToolCalls []map[string]json.RawMessage `json:"tool_calls"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	var out []string
	for i, c := range pm.ToolCalls {
		if c.Truncated && !c.FollowedUp {
			out = append(out, string(doc.ToolCalls[i]["followed_up"]))
		}
	}
	return out
}

// A row whose analysis marks every follow-up it cannot know
// (FollowUpExact) says "not followed up" as known, also in a session with a
// call nothing orders: every form says so, as the analysis found, and only
// the rows without the mark (stored before it) are hedged.
func TestExactFollowUpIsKnownWhereACallIsUnordered(t *testing.T) {
	in := sample()
	c := in.Calls[len(in.Calls)-1]
	c.CallID, c.Turn, c.Timestamp, c.SourceFile, c.SourceLine = "toolu_span", schema.KnownTurn(1), time.Time{}, "", 0
	in.Calls = append(in.Calls, c)
	in.Order = analysis.OrderOf(in.Calls)
	if in.Order.Ordered {
		t.Fatal("the session has no unordered call")
	}
	cut := 0
	for i := range in.Calls {
		if c := &in.Calls[i]; c.Truncated && !c.FollowedUp {
			c.FollowUpExact = true
			cut++
		}
	}
	if cut == 0 {
		t.Fatal("the sample has no cut call left without a follow-up")
	}
	pm := Build(in)
	js, text, md, page := renderAll(t, &pm)
	for form, out := range map[string]string{"text": text.String(), "markdown": md.String(), "html": page.String()} {
		if strings.Contains(out, "none known") || !strings.Contains(out, "never went back for the rest") {
			t.Errorf("%s hedges on a call its row knows was not followed up:\n%s", form, out)
		}
	}
	if got := cutNotFollowedUpJSON(t, &pm); len(got) != cut || slices.Contains(got, "null") {
		t.Errorf("the JSON gives the cut calls not followed up followed_up %v, want false for all %d", got, cut)
	}
	if !strings.Contains(js.String(), `"ordered": false`) {
		t.Error("the JSON does not say a call of the session is unordered")
	}
	if v := pm.Answers[0].Verdict; !strings.Contains(v, "never read further") {
		t.Errorf("verdict %q does not say what the rows know: the model never read further", v)
	}

	// One row without the mark, as stored before it: that call alone is
	// hedged.
	for i := range in.Calls {
		if c := &in.Calls[i]; c.Truncated && !c.FollowedUp {
			c.FollowUpExact = false
			break
		}
	}
	pm = Build(in)
	got := cutNotFollowedUpJSON(t, &pm)
	if nulls := len(got) - len(slices.DeleteFunc(slices.Clone(got), func(v string) bool { return v == "null" })); nulls != 1 {
		t.Errorf("with one row stored without the mark the JSON gives %v, want exactly one null", got)
	}
}

// A collector that dropped a session's buffer before its end (its call
// limit, or max_sessions) wrote the session row of the calls it held
// first; the later buffer's row is partial and ranks below it, so the
// stored row counts fewer calls than are stored (docs/design.md §10.3).
// A postmortem of the whole session counts the records instead (and spans
// their times), and says so in every form; one scoped to an answer, or whose row counts at least
// what is stored (calls pruned since), keeps the row.
func TestStaleSessionRowIsRecounted(t *testing.T) {
	stale := sample()
	// The first buffer held toolu_bash and msg_high; toolu_sub, toolu_read
	// and msg_chat came after it was dropped.
	stale.Session.ToolCalls, stale.Session.TruncatedCalls, stale.Session.SilentCalls = 1, 1, 0
	stale.Session.Answers, stale.Session.RiskyAnswers, stale.Session.Turns = 1, 1, schema.Known(1)
	// Its row ends with msg_high, the last record it held; the recount
	// widens it to msg_chat's time.
	stale.Session.EndedAt = t0.Add(40 * time.Second)
	pm := Build(stale)
	if !pm.SessionRecounted {
		t.Fatal("a row counting 1 of 3 stored calls is not recounted")
	}
	// The row one analysis of every record writes, which counts the risky
	// answers on uncertain inputs too.
	want := sample().Session
	want.RiskyAnswersUncertain = schema.Known(0)
	if got := pm.Session; !reflect.DeepEqual(got, want) {
		t.Errorf("recounted session\n got %+v\nwant %+v", got, want)
	}
	js, text, md, page := renderAll(t, &pm)
	for name, out := range map[string]string{"text": text.String(), "markdown": md.String(), "html": page.String()} {
		if !strings.Contains(out, "3 tool calls (2 truncated, 1 silently), 2 answers") || !strings.Contains(out, "the stored session row counts fewer") {
			t.Errorf("%s: the recorded line does not give the records' counts and say why:\n%s", name, out)
		}
	}
	var doc struct {
		Recounted *bool `json:"session_recounted"`
		Session   struct {
			ToolCalls int `json:"tool_calls"`
			Answers   int `json:"answers"`
		} `json:"session"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Recounted == nil || !*doc.Recounted || doc.Session.ToolCalls != 3 || doc.Session.Answers != 2 {
		t.Errorf("JSON: session_recounted %v, tool_calls %d, answers %d; want true, 3, 2", doc.Recounted, doc.Session.ToolCalls, doc.Session.Answers)
	}

	for name, in := range map[string]func() Input{
		"scoped to an answer": func() Input {
			in := stale
			in.AnswerID = "msg_high"
			return in
		},
		"calls pruned since": func() Input {
			in := sample()
			in.Calls = in.Calls[:1]
			return in
		},
		"as counted": sample,
	} {
		in := in()
		pm := Build(in)
		if pm.SessionRecounted || !reflect.DeepEqual(pm.Session, in.Session) {
			t.Errorf("%s: recounted %v, session %+v; want the stored row", name, pm.SessionRecounted, pm.Session)
		}
		if _, text, _, _ := renderAll(t, &pm); strings.Contains(text.String(), "counts fewer") {
			t.Errorf("%s: the text says the row counts fewer", name)
		}
	}
}
