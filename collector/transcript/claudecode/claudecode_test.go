package claudecode

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ctxaudit/ctxaudit/collector/transcript"
	"github.com/ctxaudit/ctxaudit/collector/transcript/transcripttest"
	"github.com/ctxaudit/ctxaudit/schema"
)

const session216 = "637ef6e7-e740-4503-8ff8-5780d7c0918f"

func newParser(o transcript.Options) transcript.Parser { return New(o) }

func session216Dir(t testing.TB) string {
	return filepath.Join(transcripttest.FixturesDir(t), "claude-code", "session-2.1.6-637ef6e7")
}

// Expected figures below were counted independently on the fixture with jq
// (tool_use blocks per name, tool_result blocks, message ids, usage of the
// last line of each message id).
func TestSession216MainThread(t *testing.T) {
	dir := session216Dir(t)
	rec, sess := transcripttest.ParseFile(t, filepath.Join(dir, session216+".jsonl"), newParser, transcript.Options{
		ReadSaved: transcripttest.ReadDir(filepath.Join(dir, session216, "tool-results")),
	})

	if got, want := len(rec.Calls), 19; got != want {
		t.Errorf("calls = %d, want %d", got, want)
	}
	if len(rec.Skips) != 0 {
		t.Errorf("skips = %+v, want none", rec.Skips)
	}
	tools := map[string]int{}
	for _, c := range rec.Calls {
		tools[c.Call.Tool]++
	}
	wantTools := map[string]int{"Bash": 2, "Edit": 1, "Grep": 4, "Read": 9, "Skill": 2, "Task": 1}
	if !mapsEqual(tools, wantTools) {
		t.Errorf("tools = %v, want %v", tools, wantTools)
	}

	// Turns start at the real prompts (lines 2, 37, 75); the local commands
	// /context, /export and /exit get no model response and start none.
	var turnLines []int64
	for _, tr := range rec.Turns {
		turnLines = append(turnLines, tr.Line)
	}
	if want := []int64{2, 37, 75}; !slices.Equal(turnLines, want) {
		t.Errorf("turn lines = %v, want %v", turnLines, want)
	}

	// Answers: the text-only messages that end a step after tool results.
	// Line 77 answers a prompt with no tool call, so it has no inputs.
	if got := len(rec.Answers); got != 2 {
		t.Fatalf("answers = %d, want 2", got)
	}
	a0, a1 := rec.Answers[0].Answer, rec.Answers[1].Answer
	if a0.MessageID != "msg_016CDR4Xm3Gvd4pT8HitDxbT" || rec.Answers[0].Line != 29 || a0.Turn != schema.KnownTurn(0) || len(a0.InputCallIDs) != 8 {
		t.Errorf("answer 0 = %s line %d turn %s inputs %d; want msg_016CDR4Xm3Gvd4pT8HitDxbT line 29 turn 0 inputs 8",
			a0.MessageID, rec.Answers[0].Line, a0.Turn, len(a0.InputCallIDs))
	}
	if a1.MessageID != "msg_01Xqf8eWd27yp8D4XrUd9Qak" || rec.Answers[1].Line != 67 || a1.Turn != schema.KnownTurn(1) || len(a1.InputCallIDs) != 11 {
		t.Errorf("answer 1 = %s line %d turn %s inputs %d; want msg_01Xqf8eWd27yp8D4XrUd9Qak line 67 turn 1 inputs 11",
			a1.MessageID, rec.Answers[1].Line, a1.Turn, len(a1.InputCallIDs))
	}
	if a1.InputCallIDs[4] != "toolu_01PRASLbbpSRmj2CjAaB1NP4" {
		t.Errorf("answer 1 inputs = %v, want the line-52 Grep among them", a1.InputCallIDs)
	}

	want := schema.Session{
		SessionID: session216, Source: schema.HarnessClaudeCode, HarnessVersion: "2.1.6",
		Model: "claude-opus-4-5-20251101", Project: "claude-bug", Cwd: "/Users/gray/Projects/claude-bug",
		GitBranch: "main", Turns: schema.Known(3), Compactions: schema.Known(0), InputTokens: schema.Known(1698799), OutputTokens: schema.Known(7154),
	}
	got := sess
	got.StartedAt, got.EndedAt, got.SourceFile = want.StartedAt, want.EndedAt, ""
	if got != want {
		t.Errorf("session =\n%+v\nwant\n%+v", got, want)
	}
	if sess.StartedAt.IsZero() || !sess.EndedAt.After(sess.StartedAt) {
		t.Errorf("session span %v – %v", sess.StartedAt, sess.EndedAt)
	}

	// Context sizes of every call, in result order, counted with jq `length`
	// (code points) on message.content[].content.
	wantChars := []uint64{25, 21, 252, 446, 28, 9293, 446, 128, 24168, 18385, 44800, 32647, 2153, 50068, 1337, 10068, 1268, 4614, 5989}
	for i, c := range rec.Calls {
		if i >= len(wantChars) {
			break
		}
		if got := uint64(utf8.RuneCountInString(c.ContextText)); got != wantChars[i] {
			t.Errorf("call %d (line %d %s) context = %d chars, want %d", i, c.Call.SourceLine, c.Call.Tool, got, wantChars[i])
		}
		if c.Call.Forensics.Context.Chars != schema.Known(wantChars[i]) {
			t.Errorf("call %d forensics context chars = %v, want %d", i, c.Call.Forensics.Context.Chars, wantChars[i])
		}
	}

	task := rec.CallAtLine(22)
	if task == nil || task.Call.Tool != "Task" || task.SpawnedAgentID != "a4d534b" {
		t.Errorf("line 22 = %+v, want the Task that spawned a4d534b", task)
	}
	bash := rec.CallAtLine(9)
	if bash == nil || bash.Call.CallID != "toolu_01Sp3tRLK5ZawunsPZjyKuC3" || bash.Call.Target != `date "+%Y%m%d-%H%M%S"` ||
		bash.Call.MessageID != "msg_01EwicMwiVdZD44kVWJ5uFzm" || bash.Call.Turn != schema.KnownTurn(0) || bash.Call.Model != "claude-opus-4-5-20251101" {
		t.Errorf("line 9 = %+v", bash)
	}
}

