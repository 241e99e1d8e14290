package codex

import (
	"bytes"
	"testing"

	"github.com/ctxaudit/ctxaudit/collector/transcript"
	"github.com/ctxaudit/ctxaudit/collector/transcript/transcripttest"
)

// FuzzCodexLine feeds arbitrary input, split into lines, to one parser:
// malformed and truncated lines must never panic. Seeds:
// testdata/fuzz/FuzzCodexLine (real rollout lines, whole and cut off).
func FuzzCodexLine(f *testing.F) {
	f.Add([]byte(`{"type":"event_msg","payload":{"type":"user_message","message":"q"}}
{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":\"cat f\"}","call_id":"c"}}
{"type":"event_msg","payload":{"type":"exec_command_end","call_id":"c","aggregated_output":"x"}}
{"type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":"Exit code: 0\nWall time: 0 seconds\nTotal output lines: 300\nOutput:\na\n[... omitted 44 of 300 lines ...]\n\nb"}}
{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"not found"}]}}`))
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
