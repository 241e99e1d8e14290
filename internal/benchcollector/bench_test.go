package benchcollector

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/schema"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

// The test binary doubles as the load generator: the driver runs it again
// with this variable set, so the load still comes from a separate process.
const loadEnv = "CTXAUDIT_BENCHCOLLECTOR_LOAD"

func TestMain(m *testing.M) {
	if os.Getenv(loadEnv) == "1" {
		os.Exit(LoadMain(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	chtest.Main(m)
}

// TestRunEndToEnd builds the distribution, runs the whole benchmark at a tiny
// size against the real ClickHouse, and checks that the counts it reports
// agree with each other. It asserts no time.
func TestRunEndToEnd(t *testing.T) {
	// The server alone: each round makes a database of its own.
	u, err := url.Parse(chtest.Address(t))
	if err != nil {
		t.Fatal(err)
	}
	u.Path = ""
	addr := u.String()
	if testing.Short() {
		t.Skip("builds the distribution")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "ctxaudit")
	build := exec.Command("go", "build", "-o", bin, "../../cmd/ctxaudit")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build distribution: %v\n%s", err, out)
	}
	// The same build under another name stands for a second build: each
	// round runs it too, in its own database, taking turns at going first.
	other := filepath.Join(dir, "ctxaudit-other")
	if err := os.Link(bin, other); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(loadEnv, "1")
	t.Setenv("HOME", t.TempDir())
	const spans = 500
	// One --set, as a variant would give it, that the run reports back:
	// memory_limiter's limit as the collector logged it at start.
	const setLimit = "processors::memory_limiter::limit_mib=447"
	// Paced, so the driver hands the generator its -rate: a pace the
	// generator did not take would end each load (an unknown flag).
	rep, err := Run(context.Background(), Options{
		Binary:        bin,
		DefaultConfig: "../../examples/collector.yaml",
		FloorConfig:   "testdata/floor.yaml",
		LoadCommand:   []string{self},
		ClickHouse:    addr,
		Spans:         spans,
		Rate:          5000,
		WorkDir:       dir,
		Timeout:       5 * time.Minute,
		GoMemLimit:    ExampleGoMemLimit,
		GoGC:          ExampleGoGC,
		Outage:        true,
		OutageLoad:    time.Minute,
		Rounds:        2,
		Set:           []string{setLimit},
		Compare:       other,
		ProfileDir:    filepath.Join(dir, "profiles"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rate != 5000 {
		t.Errorf("report's pace %g spans/s, want 5000", rep.Rate)
	}
	if len(rep.Rounds) != 2 || rep.Median < 0 || rep.Median > 1 {
		t.Fatalf("%d rounds, median %d; want 2 rounds and one of them", len(rep.Rounds), rep.Median)
	}
	if m := rep.Rounds[rep.Median]; !reflect.DeepEqual(m.Default, rep.Default) || !reflect.DeepEqual(m.Floor, rep.Floor) {
		t.Error("the report's pipelines are not the median round's")
	}
	for i, r := range rep.Rounds {
		// Each round writes into a database of its own: its rows and
		// landed calls are its own, not the rounds' before it.
		if d := r.Default; d.Refused == 0 && (d.Landed != spans || d.Rows != spans) {
			t.Errorf("round %d: %d landed, %d rows for %d spans sent; want each round counted alone", i+1, d.Landed, d.Rows, spans)
		}
		// And the compare build into one of its own beside it, before the
		// first build in the second round only.
		c := r.Compare
		if c == nil {
			t.Fatalf("round %d: the compare build did not run", i+1)
		}
		if c.Refused == 0 && (c.Landed != spans || c.Rows != spans) {
			t.Errorf("round %d, compare: %d landed, %d rows for %d spans sent; want its own database counted alone", i+1, c.Landed, c.Rows, spans)
		}
		if r.Default.Binary != bin || c.Binary != other || r.Floor.Binary != bin || r.CompareFirst != (i == 1) {
			t.Errorf("round %d: default ran %s, compare %s, floor %s, compare first %v; want %s, %s, %s, %v",
				i+1, r.Default.Binary, c.Binary, r.Floor.Binary, r.CompareFirst, bin, other, bin, i == 1)
		}
		if c.MemLimitMiB != 447 || c.GoGC != ExampleGoGC || !reflect.DeepEqual(c.Set, r.Default.Set) || c.CollectorCPU <= 0 {
			t.Errorf("round %d, compare: limit_mib %d, GOGC %q, set %q, CPU %.2fs; want the default's settings, measured", i+1, c.MemLimitMiB, c.GoGC, c.Set, c.CollectorCPU)
		}
	}
	if rep.CompareMedian < 0 || rep.CompareMedian > 1 {
		t.Errorf("compare median round %d; want one of the two", rep.CompareMedian)
	}
	// Every database a round made is gone.
	store, err := chstore.Open(context.Background(), addr, chstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var left uint64
	if err := store.Conn().QueryRow(context.Background(), "SELECT count() FROM system.databases WHERE name LIKE 'ctxaudit_bench_%'").Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d benchmark databases left behind", left)
	}
	for _, p := range []Pipeline{rep.Floor, rep.Default} {
		if p.Sent != spans || p.Accepted+p.Refused != p.Sent || p.Unanswered != 0 || p.NotOffered != 0 || p.RefusedRetryable > p.Refused {
			t.Errorf("%s: sent %d, accepted %d, refused %d (%d retryable), unanswered %d, not offered %d; want %d sent, each accepted or refused",
				p.Name, p.Sent, p.Accepted, p.Refused, p.RefusedRetryable, p.Unanswered, p.NotOffered, spans)
		}
		// /proc counts CPU time in ticks of 10 ms: the floor's 500 spans can
		// take less than one tick, the default's analysis and INSERTs not.
		if p.CollectorPeak <= 0 || p.CollectorCPU < 0 || p.CollectorCPU == 0 && p.Name != rep.Floor.Name {
			t.Errorf("%s: collector peak RSS %d, CPU %.2fs; want both measured", p.Name, p.CollectorPeak, p.CollectorCPU)
		}
		// The generator's process and the machine as a whole were measured
		// too: a generator sending 500 spans uses some CPU, and the machine
		// cannot be more than wholly busy.
		if p.LoadGenCPU <= 0 || p.LoadGenPer <= 0 || p.MachineBusy <= 0 || p.MachineBusy > 1 {
			t.Errorf("%s: load generator CPU %.3fs (%.3f per 100k), machine busy %.3f; want the generator's CPU and a share in (0, 1]",
				p.Name, p.LoadGenCPU, p.LoadGenPer, p.MachineBusy)
		}
	}
	d := rep.Default
	if d.Refused == 0 && d.Landed != d.Sent {
		t.Errorf("default: %d landed of %d sent with none refused", d.Landed, d.Sent)
	}
	if d.RowsPerCall < 1 || d.Rows < d.Landed {
		t.Errorf("default: %d rows for %d calls (%.3f per call); want at least one per call", d.Rows, d.Landed, d.RowsPerCall)
	}
	if d.RowsLowerBound {
		t.Error("default: the row count is only a lower bound")
	}
	// Read from each collector's metrics endpoint: ten sessions fit in
	// max_sessions, so none was dropped to be resumed; the floor has no
	// ctxaudit processor to say.
	if d.SessionsResumed != 0 || rep.Floor.SessionsResumed != -1 {
		t.Errorf("sessions resumed: default %d, floor %d; want 0 and -1 (none reported)", d.SessionsResumed, rep.Floor.SessionsResumed)
	}
	if d.MemLimitMiB <= 0 || d.GoMemLimit != ExampleGoMemLimit || d.GoGC != ExampleGoGC || rep.Floor.MemLimitMiB != 0 || rep.Floor.GoGC != "" {
		t.Errorf("default: limit_mib %d, GOMEMLIMIT %q, GOGC %q; floor limit_mib %d, GOGC %q; want the example's limiter, %s and %s, none on the floor",
			d.MemLimitMiB, d.GoMemLimit, d.GoGC, rep.Floor.MemLimitMiB, rep.Floor.GoGC, ExampleGoMemLimit, ExampleGoGC)
	}
	if d.MemLimitMiB != 447 || !reflect.DeepEqual(d.Set, []string{setLimit}) || rep.Floor.Set != nil {
		t.Errorf("default: limit_mib %d, set %q; floor set %q; want %s applied to the default only", d.MemLimitMiB, d.Set, rep.Floor.Set, setLimit)
	}
	o := rep.Outage
	if o == nil {
		t.Fatal("no outage run")
	}
	// Every span sent is accounted for once: accepted, refused, cut short
	// by the load's time bound, or still queued in the generator then.
	if o.Sent != spans || o.NotOffered < 0 || o.Accepted+o.Refused+o.Unanswered+o.NotOffered != o.Sent || o.Landed != -1 {
		t.Errorf("outage: sent %d, accepted %d, refused %d, unanswered %d, not offered %d, landed %d; want %d sent, each counted once, none landed",
			o.Sent, o.Accepted, o.Refused, o.Unanswered, o.NotOffered, o.Landed, spans)
	}
	if o.CollectorPeak <= 0 || o.CollectorPeakAnon <= 0 || o.CollectorPeakAnon > o.CollectorPeak || o.MemLimitMiB != d.MemLimitMiB {
		t.Errorf("outage: peak RSS %d, anonymous %d, limit_mib %d; want both measured, anonymous within RSS, the default's limit", o.CollectorPeak, o.CollectorPeakAnon, o.MemLimitMiB)
	}
	if !o.Retryable || o.RefusedRetryable != o.Refused {
		t.Errorf("outage: %d of %d refused spans had a retryable status; want all (last error: %s)", o.RefusedRetryable, o.Refused, o.LoadLastError)
	}
	// Every run left a CPU profile and an allocation profile of the build
	// it ran, named after its round and pipeline.
	runs := map[string]Pipeline{"outage": *o}
	for i, r := range rep.Rounds {
		runs[fmt.Sprintf("round%d-floor", i+1)] = r.Floor
		runs[fmt.Sprintf("round%d-default", i+1)] = r.Default
		runs[fmt.Sprintf("round%d-compare", i+1)] = *r.Compare
	}
	for run, p := range runs {
		stem := filepath.Join(dir, "profiles", run)
		if p.CPUProfile != stem+".cpu.pprof" || p.AllocsProfile != stem+".allocs.pprof" {
			t.Errorf("%s: profiles %q and %q, want %s.{cpu,allocs}.pprof", run, p.CPUProfile, p.AllocsProfile, stem)
			continue
		}
		checkProfile(t, p.CPUProfile, p.Binary, "cpu")
		checkProfile(t, p.AllocsProfile, p.Binary, "alloc_space")
	}
	if rep.Floor.Landed != -1 {
		t.Errorf("floor: landed %d; the floor writes nowhere and must say so (-1)", rep.Floor.Landed)
	}
}

// TestExampleNamesGoMemLimit: the GOMEMLIMIT and GOGC the benchmark runs the
// default pipeline with are the ones examples/collector.yaml tells users to
// set, and make run sets.
func TestExampleNamesGoMemLimit(t *testing.T) {
	b, err := os.ReadFile("../../examples/collector.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "GOMEMLIMIT="+ExampleGoMemLimit) {
		t.Errorf("examples/collector.yaml does not say GOMEMLIMIT=%s", ExampleGoMemLimit)
	}
	if !strings.Contains(string(b), "GOGC="+ExampleGoGC) {
		t.Errorf("examples/collector.yaml does not say GOGC=%s", ExampleGoGC)
	}
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"GOMEMLIMIT=$${GOMEMLIMIT:-" + ExampleGoMemLimit + "}", "GOGC=$${GOGC:-" + ExampleGoGC + "}"} {
		if !strings.Contains(string(mk), v) {
			t.Errorf("make run does not set %s", v)
		}
	}
	// testdata/memorylimiter.log is the line the distribution's memory_limiter
	// (v0.165.0) logged at start with examples/collector.yaml.
	if got := memoryLimitMiB("testdata/memorylimiter.log"); got != 512 {
		t.Errorf("limit_mib from the collector's log line = %d, want 512", got)
	}
}

// insertedRows counts every row an INSERT wrote, also after a merge folded
// a call written twice into one row — which count() no longer sees.
func TestInsertedRowsSurviveMerges(t *testing.T) {
	s := chtest.NewStore(t)
	ctx := context.Background()
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for i := range 3 { // three INSERTs: c1 twice (as a retried batch would), c2 once
		calls := []schema.ToolCall{{SessionID: "rows-1", CallID: "c1", Tool: "Read", Timestamp: at, Source: schema.HarnessPi}}
		if i == 2 {
			calls[0].CallID = "c2"
		}
		if err := s.WriteToolCalls(ctx, calls); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Conn().Exec(ctx, "OPTIMIZE TABLE "+s.Database()+".tool_calls FINAL"); err != nil {
		t.Fatal(err)
	}
	now := assertStoredRowsIsCount(t, s, 2)
	n, err := insertedRows(ctx, s, s.Database())
	if err != nil {
		t.Fatal(err)
	}
	if now != 2 || n != 3 {
		t.Errorf("after the merge count() is %d and insertedRows %d; want 2 (c1 folded) and 3 (every row written)", now, n)
	}
}

// storedRows, which drain polls instead of count(), is count(): over
// parts not merged yet (four INSERTs, two of them into one day's partition)
// and after a merge folded a call written twice (TestInsertedRowsSurviveMerges).
func TestStoredRowsIsCount(t *testing.T) {
	s := chtest.NewStore(t)
	ctx := context.Background()
	for i, day := range []int{1, 2, 2, 3} {
		at := time.Date(2026, 3, day, 9, 0, 0, 0, time.UTC)
		calls := []schema.ToolCall{{SessionID: "rows-2", CallID: fmt.Sprintf("c%d", i), Tool: "Read", Timestamp: at, Source: schema.HarnessPi}}
		if err := s.WriteToolCalls(ctx, calls); err != nil {
			t.Fatal(err)
		}
	}
	assertStoredRowsIsCount(t, s, 4)
}

// assertStoredRowsIsCount checks that storedRows equals count() of
// tool_calls, which is want, and returns it.
func assertStoredRowsIsCount(t *testing.T, s *chstore.Store, want uint64) uint64 {
	t.Helper()
	ctx := context.Background()
	var count uint64
	if err := s.Conn().QueryRow(ctx, "SELECT count() FROM "+s.Database()+".tool_calls").Scan(&count); err != nil {
		t.Fatal(err)
	}
	stored, err := storedRows(ctx, s, s.Database())
	if err != nil {
		t.Fatal(err)
	}
	if count != want || stored != int64(count) {
		t.Errorf("count() = %d, storedRows = %d; want both %d", count, stored, want)
	}
	return count
}