// TestSession216Forensics pins the figures forensics must produce on real
// calls of this session; they need the real forensics.Detect.
func TestSession216Forensics(t *testing.T) {
	dir := session216Dir(t)
	rec, _ := transcripttest.ParseFile(t, filepath.Join(dir, session216+".jsonl"), newParser, transcript.Options{
		ReadSaved: transcripttest.ReadDir(filepath.Join(dir, session216, "tool-results")),
	})
	truncated := 0
	for _, c := range rec.Calls {
		if c.Call.Truncated {
			truncated++
		}
	}
	if truncated != 1 {
		t.Errorf("truncated calls = %d, want 1 (the line-52 Grep)", truncated)
	}

	grep := rec.CallAtLine(52)
	if grep == nil {
		t.Fatal("no call completed on line 52")
	}
	f := grep.Call.Forensics
	if grep.Call.Tool != "Grep" || grep.Call.CallID != "toolu_01PRASLbbpSRmj2CjAaB1NP4" {
		t.Errorf("line 52 = %s %s, want Grep toolu_01PRASLbbpSRmj2CjAaB1NP4", grep.Call.Tool, grep.Call.CallID)
	}
	if f.Context.Chars != schema.Known(2153) {
		t.Errorf("line 52 context chars = %v, want 2153", f.Context.Chars)
	}
	if f.Original.Chars != schema.Known(85713) || f.Original.Bytes != schema.Known(85795) {
		t.Errorf("line 52 original = %v chars / %v bytes, want 85713 / 85795", f.Original.Chars, f.Original.Bytes)
	}
	if !f.Truncated || f.Strategy != schema.StrategySpillToFile || f.Kind != schema.KindExplicit {
		t.Errorf("line 52 truncated=%v strategy=%s kind=%s, want true spill_to_file explicit", f.Truncated, f.Strategy, f.Kind)
	}
	if !strings.HasSuffix(f.SavedRef, "/tool-results/toolu_01PRASLbbpSRmj2CjAaB1NP4.txt") {
		t.Errorf("line 52 saved_ref = %q", f.SavedRef)
	}
	if len(grep.SavedText) != 85795 {
		t.Errorf("line 52 saved text = %d bytes, want the 85795-byte sidecar read through ReadSaved", len(grep.SavedText))
	}
	if grep.OriginalText != "" {
		t.Errorf("line 52 carries %d bytes of metadata original although the saved file was read", len(grep.OriginalText))
	}

	// Without the saved file, the full output still comes from toolUseResult.content.
	noSaved, _ := transcripttest.ParseFile(t, filepath.Join(dir, session216+".jsonl"), newParser, transcript.Options{KeepOriginalText: true})
	if g := noSaved.CallAtLine(52); g == nil || len(g.OriginalText) != 85795 || utf8.RuneCountInString(g.OriginalText) != 85713 {
		t.Errorf("line 52 without the saved file: original text of %d bytes, want the 85795-byte toolUseResult.content", len(g.OriginalText))
	}
	for _, c := range noSaved.Calls {
		if !c.Call.Truncated && c.OriginalText != "" {
			t.Errorf("line %d is complete but carries an original text", c.Call.SourceLine)
		}
	}

	// Partial reads by request are not truncations but record what was shown.
	partial := []struct {
		line              int64
		start, end, total uint64
	}{
		{58, 1, 200, 1626},  // limit 200
		{66, 200, 299, 627}, // offset 200, limit 100
	}
	for _, tt := range partial {
		c := rec.CallAtLine(tt.line)
		if c == nil {
			t.Errorf("no call on line %d", tt.line)
			continue
		}
		f := c.Call.Forensics
		if f.Truncated || !f.PartialByRequest {
			t.Errorf("line %d truncated=%v partial=%v, want false true", tt.line, f.Truncated, f.PartialByRequest)
		}
		if f.Shown.Unit != schema.UnitLines || f.Shown.Start != schema.Known(tt.start) ||
			f.Shown.End != schema.Known(tt.end) || f.Total != schema.Known(tt.total) {
			t.Errorf("line %d shown = %+v total %v, want lines %d-%d of %d", tt.line, f.Shown, f.Total, tt.start, tt.end, tt.total)
		}
	}
	if f := rec.CallAtLine(41).Call.Forensics; f.Truncated || f.Kind != schema.KindNone {
		t.Errorf("line 41 (whole 390-line Read) truncated=%v kind=%s, want false none", f.Truncated, f.Kind)
	}
}

