// Package benchcollector is the collector-throughput benchmark: it starts the
// built distribution as a separate process with a given configuration,
// drives it with a separate load-generator process (OTel Go SDK, OTLP/gRPC),
// waits for the rows to land in ClickHouse, and reports accepted and landed
// spans/s, rows written per call, CPU-seconds per 100k spans of the
// collector and of the ClickHouse server (from /proc/<pid>/stat), and the
// collector's peak RSS (VmHWM). One run measures the default pipeline and
// the otlp → batch → nothing floor back to back, so their ratio is taken on
// the same machine under the same load.
package benchcollector

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

// ExampleGoMemLimit is the GOMEMLIMIT examples/collector.yaml says to run the
// collector with (its memory_limiter's soft limit, limit_mib - spike_limit_mib).
const ExampleGoMemLimit = "320MiB"

// ExampleGoGC is the GOGC examples/collector.yaml says to run the collector
// with: under GOMEMLIMIT the heap is bounded anyway, and collecting half as
// often cost 7% less CPU in this benchmark (docs/performance.md).
const ExampleGoGC = "200"

// Options configures a benchmark run.
type Options struct {
	Binary        string   // the built distribution, e.g. bin/ctxaudit
	DefaultConfig string   // examples/collector.yaml
	FloorConfig   string   // internal/benchcollector/testdata/floor.yaml
	LoadCommand   []string // argv of the load generator; the driver appends its flags
	ClickHouse    string   // clickhouse://user@host:port[/db]; without a db a fresh one is made and dropped
	ClickHousePID int      // the server's pid; 0 = the process listening on the address's port
	Spans         int
	// Clients is how many SDK clients the load generator sends from at
	// once (0: DefaultClients).
	Clients int
	// Halves sends every conversation in two halves, all first halves
	// first (LoadOptions.Halves): each session goes on after thousands of
	// others, so the default pipeline drops and resumes most of them.
	Halves bool
	// Rate paces every load of the run at this many spans per second, the
	// floor's and the default pipeline's alike (LoadOptions.Rate); 0: as
	// fast as each collector takes them.
	Rate    float64
	WorkDir string        // state dirs and config overlays go here
	Timeout time.Duration // bound on each pipeline's load plus drain
	// GoMemLimit is GOMEMLIMIT for the default pipeline's collector, as
	// examples/collector.yaml says to run it (empty: not set).
	GoMemLimit string
	// GoGC is GOGC for the default pipeline's collector, likewise (empty:
	// not set).
	GoGC string
	// Outage adds a third run: the default pipeline with ClickHouse
	// stopped (its address refuses connections) under the same load for
	// OutageLoad, reporting peak RSS against the memory limit and how the
	// receiver refused what it could not take.
	Outage     bool
	OutageLoad time.Duration
	// Rounds is how many times the floor and the default pipeline are
	// measured, alternating, each round on a fresh database (0: once). The
	// machine moves single runs by more than many changes do; the report's
	// pipelines are the median round's (Report.Rounds).
	Rounds int
	// Set are collector --set values (key::path=value) for the default
	// pipeline's collector and the outage run, never the floor's: they
	// measure a variant of DefaultConfig, e.g. with
	// processors::ctxaudit::analyze_sessions=false, what one stage costs.
	// The report lists them beside the figures.
	Set []string
	// Compare is another build of the distribution (a path, like Binary)
	// measured in every round beside Binary: the same configuration,
	// settings and load against the same floor, each on a fresh database,
	// the two taking turns at going first (Binary in odd rounds, Compare in
	// even ones) so that the machine's drift during a round falls on both.
	// The report compares the two builds' medians. Empty: Binary alone.
	Compare string
	// ProfileDir, when set, gets each collector's CPU profile over its
	// whole run (start, load, drain, shutdown; the pprof extension's
	// save_to_file) and its allocation profile at the end of the
	// measurement: round1-default.cpu.pprof, round1-default.allocs.pprof,
	// round1-floor.…, outage.…; read them with `go tool pprof BINARY FILE`.
	// Sampling adds its own CPU (about 1 %) to the figures measured.
	ProfileDir string
	Log        io.Writer

	// proc reads /proc; Run sets it.
	proc proc
}

