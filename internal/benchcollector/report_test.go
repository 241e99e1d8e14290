package benchcollector

import (
	"bytes"
	"strings"
	"testing"
)

// The collector's figures are divided by the floor's; ClickHouse's are not:
// the floor writes nothing there, and its figure is the server's background
// work.
func TestWriteTextRatios(t *testing.T) {
	r := Report{
		Default: Pipeline{CollectorPer: 4.0, ClickHousePer: 1.2, AcceptedPerSec: 30000, LoadGenPer: 1.1, MachineBusy: 0.974},
		Floor:   Pipeline{CollectorPer: 1.0, ClickHousePer: 0.01, AcceptedPerSec: 60000, LoadGenPer: 1.3, MachineBusy: 0.9},
	}
	var b bytes.Buffer
	r.WriteText(&b)
	want := map[string][]string{
		"collector CPU-s per 100k spans":  {"4.00", "1.00", "4.00"},
		"ClickHouse CPU-s per 100k spans": {"1.20", "0.01", "-"},
		"accepted spans/s":                {"30000", "60000", "0.50"},
		// Context for the rates, not a cost of the pipeline: no ratio.
		"load generator CPU-s per 100k":    {"1.10", "1.30", "-"},
		"machine CPU busy during load (%)": {"97", "90", "-"},
	}
	for _, line := range strings.Split(b.String(), "\n") {
		for name, fields := range want {
			if !strings.HasPrefix(line, name+" ") {
				continue
			}
			if got := strings.Fields(strings.TrimPrefix(line, name)); strings.Join(got, " ") != strings.Join(fields, " ") {
				t.Errorf("%s: %q, want %q", name, got, fields)
			}
			delete(want, name)
		}
	}
	for name := range want {
		t.Errorf("no %q row in:\n%s", name, b.String())
	}
}

// A variant's report says so above its figures; the default's does not.
func TestWriteTextNamesVariant(t *testing.T) {
	variant := "processors::ctxaudit::analyze_sessions=false"
	for _, set := range [][]string{nil, {variant, "processors::memory_limiter::limit_mib=512"}} {
		r := Report{Default: Pipeline{Config: "examples/collector.yaml", Set: set}}
		var b bytes.Buffer
		r.WriteText(&b)
		named := strings.Contains(b.String(), "default pipeline: examples/collector.yaml with --set="+variant+" --set=processors::memory_limiter::limit_mib=512\n")
		if named != (set != nil) {
			t.Errorf("set %q: variant named %v in:\n%s", set, named, b.String())
		}
	}
}

// A load of halved conversations is named above its figures, and the
// sessions the processor resumed are given when it reported them.
func TestWriteTextNamesHalvesAndResumes(t *testing.T) {
	for _, halves := range []bool{false, true} {
		resumed := int64(-1)
		if halves {
			resumed = 2987
		}
		r := Report{Halves: halves, Default: Pipeline{SessionsResumed: resumed}}
		var b bytes.Buffer
		r.WriteText(&b)
		named := strings.Contains(b.String(), "load: every conversation in two halves")
		row := strings.Contains(b.String(), "sessions resumed from storage")
		if named != halves || row != halves || (halves && !strings.Contains(b.String(), " 2987 ")) {
			t.Errorf("halves %v: named %v, resumed row %v in:\n%s", halves, named, row, b.String())
		}
	}
}

