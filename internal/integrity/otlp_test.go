package integrity

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/ctxaudit/ctxaudit/examples/harness/agentsim"
)

// otlpConfig is an OTLP/HTTP collector writing to addr, with or without the
// ctxaudit processor.
func otlpConfig(port int, addr string, withProcessor bool) string {
	procs := "[batch]"
	if withProcessor {
		procs = "[ctxaudit, batch]"
	}
	return fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      http: {endpoint: "127.0.0.1:%d"}
processors:
  ctxaudit: {session_idle: 200ms}
  batch: {timeout: 100ms}
exporters:
  ctxaudit_clickhouse:
    endpoint: %s
    retry_on_failure: {initial_interval: 100ms, max_interval: 1s}
service:
  pipelines:
    traces: {receivers: [otlp], processors: %s, exporters: [ctxaudit_clickhouse]}
    logs: {receivers: [otlp], processors: %s, exporters: [ctxaudit_clickhouse]}
  telemetry:
    metrics: {level: none}
`, port, addr, procs, procs)
}

func emitHarness(t *testing.T, port int, session string, start time.Time) {
	t.Helper()
	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(fmt.Sprintf("127.0.0.1:%d", port)), otlptracehttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	agentsim.EmitTraces(ctx, tp, agentsim.Scenario(session), start)
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	logExp, err := otlploghttp.New(ctx, otlploghttp.WithEndpoint(fmt.Sprintf("127.0.0.1:%d", port)), otlploghttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(logExp)))
	// A spilled Bash output: Claude Code reports the 2 KB preview's size.
	agentsim.EmitClaudeCodeToolResult(ctx, lp, "cc-"+session, "Bash", 2048, start)
	if err := lp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestOTLPHarness sends the example harness (examples/harness) and a Claude
// Code tool_result event through OTLP, with and without the ctxaudit
// processor: the harness's reported figures and hint are used as reported
// and credited to the attribute, and the event is a context size in bytes
// with nothing else known and no verdict — the same row on both paths.
func TestOTLPHarness(t *testing.T) {
	start := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	rowsOf := func(withProcessor bool) (map[string]string, string) {
		addr, s := freshStore(t)
		port := freePort(t)
		c := startCollector(t, otlpConfig(port, addr, withProcessor))
		emitHarness(t, port, "harness", start)
		want := "1"
		if withProcessor {
			want = "2" // the answer too, once analysed
		}
		waitFor(t, "the harness rows", func() (bool, string) {
			calls := scalar(t, s, "SELECT count() FROM DB.tool_calls FINAL")
			sessions := scalar(t, s, "SELECT count() FROM (SELECT DISTINCT session_id FROM DB.tool_calls)")
			answers := scalar(t, s, "SELECT count() + 1 FROM DB.answers FINAL")
			return calls == "5" && sessions == "2" && answers == want, calls + " calls, " + answers + " answers+1"
		})
		c.stop(t)
		out := map[string]string{}
		for _, call := range []string{"read-1", "cc"} {
			where := "call_id = 'read-1'"
			if call == "cc" {
				where = "session_id = 'cc-harness'"
			}
			out[call] = scalar(t, s, "SELECT concat(ifNull(toString(original_bytes), 'NULL'), '/', ifNull(toString(original_chars), 'NULL'), '/', ifNull(toString(original_lines), 'NULL'), ' ', toString(original_source), ' | ', ifNull(toString(context_bytes), 'NULL'), '/', ifNull(toString(context_chars), 'NULL'), '/', ifNull(toString(context_lines), 'NULL'), '/', ifNull(toString(context_tokens), 'NULL'), ' | ', toString(truncated), ' ', toString(truncation_kind), ' ', toString(strategy), ' | next ', toString(disclosure_next), ' ', next_hint, ' | ', detector) FROM DB.tool_calls FINAL WHERE "+where)
		}
		return out, addr
	}
	with, addr := rowsOf(true)
	without, _ := rowsOf(false)
	wantRows := map[string]string{
		"read-1": "120000/NULL/5000 otel_attribute | 48000/NULL/2000/NULL | 1 explicit paginated | next 1 Read with offset=2001 to continue | ",
		"cc":     "NULL/NULL/NULL unknown | 2048/NULL/NULL/NULL | 0 unknown none | next 0  | claude_code.tool_result_event",
	}
	for call, want := range wantRows {
		if with[call] != want {
			t.Errorf("%s through the processor:\n got %s\nwant %s", call, with[call], want)
		}
		if without[call] != want {
			t.Errorf("%s without the processor:\n got %s\nwant %s", call, without[call], want)
		}
	}
	text := runCLI(t, "postmortem", "--clickhouse", addr, "--session", "harness")
	for _, want := range []string{"(otel_attribute)", "how to continue yes"} {
		if !strings.Contains(text, want) {
			t.Errorf("postmortem of the harness session lacks %q:\n%s", want, text)
		}
	}
}
