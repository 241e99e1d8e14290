package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ctxaudit/ctxaudit/schema"
)

func known(n uint64) schema.Count { return schema.Count{N: n, Known: true} }

// Each way of cutting is drawn as what entered the context, and never
// more exactly than the record knows.
func TestDrawBar(t *testing.T) {
	chars := func(orig, ctx uint64) schema.Forensics {
		return schema.Forensics{Original: schema.Original{Sizes: schema.Sizes{Chars: known(orig)}}, Context: schema.Sizes{Chars: known(ctx)}}
	}
	cut := func(f schema.Forensics, kind schema.TruncationKind, s schema.Strategy) schema.ToolCall {
		f.Truncated, f.Kind, f.Strategy = true, kind, s
		return schema.ToolCall{Forensics: f}
	}
	preview := cut(chars(101862, 2223), schema.KindExplicit, schema.StrategySpillToFile)
	preview.Shown = schema.Range{Start: known(0), End: known(1982), Unit: schema.UnitChars}
	preview.Total = known(101862)
	lines := cut(schema.Forensics{}, schema.KindSilent, schema.StrategyHead)
	lines.Shown = schema.Range{Start: known(1), End: known(2000), Unit: schema.UnitLines}
	lines.Total = known(2600)
	complete := schema.ToolCall{Forensics: chars(10, 10)}
	complete.Kind = schema.KindNone
	for _, tc := range []struct {
		name   string
		call   schema.ToolCall
		parts  [][2]float64 // left, width in percent
		approx bool
		note   string
		known  bool
	}{
		{"complete", complete, [][2]float64{{0, 100}}, false, "", true},
		{"preview from the shown range", preview, [][2]float64{{0, 1.95}}, false, "", true},
		{"lines are numbered from 1", lines, [][2]float64{{0, 76.92}}, false, "", true},
		{"head from the sizes", cut(chars(1000, 250), schema.KindExplicit, schema.StrategyHead), [][2]float64{{0, 25}}, false, "", true},
		{"tail from the sizes", cut(chars(1000, 250), schema.KindSilent, schema.StrategyTail), [][2]float64{{75, 25}}, false, "", true},
		{"head and tail, split unknown", cut(chars(1000, 200), schema.KindExplicit, schema.StrategyHeadTail), [][2]float64{{0, 10}, {90, 10}}, true, "split between them is not", true},
		{"summary: nothing verbatim", cut(chars(1000, 50), schema.KindSilent, schema.StrategySummary), nil, false, "summary", true},
		{"original unknown", cut(schema.Forensics{Context: schema.Sizes{Chars: known(50)}}, schema.KindSuspected, schema.StrategyHead), nil, false, "not known", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := drawBar(&tc.call)
			if b.Known != tc.known {
				t.Errorf("known = %v, want %v", b.Known, tc.known)
			}
			if len(b.Parts) != len(tc.parts) {
				t.Fatalf("parts = %+v, want %v", b.Parts, tc.parts)
			}
			for i, p := range b.Parts {
				if pct(p.Left) != pct(tc.parts[i][0]) || pct(p.Width) != pct(tc.parts[i][1]) || p.Approx != tc.approx {
					t.Errorf("part %d = %+v, want left %v width %v approx %v", i, p, tc.parts[i][0], tc.parts[i][1], tc.approx)
				}
			}
			if !strings.Contains(b.Note, tc.note) {
				t.Errorf("note %q lacks %q", b.Note, tc.note)
			}
		})
	}
}

// The page is one document with no outside reference, and escapes what
// the transcripts hold.
func TestWriteHTML(t *testing.T) {
	pm := samplePostmortem()
	pm.Answers[0].Text = `<script>alert("x")</script> there is no flag`
	var b bytes.Buffer
	if err := WriteHTML(&b, &pm); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if strings.Contains(page, "<script>") {
		t.Error("answer text was not escaped")
	}
	for _, bad := range []string{"http://", "https://"} {
		for _, line := range strings.Split(page, "\n") {
			if strings.Contains(line, bad) && (strings.Contains(line, "src=") || strings.Contains(line, "<link")) {
				t.Errorf("outside reference: %s", line)
			}
		}
	}
	for _, want := range []string{`data-call-id="toolu_bash"`, `data-strategy="head_tail"`, `data-expect="cut"`, `data-pin="cut"`, `data-risk="high"`, "Turn 0", "Turn 1"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
}