// The outage section accounts for every span sent: accepted, refused (and
// how many of those with a retryable status), cut short, never offered.
func TestWriteTextOutageAccounts(t *testing.T) {
	r := Report{Outage: &Pipeline{
		Sent: 1000, Accepted: 600, Refused: 250, RefusedRetryable: 240, Unanswered: 10, NotOffered: 140,
		Retryable: false, LoadSecs: 120,
	}}
	var b bytes.Buffer
	r.WriteText(&b)
	out := b.String()[strings.Index(b.String(), "outage:"):]
	for _, row := range [][2]string{
		{"spans sent", "1000"},
		{"spans accepted (held on disk)", "600"},
		{"spans refused", "250"},
		{"  with a retryable status", "240"},
		{"every refusal retryable", "false"},
		{"spans unanswered at the stop", "10"},
		{"spans not offered (queued at stop)", "140"},
	} {
		found := false
		for line := range strings.SplitSeq(out, "\n") {
			if rest, ok := strings.CutPrefix(line, row[0]+" "); ok && !strings.HasPrefix(rest, "(") {
				found = strings.TrimSpace(rest) == row[1]
				if !found {
					t.Errorf("%s: %q, want %s", row[0], strings.TrimSpace(rest), row[1])
				}
				break
			}
		}
		if !found {
			t.Errorf("no %q row with %s in:\n%s", row[0], row[1], out)
		}
	}
}

// A comparison prints both builds round by round, who went first, and the
// two medians — each build's from its own median round — with their
// quotient; a report without a second build prints none of it.
func TestWriteTextCompare(t *testing.T) {
	floor := Pipeline{CollectorPer: 1}
	round := func(bin, cmp float64, compareFirst bool) Round {
		return Round{Floor: floor, Default: Pipeline{Binary: "bin/ctxaudit", CollectorPer: bin, ClickHousePer: bin / 2, RowsPerCall: 1},
			Compare: &Pipeline{Binary: "/tmp/old/ctxaudit", CollectorPer: cmp, ClickHousePer: cmp / 2, RowsPerCall: 1}, CompareFirst: compareFirst}
	}
	// bin ratios 3, 4, 2: median 3 (round 1); compare ratios 5, 2, 4: median 4 (round 3).
	rounds := []Round{round(3, 5, false), round(4, 2, true), round(2, 4, false)}
	r := Report{Rounds: rounds, Median: medianRound(rounds, Round.CPURatio), CompareMedian: medianRound(rounds, Round.CompareCPURatio)}
	r.Floor, r.Default = rounds[r.Median].Floor, rounds[r.Median].Default
	var b bytes.Buffer
	r.WriteText(&b)
	out := b.String()
	for _, want := range []string{
		"compare: bin/ctxaudit (bin) against /tmp/old/ctxaudit (compare)",
		"median ÷ floor, bin                          3.00 (round 1)",
		"median ÷ floor, compare                      4.00 (round 3)",
		"bin ÷ compare, medians                      0.750",
		"3 rounds, floor then both builds' default (see compare below)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	// Each round: who went first, and each build's ClickHouse CPU beside
	// its collector's.
	var firsts, clickhouse []string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 12 && (f[1] == "bin" || f[1] == "compare") {
			firsts = append(firsts, f[1])
			clickhouse = append(clickhouse, f[8]+"/"+f[9])
		}
	}
	if strings.Join(firsts, " ") != "bin compare bin" {
		t.Errorf("rounds went first: %q; want bin compare bin in:\n%s", firsts, out)
	}
	if got := strings.Join(clickhouse, " "); got != "1.50/2.50 2.00/1.00 1.00/2.00" {
		t.Errorf("ClickHouse CPU-s per 100k, bin/compare per round: %q; want 1.50/2.50 2.00/1.00 1.00/2.00 in:\n%s", got, out)
	}

	alone := Report{Rounds: []Round{{Floor: floor, Default: Pipeline{CollectorPer: 3}}}, CompareMedian: -1}
	b.Reset()
	alone.WriteText(&b)
	if strings.Contains(b.String(), "compare") {
		t.Errorf("a report of one build mentions a comparison:\n%s", b.String())
	}
}