func TestSession216Subagent(t *testing.T) {
	dir := session216Dir(t)
	rec, sess := transcripttest.ParseFile(t, filepath.Join(dir, session216, "subagents", "agent-a4d534b.jsonl"), newParser, transcript.Options{})
	if len(rec.Calls) != 7 || len(rec.Skips) != 0 || len(rec.Answers) != 1 || len(rec.Turns) != 1 {
		t.Fatalf("calls/skips/answers/turns = %d/%d/%d/%d, want 7/0/1/1",
			len(rec.Calls), len(rec.Skips), len(rec.Answers), len(rec.Turns))
	}
	for _, c := range rec.Calls {
		if !c.Call.Sidechain || c.Call.AgentID != "a4d534b" || c.Call.SessionID != session216 {
			t.Errorf("call %s: sidechain=%v agent=%q session=%q", c.Call.CallID, c.Call.Sidechain, c.Call.AgentID, c.Call.SessionID)
		}
	}
	a := rec.Answers[0].Answer
	if a.MessageID != "msg_01RVdHQtu3qUYBKCCmYpxWzj" || !a.Sidechain || a.AgentID != "a4d534b" || len(a.InputCallIDs) != 7 {
		t.Errorf("answer = %+v", a)
	}
	// The file numbers the sub-agent's own prompt turn 0; the session turn
	// of its records is unknown until the call that spawned the agent
	// places them (transcript.PlaceCall), never that turn 0.
	for _, c := range rec.Calls {
		if c.Call.Turn.Known {
			t.Errorf("sub-agent call %s read in session turn %s, want unknown until placed", c.Call.CallID, c.Call.Turn)
		}
	}
	if a.Turn.Known {
		t.Errorf("sub-agent answer read in session turn %s, want unknown until placed", a.Turn)
	}
	if sess.SessionID != session216 || sess.InputTokens != schema.Known(114039) || sess.OutputTokens != schema.Known(3062) || sess.Model != "claude-sonnet-4-5-20250929" {
		t.Errorf("session = %+v", sess)
	}
}

