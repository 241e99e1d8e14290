package ingest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The summary reads as English: "1 line", "1 turn", and a skipped file's
// reason does not repeat its path.
func TestSummaryWording(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.jsonl")
	if err := os.WriteFile(notes, []byte(`{"hello":"world"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := Run(context.Background(), []string{dir}, Options{}, &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := sum.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Count(out, notes) != 1 {
		t.Errorf("the skipped file's path should appear once:\n%s", out)
	}
	if !strings.Contains(out, "in its first line (use --source)") {
		t.Errorf("want the detection reason in the singular:\n%s", out)
	}

	if strings.Contains(out, "taken back") {
		t.Errorf("nothing was taken back, and the summary says so:\n%s", out)
	}

	one := Summary{Files: 1, Lines: 1, Sessions: 1, Turns: 1, SkippedLines: map[string]int{"bad_json": 1}, AnswersRetracted: 1}
	b.Reset()
	if err := one.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"files:        1 (1 line, ", "sessions:     1 (1 turn)\n", "skipped:      1 line (bad_json 1)",
		"taken back:   1 answer stored earlier (their messages went on to call a tool)\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
}

// Progress is reported after every file, the totals only growing, and the
// last report agrees with the summary.
func TestProgressReports(t *testing.T) {
	var reports []Progress
	opts := Options{Progress: func(p Progress) { reports = append(reports, p) }}
	sum, err := Run(context.Background(), []string{filepath.Join("..", "..", "examples", "sessions")}, opts, &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	if len(reports) != sum.Files || sum.Files == 0 {
		t.Fatalf("%d reports for %d files", len(reports), sum.Files)
	}
	for i := 1; i < len(reports); i++ {
		a, b := reports[i-1], reports[i]
		if b.Files != a.Files+1 || b.Bytes <= a.Bytes || b.Calls < a.Calls {
			t.Errorf("report %d %+v after %+v", i, b, a)
		}
	}
	if last := reports[len(reports)-1]; last.Bytes != sum.Bytes || last.Calls != sum.ToolCalls {
		t.Errorf("last report %+v, summary %d bytes %d calls", last, sum.Bytes, sum.ToolCalls)
	}
}
