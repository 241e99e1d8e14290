package codex

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxaudit/ctxaudit/collector/transcript"
	"github.com/ctxaudit/ctxaudit/collector/transcript/transcripttest"
	"github.com/ctxaudit/ctxaudit/schema"
)

func newParser(o transcript.Options) transcript.Parser { return New(o) }

// Expected figures were counted with jq on the fixture: 14 function_call and
// 27 custom_tool_call items, each with its output; two shell outputs start
// "Exit code: 1" (lines 168, 264); the last token_count totals.
func TestRolloutFirstTurn(t *testing.T) {
	path := filepath.Join(transcripttest.FixturesDir(t), "codex", "rollout-0.60.1-rtchess-first-turn.jsonl")
	rec, sess := transcripttest.ParseFile(t, path, newParser, transcript.Options{})

	if len(rec.Calls) != 41 || len(rec.Skips) != 0 {
		t.Fatalf("calls = %d, skips = %+v; want 41 and none", len(rec.Calls), rec.Skips)
	}
	tools := map[string]int{}
	var failed []int64
	truncated := 0
	for _, c := range rec.Calls {
		tools[c.Call.Tool]++
		if c.Call.IsError {
			failed = append(failed, c.Call.SourceLine)
		}
		if c.Call.Truncated {
			truncated++
		}
		if c.Call.Turn != schema.KnownTurn(0) || c.Call.Model != "gpt-5.1-codex-max" || c.Call.SessionID != "019aad50-a7e6-7422-b7a8-0b384290624f" {
			t.Errorf("call %s: turn %s model %q session %q", c.Call.CallID, c.Call.Turn, c.Call.Model, c.Call.SessionID)
		}
	}
	if want := map[string]int{"shell_command": 10, "update_plan": 4, "apply_patch": 27}; !equal(tools, want) {
		t.Errorf("tools = %v, want %v", tools, want)
	}
	if len(failed) != 2 || failed[0] != 168 || failed[1] != 264 {
		t.Errorf("failed calls on lines %v, want [168 264]", failed)
	}
	// The source notes no truncation markers anywhere in this rollout.
	if truncated != 0 {
		t.Errorf("truncated = %d, want 0", truncated)
	}

	first := rec.Calls[0]
	if first.Call.CallID != "call_KLyTWxCoVwf4p9s4u1x5YS1b" || first.Call.Target != "ls" || first.Call.SourceLine != 12 ||
		first.Call.Arguments != `{"command":"ls","workdir":".","timeout_ms":120000}` || len(first.ContextText) != 132 {
		t.Errorf("first call = %+v (context %d bytes)", first.Call, len(first.ContextText))
	}
	if c := rec.CallAtLine(250); c == nil || len(c.ContextText) != 2740 || c.Call.Forensics.Context.Chars != schema.Known(2740) {
		t.Errorf("line 250 = %+v", c)
	}

	if len(rec.Turns) != 1 || rec.Turns[0].Line != 4 {
		t.Errorf("turns = %+v, want one at line 4", rec.Turns)
	}
	// agent_message (line 296) and the assistant message item (line 299)
	// are the same answer; the item is kept.
	if len(rec.Answers) != 1 {
		t.Fatalf("answers = %d, want 1", len(rec.Answers))
	}
	a := rec.Answers[0]
	if a.Line != 299 || a.Answer.MessageID != "019aad50-a7e6-7422-b7a8-0b384290624f:299" || len(a.Answer.InputCallIDs) != 41 || a.Answer.Turn != schema.KnownTurn(0) {
		t.Errorf("answer = line %d %s inputs %d turn %s", a.Line, a.Answer.MessageID, len(a.Answer.InputCallIDs), a.Answer.Turn)
	}

	want := schema.Session{
		SessionID: "019aad50-a7e6-7422-b7a8-0b384290624f", Source: schema.HarnessCodex, HarnessVersion: "0.60.1",
		Model: "gpt-5.1-codex-max", Project: "rtchess", Cwd: "/Users/pinouchon/code/rtchess",
		Turns: schema.Known(1), Compactions: schema.Known(0), InputTokens: schema.Known(1687255), OutputTokens: schema.Known(54092),
	}
	got := sess
	got.StartedAt, got.EndedAt, got.SourceFile = want.StartedAt, want.EndedAt, ""
	if got != want {
		t.Errorf("session =\n%+v\nwant\n%+v", got, want)
	}
}

