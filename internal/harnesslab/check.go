package harnesslab

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/ctxaudit/ctxaudit/collector/ingest"
	"github.com/ctxaudit/ctxaudit/schema"
)

// TranscriptDir is the folder of a recorded run that holds the transcript
// files in the harness's own layout.
const TranscriptDir = "transcript"

// Verdict is what ctxaudit recorded for one call, in the words of the
// conformance table, and whether it matched the truth.
type Verdict struct {
	Call     CallTruth
	Recorded string
	Problems []string
}

// Result is the check of one recorded run.
type Result struct {
	Truth   Truth
	Calls   []Verdict
	Answers []string // recorded risk per answer
	// Compactions is the compaction count the session records carry.
	Compactions int
	Problems    []string // every mismatch, calls, answers and session
}

// OK reports whether every verdict matched, or — with known discrepancies —
// whether exactly the known ones did not.
func (r Result) OK() bool {
	if len(r.Truth.KnownDiscrepancy) == 0 {
		return len(r.Problems) == 0
	}
	return slices.Equal(sortedCopy(r.Problems), sortedCopy(r.Truth.KnownDiscrepancy))
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	sort.Strings(c)
	return c
}

// collect is an ingest.Writer that keeps the records in memory.
type collect struct {
	sessions []schema.Session
	calls    []schema.ToolCall
	answers  []schema.Answer
}

func (c *collect) WriteSessions(_ context.Context, s []schema.Session) error {
	c.sessions = append(c.sessions, s...)
	return nil
}
func (c *collect) WriteToolCalls(_ context.Context, calls []schema.ToolCall) error {
	c.calls = append(c.calls, calls...)
	return nil
}
func (c *collect) WriteAnswers(_ context.Context, a []schema.Answer) error {
	c.answers = append(c.answers, a...)
	return nil
}
func (c *collect) WriteToolOutputs(context.Context, []schema.ToolOutput) error { return nil }

// Records ingests a recorded run's transcript through the real parsers,
// forensics and session analysis (the path of `ctxaudit ingest`), and returns
// the main thread's calls and answers in transcript order.
func Records(ctx context.Context, dir string) ([]schema.ToolCall, []schema.Answer, error) {
	c, err := records(ctx, dir)
	return c.calls, c.answers, err
}

func records(ctx context.Context, dir string) (collect, error) {
	var c collect
	if _, err := ingest.Run(ctx, []string{filepath.Join(dir, TranscriptDir)}, ingest.Options{}, &c); err != nil {
		return c, fmt.Errorf("ingest %s: %w", dir, err)
	}
	sort.SliceStable(c.calls, func(i, j int) bool { return c.calls[i].SourceLine < c.calls[j].SourceLine })
	sort.SliceStable(c.answers, func(i, j int) bool { return c.answers[i].Timestamp.Before(c.answers[j].Timestamp) })
	return c, nil
}

// compactions is the compaction count of a run's sessions.
func compactions(ss []schema.Session) int {
	n := 0
	for _, s := range ss {
		n += int(s.Compactions.N) // a transcript shows them: known
	}
	return n
}

// Check judges one recorded run folder against its truth file.
func Check(ctx context.Context, dir string) (Result, error) {
	t, err := ReadTruth(dir)
	if err != nil {
		return Result{}, err
	}
	c, err := records(ctx, dir)
	if err != nil {
		return Result{}, err
	}
	r := Judge(t, c.calls, c.answers)
	r.Compactions = compactions(c.sessions)
	if t.Compactions != nil && r.Compactions != *t.Compactions {
		p := fmt.Sprintf("session: %d compactions recorded, want %d", r.Compactions, *t.Compactions)
		r.Problems = append(r.Problems, p)
		if len(r.Calls) > 0 {
			last := &r.Calls[len(r.Calls)-1]
			last.Problems = append(last.Problems, p)
		}
	}
	return r, nil
}