// Pipeline is the measurement of one configuration.
type Pipeline struct {
	Name     string `json:"name"`
	Binary   string `json:"binary"`
	Config   string `json:"config"`
	Sent     int64  `json:"sent"`
	Accepted int64  `json:"accepted"`
	Refused  int64  `json:"refused"`
	// RefusedRetryable, Unanswered: see LoadResult. NotOffered: spans the
	// load generator still queued when a time-bounded load (the outage)
	// stopped, which the collector never saw; 0 for a load that completed.
	RefusedRetryable int64   `json:"refused_retryable"`
	Unanswered       int64   `json:"unanswered"`
	NotOffered       int64   `json:"not_offered"`
	LoadSecs         float64 `json:"load_seconds"`
	// AcceptedPerSec: spans the collector acknowledged per second of load.
	AcceptedPerSec float64 `json:"accepted_spans_per_s"`
	// Landed: distinct call ids in tool_calls after draining; -1 when the
	// pipeline writes nowhere (the floor).
	Landed int64 `json:"landed"`
	// Rows: the rows INSERTs wrote into tool_calls (insertedRows), whatever
	// merges folded since; RowsLowerBound when the run took so long that
	// ClickHouse may have removed merged-away parts before they were counted.
	Rows           int64   `json:"rows"`
	RowsLowerBound bool    `json:"rows_lower_bound,omitempty"`
	RowsPerCall    float64 `json:"rows_per_call"`
	LandedSecs     float64 `json:"landed_seconds"` // load start to the last row landed
	LandedPerSec   float64 `json:"landed_spans_per_s"`
	CollectorCPU   float64 `json:"collector_cpu_s"`
	ClickHouseCPU  float64 `json:"clickhouse_cpu_s"`
	CollectorPer   float64 `json:"collector_cpu_s_per_100k"`
	ClickHousePer  float64 `json:"clickhouse_cpu_s_per_100k"`
	// LoadGenCPU: the load generator's own CPU time. It shares the machine
	// with the collector and ClickHouse, so the accepted rate is bounded by
	// what all three together can do (see MachineBusy).
	LoadGenCPU float64 `json:"load_generator_cpu_s"`
	LoadGenPer float64 `json:"load_generator_cpu_s_per_100k"`
	// MachineBusy: the share of the machine's CPU (all cores) busy while the
	// load ran, 0 to 1. Near 1, the accepted rate is what the machine can
	// do for the load generator, the collector and ClickHouse together.
	MachineBusy   float64 `json:"machine_cpu_busy_during_load"`
	CollectorPeak int64   `json:"collector_peak_rss_bytes"`
	// CollectorPeakAnon: the highest RssAnon sampled (heap, stacks; not the
	// binary or the mapped storage files), every 100 ms.
	CollectorPeakAnon int64  `json:"collector_peak_anon_rss_bytes"`
	GoMemLimit        string `json:"gomemlimit,omitempty"`
	GoGC              string `json:"gogc,omitempty"`
	// Set: the --set values the collector ran with (Options.Set).
	Set []string `json:"set,omitempty"`
	// MemLimitMiB: memory_limiter's limit_mib as the collector logged it; 0
	// when the pipeline has no memory limiter.
	MemLimitMiB int64 `json:"memory_limit_mib"`
	// Retryable: every refusal the load generator saw, each one judged,
	// was a status an OTLP client retries (retryableCode).
	Retryable     bool   `json:"refusals_retryable"`
	LoadLastError string `json:"load_last_error,omitempty"`
	DrainTimedOut bool   `json:"drain_timed_out"`
	// SessionsResumed: sessions the ctxaudit processor dropped past
	// max_sessions and read back from storage when they went on
	// (ctxaudit_processor_sessions_resumed on the collector's metrics
	// endpoint at the end of the measurement); -1 when the pipeline has
	// no such processor.
	SessionsResumed int64 `json:"sessions_resumed"`
	// CPUProfile and AllocsProfile: the collector's profiles
	// (Options.ProfileDir); empty when not profiled.
	CPUProfile     string `json:"cpu_profile,omitempty"`
	AllocsProfile  string `json:"allocs_profile,omitempty"`
	measureSeconds float64
}