// selected-lines.jsonl holds 35 unrelated real lines, one per category
// (fixture SOURCES.md): no call can pair, so every tool_result is an orphan.
func TestSelectedLines(t *testing.T) {
	path := filepath.Join(transcripttest.FixturesDir(t), "claude-code", "selected-lines.jsonl")
	rec, _ := transcripttest.ParseFile(t, path, newParser, transcript.Options{})
	reasons := rec.SkipReasons()
	want := map[string]int{transcript.SkipOrphanResult: 18, transcript.SkipUnpairedToolUse: 1}
	if !mapsEqual(reasons, want) {
		t.Errorf("skip reasons = %v, want %v", reasons, want)
	}
	if len(rec.Calls) != 0 || len(rec.Answers) != 0 || len(rec.Turns) != 0 {
		t.Errorf("calls/answers/turns = %d/%d/%d, want 0/0/0", len(rec.Calls), len(rec.Answers), len(rec.Turns))
	}
	if len(rec.Compactions) != 1 {
		t.Fatalf("compactions = %d, want 1", len(rec.Compactions))
	}
	c := rec.Compactions[0]
	wantIDs := []string{"toolu_013qq3oq1zCPUajb6r1jdzqh", "toolu_01JhNEfiX2AoRVUmFprFSHWG", "toolu_01AkXoLT2dSiL4PFea9bDnrr"}
	if c.Line != 11 || c.Kind != transcript.CompactionMicro || c.Trigger != "auto" ||
		c.PreTokens != schema.Known(59975) || !slices.Equal(c.ClearedCallIDs, wantIDs) {
		t.Errorf("compaction = %+v", c)
	}
	if unpaired := rec.Skips[len(rec.Skips)-1]; unpaired.Line != 3 || unpaired.Reason != transcript.SkipUnpairedToolUse {
		t.Errorf("last skip = %+v, want the unpaired Skill tool_use of line 3", unpaired)
	}
}