// /proc counts CPU in 10 ms ticks: a floor of a few hundred spans can take
// none. Its ratio is then not known, printed "-", never 0.00 or +Inf.
func TestFloorBelowTickHasNoRatio(t *testing.T) {
	rounds := []Round{
		{Floor: Pipeline{CollectorPer: 0}, Default: Pipeline{CollectorPer: 3, RowsPerCall: 1}},
		{Floor: Pipeline{CollectorPer: 1}, Default: Pipeline{CollectorPer: 3, RowsPerCall: 1}},
	}
	r := Report{Rounds: rounds, Median: 0, CompareMedian: -1, Floor: rounds[0].Floor, Default: rounds[0].Default}
	var b bytes.Buffer
	r.WriteText(&b)
	out := b.String()
	var ratios []string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 8 && (f[0] == "1" || f[0] == "2") {
			ratios = append(ratios, f[4])
		}
		if strings.HasPrefix(line, "collector CPU-s per 100k spans") && !strings.HasSuffix(line, " -") {
			t.Errorf("summary line %q; want no ratio", line)
		}
	}
	if strings.Join(ratios, " ") != "- 3.00" {
		t.Errorf("round ratios %q; want - 3.00 in:\n%s", ratios, out)
	}
	if strings.Contains(out, "Inf") || strings.Contains(out, "NaN") {
		t.Errorf("a ratio over no CPU printed:\n%s", out)
	}
}

// A paced run says so above its figures, gives the cores each collector
// spent at the rate, and names a pipeline that did not keep up.
func TestWriteTextPaced(t *testing.T) {
	for _, floorRate := range []float64{19_800, 12_000} {
		r := Report{
			Rate:    20_000,
			Default: Pipeline{Name: "default", Accepted: 200_000, AcceptedPerSec: 19_500, CollectorPer: 4.0},
			Floor:   Pipeline{Name: "floor", Accepted: 200_000, AcceptedPerSec: floorRate, CollectorPer: 1.6},
		}
		var b bytes.Buffer
		r.WriteText(&b)
		out := b.String()
		if !strings.Contains(out, "load: paced at 20000 spans/s") {
			t.Errorf("no pace named in:\n%s", out)
		}
		var cores []string
		for _, line := range strings.Split(out, "\n") {
			if name := "collector cores at the paced rate"; strings.HasPrefix(line, name+" ") {
				cores = strings.Fields(strings.TrimPrefix(line, name))
			}
		}
		if strings.Join(cores, " ") != "0.80 0.32 2.50" {
			t.Errorf("cores row %q, want 0.80 0.32 2.50 in:\n%s", cores, out)
		}
		slow := strings.Contains(out, "note: round 1, the floor pipeline accepted 12000 spans/s, below the paced 20000")
		if slow != (floorRate < 18_000) || strings.Contains(out, "the default pipeline accepted") {
			t.Errorf("floor at %.0f spans/s: notes wrong in:\n%s", floorRate, out)
		}
	}
	// A round that is not the median is named too, its compare build's
	// pipeline with it; the rounds that kept up are not.
	kept := Round{
		Floor:   Pipeline{Name: "floor", Accepted: 100, AcceptedPerSec: 9_900},
		Default: Pipeline{Name: "default", Accepted: 100, AcceptedPerSec: 9_800},
	}
	behind := kept
	behind.Default.AcceptedPerSec = 7_000
	behind.Compare = &Pipeline{Name: "compare", Accepted: 100, AcceptedPerSec: 6_000}
	r := Report{Rate: 10_000, Rounds: []Round{kept, behind, kept}, Median: 0, CompareMedian: -1, Default: kept.Default, Floor: kept.Floor}
	var rb bytes.Buffer
	r.WriteText(&rb)
	notes := 0
	for _, line := range strings.Split(rb.String(), "\n") {
		if strings.HasPrefix(line, "note: round") {
			notes++
		}
	}
	if out := rb.String(); notes != 2 || !strings.Contains(out, "note: round 2, the default pipeline accepted 7000 spans/s") ||
		!strings.Contains(out, "note: round 2, the compare pipeline accepted 6000 spans/s") {
		t.Errorf("%d notes; want round 2's default and compare named, nothing else, in:\n%s", notes, out)
	}
	var b bytes.Buffer
	(&Report{Default: Pipeline{Name: "default", Accepted: 1, AcceptedPerSec: 10}}).WriteText(&b)
	if out := b.String(); strings.Contains(out, "paced") {
		t.Errorf("an unpaced run names a pace:\n%s", out)
	}
}