// Report is one benchmark: both pipelines, measured Options.Rounds times.
type Report struct {
	Date    string `json:"date"`
	Spans   int    `json:"spans"`
	Clients int    `json:"clients"`
	Halves  bool   `json:"halves,omitempty"`
	// Rate is the pace of every load in spans/s (Options.Rate); 0: as fast
	// as the collector took them.
	Rate              float64 `json:"rate_spans_per_s,omitempty"`
	ClickHouseVersion string  `json:"clickhouse_version"`
	ClickHousePID     int     `json:"clickhouse_pid"`
	// Default and Floor are the median round's: the round whose collector
	// CPU per span, over its own floor's, is the median (the lower of the
	// two middle ones for an even count). Every figure of the pair comes
	// from that one round.
	Default Pipeline `json:"default"`
	Floor   Pipeline `json:"floor"`
	// Rounds are every round, in the order they ran; Median indexes it.
	Rounds []Round `json:"rounds"`
	Median int     `json:"median_round"`
	// CompareMedian indexes the round whose Compare build's CPU ratio is
	// the median (Options.Compare); -1 without one.
	CompareMedian int `json:"compare_median_round"`
	// Outage is the default pipeline with ClickHouse stopped (Options.Outage).
	Outage *Pipeline `json:"outage,omitempty"`
}

// Round is one measurement of the floor and then the default pipeline —
// of Options.Binary and, with Options.Compare, of that build too.
type Round struct {
	Floor   Pipeline `json:"floor"`
	Default Pipeline `json:"default"`
	// Compare is the default pipeline run by Options.Compare; CompareFirst:
	// it ran before Default in this round.
	Compare      *Pipeline `json:"compare,omitempty"`
	CompareFirst bool      `json:"compare_first,omitempty"`
}

// CPURatio is the round's collector CPU per span over its floor's; 0 when
// either is unmeasured.
func (r Round) CPURatio() float64 { return cpuRatio(r.Default, r.Floor) }

// CompareCPURatio is CPURatio for the Compare build; 0 without one.
func (r Round) CompareCPURatio() float64 {
	if r.Compare == nil {
		return 0
	}
	return cpuRatio(*r.Compare, r.Floor)
}

func cpuRatio(p, floor Pipeline) float64 {
	if floor.CollectorPer <= 0 {
		return 0
	}
	return p.CollectorPer / floor.CollectorPer
}

// medianRound is the index of the round with the median of ratio (the
// lower middle one for an even count).
func medianRound(rounds []Round, ratio func(Round) float64) int {
	idx := make([]int, len(rounds))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(ratio(rounds[a]), ratio(rounds[b])) })
	return idx[(len(idx)-1)/2]
}