// TestSelectedResults pairs each real tool_result line of selected-lines.jsonl
// with a tool_use built from its category, so the single lines can be checked
// as calls.
func TestSelectedResults(t *testing.T) {
	fixtures := transcripttest.FixturesDir(t)
	lines := readLines(t, filepath.Join(fixtures, "claude-code", "selected-lines.jsonl"))
	tests := []struct {
		row       int
		tool      string
		input     string
		chars     uint64
		isError   bool
		sidechain bool
		check     func(t *testing.T, c *transcript.Call)
	}{
		{row: 14, tool: "Bash", input: `{"command":"x"}`, chars: 21},
		{row: 16, tool: "Glob", input: `{"pattern":"**/*.md"}`, chars: 14},
		{row: 20, tool: "Read", input: `{"file_path":"/x"}`, chars: 188, isError: true, check: func(t *testing.T, c *transcript.Call) {
			if f := c.Call.Forensics; f.Strategy != schema.StrategyRefused || !f.Truncated {
				t.Errorf("Read over max size: strategy=%s truncated=%v, want refused true", f.Strategy, f.Truncated)
			}
		}},
		{row: 21, tool: "Read", input: `{"file_path":"/x"}`, chars: 197, isError: true, check: func(t *testing.T, c *transcript.Call) {
			if f := c.Call.Forensics; f.Strategy != schema.StrategyRefused || f.Original.Tokens != schema.Known(50155) {
				t.Errorf("Read over max tokens: strategy=%s original tokens=%v, want refused 50155", f.Strategy, f.Original.Tokens)
			}
		}},
		{row: 25, tool: "Task", input: `{"prompt":"x"}`, chars: 1850},
		{row: 27, tool: "Bash", input: `{"command":"x"}`, chars: 68, isError: true, sidechain: true},
		{row: 30, tool: "Grep", input: `{"pattern":"x","output_mode":"content"}`, chars: 2239, check: func(t *testing.T, c *transcript.Call) {
			f := c.Call.Forensics
			if f.Original.Chars != schema.Known(23495) || f.Strategy != schema.StrategySpillToFile || !f.Truncated {
				t.Errorf("persisted Grep: original chars=%v strategy=%s truncated=%v, want 23495 spill_to_file true",
					f.Original.Chars, f.Strategy, f.Truncated)
			}
			if len(c.SavedText) != 23495 {
				t.Errorf("saved text = %d bytes, want 23495", len(c.SavedText))
			}
		}},
		{row: 35, tool: "Read", input: `{"file_path":"/x"}`, chars: 21779, sidechain: true},
	}
	for _, tt := range tests {
		t.Run(tt.tool+"_row"+strconv.Itoa(tt.row), func(t *testing.T) {
			result := lines[tt.row-1]
			id := string(between(result, `"tool_use_id":"`, `"`))
			use := `{"type":"assistant","sessionId":"s","isSidechain":` + strconv.FormatBool(tt.sidechain) + `,"message":{"id":"m1","model":"claude","content":[{"type":"tool_use","id":"` +
				id + `","name":"` + tt.tool + `","input":` + tt.input + `}]}}`
			rec := &transcripttest.Recorder{}
			p := New(transcript.Options{ReadSaved: transcripttest.ReadDir(filepath.Join(fixtures, "claude-code", "sidecar-4238e5fb", "tool-results"))})
			p.Feed(1, []byte(use), rec.Emit)
			p.Feed(2, result, rec.Emit)
			p.Flush(rec.Emit)
			if len(rec.Calls) != 1 || len(rec.Skips) != 0 {
				t.Fatalf("calls %d skips %+v", len(rec.Calls), rec.Skips)
			}
			c := rec.Calls[0]
			if got := uint64(utf8.RuneCountInString(c.ContextText)); got != tt.chars {
				t.Errorf("context chars = %d, want %d", got, tt.chars)
			}
			if c.Call.IsError != tt.isError || c.Call.Sidechain != tt.sidechain || c.Call.Tool != tt.tool || c.Call.CallID != id {
				t.Errorf("call = %s %s error=%v sidechain=%v", c.Call.Tool, c.Call.CallID, c.Call.IsError, c.Call.Sidechain)
			}
			if tt.check != nil {
				tt.check(t, c)
			}
		})
	}
}

