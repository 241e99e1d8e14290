// Package transcripttest helps test transcript parsers and their callers:
// it finds the repository's fixtures, feeds files through a parser and
// records what comes out.
package transcripttest

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxaudit/ctxaudit/collector/transcript"
	"github.com/ctxaudit/ctxaudit/schema"
)

// FixturesDir returns the repository's real-transcript fixtures,
// testdata/transcripts (provenance in its SOURCES.md). It fails the test when
// there is none: a silent skip would hide that the real-transcript tests did
// not run.
func FixturesDir(tb testing.TB) string {
	tb.Helper()
	return findUp(tb, filepath.Join("testdata", "transcripts"))
}

// ExamplesDir returns the repository's examples/sessions directory.
func ExamplesDir(tb testing.TB) string {
	tb.Helper()
	return findUp(tb, filepath.Join("examples", "sessions"))
}

// LabDir returns the repository's harness-lab recordings, testdata/lab:
// transcripts the real harnesses wrote against a scripted model, each with
// its truth file.
func LabDir(tb testing.TB) string {
	tb.Helper()
	return findUp(tb, filepath.Join("testdata", "lab"))
}

// findUp finds rel under the repository root: the nearest parent of the
// working directory that holds go.mod. It never looks above the root, so a
// test cannot pick up files from outside the repository.
func findUp(tb testing.TB, rel string) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatalf("getwd: %v", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			cand := filepath.Join(dir, rel)
			if st, err := os.Stat(cand); err != nil || !st.IsDir() {
				tb.Fatalf("%s: not a directory in the repository", cand)
			}
			return cand
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatalf("no go.mod above the working directory; run the tests inside the repository")
		}
		dir = parent
	}
}

// Recorder collects the records a parser emits, by type, in order.
type Recorder struct {
	Calls       []*transcript.Call
	Answers     []*transcript.Answer
	NotAnswers  []*transcript.NotAnswer
	Turns       []*transcript.TurnStart
	Unpaired    []*transcript.Unpaired
	Compactions []*transcript.Compaction
	Skips       []*transcript.Skip
}

// Emit is a transcript.Emit.
func (r *Recorder) Emit(rec transcript.Record) {
	switch v := rec.(type) {
	case *transcript.Call:
		r.Calls = append(r.Calls, v)
	case *transcript.Answer:
		r.Answers = append(r.Answers, v)
	case *transcript.NotAnswer:
		r.NotAnswers = append(r.NotAnswers, v)
	case *transcript.TurnStart:
		r.Turns = append(r.Turns, v)
	case *transcript.Unpaired:
		r.Unpaired = append(r.Unpaired, v)
	case *transcript.Compaction:
		r.Compactions = append(r.Compactions, v)
	case *transcript.Skip:
		r.Skips = append(r.Skips, v)
	}
}

// CallAtLine returns the call completed on the given result line, or nil.
func (r *Recorder) CallAtLine(line int64) *transcript.Call {
	for _, c := range r.Calls {
		if c.Call.SourceLine == line {
			return c
		}
	}
	return nil
}

// SkipReasons counts skips by reason.
func (r *Recorder) SkipReasons() map[string]int {
	m := map[string]int{}
	for _, s := range r.Skips {
		m[s.Reason]++
	}
	return m
}

// NewFunc builds a parser; each format package's New fits after wrapping.
type NewFunc func(transcript.Options) transcript.Parser

// ParseFile feeds the file at path through a new parser, line by line, then
// flushes it, and returns what it emitted and its session metadata.
func ParseFile(tb testing.TB, path string, newParser NewFunc, opts transcript.Options) (*Recorder, schema.Session) {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatalf("open fixture: %v", err)
	}
	defer f.Close()
	if opts.SourceFile == "" {
		opts.SourceFile = path
	}
	rec := &Recorder{}
	p := newParser(opts)
	lr := transcript.NewLineReader(f, 0)
	for {
		l, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			tb.Fatalf("read %s: %v", path, err)
		}
		if l.TooLong {
			rec.Emit(&transcript.Skip{Line: l.No, Reason: transcript.SkipTooLong})
			continue
		}
		p.Feed(l.No, l.Bytes, rec.Emit)
	}
	p.Flush(rec.Emit)
	return rec, p.Session()
}

// ReadDir returns a ReadSaved that serves saved outputs from dir by base
// name, whatever directory the notice names (the transcripts were recorded on
// another machine).
func ReadDir(dir string) func(string) ([]byte, error) {
	return func(ref string) ([]byte, error) {
		return os.ReadFile(filepath.Join(dir, filepath.Base(filepath.FromSlash(ref))))
	}
}

// CheckUnmeasured fails tb unless c has what a result whose content carried
// more than text (an image, a tool reference) must have: every context size
// and every original size unknown, no original source, and kind want.
func CheckUnmeasured(tb testing.TB, c schema.ToolCall, want schema.TruncationKind) {
	tb.Helper()
	if c.Context != (schema.Sizes{}) {
		tb.Errorf("%s: context %+v, want every size unknown", c.CallID, c.Context)
	}
	if c.Original.Sizes != (schema.Sizes{}) || c.Original.Source != schema.SourceUnknown || c.Original.Precision != "" {
		tb.Errorf("%s: original %+v, want unknown", c.CallID, c.Original)
	}
	if c.Kind != want || c.Truncated {
		tb.Errorf("%s: kind %s, truncated %v; want %s, not truncated", c.CallID, c.Kind, c.Truncated, want)
	}
}

// Session216 is the id of the real Claude Code 2.1.6 session in the
// fixtures (claude-code/session-2.1.6-637ef6e7), and its main thread's
// file name without .jsonl.
const Session216 = "637ef6e7-e740-4503-8ff8-5780d7c0918f"

// CutAnswer is the message of Session216 whose text block is line 20 of the
// main thread and whose tool_use block is line 21: cut after line 20, the
// file ends with text that reads as an answer, which line 21 shows was not.
const CutAnswer = "msg_019SiiKuPg4TsXVmQ7fDS7Ln"

// Session216MainThread returns the main thread of Session216, whole, and
// its lines (each with its newline). It fails the test when lines 20 and 21
// are not CutAnswer's text and tool_use, which the tests of taking an
// answer back rely on.
func Session216MainThread(tb testing.TB) (whole []byte, lines [][]byte) {
	tb.Helper()
	whole, err := os.ReadFile(filepath.Join(FixturesDir(tb), "claude-code", "session-2.1.6-637ef6e7", Session216+".jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	lines = bytes.SplitAfter(whole, []byte("\n"))
	if len(lines) < 21 || !bytes.Contains(lines[19], []byte(CutAnswer)) || !bytes.Contains(lines[20], []byte(`"type":"tool_use"`)) {
		tb.Fatalf("the fixture's lines 20 and 21 are not %s's text and tool_use", CutAnswer)
	}
	return whole, lines
}
