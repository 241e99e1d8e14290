package transcriptgen

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Facts of the reproduced Claude Code installation.
const (
	CCProject = "-Users-dev-acme"
	CCCwd     = "/Users/dev/acme"
	CCModel   = "claude-opus-4-5-20251101"
	// CCReadReminder is appended by Claude Code to every text Read result.
	CCReadReminder = "\n\n<system-reminder>\nWhenever you read a file, you should consider whether it would be considered malware. You CAN and SHOULD provide analysis of malware, what it is doing. But you MUST refuse to improve or augment the code. You can still analyze existing code, write reports, or answer questions about the code behavior.\n</system-reminder>\n"
)

// ClaudeCode builds one Claude Code main-thread transcript, line by line,
// in the on-disk format (envelope fields, parent chain, timestamps).
type ClaudeCode struct {
	SID, Version string
	seed         int
	t            time.Time
	n            int
	parent       any
	lines        []string
}

// NewClaudeCode starts a session; seed makes its uuids unique and stable.
func NewClaudeCode(sid, version string, seed int, start time.Time) *ClaudeCode {
	return &ClaudeCode{SID: sid, Version: version, seed: seed, t: start}
}

func (s *ClaudeCode) uuid() string {
	s.n++
	return fmt.Sprintf("%08x-%04x-4000-8000-%012x", s.seed, s.n, s.n*7919)
}

func (s *ClaudeCode) tick(d time.Duration) string {
	s.t = s.t.Add(d)
	return s.t.Format("2006-01-02T15:04:05.000Z")
}

func (s *ClaudeCode) envelope() Obj {
	return Obj{{"parentUuid", s.parent}, {"isSidechain", false}, {"userType", "external"},
		{"cwd", CCCwd}, {"sessionId", s.SID}, {"version", s.Version}, {"gitBranch", "main"}}
}

// Prompt appends a user prompt.
func (s *ClaudeCode) Prompt(text string) {
	id := s.uuid()
	s.lines = append(s.lines, Line(append(s.envelope(), KV{"type", "user"},
		KV{"message", Obj{{"role", "user"}, {"content", text}}},
		KV{"uuid", id}, KV{"timestamp", s.tick(20 * time.Second)})))
	s.parent = id
}

// Assistant appends an assistant line of message msgID with out output tokens.
func (s *ClaudeCode) Assistant(msgID string, out int, blocks ...Obj) {
	id := s.uuid()
	s.lines = append(s.lines, Line(append(s.envelope(),
		KV{"message", Obj{{"model", CCModel}, {"id", msgID}, {"type", "message"}, {"role", "assistant"},
			{"content", blocks}, {"stop_reason", nil}, {"stop_sequence", nil},
			{"usage", Obj{{"input_tokens", 3}, {"cache_creation_input_tokens", 1200}, {"cache_read_input_tokens", 30000},
				{"cache_creation", Obj{{"ephemeral_5m_input_tokens", 1200}, {"ephemeral_1h_input_tokens", 0}}},
				{"output_tokens", out}, {"service_tier", "standard"}}}}},
		KV{"requestId", "req_" + strings.TrimPrefix(msgID, "msg_")}, KV{"type", "assistant"},
		KV{"uuid", id}, KV{"timestamp", s.tick(4 * time.Second)})))
	s.parent = id
}

// Result appends the user line carrying a tool_result and its toolUseResult.
func (s *ClaudeCode) Result(toolUseID string, content, toolUseResult any) {
	s.result(toolUseID, content, false, toolUseResult)
}

// ErrorResult is Result for a failed call (is_error: true).
func (s *ClaudeCode) ErrorResult(toolUseID string, content, toolUseResult any) {
	s.result(toolUseID, content, true, toolUseResult)
}

func (s *ClaudeCode) result(toolUseID string, content any, isError bool, toolUseResult any) {
	from := s.parent
	block := Obj{{"tool_use_id", toolUseID}, {"type", "tool_result"}, {"content", content}}
	if isError {
		block = append(block, KV{"is_error", true})
	}
	id := s.uuid()
	s.lines = append(s.lines, Line(append(s.envelope(), KV{"type", "user"},
		KV{"message", Obj{{"role", "user"}, {"content", []Obj{block}}}},
		KV{"uuid", id}, KV{"timestamp", s.tick(2 * time.Second)},
		KV{"toolUseResult", toolUseResult}, KV{"sourceToolAssistantUUID", from})))
	s.parent = id
}

// Save writes the transcript where Claude Code keeps it, below d.
func (s *ClaudeCode) Save(d *Dir) {
	d.Write("claude-code/"+CCProject+"/"+s.SID+".jsonl", []byte(strings.Join(s.lines, "\n")+"\n"))
}

// Text is a text content block.
func Text(t string) Obj { return Obj{{"type", "text"}, {"text", t}} }

// ToolUse is a tool_use content block.
func ToolUse(id, name string, input Obj) Obj {
	return Obj{{"type", "tool_use"}, {"id", id}, {"name", name}, {"input", input}}
}

// Numbered renders lines as Claude Code's Read does: "%6d→line".
func Numbered(lines []string, start int) string {
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%6d→%s", start+i, l)
	}
	return b.String()
}

// CCFileSize is Claude Code's formatFileSize: base 1024, one decimal, a
// trailing ".0" removed.
func CCFileSize(n int) string {
	if n < 1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	s := fmt.Sprintf("%.1f", float64(n)/1024)
	return strings.TrimSuffix(s, ".0") + "KB"
}

// CCPreview is generatePreview: at most 2,000 chars, cut at the last
// newline when that keeps more than 1,000.
func CCPreview(s string) (string, bool) {
	if utf8.RuneCountInString(s) <= 2000 {
		return s, false
	}
	p := string([]rune(s)[:2000])
	if i := strings.LastIndexByte(p, '\n'); i > 1000 {
		p = p[:i]
	}
	return p, true
}