// Run measures the floor, then the default pipeline.
func Run(ctx context.Context, o Options) (*Report, error) {
	if o.Spans <= 0 {
		return nil, errors.New("bench: spans must be positive")
	}
	if o.Rate < 0 {
		return nil, fmt.Errorf("bench: rate %g spans/s is negative", o.Rate)
	}
	// A build that cannot run would fail the first round only after the
	// floor and the other build had been measured.
	builds := []string{o.Binary}
	if o.Compare != "" {
		builds = append(builds, o.Compare)
	}
	for _, bin := range builds {
		// What exec.Command will run: the path itself when it has a slash.
		if _, err := exec.LookPath(bin); err != nil {
			return nil, fmt.Errorf("bench: collector build: %w", err)
		}
	}
	if o.Timeout <= 0 {
		o.Timeout = 20 * time.Minute
	}
	if o.Clients <= 0 {
		o.Clients = DefaultClients
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	var err error
	if o.proc, err = newProc(); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	u, err := url.Parse(o.ClickHouse)
	if err != nil {
		return nil, fmt.Errorf("bench: clickhouse address: %w", err)
	}
	db := filepath.Base(u.Path)
	ownDB := u.Path == "" || u.Path == "/"
	rounds := max(o.Rounds, 1)
	if !ownDB && rounds > 1 {
		return nil, fmt.Errorf("bench: %d rounds need a fresh database each; give the ClickHouse address without one", rounds)
	}
	if o.ClickHousePID == 0 {
		port, err := strconv.Atoi(u.Port())
		if err != nil {
			return nil, fmt.Errorf("bench: clickhouse address %q has no port", o.ClickHouse)
		}
		if o.ClickHousePID, err = o.proc.pidListening(port); err != nil {
			return nil, fmt.Errorf("bench: clickhouse server pid: %w", err)
		}
	}
	if o.ProfileDir != "" {
		if err := os.MkdirAll(o.ProfileDir, 0o755); err != nil {
			return nil, fmt.Errorf("bench: profiles: %w", err)
		}
	}
	rep := &Report{Date: time.Now().UTC().Format(time.RFC3339), Spans: o.Spans, Clients: o.Clients, Halves: o.Halves, Rate: o.Rate, ClickHousePID: o.ClickHousePID, CompareMedian: -1}
	runID := "b" + randHex(4)
	for i := range rounds {
		if ownDB {
			db = "ctxaudit_bench_" + randHex(6)
		}
		r, err := o.round(ctx, *u, db, ownDB, i, fmt.Sprintf("%sr%d", runID, i), rep)
		rep.Rounds = append(rep.Rounds, r)
		if err != nil {
			// What the failed round measured is reported with the error.
			rep.Median, rep.Floor, rep.Default = i, r.Floor, r.Default
			return rep, err
		}
	}
	rep.Median = medianRound(rep.Rounds, Round.CPURatio)
	rep.Floor, rep.Default = rep.Rounds[rep.Median].Floor, rep.Rounds[rep.Median].Default
	if o.Compare != "" {
		rep.CompareMedian = medianRound(rep.Rounds, Round.CompareCPURatio)
	}
	if !o.Outage {
		return rep, nil
	}
	// ClickHouse stopped, as the collector sees it: a loopback port nothing
	// listens on refuses every connection.
	ports, err := freePorts(1)
	if err != nil {
		return rep, err
	}
	down := fmt.Sprintf("clickhouse://default@127.0.0.1:%d/%s", ports[0], db)
	out, err := o.measure(ctx, "outage", o.Binary, o.DefaultConfig, runID+"o", nil, db, down, o.defaultSettings("outage"))
	rep.Outage = &out
	return rep, err
}

// round measures the floor, then the default pipeline writing into db at
// the server u names, creating the schema first and, with ownDB, dropping
// the database after. With Options.Compare the Compare build runs the
// default pipeline too, into a database of its own whose schema its
// exporter creates (an older build has its own schema version), before
// Binary in even rounds (index odd) and after it in odd ones.
func (o Options) round(ctx context.Context, u url.URL, db string, ownDB bool, index int, runID string, rep *Report) (Round, error) {
	var r Round
	u.Path = "/" + db
	addr := u.String()
	store, err := chstore.Open(ctx, addr, chstore.Options{})
	if err != nil {
		return r, fmt.Errorf("bench: open %s: %w", addr, err)
	}
	defer store.Close()
	if rep.ClickHouseVersion == "" {
		rep.ClickHouseVersion, _ = store.ServerVersion()
	}
	// The schema is created here, before the collectors start (the
	// exporter's own migration then finds it at this binary's version).
	if _, err := store.Migrate(ctx); err != nil {
		return r, fmt.Errorf("bench: migrate %s: %w", db, err)
	}
	if ownDB {
		defer dropDatabase(store, db)
	}
	// How this round's runs are named among the profiles.
	run := func(pipeline string) string { return fmt.Sprintf("round%d-%s", index+1, pipeline) }
	if r.Floor, err = o.measure(ctx, "floor", o.Binary, o.FloorConfig, runID+"f", nil, db, "", runSettings{profile: o.profileStem(run("floor"))}); err != nil {
		return r, err
	}
	measureBinary := func() (err error) {
		r.Default, err = o.measure(ctx, "default", o.Binary, o.DefaultConfig, runID+"d", store, db, addr, o.defaultSettings(run("default")))
		return err
	}
	if o.Compare == "" {
		return r, measureBinary()
	}
	// The compare build's database: a fresh one beside db, on the same
	// server, dropped after the round like db.
	cdb := db + "_compare"
	cu := u
	cu.Path = "/" + cdb
	cstore, err := chstore.Open(ctx, cu.String(), chstore.Options{})
	if err != nil {
		return r, fmt.Errorf("bench: open %s: %w", cu.String(), err)
	}
	defer cstore.Close()
	defer dropDatabase(cstore, cdb)
	measureCompare := func() error {
		c, err := o.measure(ctx, "compare", o.Compare, o.DefaultConfig, runID+"c", cstore, cdb, cu.String(), o.defaultSettings(run("compare")))
		r.Compare = &c
		return err
	}
	steps := []func() error{measureBinary, measureCompare}
	if r.CompareFirst = index%2 == 1; r.CompareFirst {
		steps[0], steps[1] = steps[1], steps[0]
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return r, err
		}
	}
	return r, nil
}