func TestTurnAbortedLine(t *testing.T) {
	path := filepath.Join(transcripttest.FixturesDir(t), "codex", "rollout-0.60.1-rtchess-turn_aborted-line1258.jsonl")
	rec, _ := transcripttest.ParseFile(t, path, newParser, transcript.Options{})
	if len(rec.Calls)+len(rec.Answers)+len(rec.Turns)+len(rec.Skips) != 0 {
		t.Errorf("records from a lone turn_aborted event: %+v", rec)
	}
}

func TestParserBehaviour(t *testing.T) {
	meta := `{"timestamp":"2025-01-01T00:00:00Z","type":"session_meta","payload":{"id":"s1","cwd":"/w/p","cli_version":"0.9"}}`
	prompt := `{"type":"event_msg","payload":{"type":"user_message","message":"q"}}`
	call := func(id string) string {
		return `{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"cat x\"]}","call_id":"` + id + `"}}`
	}
	out := func(id string) string {
		return `{"type":"response_item","payload":{"type":"function_call_output","call_id":"` + id + `","output":"Exit code: 0\nWall time: 0 seconds\nOutput:\nhi\n"}}`
	}
	msg := `{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"not found"}]}}`
	tokens := `{"type":"event_msg","payload":{"type":"token_count","info":null}}`
	execEnd := `{"type":"event_msg","payload":{"type":"exec_command_end","call_id":"a","aggregated_output":"full output"}}`
	tests := []struct {
		name                  string
		lines                 []string
		calls, answers, turns int
		skips                 map[string]int
	}{
		{"answer after calls", []string{meta, prompt, call("a"), out("a"), tokens, msg}, 1, 1, 1, map[string]int{}},
		{"narration before a call in one response", []string{meta, prompt, call("a"), out("a"), tokens, msg, call("b"), out("b")}, 2, 0, 1, map[string]int{}},
		{"exec_command_end before output", []string{meta, prompt, call("a"), execEnd, out("a")}, 1, 0, 1, map[string]int{}},
		{"unpaired and orphan", []string{meta, call("a"), out("b")}, 0, 0, 0,
			map[string]int{transcript.SkipUnpairedToolUse: 1, transcript.SkipOrphanResult: 1}},
		{"malformed", []string{meta, `{"type":"response_item","payload":{"type":`, `{}`}, 0, 0, 0,
			map[string]int{transcript.SkipMalformed: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &transcripttest.Recorder{}
			p := New(transcript.Options{})
			for i, l := range tt.lines {
				p.Feed(int64(i+1), []byte(l), rec.Emit)
			}
			p.Flush(rec.Emit)
			if len(rec.Calls) != tt.calls || len(rec.Answers) != tt.answers || len(rec.Turns) != tt.turns {
				t.Errorf("calls/answers/turns = %d/%d/%d, want %d/%d/%d",
					len(rec.Calls), len(rec.Answers), len(rec.Turns), tt.calls, tt.answers, tt.turns)
			}
			if got := rec.SkipReasons(); !equal(got, tt.skips) {
				t.Errorf("skips = %v, want %v", got, tt.skips)
			}
			for _, c := range rec.Calls {
				if c.Call.Target != "bash -lc cat x" || c.Call.SessionID != "s1" || c.Call.HarnessVersion != "0.9" {
					t.Errorf("call = %+v", c.Call)
				}
			}
		})
	}
}

