package chstoretest

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

// Environment of the large benchmarks.
const (
	// EnvBenchCalls sets the size of the benchmark table (default
	// DefaultBenchCalls), e.g. 1000000 for a quick run.
	EnvBenchCalls = "CTXAUDIT_BENCH_TOOL_CALLS"
	// EnvBenchAddress names a database to fill once and keep between
	// benchmark runs (clickhouse://host:port/db); by default each run fills a
	// fresh database, which takes about a minute for 10 million calls.
	EnvBenchAddress = "CTXAUDIT_BENCH_CLICKHOUSE"
)

// DefaultBenchCalls is the table size the postmortem latency target is set for.
const DefaultBenchCalls = 10_000_000

// BenchOptions are the options of the benchmark table: EnvBenchCalls calls
// with the default spread (50-call sessions, 58 days at 10 million).
func BenchOptions(tb testing.TB) Options {
	tb.Helper()
	n := DefaultBenchCalls
	if v := os.Getenv(EnvBenchCalls); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n <= 0 {
			tb.Fatalf("%s=%q: want a positive number of calls", EnvBenchCalls, v)
		}
	}
	return Options{Calls: n}
}

// BenchStore returns a migrated store whose tables hold a Fill with o, and
// the id of a session in the middle of it, rewritten once (so reads must
// deduplicate). With EnvBenchAddress set, a database already holding exactly
// o.Calls calls is reused as is.
func BenchStore(tb testing.TB, o Options) (*chstore.Store, string) {
	tb.Helper()
	ctx := context.Background()
	addr := os.Getenv(EnvBenchAddress)
	if addr == "" {
		addr = chtest.Address(tb)
	}
	s := chtest.OpenStore(tb, addr)
	if _, err := s.Migrate(ctx); err != nil {
		tb.Fatalf("migrate: %v", err)
	}
	target := SessionID(o.Sessions() / 2)
	var have uint64
	if err := s.Conn().QueryRow(ctx, "SELECT count() FROM "+s.Database()+".tool_calls").Scan(&have); err != nil {
		tb.Fatal(err)
	}
	switch {
	case have == 0:
		start := time.Now()
		if err := Fill(ctx, s, o); err != nil {
			tb.Fatal(err)
		}
		if err := Rewrite(ctx, s, target); err != nil {
			tb.Fatal(err)
		}
		tb.Logf("filled %s with %d tool calls in %s", s.Database(), o.Calls, time.Since(start).Round(time.Second))
	case have < uint64(o.Calls):
		tb.Fatalf("%s holds %d tool calls, not the %d wanted: drop it or set %s", s.Database(), have, o.Calls, EnvBenchCalls)
	}
	return s, target
}
