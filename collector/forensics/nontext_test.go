package forensics

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ctxaudit/ctxaudit/schema"
)

// TestNonTextContent: a result that carried an image, a document or a tool
// reference has an unknown context — its text is not all the model saw —
// and an image nothing else judges is not called complete.
func TestNonTextContent(t *testing.T) {
	unknownSizes := schema.Sizes{}
	mcpNotice := strings.Repeat("z", 100000) +
		"\n\n[OUTPUT TRUNCATED - exceeded 25000 token limit]\n\nThe tool output was truncated. If this MCP server provides pagination or filtering tools, use them to retrieve specific portions of the data."
	tests := []struct {
		name     string
		in       Input
		kind     schema.TruncationKind
		detector string
		source   schema.OriginalSource
	}{
		{
			name:     "image only (Read of a screenshot)",
			in:       Input{Harness: schema.HarnessClaudeCode, Tool: "Read", Arguments: []byte(`{"file_path":"/w/shot.png"}`), NonText: NonTextMedia},
			kind:     schema.KindUnknown,
			detector: "generic.media_content",
			source:   schema.SourceUnknown,
		},
		{
			name:     "an image beside text no rule knows",
			in:       Input{Harness: schema.HarnessPi, Tool: "screenshot", Context: "Captured the screen", NonText: NonTextMedia},
			kind:     schema.KindUnknown,
			detector: "generic.media_content",
			source:   schema.SourceUnknown,
		},
		{
			name:     "tool references only (ToolSearch)",
			in:       Input{Harness: schema.HarnessClaudeCode, Tool: "ToolSearch", NonText: NonTextReference},
			kind:     schema.KindNone,
			detector: "generic.complete",
			source:   schema.SourceUnknown,
		},
		{
			// Claude Code's MCP fallback is taken when the content has images
			// (docs: C4): the notice in the text still decides.
			name:   "a notice in the text beside an image",
			in:     Input{Harness: schema.HarnessClaudeCode, Tool: "mcp__x__y", Context: mcpNotice, NonText: NonTextMedia},
			kind:   schema.KindExplicit,
			source: schema.SourceUnknown,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := Detect(tt.in)
			if f.Kind != tt.kind {
				t.Errorf("kind %s, want %s (detector %s)", f.Kind, tt.kind, f.Detector)
			}
			if tt.detector != "" && f.Detector != tt.detector {
				t.Errorf("detector %s, want %s", f.Detector, tt.detector)
			}
			if f.Context != unknownSizes {
				t.Errorf("context %+v, want every size unknown", f.Context)
			}
			if f.Original.Sizes != unknownSizes || f.Original.Source != tt.source || f.Original.Precision != "" {
				t.Errorf("original %+v, want unknown from %s", f.Original, tt.source)
			}
			if f.Truncated != (tt.kind == schema.KindExplicit) {
				t.Errorf("truncated %v", f.Truncated)
			}
		})
	}

	// The same text without a non-text block is measured and, without a
	// notice, complete: only what the content carried changed the verdict.
	f := Detect(Input{Harness: schema.HarnessPi, Tool: "read", Context: "Read image file [image/png]"})
	if f.Kind != schema.KindNone || f.Context.Bytes != schema.Known(27) || f.Original.Source != schema.SourceEstimate {
		t.Errorf("text only: kind %s, context %+v, original %+v; want none, 27 bytes, estimate", f.Kind, f.Context, f.Original)
	}
}

