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
