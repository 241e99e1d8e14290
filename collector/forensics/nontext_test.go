package forensics

import (
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
			name:     "image with a caption",
			in:       Input{Harness: schema.HarnessPi, Tool: "read", Context: "Read image file [image/png]", NonText: NonTextMedia},
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
