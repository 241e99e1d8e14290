package distribution

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/ctxaudit/ctxaudit/collector/transcript/transcripttest"
	"github.com/ctxaudit/ctxaudit/examples/harness/agentsim"
	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/internal/collectortest"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

func TestMain(m *testing.M) { chtest.Main(m) }

func freePort(t testing.TB) int { return collectortest.FreePort(t) }

// startCollector runs the distribution in-process with the given YAML and
// stops it at the end of the test.
func startCollector(t testing.TB, yaml string) { collectortest.Start(t, Settings("test"), yaml) }

func waitFor(t testing.TB, what string, cond func() (bool, string)) {
	t.Helper()
	collectortest.WaitFor(t, what, 30*time.Second, cond)
}

func scalar(t *testing.T, s *chstore.Store, query string, args ...any) string {
	t.Helper()
	return collectortest.Scalar(t, s, query, args...)
}

// TestOTLPToClickHouse sends the example harness's spans over OTLP gRPC and
// HTTP, and a Claude Code tool_result log event over HTTP, through
// otlp → ctxaudit → batch → ctxaudit_clickhouse, and checks the rows.
func TestOTLPToClickHouse(t *testing.T) {
	addr := chtest.Address(t)
	grpcPort, httpPort := freePort(t), freePort(t)
	startCollector(t, fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      grpc: {endpoint: "127.0.0.1:%d"}
      http: {endpoint: "127.0.0.1:%d"}
processors:
  ctxaudit:
    session_idle: 300ms
  batch:
    timeout: 100ms
exporters:
  ctxaudit_clickhouse:
    endpoint: %s
    retry_on_failure: {initial_interval: 100ms, max_interval: 1s}
service:
  pipelines:
    traces: {receivers: [otlp], processors: [ctxaudit, batch], exporters: [ctxaudit_clickhouse]}
    logs: {receivers: [otlp], processors: [ctxaudit, batch], exporters: [ctxaudit_clickhouse]}
  telemetry:
    metrics: {level: none}
`, grpcPort, httpPort, addr))

	ctx := context.Background()
	start := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

	grpcExp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(fmt.Sprintf("127.0.0.1:%d", grpcPort)), otlptracegrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	tpGRPC := sdktrace.NewTracerProvider(sdktrace.WithSyncer(grpcExp))
	agentsim.EmitTraces(ctx, tpGRPC, agentsim.Scenario("otlp-grpc"), start)
	if err := tpGRPC.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	httpExp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(fmt.Sprintf("127.0.0.1:%d", httpPort)), otlptracehttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	tpHTTP := sdktrace.NewTracerProvider(sdktrace.WithSyncer(httpExp))
	agentsim.EmitTraces(ctx, tpHTTP, agentsim.Scenario("otlp-http"), start)
	if err := tpHTTP.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	logExp, err := otlploghttp.New(ctx, otlploghttp.WithEndpoint(fmt.Sprintf("127.0.0.1:%d", httpPort)), otlploghttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(logExp)))
	agentsim.EmitClaudeCodeToolResult(ctx, lp, "cc-session", "Read", 12345, start)
	if err := lp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	s := chtest.OpenStore(t, addr)
	for _, session := range []string{"otlp-grpc", "otlp-http"} {
		waitFor(t, session+" rows", func() (bool, string) {
			if ok, _ := tableExists(s); !ok {
				return false, "no schema yet"
			}
			calls := scalar(t, s, "SELECT count() FROM DB.tool_calls FINAL WHERE session_id = ?", session)
			answers := scalar(t, s, "SELECT count() FROM DB.answers FINAL WHERE session_id = ?", session)
			sessions := scalar(t, s, "SELECT count() FROM DB.sessions FINAL WHERE session_id = ?", session)
			return calls == "4" && answers == "1" && sessions == "1", "calls=" + calls + " answers=" + answers + " sessions=" + sessions
		})
		row := func(call, cols string) string {
			return scalar(t, s, "SELECT concat("+cols+") FROM DB.tool_calls FINAL WHERE session_id = ? AND call_id = ?", session, call)
		}
		// Exact figures reported by the harness pass through unchanged.
		if got := row("read-1", "toString(original_bytes), '/', toString(context_bytes), ' ', toString(truncation_kind), ' ', toString(strategy), ' ', toString(shown_start), '-', toString(shown_end), ' of ', toString(total), ' ', shown_unit"); got != "120000/48000 explicit paginated 1-2000 of 5000 lines" {
			t.Errorf("%s read-1: %q", session, got)
		}
		// Only gen_ai.tool.call.result: the processor detects Codex's head+tail notice.
		if got := row("shell-1", "toString(truncated), ' ', toString(truncation_kind), ' ', toString(strategy), ' ', toString(original_lines)"); got != "1 explicit head_tail 500" {
			t.Errorf("%s shell-1 (detected by the processor): %q", session, got)
		}
		if got := row("grep-1", "toString(truncated), ' ', toString(truncation_kind)"); got != "0 none" {
			t.Errorf("%s grep-1: %q", session, got)
		}
		if got := row("fetch-1", "toString(truncation_kind), ' ', toString(strategy), ' ', toString(original_bytes)"); got != "silent summary 156000" {
			t.Errorf("%s fetch-1: %q", session, got)
		}
		// Session analysis ran for the OTLP session: the answer's verdict.
		risk := scalar(t, s, "SELECT concat(toString(risk), ' ', arrayStringConcat(reasons, ',')) FROM DB.answers FINAL WHERE session_id = ?", session)
		if !strings.HasPrefix(risk, "high ") || !strings.Contains(risk, "absence_claim_on_partial_input") || !strings.Contains(risk, "silent_truncation") {
			t.Errorf("%s answer verdict: %q", session, risk)
		}
	}
	// A Claude Code claude_code.tool_result log event becomes a tool-call row.
	waitFor(t, "Claude Code log row", func() (bool, string) {
		got := scalar(t, s, "SELECT count() FROM DB.tool_calls FINAL WHERE session_id = 'cc-session' AND tool = 'Read' AND source = 'claude_code'")
		return got == "1", "rows=" + got
	})
}

func tableExists(s *chstore.Store) (bool, error) {
	var n uint64
	err := s.Conn().QueryRow(context.Background(), "SELECT count() FROM system.tables WHERE database = ? AND name = 'answers'", s.Database()).Scan(&n)
	return n == 1, err
}

func copyTree(t *testing.T, src, dst string) { collectortest.CopyTree(t, src, dst) }

// TestTranscriptsToClickHouse tails a real Claude Code session folder through
// agenttranscripts → ctxaudit → ctxaudit_clickhouse, grows the transcript
// while the collector runs, then restarts the collector on the same
// file_storage: every call is stored exactly once.
func TestTranscriptsToClickHouse(t *testing.T) {
	addr := chtest.Address(t)
	watched, state := t.TempDir(), t.TempDir()
	src := filepath.Join(transcripttest.FixturesDir(t), "claude-code", "session-2.1.6-637ef6e7")
	copyTree(t, src, watched)
	mainFile := filepath.Join(watched, mainSessionID+".jsonl")
	full, err := os.ReadFile(mainFile)
	if err != nil {
		t.Fatal(err)
	}
	// Start with the first 60 lines of the main thread; the rest is appended later.
	lines := strings.SplitAfter(string(full), "\n")
	if err := os.WriteFile(mainFile, []byte(strings.Join(lines[:60], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`
extensions:
  file_storage: {directory: %q}
receivers:
  agenttranscripts:
    include: ["%s/**/*.jsonl"]
    storage: file_storage
    poll_interval: 100ms
    session_idle: 300ms
processors:
  ctxaudit: {}
exporters:
  ctxaudit_clickhouse:
    endpoint: %s
    retry_on_failure: {initial_interval: 100ms}
service:
  extensions: [file_storage]
  pipelines:
    traces: {receivers: [agenttranscripts], processors: [ctxaudit], exporters: [ctxaudit_clickhouse]}
  telemetry:
    metrics: {level: none}
`, state, watched, addr)

	s := chtest.OpenStore(t, addr)
	counts := func() (string, string) {
		if ok, _ := tableExists(s); !ok {
			return "no schema", ""
		}
		return scalar(t, s, "SELECT count() FROM DB.tool_calls FINAL WHERE session_id = ?", mainSessionID),
			scalar(t, s, "SELECT count() FROM DB.answers FINAL WHERE session_id = ?", mainSessionID)
	}
	t.Run("first run, then the transcript grows", func(t *testing.T) {
		startCollector(t, cfg)
		// Lines 1–60 of the main thread hold 16 tool results; the sub-agent file holds 7.
		waitFor(t, "calls of the first 60 lines", func() (bool, string) { c, _ := counts(); return c == "23", "calls=" + c })
		f, err := os.OpenFile(mainFile, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(strings.Join(lines[60:], "")); err != nil {
			t.Fatal(err)
		}
		f.Close()
		waitFor(t, "all calls and answers", func() (bool, string) { c, a := counts(); return c == "26" && a == "3", "calls=" + c + " answers=" + a })
		got := scalar(t, s, "SELECT concat(toString(original_chars), '/', toString(original_bytes), ' ', toString(strategy), ' ', toString(original_source)) FROM DB.tool_calls FINAL WHERE session_id = ? AND source_line = 52", mainSessionID)
		if got != "85713/85795 spill_to_file saved_file" {
			t.Errorf("line 52 Grep: %q", got)
		}
	})
	t.Run("restart on the same storage", func(t *testing.T) {
		startCollector(t, cfg)
		time.Sleep(time.Second) // several polls
		if c, a := counts(); c != "26" || a != "3" {
			t.Fatalf("after restart: calls=%s answers=%s, want 26 and 3", c, a)
		}
		// No duplicate ids, even before a merge.
		dups := scalar(t, s, "SELECT count() - uniqExact(call_id) FROM DB.tool_calls FINAL WHERE session_id = ?", mainSessionID)
		if dups != "0" {
			t.Fatalf("duplicate call ids: %s", dups)
		}
	})
}

const mainSessionID = "637ef6e7-e740-4503-8ff8-5780d7c0918f"
