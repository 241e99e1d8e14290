package forensics

import (
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/ctxaudit/ctxaudit/schema"
)

// allHarnesses adds an unrecognised name to schema.Harnesses, so the fuzzer
// also reaches the any-harness rule list.
var allHarnesses = append(append([]schema.Harness{}, schema.Harnesses...), "unknown")

// FuzzDetect feeds arbitrary results through every harness's rules. The seed
// corpus in testdata/fuzz/FuzzDetect holds real notices. meta is used as
// toolUseResult, pi details, SDK metadata and (decoded) OTel attributes at
// once, so one input exercises every metadata reader.
func FuzzDetect(f *testing.F) {
	f.Add(uint8(0), "Grep", "<persisted-output>\nOutput too large (83.7KB). Full output saved to: /p/t.txt\n\nPreview (first 2KB):\na\n...\n</persisted-output>", []byte(`{"pattern":"x"}`), []byte(`{"mode":"content","content":"abc"}`))
	f.Add(uint8(1), "shell", "Exit code: 0\nWall time: 0 seconds\nTotal output lines: 9\nOutput:\na\n[... omitted 7 of 9 lines ...]\n\nb\n", []byte(nil), []byte(nil))
	f.Add(uint8(2), "read", "x\n\n[Showing lines 1-2 of 9 (50.0KB limit). Use offset=3 to continue]", []byte(`{"offset":1}`), []byte(`{"truncation":{"truncated":true,"totalLines":9,"totalBytes":99}}`))
	f.Add(uint8(7), "fetch", "Contents of u:\nw\n\n<error>Content truncated. Call the fetch tool with a start_index of 1 to get more content.</error>", []byte(`{"max_length":1}`), []byte(nil))
	f.Add(uint8(8), "q", `{"truncated":true,"shown":[0,1],"original_size_bytes":9}`, []byte(nil), []byte(`{"ctxaudit.output.truncated":true,"ctxaudit.output.shown.start":-1}`))
	f.Fuzz(func(t *testing.T, h uint8, tool, text string, args, meta []byte) {
		in := Input{
			Harness:       allHarnesses[int(h)%len(allHarnesses)],
			Tool:          tool,
			Arguments:     args,
			Context:       text,
			ToolUseResult: meta,
			Details:       meta,
			Metadata:      meta,
			Attributes:    decodeObject(meta),
			IsError:       h&0x80 != 0,
			ReadSaved: func(ref string) ([]byte, error) {
				if len(ref)%2 == 0 {
					return nil, errors.New("unreadable")
				}
				return []byte(ref + text), nil
			},
		}
		if h&0x40 != 0 {
			in.OriginalText = &tool
		}
		if h&0x20 != 0 {
			in.ContextUnavailable = true
		}
		got := detect(&in) // without Detect's recover, so panics surface
		if text != "" && (got.Context.Bytes != schema.Known(uint64(len(text))) ||
			got.Context.Chars != schema.Known(uint64(utf8.RuneCountInString(text)))) {
			t.Errorf("context sizes %+v for %d bytes", got.Context, len(text))
		}
		if got.Truncated && got.Kind == schema.KindNone {
			t.Errorf("truncated with kind none (detector %s)", got.Detector)
		}
		if got.PartialByRequest && got.Truncated {
			t.Errorf("partial by request and truncated (detector %s)", got.Detector)
		}
		if !validKind(got.Kind) || !validStrategy(got.Strategy) {
			t.Errorf("invalid kind %q or strategy %q", got.Kind, got.Strategy)
		}
	})
}
