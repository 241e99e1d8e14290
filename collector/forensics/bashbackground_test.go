package forensics

import (
	"strings"
	"testing"

	"github.com/ctxaudit/ctxaudit/schema"
)

// TestBashBackgrounded: a Claude Code Bash command that outlived its timeout
// is moved to the background; the model gets what it wrote so far and a
// notice (the text and toolUseResult are the harness lab's bash-timeout).
// What it wrote so far is where its output starts: a lower bound.
func TestBashBackgrounded(t *testing.T) {
	const path = "/tmp/claude-0/-w/00000000-0000-4000-8000-000000000001/tasks/b00000001.output"
	const notice = "Command did not complete within its 1s timeout and was moved to the background (ID: b00000001). Output is being written to: " + path +
		". You will be notified when it completes. If it is still running after 10m in the background, it will be stopped and you will be notified. It is running now: do not start a second copy while it runs. If it is no longer needed, stop it with TaskStop. To check interim output, use Read on that file path."
	result := []byte(`{"stdout":"before-the-wait","stderr":"","interrupted":false,"isImage":false,"noOutputExpected":false,"backgroundTaskId":"b00000001","timedOutAfterMs":1000}`)

	f := Detect(Input{Harness: schema.HarnessClaudeCode, Tool: "Bash", Context: "before-the-wait\n" + notice, ToolUseResult: result})
	if !f.Truncated || f.Kind != schema.KindExplicit || f.Strategy != schema.StrategySpillToFile || f.Reason != "timeout" || f.Detector != "claude_code.bash_backgrounded" {
		t.Fatalf("truncated %v kind %s strategy %s reason %q detector %s, want an explicit spill_to_file for a timeout", f.Truncated, f.Kind, f.Strategy, f.Reason, f.Detector)
	}
	if f.Marker != notice || f.SavedRef != path || f.NextHint != "To check interim output, use Read on that file path." {
		t.Errorf("marker %q\nsaved %q\nnext %q", f.Marker, f.SavedRef, f.NextHint)
	}
	if f.Disclosure != (schema.Disclosure{Reason: true, Next: true}) {
		t.Errorf("disclosure %+v, want why and how to continue", f.Disclosure)
	}
	if f.Original.Bytes != schema.Known(15) || f.Original.Precision != schema.PrecisionLowerBound || f.Original.Source != schema.SourceHarnessMetadata {
		t.Errorf("original %+v, want at least stdout's 15 bytes from harness_metadata", f.Original)
	}
	if f.Shown != (schema.Range{Start: schema.Known(0), End: schema.Known(15), Unit: schema.UnitChars}) || f.Total.Known {
		t.Errorf("shown %+v total %v, want chars 0-15 of an unknown total", f.Shown, f.Total)
	}

	// A long output before the notice: found at the end, shown counts all of it.
	long := strings.Repeat("x", 100000) + "\n"
	lf := Detect(Input{Harness: schema.HarnessClaudeCode, Tool: "Bash", Context: long + notice})
	if lf.Strategy != schema.StrategySpillToFile || lf.Shown.End != schema.Known(100000) || lf.Marker != notice {
		t.Errorf("after 100,000 chars: strategy %s shown %+v marker %.40q", lf.Strategy, lf.Shown, lf.Marker)
	}

	// The same stdout without the timeout is the whole output.
	done := Detect(Input{Harness: schema.HarnessClaudeCode, Tool: "Bash", Context: "before-the-wait",
		ToolUseResult: []byte(`{"stdout":"before-the-wait","stderr":"","interrupted":false}`)})
	if done.Truncated || done.Original.Precision != schema.PrecisionExact || done.Original.Bytes != schema.Known(15) {
		t.Errorf("finished command: truncated %v original %+v, want complete with exactly 15 bytes", done.Truncated, done.Original)
	}
	// A notice quoted by another tool is not this cut.
	if q := Detect(Input{Harness: schema.HarnessClaudeCode, Tool: "Read", Context: notice}); q.Detector == "claude_code.bash_backgrounded" {
		t.Errorf("a Read quoting the notice was taken for a backgrounded command")
	}
}

// TestBashInBackground: a command run in the background as the call asked
// (the harness lab's bash-background) returns a notice, not its output:
// nothing was cut, and the output's size is unknown.
func TestBashInBackground(t *testing.T) {
	const path = "/tmp/claude-0/-w/s/tasks/b00000001.output"
	text := "Command running in background with ID: b00000001. Output is being written to: " + path +
		". You will be notified when it completes. To check interim output, use Read on that file path."
	result := []byte(`{"stdout":"","stderr":"","interrupted":false,"isImage":false,"noOutputExpected":false,"backgroundTaskId":"b00000001"}`)
	f := Detect(Input{Harness: schema.HarnessClaudeCode, Tool: "Bash", Context: text, ToolUseResult: result})
	if f.Truncated || f.Kind != schema.KindNone || !f.PartialByRequest || f.Detector != "claude_code.bash_in_background" {
		t.Fatalf("truncated %v kind %s partial %v detector %s, want partial by request", f.Truncated, f.Kind, f.PartialByRequest, f.Detector)
	}
	if f.SavedRef != path || f.NextHint != "To check interim output, use Read on that file path." {
		t.Errorf("saved %q next %q", f.SavedRef, f.NextHint)
	}
	if f.Original.Sizes != (schema.Sizes{}) || f.Original.Source != schema.SourceUnknown {
		t.Errorf("original %+v, want unknown (the notice is not the output)", f.Original)
	}
}
