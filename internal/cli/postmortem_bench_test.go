package cli

import (
	"context"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/schema/chstore/chstoretest"
)

// BenchmarkPostmortem runs `ctxaudit postmortem` in-process, connection
// set-up included, for one 50-call session (each row stored twice, as after
// a re-ingestion) in a table of 10 million tool calls over 58 days, and
// reports the median and 95th-percentile latency. The target is a median
// under 300 ms.
//
// The table is generated server-side on first use, which takes about a
// minute; CTXAUDIT_BENCH_CLICKHOUSE keeps it between runs and
// CTXAUDIT_BENCH_TOOL_CALLS shrinks it (see chstoretest.BenchStore). Run:
//
//	go test ./internal/cli -run '^$' -bench Postmortem -benchtime 50x
func BenchmarkPostmortem(b *testing.B) {
	s, session := chstoretest.BenchStore(b, chstoretest.BenchOptions(b))
	addr := "clickhouse://default@" + s.Addr() + "/" + s.Database()
	for _, format := range []string{"json", "text", "markdown"} {
		b.Run(format, func(b *testing.B) {
			ctx := context.Background()
			var took []time.Duration
			for b.Loop() {
				start := time.Now()
				if code := Run(ctx, []string{"postmortem", "--clickhouse", addr, "--session", session, "--format", format}, io.Discard, io.Discard); code != ExitOK {
					b.Fatalf("exit %d", code)
				}
				took = append(took, time.Since(start))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "ms-median")
			b.ReportMetric(float64(took[len(took)*95/100].Microseconds())/1000, "ms-p95")
		})
	}
}