// TestImageReads: how Claude Code and pi say what they did to an image a
// read returned — sent whole, resized, or left out. The Claude Code shapes
// are its Read toolUseResult for an image (testdata/lab/claude-code@2.1.328/
// read-image and read-image-large record the whole and the resized case);
// the pi texts are the notes of its read tool (core/tools/read.js, 0.73.1).
func TestImageReads(t *testing.T) {
	// The base64 sent encodes 8 bytes; size is the file's.
	ccImage := func(size, ow, oh, dw, dh int) []byte {
		return []byte(fmt.Sprintf(`{"type":"image","file":{"base64":"iVBORw0KGgo=","type":"image/png","originalSize":%d,`+
			`"dimensions":{"originalWidth":%d,"originalHeight":%d,"displayWidth":%d,"displayHeight":%d}}}`, size, ow, oh, dw, dh))
	}
	const caption = "Read image file [image/png]"
	tests := []struct {
		name      string
		in        Input
		kind      schema.TruncationKind
		strategy  schema.Strategy
		reason    string
		detector  string
		origBytes schema.Count
		marker    string
		told      schema.Disclosure
	}{
		{name: "claude code, displayed at its own size: whole",
			in:   Input{Harness: schema.HarnessClaudeCode, Tool: "Read", NonText: NonTextMedia, ToolUseResult: ccImage(8, 64, 48, 64, 48)},
			kind: schema.KindNone, strategy: schema.StrategyNone, detector: "claude_code.read_image", origBytes: schema.Known(8)},
		{name: "claude code, at its own size but other bytes: re-encoded, unknown",
			in:   Input{Harness: schema.HarnessClaudeCode, Tool: "Read", NonText: NonTextMedia, ToolUseResult: ccImage(2456789, 64, 48, 64, 48)},
			kind: schema.KindUnknown, strategy: schema.StrategyNone, detector: "claude_code.read_image_reencoded", origBytes: schema.Known(2456789)},
		{name: "claude code, displayed smaller: resized without a word",
			in:   Input{Harness: schema.HarnessClaudeCode, Tool: "Read", NonText: NonTextMedia, ToolUseResult: ccImage(2456789, 4000, 3000, 2000, 1500)},
			kind: schema.KindSilent, strategy: schema.StrategyResized, reason: "too_large", detector: "claude_code.read_image_resized", origBytes: schema.Known(2456789)},
		{name: "claude code, one side smaller: resized",
			in:   Input{Harness: schema.HarnessClaudeCode, Tool: "Read", NonText: NonTextMedia, ToolUseResult: ccImage(2456789, 1000, 3000, 1000, 2000)},
			kind: schema.KindSilent, strategy: schema.StrategyResized, reason: "too_large", detector: "claude_code.read_image_resized", origBytes: schema.Known(2456789)},
		{name: "claude code, no dimensions: nothing says",
			in:   Input{Harness: schema.HarnessClaudeCode, Tool: "Read", NonText: NonTextMedia, ToolUseResult: []byte(`{"type":"image","file":{"originalSize":10}}`)},
			kind: schema.KindUnknown, strategy: schema.StrategyNone, detector: "generic.media_content"},
		{name: "pi, no note: sent whole",
			in:   Input{Harness: schema.HarnessPi, Tool: "read", Context: caption, NonText: NonTextMedia},
			kind: schema.KindNone, strategy: schema.StrategyNone, detector: "pi.read_image"},
		{name: "pi, resized with a note: told what, not why",
			in: Input{Harness: schema.HarnessPi, Tool: "read", NonText: NonTextMedia,
				Context: caption + "\n[Image: original 4000x3000, displayed at 2000x1500. Multiply coordinates by 2.00 to map to original image.]"},
			kind: schema.KindExplicit, strategy: schema.StrategyResized, reason: "too_large", detector: "pi.read_image_resized",
			marker: "[Image: original 4000x3000, displayed at 2000x1500. Multiply coordinates by 2.00 to map to original image.]",
			told:   schema.Disclosure{Range: true}},
		{name: "pi, a model without image input: left out, told",
			in: Input{Harness: schema.HarnessPi, Tool: "read", NonText: NonTextMedia,
				Context: caption + "\n[Current model does not support images. The image will be omitted from this request.]"},
			kind: schema.KindExplicit, strategy: schema.StrategyRefused, reason: "unsupported_media", detector: "pi.read_image",
			marker: "[Current model does not support images. The image will be omitted from this request.]", told: schema.Disclosure{Range: true, Reason: true}},
		{name: "pi, too large to send: left out, told (text only)",
			in: Input{Harness: schema.HarnessPi, Tool: "read",
				Context: caption + "\n[Image omitted: could not be resized below the inline image size limit.]"},
			kind: schema.KindExplicit, strategy: schema.StrategyRefused, reason: "too_large", detector: "pi.read_image",
			marker: "[Image omitted: could not be resized below the inline image size limit.]", told: schema.Disclosure{Range: true, Reason: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := Detect(tt.in)
			if f.Kind != tt.kind || f.Strategy != tt.strategy || f.Reason != tt.reason || f.Detector != tt.detector {
				t.Errorf("kind %s strategy %s reason %q detector %s, want %s %s %q %s",
					f.Kind, f.Strategy, f.Reason, f.Detector, tt.kind, tt.strategy, tt.reason, tt.detector)
			}
			if f.Truncated != (tt.kind == schema.KindExplicit || tt.kind == schema.KindSilent) {
				t.Errorf("truncated %v", f.Truncated)
			}
			if f.Marker != tt.marker {
				t.Errorf("marker %q, want %q", f.Marker, tt.marker)
			}
			if f.Original.Bytes != tt.origBytes || f.Original.Chars.Known || f.Original.Lines.Known || f.Original.Tokens.Known {
				t.Errorf("original %+v, want bytes %v and nothing else (an image's bytes give no token estimate)", f.Original.Sizes, tt.origBytes)
			}
			if f.Disclosure != tt.told {
				t.Errorf("disclosure %+v, want %+v", f.Disclosure, tt.told)
			}
		})
	}
}

