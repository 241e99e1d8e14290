package transcriptgen

import (
	"fmt"
	"strings"
	"time"
)

// Pi builds one pi session file (format version 3): a session header, then
// message entries chained by id and parentId.
type Pi struct {
	SID    string
	Cwd    string
	t      time.Time
	lines  []string
	parent any
	n      int
	idBase int
}

// NewPi starts a session at start in cwd; idBase makes its entry ids unique
// across the sessions of one generator.
func NewPi(sid, cwd string, start time.Time, idBase int) *Pi {
	s := &Pi{SID: sid, Cwd: cwd, t: start, idBase: idBase}
	s.lines = append(s.lines, Line(Obj{{"type", "session"}, {"version", 3}, {"id", sid}, {"timestamp", s.iso()}, {"cwd", cwd}}))
	return s
}

func (s *Pi) iso() string { return s.t.Format("2006-01-02T15:04:05.000Z") }

// entry appends a message entry d after the previous one; msg's own
// timestamp (milliseconds) is the entry's.
func (s *Pi) entry(msg Obj, d time.Duration) {
	s.t = s.t.Add(d)
	s.n++
	id := fmt.Sprintf("%08x", s.idBase+s.n*0x1f3)
	msg = append(msg, KV{"timestamp", s.t.UnixMilli()})
	s.lines = append(s.lines, Line(Obj{{"type", "message"}, {"id", id}, {"parentId", s.parent}, {"timestamp", s.iso()}, {"message", msg}}))
	s.parent = id
}

// User appends the user's prompt, d after the previous entry.
func (s *Pi) User(text string, d time.Duration) {
	s.entry(Obj{{"role", "user"}, {"content", []Obj{{{"type", "text"}, {"text", text}}}}}, d)
}

// Assistant appends an assistant message with content blocks, the model's
// input and output token counts and its stop reason.
func (s *Pi) Assistant(content []Obj, in, out int, stop string, d time.Duration) {
	usage := Obj{{"input", in}, {"output", out}, {"cacheRead", 0}, {"cacheWrite", 0}, {"totalTokens", in + out},
		{"cost", Obj{{"input", 0}, {"output", 0}, {"cacheRead", 0}, {"cacheWrite", 0}, {"total", 0}}}}
	s.entry(Obj{{"role", "assistant"}, {"content", content},
		{"api", "anthropic-messages"}, {"provider", "anthropic"}, {"model", "claude-opus-4-5"}, {"usage", usage},
		{"stopReason", stop}}, d)
}

// ToolResult appends the result of call id of tool name: its text and details.
func (s *Pi) ToolResult(id, name, text string, details Obj, d time.Duration) {
	s.entry(Obj{{"role", "toolResult"}, {"toolCallId", id}, {"toolName", name},
		{"content", []Obj{{{"type", "text"}, {"text", text}}}},
		{"details", details}, {"isError", false}}, d)
}

// Save writes the session to rel below d.
func (s *Pi) Save(d *Dir, rel string) { d.Write(rel, []byte(strings.Join(s.lines, "\n")+"\n")) }

// PiLineTruncatedRead is what pi's read returns for a file of lines cut at
// its 2,000-line cap: the text with the "[Showing lines 1-2000 of N. Use
// offset=2001 to continue.]" notice, and details.truncation with the exact
// figures.
func PiLineTruncatedRead(lines []string) (string, Obj) {
	shown := strings.Join(lines[:2000], "\n")
	text := shown + fmt.Sprintf("\n\n[Showing lines 1-2000 of %d. Use offset=2001 to continue.]", len(lines))
	details := Obj{{"truncation", Obj{{"content", shown}, {"truncated", true}, {"truncatedBy", "lines"},
		{"totalLines", len(lines)}, {"totalBytes", len(strings.Join(lines, "\n"))}, {"outputLines", 2000}, {"outputBytes", len(shown)},
		{"lastLinePartial", false}, {"firstLineExceedsLimit", false}, {"maxLines", 2000}, {"maxBytes", 51200}}}}
	return text, details
}

// UploaderSource is the 3,100-line src/uploader.ts of the pi reproductions:
// constants, and retryUpload on line 2,900, past pi's 2,000-line read cap.
func UploaderSource() []string {
	src := make([]string, 3100)
	for i := range src {
		src[i] = fmt.Sprintf("const v%04d = %d;", i+1, i+1)
	}
	src[2899] = "export function retryUpload() {}"
	return src
}
