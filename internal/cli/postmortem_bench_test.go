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
	ctx := context.Background()
	sp, err := s.SessionSpan(ctx, session)
	if err != nil {
		b.Fatal(err)
	}
	answers, err := s.SessionAnswers(ctx, sp)
	if err != nil || len(answers) == 0 {
		b.Fatalf("the session's answers: %v, %v", answers, err)
	}
	// "json --answer": one answer's turn, read with the order of every
	// call of the session beside it.
	cases := map[string][]string{
		"json":          {"--format", "json"},
		"text":          {"--format", "text"},
		"markdown":      {"--format", "markdown"},
		"json --answer": {"--format", "json", "--answer", answers[len(answers)/2].MessageID},
	}
	for _, name := range []string{"json", "text", "markdown", "json --answer"} {
		b.Run(name, func(b *testing.B) {
			var took []time.Duration
			for b.Loop() {
				start := time.Now()
				args := append([]string{"postmortem", "--clickhouse", addr, "--session", session}, cases[name]...)
				if code := Run(ctx, args, io.Discard, io.Discard); code != ExitOK {
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