// A call after an assistant message in one response makes the message
// narration, and says which: a reader that flushed the parser between the
// two lines took the message for an answer and must take it back.
func TestCallLineNamesTheNarrationItEnds(t *testing.T) {
	lines := []string{
		`{"timestamp":"2025-01-01T00:00:00Z","type":"session_meta","payload":{"id":"s1","cwd":"/w/p","cli_version":"0.9"}}`,
		`{"type":"event_msg","payload":{"type":"user_message","message":"q"}}`,
		`{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{}","call_id":"a"}}`,
		`{"type":"response_item","payload":{"type":"function_call_output","call_id":"a","output":"hi"}}`,
		`{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Let me look closer."}]}}`,
		`{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{}","call_id":"b"}}`,
		`{"type":"response_item","payload":{"type":"function_call_output","call_id":"b","output":"hi"}}`,
	}
	// Flushed after the message line, as a reader that paused there does.
	early := &transcripttest.Recorder{}
	p := New(transcript.Options{})
	for i, l := range lines[:5] {
		p.Feed(int64(i+1), []byte(l), early.Emit)
	}
	p.Flush(early.Emit)
	if len(early.Answers) != 1 {
		t.Fatalf("flushed after the message: %d answers, want the candidate", len(early.Answers))
	}
	candidate := early.Answers[0].Answer.MessageID

	rec := &transcripttest.Recorder{}
	p = New(transcript.Options{})
	for i, l := range lines {
		p.Feed(int64(i+1), []byte(l), rec.Emit)
	}
	p.Flush(rec.Emit)
	if len(rec.Answers) != 0 || len(rec.Calls) != 2 {
		t.Fatalf("answers %d calls %d, want 0 and 2", len(rec.Answers), len(rec.Calls))
	}
	// The call's line says the message was narration, before the call has
	// its output.
	if len(rec.NotAnswers) != 1 || rec.NotAnswers[0].MessageID != candidate || rec.NotAnswers[0].Line != 6 {
		t.Errorf("not answers = %+v; want %s, read on line 6", rec.NotAnswers, candidate)
	}
}

