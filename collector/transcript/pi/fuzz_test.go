package pi

import (
	"bytes"
	"testing"

	"github.com/ctxaudit/ctxaudit/collector/transcript"
	"github.com/ctxaudit/ctxaudit/collector/transcript/transcripttest"
)

// FuzzPiLine feeds arbitrary input, split into lines, to one parser:
// malformed and truncated lines must never panic. Seeds:
// testdata/fuzz/FuzzPiLine (real session lines, whole and cut off).
func FuzzPiLine(f *testing.F) {
	f.Add([]byte(`{"type":"session","id":"s","cwd":"/w"}
{"type":"message","message":{"role":"user","content":"q"}}
{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","id":"t","name":"read","arguments":{"path":"/a"}}]}}
{"type":"message","message":{"role":"toolResult","toolCallId":"t","toolName":"read","content":[{"type":"text","text":"a\n\n[Showing lines 1-2 of 9. Use offset=3 to continue.]"}],"details":{"truncation":{"truncated":true,"totalLines":9,"outputLines":2}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rec := &transcripttest.Recorder{}
		p := New(transcript.Options{MaxPending: 3})
		for i, line := range bytes.Split(data, []byte("\n")) {
			p.Feed(int64(i+1), line, rec.Emit)
		}
		p.Flush(rec.Emit)
		for _, c := range rec.Calls {
			if c.Call.CallID == "" || c.Call.SourceLine < 1 {
				t.Fatalf("call without id or line: %+v", c.Call)
			}
		}
		_ = p.Session()
	})
}
