package distribution

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/ctxaudit/ctxaudit/examples/harness/agentsim"
	"github.com/ctxaudit/ctxaudit/internal/chserver"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

// sendScenario emits the example harness's session over OTLP/HTTP.
func sendScenario(t *testing.T, httpPort int, session string, headers map[string]string) error {
	t.Helper()
	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(fmt.Sprintf("127.0.0.1:%d", httpPort)),
		otlptracehttp.WithInsecure(), otlptracehttp.WithHeaders(headers),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
	if err != nil {
		t.Fatal(err)
	}
	// Record the spans, then export them directly: ExportSpans returns the
	// collector's answer (a TracerProvider would hand errors to a global handler).
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	agentsim.EmitTraces(ctx, tp, agentsim.Scenario(session), time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	err = exp.ExportSpans(ctx, rec.Ended())
	_ = exp.Shutdown(ctx)
	return err
}

// outageServer is a ClickHouse the test can stop and start again on the
// same ports with the same data.
type outageServer struct {
	t    *testing.T
	dir  string
	tcp  int
	http int
	srv  *chserver.Server
}

func newOutageServer(t *testing.T) *outageServer {
	o := &outageServer{t: t, dir: t.TempDir(), tcp: freePort(t), http: freePort(t)}
	o.start()
	t.Cleanup(func() {
		if o.srv != nil {
			_ = o.srv.Stop()
		}
	})
	return o
}

func (o *outageServer) start() {
	srv, err := chserver.Start(context.Background(), chserver.Options{Dir: o.dir, TCPPort: o.tcp, HTTPPort: o.http})
	if err != nil {
		o.t.Skipf("cannot run a private ClickHouse for the outage test: %v", err)
	}
	o.srv = srv
}

func (o *outageServer) stop() {
	if err := o.srv.Stop(); err != nil {
		o.t.Fatal(err)
	}
	o.srv = nil
}

func (o *outageServer) addr() string {
	return fmt.Sprintf("clickhouse://default@127.0.0.1:%d/ctxaudit", o.tcp)
}

func (o *outageServer) count(session string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := chstore.Open(ctx, o.addr(), chstore.Options{})
	if err != nil {
		return "unreachable"
	}
	defer s.Close()
	var total, distinct uint64
	err = s.Conn().QueryRow(ctx, "SELECT count(), uniqExact(call_id) FROM ctxaudit.tool_calls FINAL WHERE session_id = ?", session).Scan(&total, &distinct)
	if err != nil {
		return "error: " + err.Error()
	}
	return fmt.Sprintf("%d/%d", total, distinct)
}

func outageConfig(httpPort int, addr, storageDir string) string {
	return fmt.Sprintf(`
extensions:
  file_storage:
    directory: %s
receivers:
  otlp:
    protocols:
      http: {endpoint: "127.0.0.1:%d"}
processors:
  ctxaudit:
    analyze_sessions: false
exporters:
  ctxaudit_clickhouse:
    endpoint: %s
    timeout: 2s
    dial_timeout: 1s
    retry_on_failure: {enabled: true, initial_interval: 100ms, max_interval: 500ms, max_elapsed_time: 0}
    sending_queue: {enabled: true, storage: file_storage, num_consumers: 2}
service:
  extensions: [file_storage]
  pipelines:
    traces: {receivers: [otlp], processors: [ctxaudit], exporters: [ctxaudit_clickhouse]}
  telemetry:
    metrics: {level: none}
`, storageDir, httpPort, addr)
}

// TestClickHouseOutage stops ClickHouse while data flows and starts it again:
// every record arrives exactly once. Then, with the persistent queue, the
// collector itself is restarted during an outage: nothing is lost either.
func TestClickHouseOutage(t *testing.T) {
	ch := newOutageServer(t)
	storage := t.TempDir()
	httpPort := freePort(t)
	cfg := outageConfig(httpPort, ch.addr(), storage)

	t.Run("server down while data flows", func(t *testing.T) {
		startCollector(t, cfg)
		if err := sendScenario(t, httpPort, "before-outage", nil); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "rows before the outage", func() (bool, string) { c := ch.count("before-outage"); return c == "4/4", c })
		ch.stop()
		if err := sendScenario(t, httpPort, "during-outage", nil); err != nil {
			t.Fatalf("the collector must accept data while ClickHouse is down: %v", err)
		}
		time.Sleep(time.Second) // let a few retries fail
		ch.start()
		waitFor(t, "rows sent during the outage", func() (bool, string) { c := ch.count("during-outage"); return c == "4/4", c })
		if c := ch.count("before-outage"); c != "4/4" {
			t.Fatalf("rows before the outage after recovery: %s, want 4/4", c)
		}
	})

	t.Run("collector restarted during the outage", func(t *testing.T) {
		ch.stop()
		// A collector that receives data while ClickHouse is down, then stops.
		startCollectorUntil(t, cfg, func() {
			if err := sendScenario(t, httpPort, "across-restart", nil); err != nil {
				t.Fatalf("send during outage: %v", err)
			}
			time.Sleep(500 * time.Millisecond)
		})
		ch.start()
		// A new collector with the same file_storage drains the persisted queue.
		startCollector(t, cfg)
		waitFor(t, "persisted rows after restart", func() (bool, string) { c := ch.count("across-restart"); return c == "4/4", c })
	})
}

// startCollectorUntil runs a collector for the duration of fn, then stops it.
func startCollectorUntil(t *testing.T, cfg string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	t.Run("first collector", func(t *testing.T) {
		defer close(done)
		startCollector(t, cfg)
		fn()
	})
	<-done
}

// TestBearerTokenAuth: with bearertokenauth on the OTLP receiver, a request
// without the token is rejected and one with it is accepted.
func TestBearerTokenAuth(t *testing.T) {
	httpPort := freePort(t)
	startCollector(t, fmt.Sprintf(`
extensions:
  bearertokenauth:
    token: "s3cret-token"
receivers:
  otlp:
    protocols:
      http:
        endpoint: "127.0.0.1:%d"
        auth: {authenticator: bearertokenauth}
exporters:
  debug: {verbosity: basic}
service:
  extensions: [bearertokenauth]
  pipelines:
    traces: {receivers: [otlp], exporters: [debug]}
  telemetry:
    metrics: {level: none}
`, httpPort))

	url := fmt.Sprintf("http://127.0.0.1:%d/v1/traces", httpPort)
	post := func(auth string) int {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"resourceSpans":[]}`))
		req.Header.Set("Content-Type", "application/json")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(""); code != http.StatusUnauthorized {
		t.Errorf("no token: HTTP %d, want 401", code)
	}
	if code := post("Bearer wrong"); code != http.StatusUnauthorized {
		t.Errorf("wrong token: HTTP %d, want 401", code)
	}
	if code := post("Bearer s3cret-token"); code != http.StatusOK {
		t.Errorf("right token: HTTP %d, want 200", code)
	}
	if err := sendScenario(t, httpPort, "no-token", nil); err == nil {
		t.Error("the OTLP exporter without a token was accepted")
	}
	if err := sendScenario(t, httpPort, "with-token", map[string]string{"Authorization": "Bearer s3cret-token"}); err != nil {
		t.Errorf("with token: %v", err)
	}
}
