package transcript

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ctxaudit/ctxaudit/collector/internal/jsonscan"
	"github.com/ctxaudit/ctxaudit/schema"
)

// Format names a transcript format, as the --source flag spells it.
type Format string

const (
	FormatAuto       Format = "auto"
	FormatClaudeCode Format = "claude-code"
	FormatCodex      Format = "codex"
	FormatPi         Format = "pi"
)

// Formats lists the concrete formats.
var Formats = []Format{FormatClaudeCode, FormatCodex, FormatPi}

// ErrUnknownFormat is returned when a format name or a file's first lines
// match no known transcript format.
var ErrUnknownFormat = errors.New("unknown transcript format")

// ParseFormat parses a --source value; the empty string means auto.
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(strings.TrimSpace(s))); f {
	case "":
		return FormatAuto, nil
	case FormatAuto, FormatClaudeCode, FormatCodex, FormatPi:
		return f, nil
	case "claude", "claudecode", "claude_code":
		return FormatClaudeCode, nil
	case "codex-cli":
		return FormatCodex, nil
	case "pi-coding-agent":
		return FormatPi, nil
	}
	return "", fmt.Errorf("%w %q (want auto, %s, %s or %s)", ErrUnknownFormat, s,
		FormatClaudeCode, FormatCodex, FormatPi)
}

// Harness is the schema harness name of a format.
func (f Format) Harness() schema.Harness {
	switch f {
	case FormatClaudeCode:
		return schema.HarnessClaudeCode
	case FormatCodex:
		return schema.HarnessCodex
	case FormatPi:
		return schema.HarnessPi
	}
	return schema.HarnessGeneric
}

// Line types that identify each format. A type shared by two formats
// (e.g. "compaction") is absent from both lists.
var (
	claudeCodeTypes = map[string]bool{
		"user": true, "assistant": true, "system": true, "summary": true,
		"file-history-snapshot": true, "queue-operation": true, "progress": true,
		"attachment": true, "content-replacement": true, "custom-title": true,
		"ai-title": true, "last-prompt": true, "task-summary": true, "tag": true,
	}
	codexTypes = map[string]bool{
		"session_meta": true, "response_item": true, "event_msg": true,
		"turn_context": true, "compacted": true,
	}
	piTypes = map[string]bool{
		"session": true, "message": true, "model_change": true,
		"thinking_level_change": true, "branch_summary": true, "custom": true,
		"custom_message": true, "label": true, "session_info": true,
	}
)

// DetectLine guesses the format of one line; ok is false when the line says
// nothing decisive (blank, malformed, or a type no format claims).
func DetectLine(line []byte) (Format, bool) {
	raw, err := jsonscan.Value(line)
	if err != nil {
		return "", false
	}
	var typ string
	hasPayload, hasSessionID := false, false
	it := jsonscan.Object(raw)
	for it.Next() {
		switch {
		case it.KeyIs("type"):
			typ = jsonscan.StringOr(it.Value())
		case it.KeyIs("payload"):
			hasPayload = true
		case it.KeyIs("sessionId"), it.KeyIs("uuid"):
			hasSessionID = true
		}
	}
	switch {
	case codexTypes[typ] && hasPayload:
		return FormatCodex, true
	case claudeCodeTypes[typ]:
		return FormatClaudeCode, true
	case piTypes[typ]:
		return FormatPi, true
	case hasSessionID && typ != "":
		// A Claude Code line type this version does not know yet.
		return FormatClaudeCode, true
	}
	return "", false
}

// DetectLines guesses the format from a file's first lines: the first
// decisive line wins. It returns ErrUnknownFormat when none is decisive.
func DetectLines(lines [][]byte) (Format, error) {
	for _, l := range lines {
		if f, ok := DetectLine(l); ok {
			return f, nil
		}
	}
	return "", ErrUnknownFormat
}

// DetectMaxLines is how many non-blank lines Detect looks at.
const DetectMaxLines = 20

// Detection is what Detect learned from the first lines of a file.
type Detection struct {
	// Format is that of the first decisive line; "" when none was.
	Format Format
	// Lines is how many non-blank complete lines were looked at.
	Lines int
}

// Decided reports whether more lines can change the answer: a format was
// found, or DetectMaxLines lines were looked at without one.
func (d Detection) Decided() bool { return d.Format != "" || d.Lines >= DetectMaxLines }

// Detect reads the first lines of r — at most DetectMaxLines non-blank ones,
// passing over lines longer than maxLineBytes — and returns the format of
// the first decisive one. With growing set, r is a file still being written:
// a last line without its newline is not complete yet and is not looked at.
// Both `ctxaudit ingest` and the transcript receiver detect formats this way.
func Detect(r io.Reader, maxLineBytes int, growing bool) (Detection, error) {
	var d Detection
	lr := NewLineReader(r, maxLineBytes)
	for d.Lines < DetectMaxLines {
		l, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return d, err
		}
		if growing && !l.TooLong && l.Size == int64(len(l.Bytes)) {
			break // no newline: still being written
		}
		if l.TooLong || len(bytes.TrimSpace(l.Bytes)) == 0 {
			continue
		}
		d.Lines++
		if f, ok := DetectLine(l.Bytes); ok {
			d.Format = f
			return d, nil
		}
	}
	return d, nil
}
