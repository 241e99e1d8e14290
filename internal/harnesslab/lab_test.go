package harnesslab

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxaudit/ctxaudit/schema"
)

// TestRecordedRuns checks every recorded lab run (testdata/lab) through the
// real parsers, forensics and session analysis against its truth file. A
// run with known discrepancies must show exactly those, so fixing one
// fails here until its note is removed.
func TestRecordedRuns(t *testing.T) {
	out := filepath.Join("..", "..", "testdata", "lab")
	rs, err := CheckAll(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	harnesses := map[string]int{}
	for _, r := range rs {
		harnesses[r.Truth.Harness]++
		t.Run(r.Truth.Harness+"@"+r.Truth.Version+"/"+r.Truth.Scenario, func(t *testing.T) {
			if len(r.Calls) == 0 {
				t.Fatal("truth lists no calls")
			}
			if !r.OK() {
				t.Errorf("verdicts differ from the truth:\n  got:   %s\n  known: %s",
					strings.Join(r.Problems, "\n         "), strings.Join(r.Truth.KnownDiscrepancy, "\n         "))
			}
		})
	}
	for _, h := range []string{"claude-code", "codex", "pi"} {
		if harnesses[h] == 0 {
			t.Errorf("no recorded runs of %s", h)
		}
	}
	if len(rs) < 25 {
		t.Errorf("%d recorded runs, want at least 25", len(rs))
	}
}

// TestJudgeCatchesWrongVerdicts shows the checker fails a record that
// states more than is known, or gets a verdict wrong.
func TestJudgeCatchesWrongVerdicts(t *testing.T) {
	truth := Truth{Calls: []CallTruth{{Tool: "Bash", Truncated: true, Kind: "explicit", Strategy: "head_tail",
		Original: map[string]Size{"chars": atLeast(61011)}, Disclosure: [3]bool{true, false, false}, Understated: true}},
		Answers: []AnswerTruth{{Risk: "high"}}}
	call := schema.ToolCall{Tool: "Bash"}
	call.Truncated, call.Kind, call.Strategy = true, schema.KindExplicit, schema.StrategyHeadTail
	call.Original.Chars = schema.Known(30016)
	call.Disclosure.Range = true
	r := Judge(truth, []schema.ToolCall{call}, []schema.Answer{{Risk: schema.RiskHigh}})
	want := []string{
		"call 0 (Bash): original.chars: recorded 30016 as exact, want lower_bound (true 61011)",
		"call 0 (Bash): marker_understated false, want true",
	}
	if strings.Join(r.Problems, "\n") != strings.Join(want, "\n") {
		t.Fatalf("problems:\n%s\nwant:\n%s", strings.Join(r.Problems, "\n"), strings.Join(want, "\n"))
	}
	if r.OK() {
		t.Fatal("a wrong record passed")
	}
	truth.KnownDiscrepancy = want
	if !Judge(truth, []schema.ToolCall{call}, []schema.Answer{{Risk: schema.RiskHigh}}).OK() {
		t.Fatal("the known discrepancies were not accepted")
	}
	call.MarkerUnderstated = true
	if Judge(truth, []schema.ToolCall{call}, []schema.Answer{{Risk: schema.RiskHigh}}).OK() {
		t.Fatal("a fixed verdict still matched the known-discrepancy note")
	}
}

func TestSizeOK(t *testing.T) {
	n := func(v uint64) *uint64 { return &v }
	cases := []struct {
		truth Size
		rec   *uint64
		prec  string
		ok    bool
	}{
		{exact(10), n(10), Exact, true},
		{exact(10), n(11), Exact, false},
		{exact(10), nil, "", false},
		{about(457500, 51.2), n(457523), Approximate, true},
		{about(457500, 51.2), n(457600), Approximate, false},
		{about(457500, 51.2), n(457523), Exact, false},
		{atLeast(61011), n(30016), LowerBound, true},
		{atLeast(61011), n(70000), LowerBound, false},
		{untold(5), nil, "", true},
		{untold(5), n(5), Exact, false},
	}
	for i, c := range cases {
		if got := sizeOK("chars", c.truth, c.rec, c.prec) == ""; got != c.ok {
			t.Errorf("case %d: ok=%v, want %v", i, got, c.ok)
		}
	}
}