// dropDatabase drops db, whatever the benchmark's context says: a
// cancelled run still cleans up.
func dropDatabase(store *chstore.Store, db string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = store.Conn().Exec(ctx, "DROP DATABASE IF EXISTS "+db)
}

// runSettings is what a collector runs with beyond its configuration
// file: the Go runtime's settings (empty: unset) and --set values.
type runSettings struct {
	memLimit, gc string
	set          []string
	// profile: where the collector's profiles go, a path without its
	// extension; empty: not profiled.
	profile string
}

// defaultSettings is how examples/collector.yaml says to run the default
// pipeline, with the variant's --set values; run names the run among the
// profiles (Options.ProfileDir).
func (o Options) defaultSettings(run string) runSettings {
	return runSettings{memLimit: o.GoMemLimit, gc: o.GoGC, set: o.Set, profile: o.profileStem(run)}
}

// profileStem is where a run's profiles go; empty without ProfileDir.
func (o Options) profileStem(run string) string {
	if o.ProfileDir == "" {
		return ""
	}
	return filepath.Join(o.ProfileDir, run)
}

// measure runs one collector with cfg, the load generator against it and,
// with a store, waits for the rows. An empty chAddr is a pipeline that
// writes nowhere (the floor); a chAddr without a store is one whose
// ClickHouse is down (the outage): its load is bounded by OutageLoad and
// nothing is drained.
func (o Options) measure(ctx context.Context, name, bin, cfg, runID string, store *chstore.Store, db, chAddr string, env runSettings) (Pipeline, error) {
	p := Pipeline{Name: name, Binary: bin, Config: cfg, Landed: -1, GoMemLimit: env.memLimit, GoGC: env.gc, Set: env.set}
	outage := store == nil && chAddr != ""
	dir, err := os.MkdirTemp(o.WorkDir, name+"-")
	if err != nil {
		return p, err
	}
	ports, err := freePorts(5)
	if err != nil {
		return p, err
	}
	// The example configuration's ports are fixed; a second --config (merged
	// over the first by the collector) moves every listener to a free
	// loopback port, so runs never collide with another collector.
	lp := overlayPorts{grpc: ports[0], health: ports[2], metrics: ports[3]}
	if chAddr != "" {
		// The default configuration's OTLP/HTTP listener; the floor has none.
		lp.http = ports[1]
	}
	if env.profile != "" {
		lp.pprof = ports[4]
		p.CPUProfile, p.AllocsProfile = env.profile+".cpu.pprof", env.profile+".allocs.pprof"
	}
	grpcPort, healthPort := lp.grpc, lp.health
	overlay, err := renderOverlay(cfg, lp, p.CPUProfile)
	if err != nil {
		return p, err
	}
	overlayPath := filepath.Join(dir, "overlay.yaml")
	if err := os.WriteFile(overlayPath, overlay, 0o644); err != nil {
		return p, err
	}
	args := []string{"collector", "--config", cfg, "--config", overlayPath}
	for _, kv := range env.set {
		args = append(args, "--set="+kv)
	}
	empty := filepath.Join(dir, "no-transcripts")
	home := filepath.Join(dir, "home")
	for _, d := range []string{empty, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return p, err
		}
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(),
		"HOME="+home,
		"CTXAUDIT_CLAUDE_PROJECTS=", "CTXAUDIT_CODEX_SESSIONS=", "CTXAUDIT_PI_SESSIONS=",
		"CTXAUDIT_EXAMPLES="+empty,
		"CTXAUDIT_STATE_DIR="+filepath.Join(dir, "state"),
		"CTXAUDIT_CLICKHOUSE="+chAddr,
	)
	if env.memLimit != "" {
		cmd.Env = append(cmd.Env, "GOMEMLIMIT="+env.memLimit)
	}
	if env.gc != "" {
		cmd.Env = append(cmd.Env, "GOGC="+env.gc)
	}
	logf, err := os.Create(filepath.Join(dir, "collector.log"))
	if err != nil {
		return p, err
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return p, fmt.Errorf("bench %s: start %s: %w", name, bin, err)
	}
	exit := watchExit(cmd)
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exit.done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exit.done
		}
	}
	defer stop()
	fmt.Fprintf(o.Log, "%s: collector pid %d (%s), log %s\n", name, cmd.Process.Pid, cfg, logf.Name())
	if err := waitHealthy(ctx, healthPort, exit, 2*time.Minute); err != nil {
		return p, fmt.Errorf("bench %s: collector not ready (log %s): %w", name, logf.Name(), err)
	}

	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	pid := cmd.Process.Pid
	col0, err := o.proc.cpuSeconds(pid)
	if err != nil {
		return p, err
	}
	ch0, err := o.proc.cpuSeconds(o.ClickHousePID)
	if err != nil {
		return p, err
	}
	stopSampling := make(chan struct{})
	anonPeak := o.proc.peakAnon(pid, 100*time.Millisecond, stopSampling)
	stopSample := sync.OnceFunc(func() { close(stopSampling) })
	defer stopSample()
	t0 := time.Now()
	loadTimeout := o.Timeout
	if outage {
		loadTimeout = o.OutageLoad
		if loadTimeout <= 0 {
			loadTimeout = 2 * time.Minute
		}
	}
	machine0, err := o.proc.machineCPU()
	if err != nil {
		return p, err
	}
	load, err := o.runLoad(ctx, grpcPort, runID, loadTimeout)
	if err != nil && !(outage && load.Sent > 0) {
		// An outage's load is expected to stop at its time bound.
		return p, fmt.Errorf("bench %s: %w", name, err)
	}
	machine1, err := o.proc.machineCPU()
	if err != nil {
		return p, err
	}
	p.MachineBusy = machine0.busyShare(machine1)
	p.Sent, p.Accepted, p.Refused, p.LoadSecs, p.LoadLastError = load.Sent, load.Accepted, load.Refused, load.Seconds, load.LastErr
	p.RefusedRetryable, p.Unanswered = load.RefusedRetryable, load.Unanswered
	p.NotOffered = load.Sent - load.Accepted - load.Refused - load.Unanswered
	p.LoadGenCPU = load.cpuSeconds
	if load.Seconds > 0 {
		p.AcceptedPerSec = float64(load.Accepted) / load.Seconds
	}
	end := time.Now()
	if store != nil {
		landedAt, landed, timedOut, err := drain(ctx, store, db, load.Accepted)
		if err != nil {
			return p, fmt.Errorf("bench %s: %w", name, err)
		}
		end, p.Landed, p.DrainTimedOut = time.Now(), landed, timedOut
		p.LandedSecs = landedAt.Sub(t0).Seconds()
		if p.LandedSecs > 0 {
			p.LandedPerSec = float64(landed) / p.LandedSecs
		}
		if p.Rows, err = insertedRows(ctx, store, db); err != nil {
			return p, fmt.Errorf("bench %s: %w", name, err)
		}
		p.RowsLowerBound = time.Since(t0) > partsKept
		if landed > 0 {
			p.RowsPerCall = float64(p.Rows) / float64(landed)
		}
	}
	p.measureSeconds = end.Sub(t0).Seconds()
	col1, err := o.proc.cpuSeconds(pid)
	if err != nil {
		return p, err
	}
	ch1, err := o.proc.cpuSeconds(o.ClickHousePID)
	if err != nil {
		return p, err
	}
	if p.CollectorPeak, err = o.proc.peakRSSBytes(pid); err != nil {
		return p, err
	}
	stopSample()
	p.CollectorPeakAnon = <-anonPeak
	p.MemLimitMiB = memoryLimitMiB(logf.Name())
	p.Retryable = p.RefusedRetryable == p.Refused
	p.CollectorCPU, p.ClickHouseCPU = col1-col0, ch1-ch0
	if p.Accepted > 0 {
		p.CollectorPer = p.CollectorCPU / float64(p.Accepted) * 100_000
		p.ClickHousePer = p.ClickHouseCPU / float64(p.Accepted) * 100_000
		p.LoadGenPer = p.LoadGenCPU / float64(p.Accepted) * 100_000
	}
	if p.SessionsResumed, err = processorCounter(ctx, lp.metrics, "ctxaudit_processor_sessions_resumed"); err != nil {
		return p, fmt.Errorf("bench %s: %w", name, err)
	}
	if p.AllocsProfile != "" {
		if err := saveAllocsProfile(ctx, lp.pprof, p.AllocsProfile); err != nil {
			return p, fmt.Errorf("bench %s: %w", name, err)
		}
	}
	stop()
	if p.CPUProfile != "" {
		// The pprof extension writes the CPU profile as the collector
		// shuts down; a collector that had to be killed leaves none.
		if fi, err := os.Stat(p.CPUProfile); err != nil || fi.Size() == 0 {
			return p, fmt.Errorf("bench %s: no CPU profile at %s after the collector stopped (log %s)", name, p.CPUProfile, logf.Name())
		}
	}
	return p, nil
}

