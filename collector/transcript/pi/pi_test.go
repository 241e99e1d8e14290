package pi

import (
	"path/filepath"
	"testing"

	"github.com/ctxaudit/ctxaudit/collector/transcript"
	"github.com/ctxaudit/ctxaudit/collector/transcript/transcripttest"
	"github.com/ctxaudit/ctxaudit/schema"
)

func newParser(o transcript.Options) transcript.Parser { return New(o) }

// selected-lines.jsonl: header, an assistant toolCall whose result is not in
// the file, three toolResults whose calls are not in the file (pi results
// name their tool, so they are still calls), a bashExecution, a compaction,
// a thinking-level and a model change (fixture SOURCES.md).
func TestSelectedLines(t *testing.T) {
	path := filepath.Join(transcripttest.FixturesDir(t), "pi", "selected-lines.jsonl")
	rec, sess := transcripttest.ParseFile(t, path, newParser, transcript.Options{})

	if len(rec.Calls) != 3 || len(rec.Answers) != 0 || len(rec.Turns) != 0 || len(rec.Compactions) != 1 {
		t.Fatalf("calls/answers/turns/compactions = %d/%d/%d/%d, want 3/0/0/1",
			len(rec.Calls), len(rec.Answers), len(rec.Turns), len(rec.Compactions))
	}
	if len(rec.Skips) != 1 || rec.Skips[0].Line != 2 || rec.Skips[0].Reason != transcript.SkipUnpairedToolUse {
		t.Errorf("skips = %+v, want the unpaired bash toolCall of line 2", rec.Skips)
	}
	wantCalls := []struct {
		line  int64
		tool  string
		chars uint64
	}{{3, "bash", 5}, {4, "read", 51266}, {5, "read", 4055}}
	for i, w := range wantCalls {
		c := rec.Calls[i].Call
		if c.SourceLine != w.line || c.Tool != w.tool || c.Forensics.Context.Chars != schema.Known(w.chars) {
			t.Errorf("call %d = line %d %s %v chars, want line %d %s %d", i, c.SourceLine, c.Tool, c.Forensics.Context.Chars, w.line, w.tool, w.chars)
		}
	}

	// details.truncation of line 4: totalLines 2377, totalBytes 75229,
	// outputLines 1603, outputBytes 51190, truncatedBy bytes. pi's 2377
	// counts a final newline as a line and a head cut does not show whether
	// the file ends in one, so the original's line count is untold.
	f := rec.Calls[1].Call.Forensics
	if !f.Truncated || f.Kind != schema.KindExplicit || f.Original.Bytes != schema.Known(75229) ||
		f.Original.Lines.Known || f.Original.Source != schema.SourceHarnessMetadata {
		t.Errorf("line 4 forensics = truncated %v kind %s original %v bytes / %v lines from %s; want true explicit 75229 / unknown harness_metadata",
			f.Truncated, f.Kind, f.Original.Bytes, f.Original.Lines, f.Original.Source)
	}
	if f.Shown.Unit != schema.UnitLines || f.Shown.Start != schema.Known(1) || f.Shown.End != schema.Known(1603) || f.Total != schema.Known(2377) {
		t.Errorf("line 4 shown = %+v total %v, want lines 1-1603 of 2377", f.Shown, f.Total)
	}
	truncated := 0
	for _, c := range rec.Calls {
		if c.Call.Truncated {
			truncated++
		}
	}
	// Line 5's "[1549 more lines in file. Use offset=121 to continue]" is
	// pi's notice for a read limited by the caller: shown, not truncated.
	if truncated != 1 {
		t.Errorf("truncated = %d, want 1 (line 4)", truncated)
	}
	if f5 := rec.Calls[2].Call.Forensics; f5.Truncated || f5.Shown.End != schema.Known(120) || f5.Total != schema.Known(1669) {
		t.Errorf("line 5 = truncated %v shown %+v total %v, want false, lines 1-120 of 1669", f5.Truncated, f5.Shown, f5.Total)
	}

	c := rec.Compactions[0]
	if c.Line != 7 || c.Kind != transcript.CompactionFull {
		t.Errorf("compaction = %+v", c)
	}
	if sess.SessionID != "ffae836b-9420-4060-ac13-7745215f90ff" || sess.Cwd != "/Users/badlogic/workspaces/pi-mono" ||
		sess.Project != "pi-mono" || sess.Model != "claude-opus-4-5" || sess.Compactions != schema.Known(1) || sess.OutputTokens != schema.Known(68) {
		t.Errorf("session = %+v", sess)
	}
}