// Judge compares records with the truth.
func Judge(t Truth, calls []schema.ToolCall, answers []schema.Answer) Result {
	r := Result{Truth: t}
	if len(calls) != len(t.Calls) {
		r.Problems = append(r.Problems, fmt.Sprintf("calls: recorded %d, want %d", len(calls), len(t.Calls)))
	}
	for i, ct := range t.Calls {
		v := Verdict{Call: ct}
		if i < len(calls) {
			v.Recorded = Describe(calls[i])
			for _, p := range judgeCall(ct, calls[i]) {
				v.Problems = append(v.Problems, fmt.Sprintf("call %d (%s): %s", i, ct.Tool, p))
			}
		} else {
			v.Problems = append(v.Problems, fmt.Sprintf("call %d (%s): not recorded", i, ct.Tool))
		}
		r.Problems = append(r.Problems, v.Problems...)
		r.Calls = append(r.Calls, v)
	}
	if len(answers) != len(t.Answers) {
		r.Problems = append(r.Problems, fmt.Sprintf("answers: recorded %d, want %d", len(answers), len(t.Answers)))
	}
	for i, a := range answers {
		r.Answers = append(r.Answers, string(a.Risk))
		if i < len(t.Answers) && string(a.Risk) != t.Answers[i].Risk {
			r.Problems = append(r.Problems, fmt.Sprintf("answer %d: risk %s, want %s (reasons %s)", i, a.Risk, t.Answers[i].Risk, strings.Join(a.Reasons, ",")))
		}
	}
	return r
}

// recordJSON is the record as its JSON contract spells it, so fields that
// only some builds carry (original.precision, shown_tail_is_end) are read
// when present.
type recordJSON struct {
	Original struct {
		Bytes     *uint64 `json:"bytes"`
		Chars     *uint64 `json:"chars"`
		Lines     *uint64 `json:"lines"`
		Precision *string `json:"precision"`
	} `json:"original"`
	ShownTailIsEnd  *bool `json:"shown_tail_is_end"`
	RefetchedSource *bool `json:"refetched_source"`
}

func recordView(c schema.ToolCall) recordJSON {
	var v recordJSON
	b, _ := json.Marshal(c)
	_ = json.Unmarshal(b, &v)
	return v
}

// precisionOf is the record's precision; a record without the field states
// every known size as a fact.
func precisionOf(v recordJSON) string {
	if v.Original.Precision != nil {
		return *v.Original.Precision
	}
	if v.Original.Bytes != nil || v.Original.Chars != nil || v.Original.Lines != nil {
		return Exact
	}
	return ""
}

func judgeCall(t CallTruth, c schema.ToolCall) []string {
	var p []string
	if c.Tool != t.Tool {
		p = append(p, fmt.Sprintf("tool %s, want %s", c.Tool, t.Tool))
	}
	if c.Truncated != t.Truncated {
		p = append(p, fmt.Sprintf("truncated %v, want %v", c.Truncated, t.Truncated))
	}
	if string(c.Kind) != t.Kind {
		p = append(p, fmt.Sprintf("kind %s, want %s", c.Kind, t.Kind))
	}
	if string(c.Strategy) != t.Strategy {
		p = append(p, fmt.Sprintf("strategy %s, want %s", c.Strategy, t.Strategy))
	}
	if c.PartialByRequest != t.PartialByRequest {
		p = append(p, fmt.Sprintf("partial_by_request %v, want %v", c.PartialByRequest, t.PartialByRequest))
	}
	v := recordView(c)
	prec := precisionOf(v)
	for _, unit := range []string{"bytes", "chars", "lines"} {
		st, ok := t.Original[unit]
		if !ok {
			continue
		}
		rec := map[string]*uint64{"bytes": v.Original.Bytes, "chars": v.Original.Chars, "lines": v.Original.Lines}[unit]
		if msg := sizeOK(unit, st, rec, prec); msg != "" {
			p = append(p, msg)
		}
	}
	if t.Shown != nil {
		got := Range{Start: c.Shown.Start.N, End: c.Shown.End.N, Unit: string(c.Shown.Unit)}
		if !c.Shown.Start.Known || !c.Shown.End.Known || got != *t.Shown {
			p = append(p, fmt.Sprintf("shown %s, want %d–%d %s", c.Shown.Start.String()+"–"+c.Shown.End.String()+" "+string(c.Shown.Unit), t.Shown.Start, t.Shown.End, t.Shown.Unit))
		}
	}
	if t.Total != nil && (!c.Total.Known || c.Total.N != *t.Total) {
		p = append(p, fmt.Sprintf("total %s, want %d", c.Total.String(), *t.Total))
	}
	if t.ShownTailIsEnd != nil {
		if v.ShownTailIsEnd == nil || *v.ShownTailIsEnd != *t.ShownTailIsEnd {
			got := "absent"
			if v.ShownTailIsEnd != nil {
				got = fmt.Sprint(*v.ShownTailIsEnd)
			}
			p = append(p, fmt.Sprintf("shown_tail_is_end %s, want %v", got, *t.ShownTailIsEnd))
		}
	}
	if t.RefetchedSource != nil && (v.RefetchedSource == nil || *v.RefetchedSource != *t.RefetchedSource) {
		p = append(p, fmt.Sprintf("refetched_source %v, want %v", v.RefetchedSource != nil && *v.RefetchedSource, *t.RefetchedSource))
	}
	d := [3]bool{c.Disclosure.Range, c.Disclosure.Reason, c.Disclosure.Next}
	if d != t.Disclosure {
		p = append(p, fmt.Sprintf("disclosure %s, want %s", triple(d), triple(t.Disclosure)))
	}
	if c.MarkerUnderstated != t.Understated {
		p = append(p, fmt.Sprintf("marker_understated %v, want %v", c.MarkerUnderstated, t.Understated))
	}
	if t.Coverage != nil && (!c.SessionCoverage.Known || math.Abs(c.SessionCoverage.V-*t.Coverage) > 0.005) {
		p = append(p, fmt.Sprintf("session_coverage %v, want %.2f", c.SessionCoverage.Ptr(), *t.Coverage))
	}
	return p
}

