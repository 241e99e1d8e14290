// Command benchcollector is `make bench-collector`: the collector-throughput
// benchmark of package benchcollector. `benchcollector load …` is the load
// generator the benchmark runs as its own process.
//
//	benchcollector -bin bin/ctxaudit -spans 200000
//
// ClickHouse: CTXAUDIT_BENCH_CLICKHOUSE (clickhouse://user@host:port) if set,
// else a server started with `ctxaudit dev clickhouse` in a temp dir and
// stopped at the end.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ctxaudit/ctxaudit/internal/benchcollector"
)

func main() {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if len(os.Args) > 1 && os.Args[1] == "load" {
		os.Exit(benchcollector.LoadMain(ctx, os.Args[2:], os.Stdout, os.Stderr))
	}
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "benchcollector:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	var (
		o       benchcollector.Options
		jsonOut string
	)
	flag.StringVar(&o.Binary, "bin", "bin/ctxaudit", "the built distribution")
	flag.StringVar(&o.DefaultConfig, "config", "examples/collector.yaml", "the default pipeline's configuration")
	flag.StringVar(&o.FloorConfig, "floor-config", "internal/benchcollector/testdata/floor.yaml", "the floor's configuration")
	flag.IntVar(&o.Spans, "spans", 200_000, "execute_tool spans per pipeline")
	flag.IntVar(&o.Clients, "clients", benchcollector.DefaultClients, "SDK clients the load generator sends from at once")
	flag.BoolVar(&o.Halves, "halves", false, "send every conversation in two halves, all first halves first: sessions the collector dropped go on (resumed from storage)")
	flag.Float64Var(&o.Rate, "rate", 0, "pace every load at this many spans/s over all clients, the floor's too: what the collector costs at a rate it keeps up with; 0: as fast as each collector takes them")
	flag.DurationVar(&o.Timeout, "timeout", 20*time.Minute, "bound on each pipeline's load plus drain")
	flag.IntVar(&o.ClickHousePID, "clickhouse-pid", 0, "pid of the ClickHouse server (default: the process listening on its port)")
	flag.StringVar(&jsonOut, "json", "", "also write the report as JSON to this file")
	flag.StringVar(&o.GoMemLimit, "gomemlimit", benchcollector.ExampleGoMemLimit, "GOMEMLIMIT of the default pipeline's collector (examples/collector.yaml says how it is run); empty: unset")
	flag.StringVar(&o.GoGC, "gogc", benchcollector.ExampleGoGC, "GOGC of the default pipeline's collector (examples/collector.yaml says how it is run); empty: unset")
	flag.BoolVar(&o.Outage, "outage", false, "also run the default pipeline with ClickHouse stopped and report peak RSS against the memory limit")
	flag.DurationVar(&o.OutageLoad, "outage-load", 2*time.Minute, "how long the load runs against the outage")
	flag.Func("set", "a collector --set value (key::path=value) for the default pipeline, not the floor; repeatable. Measures a variant, e.g. -set processors::ctxaudit::analyze_sessions=false", func(kv string) error {
		if !strings.Contains(kv, "=") {
			return fmt.Errorf("want key::path=value, got %q", kv)
		}
		o.Set = append(o.Set, kv)
		return nil
	})
	flag.StringVar(&o.Compare, "compare", "", "another build of the distribution to measure in every round beside -bin, taking turns at going first, e.g. one built from main; the report compares the two")
	flag.StringVar(&o.ProfileDir, "profile", "", "write each collector's CPU profile (its whole run) and allocation profile (at the end of the measurement) to this directory, e.g. round1-default.cpu.pprof; read with go tool pprof bin/ctxaudit FILE. Sampling adds about 1 % CPU")
	flag.IntVar(&o.Rounds, "rounds", 1, "measure the floor and the default pipeline this many times, alternating, and report the median round")
	flag.Parse()

	self, err := os.Executable()
	if err != nil {
		return err
	}
	o.LoadCommand = []string{self, "load"}
	o.Log = os.Stderr
	work, err := os.MkdirTemp("", "ctxaudit-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	o.WorkDir = work

	o.ClickHouse = os.Getenv("CTXAUDIT_BENCH_CLICKHOUSE")
	if o.ClickHouse == "" {
		dir := filepath.Join(work, "clickhouse")
		addr, pid, stop, err := startClickHouse(ctx, o.Binary, dir)
		if err != nil {
			return err
		}
		defer stop()
		o.ClickHouse, o.ClickHousePID = addr, pid
		fmt.Fprintf(os.Stderr, "started ClickHouse %s (pid %d)\n", addr, pid)
	}
	rep, err := benchcollector.Run(ctx, o)
	if rep != nil {
		rep.WriteText(os.Stdout)
		if jsonOut != "" {
			b, _ := json.MarshalIndent(rep, "", "  ")
			if werr := os.WriteFile(jsonOut, append(b, '\n'), 0o644); werr != nil && err == nil {
				err = werr
			}
		}
	}
	return err
}

// startClickHouse starts a detached dev server in dir and returns its
// address, its pid and how to stop it (only this server).
func startClickHouse(ctx context.Context, bin, dir string) (string, int, func(), error) {
	ctx2, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx2, bin, "dev", "clickhouse", "--port", "0", "--http-port", "0",
		"--detach", "--print-address", "--dir", dir).Output()
	if err != nil {
		return "", 0, nil, fmt.Errorf("start ClickHouse: %w", err)
	}
	stop := func() {
		sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = exec.CommandContext(sctx, bin, "dev", "clickhouse", "--stop", "--dir", dir).Run()
	}
	b, err := os.ReadFile(filepath.Join(dir, "server.pid"))
	if err != nil {
		stop()
		return "", 0, nil, fmt.Errorf("ClickHouse pid: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		stop()
		return "", 0, nil, fmt.Errorf("ClickHouse pid: %w", err)
	}
	return strings.TrimSpace(string(out)), pid, stop, nil
}
