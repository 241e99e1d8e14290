package forensics

import (
	"errors"
	"reflect"
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
	f.Add(uint8(0x80), "Bash", "Exit code 2\n"+"h\n\n... [20011 characters truncated] ...\n\nt", []byte(`{"command":"x"}`), []byte(`"Error: Exit code 2"`))
	f.Add(uint8(0), "WebFetch", "a\n\n[WebFetch note: this page's text is 195757 characters long and the answer above covers only characters 0 to 100000; the final 95757 were not read — to read on, call WebFetch again with the same url and offset: 100000.]", []byte(`{"url":"u","offset":5}`), []byte(`{"bytes":214995}`))
	f.Add(uint8(0), "WebFetch", "Fetched u (HTTP 200 OK, text/html, 9 characters, truncated to the first 3, then a model-extracted summary of the rest; the final 2 characters were not read — to read on, call WebFetch again with the same url and offset: 7).\n<x>\nabc\n</x>", []byte(`{"url":"u"}`), []byte(`{"ctxaudit.output.original.precision":"lower_bound","ctxaudit.output.original.bytes":3,"ctxaudit.output.shown_tail.end":2}`))
	f.Add(uint8(0x10), "Read", "", []byte(`{"file_path":"/w/a.png"}`), []byte(`{"type":"image","file":{"originalSize":172,"dimensions":{"originalWidth":64,"originalHeight":48,"displayWidth":32,"displayHeight":24}}}`))
	f.Add(uint8(0x12), "read", "Read image file [image/png]\n[Current model does not support images. The image will be omitted from this request.]", []byte(`{"path":"/w/a.png"}`), []byte(nil))
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
		// Bits 3–4: a content of text only, with tool references, with media.
		in.NonText = min(NonText(h>>3&3), NonTextMedia)
		got := detect(&in) // without Detect's recover, so panics surface
		// Detection states are reused: one that ran on other input (a
		// marker, so its anchor hits are filled) must give the same verdict.
		other := Input{Harness: schema.HarnessClaudeCode, Tool: "Bash", Context: "h\n\n... [20011 characters truncated] ...\n\nt"}
		detect(&other)
		if again := detect(&in); !reflect.DeepEqual(again, got) {
			t.Errorf("verdict changed after another detection:\n first %+v\n again %+v", got, again)
		}
		if in.NonText != NonTextNone {
			if got.Context != (schema.Sizes{}) {
				t.Errorf("context sizes %+v for a content with non-text blocks", got.Context)
			}
		} else if text != "" && (got.Context.Bytes != schema.Known(uint64(len(text))) ||
			got.Context.Chars != schema.Known(uint64(utf8.RuneCountInString(text)))) {
			t.Errorf("context sizes %+v for %d bytes", got.Context, len(text))
		}
		if got.Truncated && got.Kind == schema.KindNone {
			t.Errorf("truncated with kind none (detector %s)", got.Detector)
		}
		if got.PartialByRequest && got.Truncated {
			t.Errorf("partial by request and truncated (detector %s)", got.Detector)
		}
		if !got.Kind.Valid() || !got.Strategy.Valid() {
			t.Errorf("invalid kind %q or strategy %q", got.Kind, got.Strategy)
		}
		o := got.Original
		if known := o.Bytes.Known || o.Chars.Known || o.Lines.Known || o.Tokens.Known; known != (o.Precision != schema.PrecisionNone) ||
			known && !o.Precision.Valid() {
			t.Errorf("original %+v: precision %q (detector %s)", o, o.Precision, got.Detector)
		}
		if got.ShownTailIsEnd && !got.ShownTail.End.Known {
			t.Errorf("shown_tail_is_end without a tail end (detector %s)", got.Detector)
		}
		// A kept tail is placed in the head's unit, and is only recorded with
		// a position: spans carry no unit of their own for it (otelconv), so
		// any other tail would read back changed.
		if tail := got.ShownTail; tail.Start.Known || tail.End.Known {
			if tail.Unit != got.Shown.Unit {
				t.Errorf("shown_tail unit %q differs from shown unit %q (detector %s)", tail.Unit, got.Shown.Unit, got.Detector)
			}
		} else if tail != (schema.Range{}) {
			t.Errorf("shown_tail %+v without a position (detector %s)", tail, got.Detector)
		}
	})
}