func TestParserBehaviour(t *testing.T) {
	header := `{"type":"session","version":3,"id":"s1","timestamp":"2025-12-09T00:00:00Z","cwd":"/w/proj"}`
	prompt := `{"type":"message","id":"e1","message":{"role":"user","content":[{"type":"text","text":"is there a setting?"}]}}`
	call := `{"type":"message","id":"e2","message":{"role":"assistant","model":"m","content":[{"type":"toolCall","id":"t1","name":"read","arguments":{"path":"/a.md","offset":10}}],"usage":{"input":5,"output":2,"cacheRead":100}}}`
	result := `{"type":"message","id":"e3","message":{"role":"toolResult","toolCallId":"t1","toolName":"read","content":[{"type":"text","text":"x"}],"isError":false}}`
	answer := `{"type":"message","id":"e4","message":{"role":"assistant","model":"m","content":[{"type":"text","text":"there is no such setting"}],"usage":{"input":1,"output":9}}}`
	rec := &transcripttest.Recorder{}
	p := New(transcript.Options{})
	for i, l := range []string{header, prompt, call, result, answer, `{"type":"message","message":`} {
		p.Feed(int64(i+1), []byte(l), rec.Emit)
	}
	p.Flush(rec.Emit)
	if len(rec.Calls) != 1 || len(rec.Answers) != 1 || len(rec.Turns) != 1 {
		t.Fatalf("calls/answers/turns = %d/%d/%d", len(rec.Calls), len(rec.Answers), len(rec.Turns))
	}
	c := rec.Calls[0].Call
	if c.Target != "/a.md" || c.MessageID != "e2" || c.Arguments != `{"path":"/a.md","offset":10}` || c.Project != "proj" {
		t.Errorf("call = %+v", c)
	}
	a := rec.Answers[0].Answer
	if a.MessageID != "e4" || len(a.InputCallIDs) != 1 || a.InputCallIDs[0] != "t1" {
		t.Errorf("answer = %+v", a)
	}
	if got := rec.SkipReasons(); got[transcript.SkipMalformed] != 1 || len(got) != 1 {
		t.Errorf("skips = %v", got)
	}
	if s := p.Session(); s.InputTokens != schema.Known(106) || s.OutputTokens != schema.Known(11) || s.Turns != schema.Known(1) {
		t.Errorf("session = %+v", s)
	}
}

// TestImageResult: pi's read of an image answers with a caption and the
// image (`content: [{type:"text"}, {type:"image", data, mimeType}]`); the
// caption is not what entered the context, so the context is unknown. With
// no note after the caption pi sent the image whole (it notes every resize
// and omission): complete. testdata/lab/pi@0.73.1/read-image records the
// omission a model without image input gets.
func TestImageResult(t *testing.T) {
	header := `{"type":"session","version":3,"id":"s1","timestamp":"2025-12-09T00:00:00Z","cwd":"/w/proj"}`
	call := `{"type":"message","id":"e2","message":{"role":"assistant","model":"m","content":[{"type":"toolCall","id":"t1","name":"read","arguments":{"path":"/w/shot.png"}}],"usage":{"input":5,"output":2}}}`
	result := `{"type":"message","id":"e3","message":{"role":"toolResult","toolCallId":"t1","toolName":"read","content":[{"type":"text","text":"Read image file [image/png]"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}],"isError":false}}`
	rec := &transcripttest.Recorder{}
	p := New(transcript.Options{})
	for i, l := range []string{header, call, result} {
		p.Feed(int64(i+1), []byte(l), rec.Emit)
	}
	p.Flush(rec.Emit)
	if len(rec.Calls) != 1 {
		t.Fatalf("%d calls, want 1", len(rec.Calls))
	}
	transcripttest.CheckUnmeasured(t, rec.Calls[0].Call, schema.KindNone)
}

// TestFailedReadWithOffset: pi's read past the end of a file fails with
// "Offset N is beyond end of file (T lines total)" and isError true. The
// parser passes isError on to forensics, which then records no part of the
// file as shown: no partial view by request, no total made up from the
// offset.
func TestFailedReadWithOffset(t *testing.T) {
	header := `{"type":"session","version":3,"id":"s1","timestamp":"2025-12-09T00:00:00Z","cwd":"/w/proj"}`
	call := `{"type":"message","id":"e2","message":{"role":"assistant","model":"m","content":[{"type":"toolCall","id":"t1","name":"read","arguments":{"path":"/w/f.txt","offset":500}}],"usage":{"input":5,"output":2}}}`
	result := `{"type":"message","id":"e3","message":{"role":"toolResult","toolCallId":"t1","toolName":"read","content":[{"type":"text","text":"Offset 500 is beyond end of file (42 lines total)"}],"isError":true}}`
	rec := &transcripttest.Recorder{}
	p := New(transcript.Options{})
	for i, l := range []string{header, call, result} {
		p.Feed(int64(i+1), []byte(l), rec.Emit)
	}
	p.Flush(rec.Emit)
	if len(rec.Calls) != 1 {
		t.Fatalf("%d calls, want 1", len(rec.Calls))
	}
	c := rec.Calls[0].Call
	if !c.IsError {
		t.Errorf("is_error false, want true")
	}
	f := c.Forensics
	if f.PartialByRequest || f.Shown.Start.Known || f.Shown.End.Known || f.Total.Known {
		t.Errorf("partial_by_request %v, shown %v–%v %s of %v (detector %s); want no part of the file shown",
			f.PartialByRequest, f.Shown.Start, f.Shown.End, f.Shown.Unit, f.Total, f.Detector)
	}
}
