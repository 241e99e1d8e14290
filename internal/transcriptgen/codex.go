package transcriptgen

import (
	"fmt"
	"strings"
	"time"
)

// Codex builds one Codex rollout in the 0.60-era on-disk format: one
// {"timestamp","type","payload"} line per event, timestamps advancing by the
// delay each line is given.
type Codex struct {
	SID   string
	t     time.Time
	lines []string
	// turnContext is repeated after each tool output, as Codex writes it.
	turnContext Obj
}

// NewCodex starts a session at start in cwd with the user's prompt: the
// session_meta, the prompt (as response item and event), the turn context
// and the first empty token count, with the gaps Codex shows between them.
func NewCodex(sid string, start time.Time, cwd, prompt string) *Codex {
	s := &Codex{SID: sid, t: start}
	s.Add("session_meta", Obj{{"id", sid}, {"timestamp", start.Format("2006-01-02T15:04:05.000Z")}, {"cwd", cwd},
		{"originator", "codex_cli_rs"}, {"cli_version", "0.60.1"}, {"instructions", nil}, {"source", "cli"},
		{"model_provider", "openai"}}, 0)
	s.Add("response_item", Obj{{"type", "message"}, {"role", "user"}, {"content", []Obj{{{"type", "input_text"}, {"text", prompt}}}}}, 30*time.Second)
	s.Add("event_msg", Obj{{"type", "user_message"}, {"message", prompt}, {"images", []string{}}}, 0)
	s.turnContext = Obj{{"cwd", cwd}, {"approval_policy", "on-request"},
		{"sandbox_policy", Obj{{"type", "workspace-write"}, {"network_access", false}, {"exclude_tmpdir_env_var", false}, {"exclude_slash_tmp", false}}},
		{"model", "gpt-5.1-codex-max"}, {"effort", "high"}, {"summary", "auto"}}
	s.Add("turn_context", s.turnContext, 2*time.Millisecond)
	s.Add("event_msg", Obj{{"type", "token_count"}, {"info", nil}, {"rate_limits", nil}}, 5*time.Second)
	return s
}

// Add appends one line of type typ, d after the previous one.
func (s *Codex) Add(typ string, payload Obj, d time.Duration) {
	s.t = s.t.Add(d)
	s.lines = append(s.lines, Line(Obj{{"timestamp", s.t.Format("2006-01-02T15:04:05.000Z")}, {"type", typ}, {"payload", payload}}))
}

// ShellCall appends a shell_command function call with arguments (JSON
// text), and d2 later its output followed by the turn context.
func (s *Codex) ShellCall(callID, arguments string, d time.Duration, output string, d2 time.Duration) {
	s.Add("response_item", Obj{{"type", "function_call"}, {"name", "shell_command"},
		{"arguments", arguments}, {"call_id", callID}}, d)
	s.Add("response_item", Obj{{"type", "function_call_output"}, {"call_id", callID}, {"output", output}}, d2)
	s.Add("turn_context", s.turnContext, time.Millisecond)
}

// Answer appends the final answer: the agent_message event, the token
// count with usage (input, cached input, output, reasoning tokens) and the
// assistant message.
func (s *Codex) Answer(answer string, input, cached, output, reasoning int) {
	usage := Obj{{"input_tokens", input}, {"cached_input_tokens", cached}, {"output_tokens", output}, {"reasoning_output_tokens", reasoning}, {"total_tokens", input + output}}
	s.Add("event_msg", Obj{{"type", "agent_message"}, {"message", answer}}, 4*time.Second)
	s.Add("event_msg", Obj{{"type", "token_count"}, {"info", Obj{{"total_token_usage", usage}, {"last_token_usage", usage}, {"model_context_window", 258400}}}, {"rate_limits", nil}}, 50*time.Millisecond)
	s.Add("response_item", Obj{{"type", "message"}, {"role", "assistant"}, {"content", []Obj{{{"type", "output_text"}, {"text", answer}}}}}, 50*time.Millisecond)
}

// Save writes the rollout to rel below d.
func (s *Codex) Save(d *Dir, rel string) { d.Write(rel, []byte(strings.Join(s.lines, "\n")+"\n")) }

// CodexShellOutput is a shell output of total lines (line(n), 1-based) as
// Codex 0.60 formats it for the model: the exit code, wall time and "Total
// output lines" header, then the first and last 128 lines around
// "[... omitted N of M lines ...]" (MODEL_FORMAT_MAX_LINES 256).
func CodexShellOutput(exitCode int, wall string, total int, line func(int) string) string {
	var head, tail []string
	for i := 1; i <= 128; i++ {
		head = append(head, line(i))
	}
	for i := total - 127; i <= total; i++ {
		tail = append(tail, line(i))
	}
	body := strings.Join(head, "\n") + fmt.Sprintf("\n[... omitted %d of %d lines ...]\n\n", total-256, total) + strings.Join(tail, "\n") + "\n"
	return fmt.Sprintf("Exit code: %d\nWall time: %s seconds\nTotal output lines: %d\nOutput:\n", exitCode, wall, total) + body
}