func triple(d [3]bool) string {
	b := func(x bool) string {
		if x {
			return "1"
		}
		return "0"
	}
	return b(d[0]) + "/" + b(d[1]) + "/" + b(d[2])
}

// Describe is the one-line account of a record used in the table.
func Describe(c schema.ToolCall) string {
	if !c.Truncated {
		s := "complete"
		if c.PartialByRequest {
			s = "partial by request"
		}
		return s + sizeText(c)
	}
	s := fmt.Sprintf("%s %s", c.Kind, c.Strategy)
	s += sizeText(c)
	s += fmt.Sprintf(", told %s", triple([3]bool{c.Disclosure.Range, c.Disclosure.Reason, c.Disclosure.Next}))
	if c.MarkerUnderstated {
		s += ", understated"
	}
	return s
}

func sizeText(c schema.ToolCall) string {
	v := recordView(c)
	prec := precisionOf(v)
	word := map[string]string{Exact: "", Approximate: "~", LowerBound: "≥"}[prec]
	var parts []string
	for _, u := range []struct {
		name string
		n    *uint64
	}{{"bytes", v.Original.Bytes}, {"chars", v.Original.Chars}, {"lines", v.Original.Lines}} {
		if u.n != nil {
			parts = append(parts, fmt.Sprintf("%s%d %s", word, *u.n, u.name))
		}
	}
	if len(parts) == 0 {
		return ", original unknown"
	}
	return ", original " + strings.Join(parts, " ")
}

// SameRecords ingests two recordings of one run (raw and normalised) and
// reports the first difference in what ctxaudit records of them: every
// measurement and verdict of each call and the risk of each answer. Ids,
// times, paths and the texts quoting them are what normalising replaces,
// so they are left out.
func SameRecords(ctx context.Context, a, b string) error {
	ra, err := records(ctx, a)
	if err != nil {
		return err
	}
	rb, err := records(ctx, b)
	if err != nil {
		return err
	}
	ca, aa, cb, ab := ra.calls, ra.answers, rb.calls, rb.answers
	if x, y := compactions(ra.sessions), compactions(rb.sessions); x != y {
		return fmt.Errorf("%d compactions, normalised %d", x, y)
	}
	if len(ca) != len(cb) || len(aa) != len(ab) {
		return fmt.Errorf("%d calls and %d answers, normalised %d and %d", len(ca), len(aa), len(cb), len(ab))
	}
	for i := range ca {
		if x, y := callView(ca[i]), callView(cb[i]); x != y {
			return fmt.Errorf("call %d (%s):\n  raw        %s\n  normalised %s", i, ca[i].Tool, x, y)
		}
	}
	for i := range aa {
		x := fmt.Sprint(aa[i].Risk, aa[i].Reasons, len(aa[i].InputCallIDs), len(aa[i].IncompleteInputs), aa[i].AbsenceClaim, len(aa[i].Text))
		y := fmt.Sprint(ab[i].Risk, ab[i].Reasons, len(ab[i].InputCallIDs), len(ab[i].IncompleteInputs), ab[i].AbsenceClaim, len(ab[i].Text))
		if x != y {
			return fmt.Errorf("answer %d: raw %s, normalised %s", i, x, y)
		}
	}
	return nil
}

// callView is a call's measurements and verdict, without what normalising
// replaces (the texts that quote paths keep only their length).
func callView(c schema.ToolCall) string {
	f := c.Forensics
	f.NextHint = fmt.Sprintf("(%d bytes)", len(f.NextHint))
	f.SavedRef = fmt.Sprintf("(%d bytes)", len(f.SavedRef))
	f.Marker = fmt.Sprintf("(%d bytes)", len(f.Marker))
	b, _ := json.Marshal(f)
	return fmt.Sprintf("%s %s %s coverage %+v", c.Tool, Describe(c), b, c.SessionCoverage)
}
