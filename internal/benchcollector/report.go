package benchcollector

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// WriteText prints the report as the table docs/performance.md shows.
func (r *Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "collector benchmark, %s: %d execute_tool spans per pipeline from %d clients, ClickHouse %s (pid %d)\n\n",
		r.Date, r.Spans, r.Clients, r.ClickHouseVersion, r.ClickHousePID)
	if r.Halves {
		// Not the load the goals are set for: every session is dropped and goes on.
		fmt.Fprintf(w, "load: every conversation in two halves, all first halves first (-halves)\n\n")
	}
	if r.Rate > 0 {
		// Both pipelines were offered the same spans/s: accepted spans/s
		// says whether each kept up, CPU per span what the rate costs.
		fmt.Fprintf(w, "load: paced at %.0f spans/s (-rate), the floor's and the default pipeline's alike\n\n", r.Rate)
	}
	if set := r.Default.Set; len(set) > 0 {
		// A variant is never to be read as the default configuration.
		fmt.Fprintf(w, "default pipeline: %s with --set=%s\n\n", r.Default.Config, strings.Join(set, " --set="))
	}
	fmt.Fprintf(w, "%-34s %14s %14s %8s\n", "", "default", "floor", "ratio")
	row := func(name string, d, f float64, format string) {
		ratio := "-"
		if f > 0 && d >= 0 {
			ratio = fmt.Sprintf("%.2f", d/f)
		}
		fmt.Fprintf(w, "%-34s %14s %14s %8s\n", name, fmt.Sprintf(format, d), fmt.Sprintf(format, f), ratio)
	}
	d, f := r.Default, r.Floor
	row("spans sent", float64(d.Sent), float64(f.Sent), "%.0f")
	row("spans accepted", float64(d.Accepted), float64(f.Accepted), "%.0f")
	row("spans refused", float64(d.Refused), float64(f.Refused), "%.0f")
	row("accepted spans/s", d.AcceptedPerSec, f.AcceptedPerSec, "%.0f")
	fmt.Fprintf(w, "%-34s %14d %14s %8s\n", "landed calls (distinct call_id)", d.Landed, "-", "-")
	fmt.Fprintf(w, "%-34s %14.0f %14s %8s\n", "landed spans/s", d.LandedPerSec, "-", "-")
	fmt.Fprintf(w, "%-34s %14d %14s %8s\n", "tool_calls rows inserted", d.Rows, "-", "-")
	fmt.Fprintf(w, "%-34s %14.3f %14s %8s\n", "rows written per call", d.RowsPerCall, "-", "-")
	if d.SessionsResumed >= 0 {
		fmt.Fprintf(w, "%-34s %14d %14s %8s\n", "sessions resumed from storage", d.SessionsResumed, "-", "-")
	}
	row("collector CPU-s per 100k spans", d.CollectorPer, f.CollectorPer, "%.2f")
	if r.Rate > 0 {
		// What a deployment sized for this rate gives the collector.
		row("collector cores at the paced rate", d.CollectorPer*r.Rate/100_000, f.CollectorPer*r.Rate/100_000, "%.2f")
	}
	// The floor writes nothing to ClickHouse: its figure is the server's
	// background work (merges of earlier rounds), not a base to divide by.
	fmt.Fprintf(w, "%-34s %14.2f %14.2f %8s\n", "ClickHouse CPU-s per 100k spans", d.ClickHousePer, f.ClickHousePer, "-")
	// The load generator shares the machine: with every core busy during
	// the load, accepted spans/s is what the three processes could do
	// together, not the collector alone.
	fmt.Fprintf(w, "%-34s %14.2f %14.2f %8s\n", "load generator CPU-s per 100k", d.LoadGenPer, f.LoadGenPer, "-")
	fmt.Fprintf(w, "%-34s %14.0f %14.0f %8s\n", "machine CPU busy during load (%)", 100*d.MachineBusy, 100*f.MachineBusy, "-")
	row("collector peak RSS (MiB)", float64(d.CollectorPeak)/(1<<20), float64(f.CollectorPeak)/(1<<20), "%.0f")
	row("collector peak anonymous RSS (MiB)", float64(d.CollectorPeakAnon)/(1<<20), float64(f.CollectorPeakAnon)/(1<<20), "%.0f")
	fmt.Fprintf(w, "%-34s %14d %14s %8s\n", "memory_limiter limit_mib", d.MemLimitMiB, "-", "-")
	fmt.Fprintf(w, "%-34s %14s %14s %8s\n", "GOMEMLIMIT", orDash(d.GoMemLimit), orDash(f.GoMemLimit), "-")
	fmt.Fprintf(w, "%-34s %14s %14s %8s\n", "GOGC", orDash(d.GoGC), orDash(f.GoGC), "-")
	if d.RowsLowerBound {
		fmt.Fprintln(w, "\nnote: the run outlasted old_parts_lifetime; rows written per call is a lower bound")
	}
	r.writeFellBehind(w)
	if d.DrainTimedOut {
		fmt.Fprintln(w, "\nnote: not every accepted span landed before the drain stopped waiting")
	}
	if len(r.Rounds) > 1 {
		order := "floor then default"
		if _, ok := r.compareMedian(); ok {
			order = "floor then both builds' default (see compare below)"
		}
		fmt.Fprintf(w, "\n%d rounds, %s, each on a fresh database; the table above is round %d, the median by collector CPU ÷ floor\n",
			len(r.Rounds), order, r.Median+1)
		fmt.Fprintf(w, "%-6s %12s %8s %12s %8s %12s %10s %9s\n", "round", "accepted/s", "÷ floor", "CPU-s/100k", "÷ floor", "CH CPU-s", "RSS MiB", "rows/call")
		for i, rd := range r.Rounds {
			d, f := rd.Default, rd.Floor
			acc := 0.0
			if f.AcceptedPerSec > 0 {
				acc = d.AcceptedPerSec / f.AcceptedPerSec
			}
			fmt.Fprintf(w, "%-6d %12.0f %8.2f %12.2f %8s %12.2f %10.0f %9.3f\n", i+1, d.AcceptedPerSec, acc,
				d.CollectorPer, ratioText(rd.CPURatio()), d.ClickHousePer, float64(d.CollectorPeak)/(1<<20), d.RowsPerCall)
		}
	}
	r.writeCompare(w)
	if o := r.Outage; o != nil {
		fmt.Fprintf(w, "\noutage: the default pipeline with ClickHouse stopped, %.0f s of load\n", o.LoadSecs)
		fmt.Fprintf(w, "%-34s %14d\n", "spans sent", o.Sent)
		fmt.Fprintf(w, "%-34s %14d\n", "spans accepted (held on disk)", o.Accepted)
		fmt.Fprintf(w, "%-34s %14d\n", "spans refused", o.Refused)
		fmt.Fprintf(w, "%-34s %14d\n", "  with a retryable status", o.RefusedRetryable)
		fmt.Fprintf(w, "%-34s %14t\n", "every refusal retryable", o.Retryable)
		fmt.Fprintf(w, "%-34s %14d\n", "spans unanswered at the stop", o.Unanswered)
		// Spans the generator's SDK still queued when the time bound
		// stopped it: the collector never saw them.
		fmt.Fprintf(w, "%-34s %14d\n", "spans not offered (queued at stop)", o.NotOffered)
		fmt.Fprintf(w, "%-34s %14.0f\n", "collector peak RSS (MiB)", float64(o.CollectorPeak)/(1<<20))
		fmt.Fprintf(w, "%-34s %14.0f\n", "collector peak anonymous RSS (MiB)", float64(o.CollectorPeakAnon)/(1<<20))
		fmt.Fprintf(w, "%-34s %14d\n", "memory_limiter limit_mib", o.MemLimitMiB)
		fmt.Fprintf(w, "%-34s %14s\n", "GOMEMLIMIT", orDash(o.GoMemLimit))
		fmt.Fprintf(w, "%-34s %14s\n", "GOGC", orDash(o.GoGC))
	}
	if d.CPUProfile != "" {
		fmt.Fprintf(w, "\nprofiles (sampling adds its own CPU to the figures above): %s\n", filepath.Dir(d.CPUProfile))
		fmt.Fprintf(w, "  go tool pprof -top %s %s\n", d.Binary, d.CPUProfile)
	}
	pipelines := []Pipeline{d, f}
	if cm, ok := r.compareMedian(); ok {
		pipelines = append(pipelines, *cm.Compare)
	}
	if r.Outage != nil {
		pipelines = append(pipelines, *r.Outage)
	}
	for _, p := range pipelines {
		if p.LoadLastError != "" {
			fmt.Fprintf(w, "\n%s: last export error: %s\n", p.Name, p.LoadLastError)
		}
	}
}

