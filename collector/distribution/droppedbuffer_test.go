package distribution_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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

// TestPostmortemCountsPastADroppedBuffer: a processor whose
// max_calls_per_session is smaller than a session analyses and drops the
// session's buffer when it fills, and holds what comes after in a partial
// one (docs/design.md §10.3). The stored sessions row is then the first
// buffer's — it counts 2 of the example session's 4 calls and none of its
// answer — because the partial buffer's row ranks below it. `ctxaudit
// postmortem` of the whole session counts the stored records instead, and
// says so.
func TestPostmortemCountsPastADroppedBuffer(t *testing.T) {
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
		partial := collectortest.Scalar(t, s, "SELECT count() FROM DB.sessions WHERE session_id = ? AND tool_calls = 2 AND answers = 1", session)
		return calls == "4" && answers == "1" && partial != "0", "calls=" + calls + " answers=" + answers + " partial session rows=" + partial
	})
	if got := collectortest.Scalar(t, s, "SELECT concat(toString(tool_calls), ' ', toString(answers)) FROM DB.sessions FINAL WHERE session_id = ?", session); got != "2 0" {
		t.Fatalf("the stored session row counts %q calls and answers, want the first buffer's \"2 0\": the test shows nothing", got)
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
	if !doc.Recounted || doc.Session.ToolCalls != 4 || doc.Session.TruncatedCalls != 3 || doc.Session.Answers != 1 {
		t.Errorf("JSON: session_recounted %v, %d calls (%d truncated), %d answers; want true, 4 (3), 1",
			doc.Recounted, doc.Session.ToolCalls, doc.Session.TruncatedCalls, doc.Session.Answers)
	}
	if text := postmortem("text"); !strings.Contains(text, "4 tool calls (3 truncated") || !strings.Contains(text, "the stored session row counts fewer") {
		t.Errorf("text: the recorded line does not count the stored records and say why:\n%s", text)
	}
}
