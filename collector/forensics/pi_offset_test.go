package forensics

import (
	"strings"
	"testing"

	"github.com/ctxaudit/ctxaudit/schema"
)

// pi 0.73.1 reading from offset=1652 with no limit returns the rest of the
// file and no notice (harness lab, testdata/lab/pi@0.73.1/read-paging).
func TestPiReadOffsetToEnd(t *testing.T) {
	var b strings.Builder
	for i := 1652; i <= 3000; i++ {
		b.WriteString("long line\n")
	}
	f := Detect(Input{Harness: schema.HarnessPi, Tool: "read", Arguments: []byte(`{"path":"/w/long.txt","offset":1652}`), Context: b.String()})
	if f.Truncated || !f.PartialByRequest || f.Strategy != schema.StrategyNone {
		t.Fatalf("verdict %+v, want a partial view by request", f)
	}
	if f.Shown.Start != schema.Known(1652) || f.Shown.End != schema.Known(3001) || f.Shown.Unit != schema.UnitLines || f.Total != schema.Known(3001) {
		t.Fatalf("shown %v–%v %s of %v, want 1652–3001 lines of 3001 (pi's numbering)", f.Shown.Start, f.Shown.End, f.Shown.Unit, f.Total)
	}
	// With a limit, or from the start, the rule does not apply.
	for _, args := range []string{`{"path":"/w/long.txt","offset":1652,"limit":10}`, `{"path":"/w/long.txt"}`} {
		f := Detect(Input{Harness: schema.HarnessPi, Tool: "read", Arguments: []byte(args), Context: "a\nb\n"})
		if f.Detector == "pi.read_offset_to_end" {
			t.Errorf("%s: matched pi.read_offset_to_end", args)
		}
	}
}

// A failed pi read is pi's error message, not lines of the file: pi throws
// "Offset N is beyond end of file (T lines total)" (read.ts) when the
// offset is past the end, and ENOENT when there is no file. Neither shows a
// part of the file from the offset, so neither is a partial view by request
// whose end is the file's end.
func TestPiReadErrorIsNotAPartialView(t *testing.T) {
	for _, text := range []string{
		"Offset 500 is beyond end of file (42 lines total)",
		"ENOENT: no such file or directory, access '/w/missing.txt'",
	} {
		f := Detect(Input{Harness: schema.HarnessPi, Tool: "read", Arguments: []byte(`{"path":"/w/f.txt","offset":500}`), Context: text, IsError: true})
		if f.PartialByRequest || f.Detector == "pi.read_offset_to_end" {
			t.Errorf("%q: partial by request (detector %s), want none", text, f.Detector)
		}
		if f.Shown.Start.Known || f.Shown.End.Known || f.Total.Known {
			t.Errorf("%q: shown %v–%v %s of %v, want nothing known of the file", text, f.Shown.Start, f.Shown.End, f.Shown.Unit, f.Total)
		}
	}
}