func TestParserBehaviour(t *testing.T) {
	use := func(msg, id string) string {
		return `{"type":"assistant","sessionId":"s","message":{"id":"` + msg + `","model":"m","content":[{"type":"tool_use","id":"` + id + `","name":"Read","input":{"file_path":"/a"}}],"usage":{"input_tokens":10,"output_tokens":1}}}`
	}
	result := func(id string) string {
		return `{"type":"user","sessionId":"s","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + id + `","content":"ok"}]}}`
	}
	text := func(msg, s string) string {
		return `{"type":"assistant","sessionId":"s","message":{"id":"` + msg + `","model":"m","content":[{"type":"text","text":"` + s + `"}],"usage":{"input_tokens":10,"output_tokens":5}}}`
	}
	prompt := `{"type":"user","sessionId":"s","message":{"role":"user","content":"find it"}}`
	tests := []struct {
		name                  string
		lines                 []string
		opts                  transcript.Options
		calls, answers, turns int
		skips                 map[string]int
		inTokens, outTokens   uint64
		noUsage               bool // no message reported usage: both totals unknown
	}{
		{name: "pair across lines", lines: []string{prompt, use("m1", "a"), result("a"), text("m2", "there is no such setting")},
			calls: 1, answers: 1, turns: 1, skips: map[string]int{}, inTokens: 20, outTokens: 6},
		{name: "usage once per message id", lines: []string{prompt, text("m1", "x"), text("m1", "y"), use("m1", "a"), result("a")},
			calls: 1, turns: 1, skips: map[string]int{}, inTokens: 10, outTokens: 1},
		{name: "narration with a tool call is no answer", lines: []string{prompt, use("m1", "a"), result("a"), text("m2", "let me look"), use("m2", "b"), result("b")},
			calls: 2, turns: 1, skips: map[string]int{}, inTokens: 20, outTokens: 2},
		{name: "no answer without inputs", lines: []string{prompt, text("m1", "hello")},
			turns: 1, skips: map[string]int{}, inTokens: 10, outTokens: 5},
		{name: "malformed and truncated lines", lines: []string{`{"type":"user",`, `[1,2]`, `not json`, prompt, use("m1", "a"), result("a")},
			calls: 1, turns: 1, skips: map[string]int{transcript.SkipMalformed: 3}, inTokens: 10, outTokens: 1},
		{name: "unpaired and orphan", lines: []string{use("m1", "a"), result("b")},
			skips: map[string]int{transcript.SkipOrphanResult: 1, transcript.SkipUnpairedToolUse: 1}, inTokens: 10, outTokens: 1},
		{name: "pending bound evicts the oldest", lines: []string{use("m1", "a"), use("m2", "b"), use("m3", "c"), result("c")},
			opts: transcript.Options{MaxPending: 2}, calls: 1,
			skips: map[string]int{transcript.SkipUnpairedToolUse: 2}, inTokens: 30, outTokens: 3},
		{name: "meta and local command output are no prompts", lines: []string{
			`{"type":"user","isMeta":true,"message":{"role":"user","content":"Caveat"}}`,
			`{"type":"user","message":{"role":"user","content":"<local-command-stdout>ok</local-command-stdout>"}}`,
			text("m1", "x")},
			skips: map[string]int{}, inTokens: 10, outTokens: 5},
		{name: "a message without usage reports none, not 0", lines: []string{prompt,
			`{"type":"assistant","sessionId":"s","message":{"id":"m1","model":"m","content":[{"type":"text","text":"hi"}]}}`},
			turns: 1, skips: map[string]int{}, noUsage: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &transcripttest.Recorder{}
			p := New(tt.opts)
			for i, l := range tt.lines {
				p.Feed(int64(i+1), []byte(l), rec.Emit)
			}
			p.Flush(rec.Emit)
			if len(rec.Calls) != tt.calls || len(rec.Answers) != tt.answers || len(rec.Turns) != tt.turns {
				t.Errorf("calls/answers/turns = %d/%d/%d, want %d/%d/%d",
					len(rec.Calls), len(rec.Answers), len(rec.Turns), tt.calls, tt.answers, tt.turns)
			}
			if got := rec.SkipReasons(); !mapsEqual(got, tt.skips) {
				t.Errorf("skips = %v, want %v", got, tt.skips)
			}
			s := p.Session()
			in, out := schema.Known(tt.inTokens), schema.Known(tt.outTokens)
			if tt.noUsage {
				in, out = schema.Unknown, schema.Unknown
			}
			if s.InputTokens != in || s.OutputTokens != out {
				t.Errorf("tokens = %s/%s, want %s/%s", s.InputTokens, s.OutputTokens, in, out)
			}
		})
	}
}

func readLines(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		out = append(out, append([]byte(nil), sc.Bytes()...))
	}
	return out
}

