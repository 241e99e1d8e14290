package claudecode

import (
	"bytes"
	"testing"

	"github.com/ctxaudit/ctxaudit/collector/transcript"
	"github.com/ctxaudit/ctxaudit/collector/transcript/transcripttest"
)

// FuzzClaudeCodeLine feeds arbitrary input, split into lines, to one parser:
// malformed and truncated lines must never panic, and every record must be
// well formed. Seeds: testdata/fuzz/FuzzClaudeCodeLine (real lines, whole
// and cut off) plus the pairs below.
func FuzzClaudeCodeLine(f *testing.F) {
	f.Add([]byte(`{"type":"user","message":{"role":"user","content":"q"}}
{"type":"assistant","sessionId":"s","message":{"id":"m","content":[{"type":"tool_use","id":"t","name":"Read","input":{"file_path":"/a","offset":2}}],"usage":{"output_tokens":1}}}
{"type":"user","toolUseResult":{"type":"text","file":{"numLines":1,"startLine":2,"totalLines":9}},"message":{"content":[{"type":"tool_result","tool_use_id":"t","content":"<persisted-output>\nOutput too large (1KB). Full output saved to: /x/tool-results/t.txt\n\nPreview (first 2KB):\nab\n...\n</persisted-output>"}]}}
{"type":"assistant","message":{"id":"m2","content":[{"type":"text","text":"there is no such setting"}]}}`))
	f.Add([]byte(`{"type":"system","subtype":"microcompact_boundary","microcompactMetadata":{"compactedToolIds":["a",1,null],"preTokens":-1}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rec := &transcripttest.Recorder{}
		p := New(transcript.Options{
			MaxPending: 3,
			ReadSaved:  func(string) ([]byte, error) { return []byte("saved\n"), nil },
		})
		for i, line := range bytes.Split(data, []byte("\n")) {
			p.Feed(int64(i+1), line, rec.Emit)
		}
		p.Flush(rec.Emit)
		for _, c := range rec.Calls {
			if c.Call.CallID == "" || c.Call.SourceLine < 1 {
				t.Fatalf("call without id or line: %+v", c.Call)
			}
		}
		for _, s := range rec.Skips {
			if s.Reason == "" || s.Line < 1 {
				t.Fatalf("skip without reason or line: %+v", s)
			}
		}
		_ = p.Session()
	})
}
