package distribution

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/ctxaudit/ctxaudit/collector/otelconv"
	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/schema"
)

// BenchmarkOTLPToClickHouse measures sustained tool-call spans per second
// through OTLP/gRPC → ctxaudit processor → batch → ctxaudit_clickhouse into a
// real ClickHouse, and the collector's CPU per 10k spans/s. Half of the spans
// carry exact ctxaudit.* figures; half carry only gen_ai.tool.call.result, so
// the processor runs forensics on them.
//
//	go test -run '^$' -bench OTLPToClickHouse -benchtime 1x ./collector/distribution/
//
// CTXAUDIT_BENCH_SPANS sets the number of spans per iteration (default 200,000).
func BenchmarkOTLPToClickHouse(b *testing.B) {
	total := 200_000
	if v, err := strconv.Atoi(os.Getenv("CTXAUDIT_BENCH_SPANS")); err == nil && v > 0 {
		total = v
	}
	const perRequest = 1000
	addr := chtest.Address(b)
	grpcPort := freePort(b)
	startCollector(b, fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      grpc: {endpoint: "127.0.0.1:%d", max_recv_msg_size_mib: 64}
processors:
  ctxaudit:
    analyze_sessions: false
  batch:
    send_batch_size: 20000
    send_batch_max_size: 20000
    timeout: 200ms
exporters:
  ctxaudit_clickhouse:
    endpoint: %s
    sending_queue: {enabled: true, num_consumers: 4, queue_size: 1000}
service:
  pipelines:
    traces: {receivers: [otlp], processors: [ctxaudit, batch], exporters: [ctxaudit_clickhouse]}
  telemetry:
    metrics: {level: none}
    logs: {level: warn}
`, grpcPort, addr))

	conn, err := grpc.NewClient(fmt.Sprintf("127.0.0.1:%d", grpcPort), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	client := ptraceotlp.NewGRPCClient(conn)
	s := chtest.OpenStore(b, addr)
	ctx := context.Background()

	var spansPerSec, cpuPer10k float64
	for iter := 0; iter < b.N; iter++ {
		session := fmt.Sprintf("bench-%d-%d", time.Now().UnixNano(), iter)
		cpu0 := cpuTime()
		start := time.Now()
		b.ResetTimer()
		// Requests are built as they are sent, so the process's peak RSS is
		// the collector's, not a pre-built backlog's; building them is
		// counted against the collector (a pessimistic figure).
		for r := 0; r < total/perRequest; r++ {
			req := ptraceotlp.NewExportRequestFromTraces(benchTraces(session, r*perRequest, perRequest))
			if _, err := client.Export(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
		for {
			var n uint64
			if err := s.Conn().QueryRow(ctx, "SELECT count() FROM "+s.Database()+".tool_calls WHERE session_id = ?", session).Scan(&n); err == nil && n >= uint64(total) {
				break
			}
			if time.Since(start) > 5*time.Minute {
				b.Fatal("rows did not arrive within 5 minutes")
			}
			time.Sleep(50 * time.Millisecond)
		}
		elapsed := time.Since(start)
		b.StopTimer()
		spansPerSec = float64(total) / elapsed.Seconds()
		// CPU of this process: the collector plus the (light) OTLP client.
		cpuPer10k = (cpuTime() - cpu0).Seconds() / elapsed.Seconds() / (spansPerSec / 10_000)
	}
	b.ReportMetric(spansPerSec, "spans/s")
	b.ReportMetric(cpuPer10k, "cpu-cores/10k-spans/s")
	b.ReportMetric(float64(peakRSS())/(1<<20), "peak-RSS-MiB")
}

func benchTraces(session string, from, n int) ptrace.Traces {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	ts := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	result := "Exit code: 0\nWall time: 0.1 seconds\nTotal output lines: 300\nOutput:\n" + strings.Repeat("some output line\n", 40) +
		"[... omitted 220 of 300 lines ...]\n\n" + strings.Repeat("tail line\n", 40)
	for i := from; i < from+n; i++ {
		c := schema.ToolCall{SessionID: session, CallID: fmt.Sprintf("call-%d", i), Tool: "Read", Timestamp: ts.Add(time.Duration(i) * time.Millisecond),
			Source: schema.HarnessGeneric, Model: "bench", Arguments: `{"file_path":"/srv/app/file.go"}`}
		if i%2 == 0 {
			c.Forensics = schema.Forensics{
				Original: schema.Original{Sizes: schema.Sizes{Bytes: schema.Known(120000), Lines: schema.Known(5000)}, Source: schema.SourceSDK},
				Context:  schema.Sizes{Bytes: schema.Known(48000), Lines: schema.Known(2000)}, Truncated: true,
				Kind: schema.KindExplicit, Strategy: schema.StrategyPaginated,
			}
			otelconv.AppendToolCall(spans, &c)
			continue
		}
		sp := spans.AppendEmpty()
		sp.SetName("execute_tool shell_command")
		sp.SetTraceID(otelconv.TraceID(session))
		sp.SetSpanID(otelconv.SpanID(session, "call", c.CallID))
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(c.Timestamp))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(c.Timestamp))
		a := sp.Attributes()
		a.PutStr(otelconv.AttrOperationName, otelconv.OperationExecuteTool)
		a.PutStr(otelconv.AttrToolName, "shell_command")
		a.PutStr(otelconv.AttrToolCallID, c.CallID)
		a.PutStr(otelconv.AttrConversationID, session)
		a.PutStr(otelconv.AttrSource, "codex")
		a.PutStr(otelconv.AttrToolCallResult, result)
	}
	return td
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSS reads VmHWM (bytes) from /proc/self/status.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			f := strings.Fields(line)
			if len(f) >= 2 {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}