// loadRun is what one run of the load generator reported, and the CPU time
// the generator's process used.
type loadRun struct {
	LoadResult
	cpuSeconds float64
}

func (o Options) runLoad(ctx context.Context, grpcPort int, runID string, timeout time.Duration) (loadRun, error) {
	if len(o.LoadCommand) == 0 {
		return loadRun{}, errors.New("no load generator command")
	}
	args := append(append([]string{}, o.LoadCommand[1:]...),
		"-endpoint", fmt.Sprintf("127.0.0.1:%d", grpcPort),
		"-spans", strconv.Itoa(o.Spans), "-clients", strconv.Itoa(o.Clients), "-run-id", runID,
		"-timeout", timeout.String())
	if o.Halves {
		args = append(args, "-halves")
	}
	if o.Rate > 0 {
		args = append(args, "-rate", strconv.FormatFloat(o.Rate, 'f', -1, 64))
	}
	cmd := exec.CommandContext(ctx, o.LoadCommand[0], args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var res loadRun
	if ps := cmd.ProcessState; ps != nil {
		res.cpuSeconds = (ps.UserTime() + ps.SystemTime()).Seconds()
	}
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &res.LoadResult); err != nil {
		return res, fmt.Errorf("load generator: %v; output %q, stderr %q", runErr, stdout.String(), stderr.String())
	}
	if runErr != nil {
		return res, fmt.Errorf("load generator: %w: %s", runErr, stderr.String())
	}
	return res, nil
}

