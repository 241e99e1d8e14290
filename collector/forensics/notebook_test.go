package forensics

import (
	"testing"

	"github.com/ctxaudit/ctxaudit/schema"
)

// TestNotebookOutputs: Claude Code's Read of a notebook puts a notice in
// place of a cell's outputs that are too large (the text is the harness
// lab's read-notebook-large-output); the cells around it are kept.
func TestNotebookOutputs(t *testing.T) {
	const notice = "Outputs are too large to include. Use Bash with: cat <notebook_path> | jq '.cells[0].outputs'"
	const hint = "Use Bash with: cat <notebook_path> | jq '.cells[0].outputs'"
	cell0 := "<cell id=\"cell-0\">print(report())</cell id=\"cell-0\">\n\n"
	cell1 := "\n<cell id=\"cell-1\">x = 1</cell id=\"cell-1\">\n"
	tests := []struct {
		name     string
		tool     string
		text     string
		kind     schema.TruncationKind
		strategy schema.Strategy
	}{
		{"the last cell's outputs: kept the start", "Read", cell0 + notice, schema.KindExplicit, schema.StrategyHead},
		{"a cell in the middle: kept both ends", "Read", cell0 + notice + cell1, schema.KindExplicit, schema.StrategyHeadTail},
		{"two cells, the last one's outputs too", "Read", cell0 + notice + cell1 + "\nOutputs are too large to include. Use Bash with: cat <notebook_path> | jq '.cells[1].outputs'\n",
			schema.KindExplicit, schema.StrategyHead},
		{"no notice", "Read", cell0 + "hello\n", schema.KindNone, schema.StrategyNone},
		{"the words, not the notice", "Read", cell0 + "Outputs are too large to include. Sorry.\n", schema.KindNone, schema.StrategyNone},
		{"another tool quoting it", "Bash", cell0 + notice, schema.KindNone, schema.StrategyNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := Detect(Input{Harness: schema.HarnessClaudeCode, Tool: tt.tool, Context: tt.text})
			if f.Kind != tt.kind || f.Strategy != tt.strategy {
				t.Fatalf("kind %s strategy %s, want %s %s (detector %s)", f.Kind, f.Strategy, tt.kind, tt.strategy, f.Detector)
			}
			if tt.kind == schema.KindNone {
				return
			}
			if !f.Truncated || f.Reason != "too_large" || f.Marker != notice || f.NextHint != hint ||
				f.Disclosure != (schema.Disclosure{Reason: true, Next: true}) || f.Detector != "claude_code.read_notebook_outputs" {
				t.Errorf("got %+v", f)
			}
			if f.Original.Sizes != (schema.Sizes{}) || !f.Context.Bytes.Known {
				t.Errorf("original %+v context %+v, want the original unknown and the context measured", f.Original.Sizes, f.Context)
			}
		})
	}
}