func equal(a, b map[string]int) bool {
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

// TestImageOutput: Codex's view_image answers with a content-item array
// holding an input_image (FunctionCallOutputPayload's array form); no text
// size measures it, so the context is unknown and the call is not called
// complete.
func TestImageOutput(t *testing.T) {
	meta := `{"timestamp":"2025-01-01T00:00:00Z","type":"session_meta","payload":{"id":"s1","cwd":"/w/p","cli_version":"0.9"}}`
	call := `{"type":"response_item","payload":{"type":"function_call","name":"view_image","arguments":"{\"path\":\"/w/shot.png\"}","call_id":"v1"}}`
	out := `{"type":"response_item","payload":{"type":"function_call_output","call_id":"v1","output":[{"type":"input_image","image_url":"data:image/png;base64,iVBORw0KGgo="}]}}`
	rec := &transcripttest.Recorder{}
	p := New(transcript.Options{})
	for i, l := range []string{meta, call, out} {
		p.Feed(int64(i+1), []byte(l), rec.Emit)
	}
	p.Flush(rec.Emit)
	if len(rec.Calls) != 1 {
		t.Fatalf("%d calls, want 1", len(rec.Calls))
	}
	transcripttest.CheckUnmeasured(t, rec.Calls[0].Call, schema.KindUnknown)
}

// TestIsErrorFromExitStatus: a call failed when Codex's wrapper header (the
// lines before "Output:") or the structured form's metadata.exit_code says
// the process exited non-zero — never because the tool's own output says
// "Exit code: N" somewhere.
func TestIsErrorFromExitStatus(t *testing.T) {
	meta := `{"timestamp":"2025-01-01T00:00:00Z","type":"session_meta","payload":{"id":"s1","cwd":"/w/p","cli_version":"0.9"}}`
	call := `{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"make\"}","call_id":"c1"}}`
	tests := []struct {
		name   string
		output string // the JSON value of function_call_output.output
		want   bool
	}{
		{"freeform exit 0", `"Exit code: 0\nWall time: 0.1 seconds\nOutput:\nok\n"`, false},
		{"freeform exit 1", `"Exit code: 1\nWall time: 0.1 seconds\nOutput:\nno\n"`, true},
		{"freeform with total lines", `"Exit code: 2\nWall time: 1 seconds\nTotal output lines: 30\nOutput:\nno\n"`, true},
		{"freeform exit 0, body says exit code 1", `"Exit code: 0\nWall time: 0.1 seconds\nOutput:\nExit code: 1\n"`, false},
		{"unified exec exited 0, body says exit code 1", `"Chunk ID: a\nWall time: 0.1 seconds\nProcess exited with code 0\nOutput:\nExit code: 1\n"`, false},
		{"unified exec exited 3", `"Chunk ID: a\nWall time: 0.1 seconds\nProcess exited with code 3\nOutput:\nx\n"`, true},
		{"unified exec still running, body says exit code 2", `"Chunk ID: a\nWall time: 10.0 seconds\nProcess running with session ID 7\nOutput:\nExit code: 2\n"`, false},
		{"structured exit 0, body says exit code 1", `"{\"output\":\"Exit code: 1\\n\",\"metadata\":{\"exit_code\":0,\"duration_seconds\":0.1}}"`, false},
		{"structured exit 1", `"{\"output\":\"boom\\n\",\"metadata\":{\"exit_code\":1,\"duration_seconds\":0.1}}"`, true},
		{"MCP text mentioning an exit code", `[{"type":"text","text":"Job summary. Exit code: 137 after OOM kill"}]`, false},
		{"plain text mentioning a process exit", `"Process exited with code 1 during the last run; retried fine"`, false},
		// The older {"content","success"} object: Codex's own flag.
		{"older object, success false", `{"content":"sandbox denied","success":false}`, true},
		{"older object, success true", `{"content":"Exit code: 1 was printed","success":true}`, false},
		{"older object without success", `{"content":"ok"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := `{"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":` + tt.output + `}}`
			rec := &transcripttest.Recorder{}
			p := New(transcript.Options{})
			for i, l := range []string{meta, call, out} {
				p.Feed(int64(i+1), []byte(l), rec.Emit)
			}
			p.Flush(rec.Emit)
			if len(rec.Calls) != 1 {
				t.Fatalf("%d calls, want 1 (skips %+v)", len(rec.Calls), rec.Skips)
			}
			if got := rec.Calls[0].Call.IsError; got != tt.want {
				t.Errorf("is_error = %v, want %v (context %q)", got, tt.want, rec.Calls[0].ContextText)
			}
		})
	}
}

// TestExecOutputAtCapIsALowerBound: an exec_command_end event (the older
// ExecCommandEndEvent shape, transcript-formats.md §2.3: call_id, stdout,
// stderr, aggregated_output, exit_code, duration, formatted_output) whose
// aggregated_output is exactly 1 MiB — the most Codex keeps of a command's
// output (EXEC_OUTPUT_MAX_BYTES in codex-rs exec.rs). The copy is capped, so
// the call's original is at least its size, not exactly it.
func TestExecOutputAtCapIsALowerBound(t *testing.T) {
	var full strings.Builder
	for i := 1; full.Len() < 1<<20; i++ {
		fmt.Fprintf(&full, "row %07d payload=%s\n", i, strings.Repeat("z", 20))
	}
	agg := full.String()[:1<<20]
	rows := strings.SplitAfter(agg, "\n")
	total := len(rows)
	shown := strings.Join(rows[:128], "") + "\n[... omitted " + strconv.Itoa(total-256) + " of " + strconv.Itoa(total) + " lines ...]\n\n" +
		strings.Join(rows[total-128:], "")
	output := "Exit code: 0\nWall time: 2.4 seconds\nTotal output lines: " + strconv.Itoa(total) + "\nOutput:\n" + shown
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	lines := []string{
		`{"timestamp":"2025-10-01T10:00:00.000Z","type":"session_meta","payload":{"id":"0199a0a0-0000-7000-8000-000000000001","timestamp":"2025-10-01T10:00:00.000Z","cwd":"/w","originator":"codex_cli_rs","cli_version":"0.46.0","instructions":null,"source":"cli","model_provider":"openai"}}`,
		`{"timestamp":"2025-10-01T10:00:01.000Z","type":"event_msg","payload":{"type":"user_message","message":"dump it","images":[]}}`,
		`{"timestamp":"2025-10-01T10:00:02.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"./dump.sh\"]}","call_id":"call_dump"}}`,
		`{"timestamp":"2025-10-01T10:00:04.000Z","type":"event_msg","payload":{"type":"exec_command_end","call_id":"call_dump","stdout":` + q(agg) +
			`,"stderr":"","aggregated_output":` + q(agg) + `,"exit_code":0,"duration":{"secs":2,"nanos":400000000},"formatted_output":` + q(shown) + `}}`,
		`{"timestamp":"2025-10-01T10:00:04.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_dump","output":` + q(output) + `}}`,
	}
	rec := &transcripttest.Recorder{}
	p := New(transcript.Options{})
	for i, l := range lines {
		p.Feed(int64(i+1), []byte(l), rec.Emit)
	}
	p.Flush(rec.Emit)
	if len(rec.Calls) != 1 {
		t.Fatalf("%d calls, want 1 (skips %+v)", len(rec.Calls), rec.Skips)
	}
	o := rec.Calls[0].Call.Original
	if o.Precision != schema.PrecisionLowerBound || o.Bytes != schema.Known(1<<20) || o.Source != schema.SourceHarnessMetadata {
		t.Errorf("original = %+v, want at least 1,048,576 bytes from harness_metadata", o)
	}
}
