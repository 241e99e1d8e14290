package distribution_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/ctxaudit/ctxaudit/collector/distribution"
	"github.com/ctxaudit/ctxaudit/examples/harness/agentsim"
	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/internal/cli"
	"github.com/ctxaudit/ctxaudit/internal/collectortest"
)

// TestSessionRowCountsPastADroppedBuffer: a processor whose
// max_calls_per_session is smaller than a session analyses and drops the
// session's buffer when it fills, and holds what comes after in a partial
// one (docs/design.md §10.3). The first buffer's row counts 2 of the
// example session's 4 calls and none of its answer, and the partial
// buffer's row ranks below it; once the partial buffer's records are
// written, the exporter writes the session's row recounted from every
// stored record, which ranks above both. So the stored row counts the
// whole session, and `ctxaudit postmortem` and `ctxaudit sessions` read it
// as it is, with nothing left to recount.
func TestSessionRowCountsPastADroppedBuffer(t *testing.T) {
	addr := chtest.Address(t)
	port := collectortest.FreePort(t)
	collectortest.Start(t, distribution.Settings("test"), fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      grpc: {endpoint: "127.0.0.1:%d"}
processors:
  ctxaudit: {session_idle: 300ms, max_calls_per_session: 2}
exporters:
  ctxaudit_clickhouse:
    endpoint: %s
    retry_on_failure: {initial_interval: 100ms, max_interval: 1s}
service:
  pipelines:
    traces: {receivers: [otlp], processors: [ctxaudit], exporters: [ctxaudit_clickhouse]}
  telemetry:
    metrics: {level: none}
`, port, addr))

	ctx := context.Background()
	const session = "dropped-buffer"
	exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(fmt.Sprintf("127.0.0.1:%d", port)), otlptracegrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	agentsim.EmitTraces(ctx, tp, agentsim.Scenario(session), time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	s := chtest.OpenStore(t, addr)
	collectortest.WaitFor(t, "the session's rows", 30*time.Second, func() (bool, string) {
		calls := collectortest.Scalar(t, s, "SELECT count() FROM DB.tool_calls FINAL WHERE session_id = ?", session)
		answers := collectortest.Scalar(t, s, "SELECT count() FROM DB.answers FINAL WHERE session_id = ?", session)
		first := collectortest.Scalar(t, s, "SELECT count() FROM DB.sessions WHERE session_id = ? AND tool_calls = 2 AND answers = 0", session)
		partial := collectortest.Scalar(t, s, "SELECT count() FROM DB.sessions WHERE session_id = ? AND tool_calls = 2 AND answers = 1", session)
		row := collectortest.Scalar(t, s, "SELECT any(concat(toString(tool_calls), ' ', toString(truncated_calls), ' ', toString(answers))) FROM DB.sessions FINAL WHERE session_id = ?", session)
		return calls == "4" && answers == "1" && first != "0" && partial != "0" && row == "4 3 1",
			"calls=" + calls + " answers=" + answers + " first buffer's rows=" + first + " partial rows=" + partial + " the row (calls, truncated, answers)=" + row
	})
	// The recounted row spans every record: the last call's time is its end.
	if got, want := collectortest.Scalar(t, s, "SELECT toString(ended_at >= (SELECT max(ts) FROM DB.tool_calls WHERE session_id = ?)) FROM DB.sessions FINAL WHERE session_id = ?", session, session), "1"; got != want {
		t.Errorf("the session row ends before its last call")
	}

	postmortem := func(format string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if code := cli.Run(ctx, []string{"postmortem", "--clickhouse", addr, "--session", session, "--format", format}, &out, &errOut); code != cli.ExitOK {
			t.Fatalf("postmortem --format %s: exit %d: %s", format, code, errOut.String())
		}
		return out.String()
	}
	var doc struct {
		Recounted bool `json:"session_recounted"`
		Session   struct {
			ToolCalls      int `json:"tool_calls"`
			TruncatedCalls int `json:"truncated_calls"`
			Answers        int `json:"answers"`
		} `json:"session"`
	}
	if err := json.Unmarshal([]byte(postmortem("json")), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Recounted || doc.Session.ToolCalls != 4 || doc.Session.TruncatedCalls != 3 || doc.Session.Answers != 1 {
		t.Errorf("JSON: session_recounted %v, %d calls (%d truncated), %d answers; want false, 4 (3), 1",
			doc.Recounted, doc.Session.ToolCalls, doc.Session.TruncatedCalls, doc.Session.Answers)
	}
	if text := postmortem("text"); !strings.Contains(text, "4 tool calls (3 truncated") || strings.Contains(text, "the stored session row counts fewer") {
		t.Errorf("text: the recorded line does not count the stored row's 4 calls, or recounts it:\n%s", text)
	}

	// sessions lists the stored row: nothing to recount.
	var out, errOut bytes.Buffer
	if code := cli.Run(ctx, []string{"sessions", "--clickhouse", addr, "--format", "json"}, &out, &errOut); code != cli.ExitOK {
		t.Fatalf("sessions: exit %d: %s", code, errOut.String())
	}
	var listed []struct {
		SessionID      string `json:"session_id"`
		ToolCalls      int    `json:"tool_calls"`
		TruncatedCalls int    `json:"truncated_calls"`
		Answers        int    `json:"answers"`
		Recounted      bool   `json:"recounted"`
	}
	if err := json.Unmarshal(out.Bytes(), &listed); err != nil {
		t.Fatal(err)
	}
	if len(listed) != 1 || listed[0].SessionID != session || listed[0].Recounted || listed[0].ToolCalls != 4 ||
		listed[0].TruncatedCalls != 3 || listed[0].Answers != 1 {
		t.Errorf("sessions lists %+v; want %s as stored: 4 calls (3 truncated), 1 answer", listed, session)
	}
}

// TestDroppedSessionGoesOnWhole: with storage, a session the processor
// drops past max_sessions keeps its records on disk (parked); when it goes
// on, they are read back and the session is analysed whole. The example
// session, interrupted after two calls by another session that drops it,
// is stored as the same session sent in one go is: `ctxaudit sessions`
// lists both with 4 calls, 3 truncated, 1 answer, and the same risk, and
// its postmortem needs no recount.
func TestDroppedSessionGoesOnWhole(t *testing.T) {
	addr := chtest.Address(t)
	port, metrics := collectortest.FreePort(t), collectortest.FreePort(t)
	collectortest.Start(t, distribution.Settings("test"), fmt.Sprintf(`
extensions:
  file_storage: {directory: %q}
receivers:
  otlp:
    protocols:
      grpc: {endpoint: "127.0.0.1:%d"}
processors:
  ctxaudit: {session_idle: 300ms, max_sessions: 1, storage: file_storage}
exporters:
  ctxaudit_clickhouse:
    endpoint: %s
    retry_on_failure: {initial_interval: 100ms, max_interval: 1s}
service:
  extensions: [file_storage]
  pipelines:
    traces: {receivers: [otlp], processors: [ctxaudit], exporters: [ctxaudit_clickhouse]}
  telemetry:
    metrics:
      readers:
        - pull: {exporter: {prometheus: {host: 127.0.0.1, port: %d}}}
`, t.TempDir(), port, addr, metrics))

	ctx := context.Background()
	exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(fmt.Sprintf("127.0.0.1:%d", port)), otlptracegrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(ctx) }()
	start := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	const dropped, whole = "dropped-and-resumed", "sent-in-one-go"
	s := agentsim.Scenario(dropped)
	head, rest := s, s
	head.Calls, head.Answer = s.Calls[:2], ""
	rest.Calls = s.Calls[2:]
	agentsim.EmitTraces(ctx, tp, head, start)
	agentsim.EmitTraces(ctx, tp, agentsim.Scenario(whole), start.Add(time.Hour)) // drops the first
	collectortest.WaitFor(t, "the dropped session parked", 30*time.Second, func() (bool, string) {
		n := metricValue(t, metrics, "ctxaudit_processor_calls_parked")
		return n == 2, fmt.Sprintf("%v calls parked", n)
	})
	agentsim.EmitTraces(ctx, tp, rest, start.Add(2*time.Second))                     // its calls 3 and 4 keep their times
	agentsim.EmitTraces(ctx, tp, agentsim.Scenario("third"), start.Add(2*time.Hour)) // drops it again

	st := chtest.OpenStore(t, addr)
	collectortest.WaitFor(t, "both sessions whole", 30*time.Second, func() (bool, string) {
		got := collectortest.Scalar(t, st, "SELECT toString(groupArray(tool_calls)) FROM (SELECT tool_calls FROM DB.sessions FINAL WHERE session_id IN (?, ?))", dropped, whole)
		return got == "[4,4]", "session rows count " + got
	})
	if n := metricValue(t, metrics, "ctxaudit_processor_sessions_resumed"); n != 1 {
		t.Errorf("sessions_resumed %v; want 1", n)
	}

	var out, errOut bytes.Buffer
	if code := cli.Run(ctx, []string{"sessions", "--clickhouse", addr, "--format", "json"}, &out, &errOut); code != cli.ExitOK {
		t.Fatalf("sessions: exit %d: %s", code, errOut.String())
	}
	var listed []map[string]any
	if err := json.Unmarshal(out.Bytes(), &listed); err != nil {
		t.Fatal(err)
	}
	rows := map[string]map[string]any{}
	for _, r := range listed {
		id := r["session_id"].(string)
		// What differs by construction: the id and the times.
		delete(r, "session_id")
		delete(r, "started_at")
		delete(r, "ended_at")
		rows[id] = r
	}
	if rows[dropped] == nil || !reflect.DeepEqual(rows[dropped], rows[whole]) {
		t.Errorf("sessions lists the dropped session as\n%v\nand the one sent in one go as\n%v", rows[dropped], rows[whole])
	}
	if r := rows[dropped]; r == nil || r["tool_calls"] != 4.0 || r["truncated_calls"] != 3.0 || r["answers"] != 1.0 {
		t.Errorf("the dropped session is listed as %v; want 4 calls, 3 truncated, 1 answer", r)
	}
	out.Reset()
	if code := cli.Run(ctx, []string{"postmortem", "--clickhouse", addr, "--session", dropped, "--format", "json"}, &out, &errOut); code != cli.ExitOK {
		t.Fatalf("postmortem: exit %d: %s", code, errOut.String())
	}
	var pm struct {
		Recounted bool `json:"session_recounted"`
	}
	if err := json.Unmarshal(out.Bytes(), &pm); err != nil || pm.Recounted {
		t.Errorf("postmortem recounted the session (%v, %v); its row should count every call", pm.Recounted, err)
	}
}

// metricValue is the sum of a collector metric's series on its Prometheus
// endpoint (-1: not exported yet).
func metricValue(t *testing.T, port int, name string) float64 {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return -1
	}
	sum, found := 0.0, false
	for line := range strings.Lines(string(body)) {
		fields := strings.Fields(line)
		if len(fields) < 2 || strings.HasPrefix(line, "#") {
			continue
		}
		series := fields[0]
		if i := strings.IndexByte(series, '{'); i >= 0 {
			series = series[:i]
		}
		if strings.TrimPrefix(strings.TrimSuffix(series, "_total"), "otelcol_") != name {
			continue
		}
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		sum, found = sum+v, true
	}
	if !found {
		return -1
	}
	return sum
}