// writeFellBehind names, in every round, each pipeline of a paced run that
// did not keep up with the rate: its figures are a saturated collector's,
// whether its round is the median or not.
func (r *Report) writeFellBehind(w io.Writer) {
	if r.Rate <= 0 {
		return
	}
	rounds := r.Rounds
	if len(rounds) == 0 {
		rounds = []Round{{Floor: r.Floor, Default: r.Default}}
	}
	for i, rd := range rounds {
		pipelines := []Pipeline{rd.Floor, rd.Default}
		if rd.Compare != nil {
			pipelines = append(pipelines, *rd.Compare)
		}
		for _, p := range pipelines {
			if p.Accepted > 0 && p.AcceptedPerSec < keptUp*r.Rate {
				fmt.Fprintf(w, "\nnote: round %d, the %s pipeline accepted %.0f spans/s, below the paced %.0f: it did not keep up, and its figures are those of a saturated collector\n",
					i+1, p.Name, p.AcceptedPerSec, r.Rate)
			}
		}
	}
}

// keptUp is the share of a paced rate a pipeline's accepted spans/s must
// reach to count as keeping up: the last export's answer and the SDK's
// final flush add a little time to a run that kept pace.
const keptUp = 0.9

// ratioText is a CPU ratio to the floor, or "-" when there is none: the
// floor's CPU was below what /proc resolves (10 ms ticks), as it can be for
// a few hundred spans.
func ratioText(v float64) string {
	if v <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", v)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// writeCompare prints the two builds round by round and their medians: the
// median of each build's CPU ratio to the floor (each from its own median
// round), and the first build's over the second's.
func (r *Report) writeCompare(w io.Writer) {
	cm, ok := r.compareMedian()
	if !ok {
		return
	}
	fmt.Fprintf(w, "\ncompare: %s (bin) against %s (compare): the same load and floor in every round, each on a fresh database, taking turns at going first; collector and ClickHouse (CH) CPU-s per 100k spans\n",
		r.Default.Binary, cm.Compare.Binary)
	fmt.Fprintf(w, "%-6s %-8s %10s %8s %10s %8s %10s %10s %8s %8s %8s %8s\n", "round", "first", "bin CPU-s", "÷ floor", "cmp CPU-s", "÷ floor",
		"bin acc/s", "cmp acc/s", "bin CH", "cmp CH", "bin MiB", "cmp MiB")
	for i, rd := range r.Rounds {
		if rd.Compare == nil {
			continue
		}
		first := "bin"
		if rd.CompareFirst {
			first = "compare"
		}
		d, c := rd.Default, *rd.Compare
		fmt.Fprintf(w, "%-6d %-8s %10.2f %8s %10.2f %8s %10.0f %10.0f %8.2f %8.2f %8.0f %8.0f\n", i+1, first, d.CollectorPer, ratioText(rd.CPURatio()),
			c.CollectorPer, ratioText(rd.CompareCPURatio()), d.AcceptedPerSec, c.AcceptedPerSec, d.ClickHousePer, c.ClickHousePer,
			float64(d.CollectorPeak)/(1<<20), float64(c.CollectorPeak)/(1<<20))
	}
	binRatio, cmpRatio := r.Rounds[r.Median].CPURatio(), cm.CompareCPURatio()
	fmt.Fprintf(w, "%-34s %14s (round %d)\n", "median ÷ floor, bin", ratioText(binRatio), r.Median+1)
	fmt.Fprintf(w, "%-34s %14s (round %d)\n", "median ÷ floor, compare", ratioText(cmpRatio), r.CompareMedian+1)
	if binRatio > 0 && cmpRatio > 0 {
		fmt.Fprintf(w, "%-34s %14.3f\n", "bin ÷ compare, medians", binRatio/cmpRatio)
	}
	fmt.Fprintf(w, "%-34s %14.3f %14.3f\n", "rows written per call, medians", r.Rounds[r.Median].Default.RowsPerCall, cm.Compare.RowsPerCall)
}

// compareMedian is the round CompareMedian names, if it names one that ran
// the second build.
func (r *Report) compareMedian() (Round, bool) {
	if r.CompareMedian < 0 || r.CompareMedian >= len(r.Rounds) || r.Rounds[r.CompareMedian].Compare == nil {
		return Round{}, false
	}
	return r.Rounds[r.CompareMedian], true
}