// drain polls tool_calls until every accepted span landed (as a distinct
// call id), or nothing new arrived for a minute, or ctx ends. It returns when
// the last new row was seen. It polls the table's row count from its parts
// (storedRows), which reads no data, and counts distinct call ids only once
// there are enough rows (a table never has fewer rows than call ids):
// polling uniqExact every 200 ms would be most of the ClickHouse CPU the
// benchmark reports, and even count(), which ClickHouse 18.16 answers by
// reading a column, was about a twelfth of it.
func drain(ctx context.Context, store *chstore.Store, db string, want int64) (time.Time, int64, bool, error) {
	const quiet = time.Minute
	var last int64 = -1
	lastChange := time.Now()
	for {
		rows, err := storedRows(ctx, store, db)
		if err != nil {
			return lastChange, last, false, err
		}
		n := uint64(rows)
		if rows >= want {
			if err := store.Conn().QueryRow(ctx, "SELECT uniqExact(call_id) FROM "+db+".tool_calls").Scan(&n); err != nil {
				return lastChange, last, false, fmt.Errorf("count landed calls: %w", err)
			}
		}
		if int64(n) != last {
			last, lastChange = int64(n), time.Now()
		}
		if int64(n) >= want {
			return lastChange, int64(n), false, nil
		}
		if time.Since(lastChange) > quiet {
			d, err := distinctCalls(ctx, store, db)
			return lastChange, d, true, err
		}
		select {
		case <-ctx.Done():
			d, err := distinctCalls(context.WithoutCancel(ctx), store, db)
			return lastChange, d, true, err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// partsKept is how long after a merge the parts it replaced are surely still
// listed: ClickHouse removes them old_parts_lifetime (default 480 s) later.
const partsKept = 7 * time.Minute

// insertedRows is the number of rows INSERTs wrote into tool_calls: the rows
// of its level-0 parts, active or not. Every INSERT writes level-0 parts; a
// merge writes a part of a higher level and leaves the ones it read
// inactive, not gone, for old_parts_lifetime. So merges run during the
// benchmark, as in production — their CPU is counted, and the exporter's
// reads see the part count a real server has — and a call written twice is
// still counted twice after a merge folded its rows into one.
func insertedRows(ctx context.Context, store *chstore.Store, db string) (int64, error) {
	n, err := partRows(ctx, store, db, "level = 0")
	if err != nil {
		return -1, fmt.Errorf("count inserted rows: %w", err)
	}
	return n, nil
}

// storedRows is count() of tool_calls — the rows of its active parts —
// read from system.parts, without reading a column of the table.
func storedRows(ctx context.Context, store *chstore.Store, db string) (int64, error) {
	n, err := partRows(ctx, store, db, "active")
	if err != nil {
		return -1, fmt.Errorf("count landed rows: %w", err)
	}
	return n, nil
}

// partRows sums the rows of tool_calls' parts that match which, a
// condition on system.parts.
func partRows(ctx context.Context, store *chstore.Store, db, which string) (int64, error) {
	var n uint64
	q := "SELECT toUInt64(sum(rows)) FROM system.parts WHERE database = ? AND table = 'tool_calls' AND " + which
	if err := store.Conn().QueryRow(ctx, q, db).Scan(&n); err != nil {
		return -1, err
	}
	return int64(n), nil
}

// distinctCalls is the number of distinct call ids in tool_calls.
func distinctCalls(ctx context.Context, store *chstore.Store, db string) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var n uint64
	if err := store.Conn().QueryRow(ctx, "SELECT uniqExact(call_id) FROM "+db+".tool_calls").Scan(&n); err != nil {
		return -1, fmt.Errorf("count landed calls: %w", err)
	}
	return int64(n), nil
}

// exitWatch is the end of a started process, which any number of waits
// may see: done is closed once the process is gone, and err is then its
// exit status. (A channel that carries the status once let the collector's
// early exit, seen by waitHealthy, hang the stop that waited for it again.)
type exitWatch struct {
	done chan struct{}
	err  error
}

func watchExit(cmd *exec.Cmd) *exitWatch {
	w := &exitWatch{done: make(chan struct{})}
	go func() {
		w.err = cmd.Wait()
		close(w.done)
	}()
	return w
}

func waitHealthy(ctx context.Context, port int, exit *exitWatch, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	client := &http.Client{Timeout: 2 * time.Second}
	for time.Now().Before(deadline) {
		select {
		case <-exit.done:
			return fmt.Errorf("collector exited: %v", exit.err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d/", port))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	return fmt.Errorf("no healthy answer within %s", limit)
}

func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