// TestPDFReads: Claude Code's Read of a PDF (testdata/lab/claude-code@2.1.328/
// read-pdf records the shape) is complete only when the base64 it sent
// encodes the whole file.
func TestPDFReads(t *testing.T) {
	ccPDF := func(base64 string, size int) []byte {
		return []byte(fmt.Sprintf(`{"type":"pdf","file":{"filePath":"/w/doc.pdf","base64":%s,"originalSize":%d}}`, base64, size))
	}
	const text = "PDF file read: /w/doc.pdf (1.1KB)"
	tests := []struct {
		name      string
		result    []byte
		kind      schema.TruncationKind
		detector  string
		origBytes schema.Count
	}{
		{"the whole file", ccPDF(`"JVBERi0xLjQK"`, 9), schema.KindNone, "claude_code.read_pdf", schema.Known(9)},
		{"padded", ccPDF(`"JVBERi0xLg=="`, 7), schema.KindNone, "claude_code.read_pdf", schema.Known(7)},
		{"fewer bytes sent than the file has", ccPDF(`"JVBERi0xLjQK"`, 1116), schema.KindUnknown, "generic.media_content", schema.Unknown},
		{"escaped base64: not measured", ccPDF(`"JVBERi0x\/jQK"`, 9), schema.KindUnknown, "generic.media_content", schema.Unknown},
		{"no size", []byte(`{"type":"pdf","file":{"base64":"JVBERi0xLjQK"}}`), schema.KindUnknown, "generic.media_content", schema.Unknown},
		{"an image's result is not a PDF", []byte(`{"type":"image","file":{"base64":"JVBERi0xLjQK","originalSize":9}}`), schema.KindUnknown, "generic.media_content", schema.Unknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := Detect(Input{Harness: schema.HarnessClaudeCode, Tool: "Read", Context: text, NonText: NonTextMedia, ToolUseResult: tt.result})
			if f.Kind != tt.kind || f.Detector != tt.detector || f.Truncated {
				t.Errorf("kind %s detector %s truncated %v, want %s %s, not truncated", f.Kind, f.Detector, f.Truncated, tt.kind, tt.detector)
			}
			if f.Original.Bytes != tt.origBytes || f.Original.Chars.Known || f.Original.Lines.Known || f.Original.Tokens.Known {
				t.Errorf("original %+v, want bytes %v and nothing else", f.Original.Sizes, tt.origBytes)
			}
			if f.Context != (schema.Sizes{}) {
				t.Errorf("context %+v, want unknown (a document block)", f.Context)
			}
		})
	}
}

func TestBase64Size(t *testing.T) {
	for raw, want := range map[string]schema.Count{
		`""`: schema.Known(0), `"QQ=="`: schema.Known(1), `"QUI="`: schema.Known(2), `"QUJD"`: schema.Known(3),
		`"QUJDRA=="`: schema.Known(4), `"QUJ"`: schema.Unknown, `"QU\/D"`: schema.Unknown, `QUJD`: schema.Unknown, `"`: schema.Unknown, ``: schema.Unknown,
	} {
		if got := base64Size([]byte(raw)); got != want {
			t.Errorf("base64Size(%s) = %v, want %v", raw, got, want)
		}
	}
}