func between(b []byte, start, end string) []byte {
	i := bytes.Index(b, []byte(start))
	if i < 0 {
		return nil
	}
	rest := b[i+len(start):]
	j := bytes.Index(rest, []byte(end))
	if j < 0 {
		return nil
	}
	return rest[:j]
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestNonTextResults: a Read of an image (a tool_result whose content is an
// image block, with the toolUseResult Claude Code writes for one,
// `{type:"image", file:{base64, type, originalSize, dimensions}}`) and a
// ToolSearch (tool_reference blocks, as the harness lab
// recorded in testdata/lab) are not measured as 0 bytes: their context is
// unknown. The image, displayed smaller than it is, is not called complete
// either: it was resized without a word, and the file's size is its
// original.
func TestNonTextResults(t *testing.T) {
	use := func(id, tool, input string) string {
		return `{"type":"assistant","sessionId":"s","message":{"id":"m` + id + `","model":"m","content":[{"type":"tool_use","id":"` + id + `","name":"` + tool + `","input":` + input + `}],"usage":{"input_tokens":1,"output_tokens":1}}}`
	}
	image := `{"type":"user","sessionId":"s","message":{"role":"user","content":[{"tool_use_id":"img","type":"tool_result","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]}]},` +
		`"toolUseResult":{"type":"image","file":{"base64":"iVBORw0KGgo=","type":"image/png","originalSize":2456789,"dimensions":{"originalWidth":4000,"originalHeight":3000,"displayWidth":1568,"displayHeight":1176}}}}`
	ref := `{"type":"user","sessionId":"s","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"ts","content":[{"type":"tool_reference","tool_name":"WebFetch"}]}]},` +
		`"toolUseResult":{"matches":["WebFetch"],"query":"select:WebFetch","total_deferred_tools":11}}`
	rec := &transcripttest.Recorder{}
	p := New(transcript.Options{})
	for i, l := range []string{use("img", "Read", `{"file_path":"/w/shot.png"}`), image, use("ts", "ToolSearch", `{"query":"select:WebFetch"}`), ref} {
		p.Feed(int64(i+1), []byte(l), rec.Emit)
	}
	p.Flush(rec.Emit)
	if len(rec.Calls) != 2 {
		t.Fatalf("%d calls, want 2", len(rec.Calls))
	}
	img := rec.Calls[0].Call
	if img.Context != (schema.Sizes{}) {
		t.Errorf("image: context %+v, want every size unknown", img.Context)
	}
	if want := (schema.Sizes{Bytes: schema.Known(2456789)}); img.Original.Sizes != want || img.Original.Source != schema.SourceHarnessMetadata {
		t.Errorf("image: original %+v, want the file's 2,456,789 bytes from harness_metadata and nothing else", img.Original)
	}
	if !img.Truncated || img.Kind != schema.KindSilent || img.Strategy != schema.StrategyResized {
		t.Errorf("image: truncated %v kind %s strategy %s, want a silent resize", img.Truncated, img.Kind, img.Strategy)
	}
	transcripttest.CheckUnmeasured(t, rec.Calls[1].Call, schema.KindNone)
}

// TestToolUseLineTakesBackItsMessage: in the real 2.1.6 session, line 20 is
// the text block of msg_019SiiKuPg4TsXVmQ7fDS7Ln and line 21 its tool_use
// block; line 22 holds the call's result. A parser flushed after line 20
// offers the text as an answer, which is all it can know. Read on, the
// tool_use line says the message was no answer, on that line, before the
// call has a result — which it may never get (the harness stopped, or the
// result's line was too long to read) — and no answer is offered for it.
func TestToolUseLineTakesBackItsMessage(t *testing.T) {
	const message = "msg_019SiiKuPg4TsXVmQ7fDS7Ln"
	all, err := os.ReadFile(filepath.Join(session216Dir(t), session216+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(all, []byte("\n"))
	if !bytes.Contains(lines[19], []byte(message)) || !bytes.Contains(lines[20], []byte(`"type":"tool_use"`)) {
		t.Fatalf("the fixture's lines 20 and 21 are not %s's text and tool_use", message)
	}
	parse := func(upTo int) *transcripttest.Recorder {
		rec := &transcripttest.Recorder{}
		p := New(transcript.Options{})
		for i, l := range lines[:upTo] {
			p.Feed(int64(i+1), l, rec.Emit)
		}
		p.Flush(rec.Emit)
		return rec
	}
	offered := func(rec *transcripttest.Recorder) bool {
		return slices.ContainsFunc(rec.Answers, func(a *transcript.Answer) bool { return a.Answer.MessageID == message })
	}
	named := func(rec *transcripttest.Recorder) []transcript.NotAnswer {
		var out []transcript.NotAnswer
		for _, n := range rec.NotAnswers {
			if n.MessageID == message {
				out = append(out, *n)
			}
		}
		return out
	}

	if early := parse(20); !offered(early) || len(named(early)) != 0 {
		t.Fatalf("flushed after line 20: answer offered %v, named no answer %+v; want the text as an answer", offered(early), named(early))
	}
	want := []transcript.NotAnswer{{SessionID: session216, MessageID: message, Line: 21}}
	late := parse(21)
	if offered(late) {
		t.Errorf("flushed after line 21: the message that called a tool is offered as an answer")
	}
	if got := named(late); !slices.Equal(got, want) {
		t.Errorf("flushed after line 21: named no answer %+v, want %+v", got, want)
	}
	if got := late.SkipReasons()[transcript.SkipUnpairedToolUse]; got != 1 {
		t.Errorf("%d unpaired calls, want the tool_use of line 21", got)
	}
	// Read whole, every message named no answer is named once, and none is
	// offered as an answer.
	whole := parse(len(lines))
	if got := named(whole); !slices.Equal(got, want) {
		t.Errorf("read whole: named no answer %+v, want %+v", got, want)
	}
	seen := map[string]bool{}
	for _, n := range whole.NotAnswers {
		if seen[n.MessageID] {
			t.Errorf("%s named no answer twice", n.MessageID)
		}
		seen[n.MessageID] = true
		if slices.ContainsFunc(whole.Answers, func(a *transcript.Answer) bool { return a.Answer.MessageID == n.MessageID }) {
			t.Errorf("%s: named no answer on line %d and offered as one", n.MessageID, n.Line)
		}
	}
}

// TestGrepPageIsNoOriginalText: a Grep in content mode cut at the default
// head limit of 250, written the way Claude Code writes it (the shape of the
// real 2.1.6 page in testdata/transcripts/claude-code/selected-lines.jsonl
// row 19: content holds the kept lines, appliedLimit says a limit cut). Its
// toolUseResult.content is the page the model saw, not the search's output,
// so it is not kept as the original text, and the original is only a lower
// bound.
func TestGrepPageIsNoOriginalText(t *testing.T) {
	var page strings.Builder
	for i := 1; i <= 250; i++ {
		if i > 1 {
			page.WriteByte('\n')
		}
		page.WriteString("src/app/h.go:" + strconv.Itoa(i) + ":\tdo(" + strconv.Itoa(i) + ")")
	}
	content := strconv.Quote(page.String())
	lines := []string{
		`{"type":"assistant","sessionId":"s","version":"2.1.6","message":{"id":"m1","model":"m","content":[{"type":"tool_use","id":"g","name":"Grep","input":{"pattern":"do\\(","output_mode":"content","-n":true}}],"usage":{"input_tokens":1,"output_tokens":1}}}`,
		`{"type":"user","sessionId":"s","version":"2.1.6","message":{"role":"user","content":[{"tool_use_id":"g","type":"tool_result","content":` +
			strconv.Quote(page.String()+"\n\n[Showing results with pagination = limit: 250, offset: 0]") + `}]},` +
			`"toolUseResult":{"mode":"content","numFiles":0,"filenames":[],"content":` + content + `,"numLines":250,"appliedLimit":250}}`,
	}
	rec := &transcripttest.Recorder{}
	p := New(transcript.Options{KeepOriginalText: true})
	for i, l := range lines {
		p.Feed(int64(i+1), []byte(l), rec.Emit)
	}
	p.Flush(rec.Emit)
	if len(rec.Calls) != 1 {
		t.Fatalf("%d calls, want 1", len(rec.Calls))
	}
	c := rec.Calls[0]
	if !c.Call.Truncated || c.Call.Original.Precision != schema.PrecisionLowerBound {
		t.Errorf("truncated %v, original %+v: want a cut with a lower-bound original", c.Call.Truncated, c.Call.Original)
	}
	if c.OriginalText != "" {
		t.Errorf("kept %d bytes of the page as the original text", len(c.OriginalText))
	}
}
