package faultsuite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/ctxaudit/ctxaudit/examples/harness/agentsim"
	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

// exampleConfig is the shipped configuration: the fault tests run it as
// users do, overriding only ports, folders and timings.
var exampleConfig = filepath.Join("..", "..", "examples", "collector.yaml")

// durable is one collector deployment that outlives its processes: the same
// state folder (checkpoints and the processor's held sessions), transcript folder and
// ports across kills and restarts.
type durable struct {
	state, projects, empty string
	otlpHTTP, health       int
	override               string
	// extra configuration files, merged after the override.
	extra []string
	// env is added to the collector's environment.
	env []string
}

func newDurable(t *testing.T) *durable {
	t.Helper()
	d := &durable{state: t.TempDir(), projects: t.TempDir(), empty: t.TempDir(), otlpHTTP: freePort(t), health: freePort(t)}
	d.override = filepath.Join(t.TempDir(), "override.yaml")
	override := fmt.Sprintf(`
extensions:
  health_check: {endpoint: "127.0.0.1:%d"}
receivers:
  agenttranscripts: {poll_interval: 100ms, session_idle: 500ms}
  otlp:
    protocols:
      grpc: {endpoint: "127.0.0.1:%d"}
      http: {endpoint: "127.0.0.1:%d"}
processors:
  ctxaudit: {session_idle: 500ms}
exporters:
  ctxaudit_clickhouse:
    sending_queue:
      batch: {flush_timeout: 200ms}
service:
  telemetry:
    metrics: {level: none}
`, d.health, freePort(t), d.otlpHTTP)
	if err := os.WriteFile(d.override, []byte(override), 0o644); err != nil {
		t.Fatal(err)
	}
	return d
}

// start runs the example configuration writing to clickhouse (which may be
// an address where nothing listens: an outage).
func (d *durable) start(t *testing.T, clickhouse string) *collector {
	t.Helper()
	args := []string{"--config", exampleConfig, "--config", d.override}
	for _, e := range d.extra {
		args = append(args, "--config", e)
	}
	return runCollector(t, args, append([]string{
		"CTXAUDIT_STATE_DIR=" + d.state, "CTXAUDIT_CLICKHOUSE=" + clickhouse,
		"CTXAUDIT_CLAUDE_PROJECTS=" + d.projects, "CTXAUDIT_CODEX_SESSIONS=" + d.empty,
		"CTXAUDIT_PI_SESSIONS=" + d.empty, "CTXAUDIT_EXAMPLES=" + d.empty,
	}, d.env...), d.health)
}

// deadAddress is a ClickHouse address where nothing listens.
func deadAddress(t *testing.T, db string) string {
	return fmt.Sprintf("clickhouse://default@127.0.0.1:%d/%s", freePort(t), db)
}

// otlpSender sends tool-call spans over OTLP/HTTP without retrying, so each
// request's answer is the collector's.
type otlpSender struct {
	exp *otlptrace.Exporter
}

func newOTLPSender(t *testing.T, port int) *otlpSender {
	t.Helper()
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpoint(fmt.Sprintf("127.0.0.1:%d", port)),
		otlptracehttp.WithInsecure(), otlptracehttp.WithTimeout(10*time.Second),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = exp.Shutdown(context.Background()) })
	return &otlpSender{exp: exp}
}

// send exports one request of execute_tool spans with the given call ids,
// each with attrs besides its result; nil means the collector acknowledged
// it.
func (s *otlpSender) send(ctx context.Context, session string, ids []string, attrs ...attribute.KeyValue) error {
	sess := agentsim.Session{ID: session, Source: "generic", Model: "gpt-5"}
	for _, id := range ids {
		sess.Calls = append(sess.Calls, agentsim.Call{ID: id, Tool: "shell", Args: `{"command":"ls ` + id + `"}`,
			Attrs: append([]attribute.KeyValue{attribute.String("gen_ai.tool.call.result", "a\nb\n")}, attrs...)})
	}
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	agentsim.EmitTraces(ctx, tp, sess, time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	return s.exp.ExportSpans(ctx, rec.Ended())
}

// storedCalls is the set of call ids stored for sessions with the prefix,
// and how many rows each has after FINAL (always 1 if stored).
func storedCalls(t *testing.T, s *chstore.Store, sessionPrefix string) map[string]int {
	t.Helper()
	out := map[string]int{}
	if count(t, s, "SELECT count() FROM system.tables WHERE database = ? AND name = 'tool_calls'", s.Database()) == 0 {
		return out
	}
	rows, err := s.Conn().Query(context.Background(), "SELECT call_id, toUInt64(count()) FROM "+s.Database()+
		".tool_calls FINAL WHERE startsWith(session_id, ?) GROUP BY call_id", sessionPrefix)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var n uint64
		if err := rows.Scan(&id, &n); err != nil {
			t.Fatal(err)
		}
		out[id] = int(n)
	}
	return out
}

// missing lists the acked ids that are not stored exactly once.
func missing(acked map[string]bool, stored map[string]int) []string {
	var out []string
	for id := range acked {
		if stored[id] != 1 {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

func ids(prefix string, from, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%06d", prefix, from+i)
	}
	return out
}

// TestAckedSpansSurviveKill: with the shipped configuration, spans whose
// OTLP request was answered 200 survive a kill -9 right after the answer —
// during a ClickHouse outage (they are only in the persistent queue) and
// with ClickHouse up (they may be in a batch being formed) — and are stored
// exactly once after a restart.
func TestAckedSpansSurviveKill(t *testing.T) {
	addr := chtest.Address(t)
	s := chtest.OpenStore(t, addr)
	d := newDurable(t)
	ctx := context.Background()
	acked := map[string]bool{}
	sendAll := func(c *collector, round string) {
		snd := newOTLPSender(t, d.otlpHTTP)
		for r := range 10 {
			batch := ids(round, r*50, 50)
			if err := snd.send(ctx, "ack-"+round, batch); err != nil {
				t.Fatalf("%s request %d refused: %v", round, r, err)
			}
			for _, id := range batch {
				acked[id] = true
			}
		}
		c.kill() // at once: the last answer was just received
	}
	sendAll(d.start(t, deadAddress(t, s.Database())), "outage")
	sendAll(d.start(t, addr), "up")

	c := d.start(t, addr)
	waitFor(t, "every acked span stored", 2*time.Minute, func() (bool, string) {
		m := missing(acked, storedCalls(t, s, "ack-"))
		return len(m) == 0, fmt.Sprintf("%d of %d acked spans missing", len(m), len(acked))
	})
	c.stop()
	stored := storedCalls(t, s, "ack-")
	if m := missing(acked, stored); len(m) > 0 || len(stored) != len(acked) {
		t.Fatalf("%d acked, %d stored, missing %v", len(acked), len(stored), m)
	}
	t.Logf("%d spans acked across two kill -9s, %d stored once", len(acked), len(stored))
	if strings.Contains(c.logText(), "Dropping data") {
		t.Error("the collector logged dropped data")
	}
}

// TestOutageRefusesWhatItCannotHold: with ClickHouse down, calls the
// processor holds for session analysis are acknowledged once they are in its
// storage, while spans that go straight to the exporter (analysed upstream)
// are refused with a retryable 503 — the exporter answers only once rows
// are written — and never acknowledged. After a kill -9 and a restart with
// ClickHouse up, every acknowledged call is stored, and the refused
// requests, sent again as a client retries them, are stored too.
func TestOutageRefusesWhatItCannotHold(t *testing.T) {
	addr := chtest.Address(t)
	s := chtest.OpenStore(t, addr)
	d := newDurable(t)
	// No session goes idle during the outage: an emission of the held
	// session, failing, could share an export batch with a held request's
	// root span (an invoke_agent span the exporter stores nothing of) and
	// refuse that request too, with a retryable error but not the answer
	// the test is about. The restart analyses what was held (session_idle
	// back to 500ms).
	d.extra = []string{holdSessionsConfig(t)}
	c := d.start(t, deadAddress(t, s.Database()))
	d.extra = nil
	snd := newOTLPSender(t, d.otlpHTTP)
	upstream := attribute.Bool("ctxaudit.analysis.upstream", true)
	acked := map[string]bool{}
	var refused [][]string
	for r := range 20 {
		batch := ids("full", r*20, 20)
		var err error
		if r%2 == 0 {
			err = snd.send(context.Background(), "full-q-held", batch)
		} else {
			err = snd.send(context.Background(), "full-q-upstream", batch, upstream)
		}
		switch {
		case err == nil && r%2 == 0:
			for _, id := range batch {
				acked[id] = true
			}
		case err == nil:
			t.Fatalf("request %d (analysed upstream) acknowledged with ClickHouse down", r)
		case r%2 == 0:
			t.Fatalf("request %d (held) refused during the outage: %v; its calls go to the processor's storage", r, err)
		case strings.Contains(err.Error(), "retry-able request failure"):
			refused = append(refused, batch)
		default:
			t.Fatalf("request %d: %v; want a retryable refusal (503)", r, err)
		}
	}
	if len(refused) != 10 || len(acked) != 200 {
		t.Fatalf("%d requests refused, %d spans acked; want 10 and 200", len(refused), len(acked))
	}
	c.kill()
	c = d.start(t, addr)
	for i, batch := range refused {
		if err := snd.send(context.Background(), "full-q-upstream", batch, upstream); err != nil {
			t.Fatalf("refused request %d sent again with ClickHouse up: %v", i, err)
		}
		for _, id := range batch {
			acked[id] = true
		}
	}
	waitFor(t, "every acked span stored", 2*time.Minute, func() (bool, string) {
		m := missing(acked, storedCalls(t, s, "full-q"))
		return len(m) == 0, fmt.Sprintf("%d of %d acked spans missing", len(m), len(acked))
	})
	c.stop()
	t.Logf("ClickHouse down: 10 held requests acked, 10 analysed upstream refused with 503; after a kill -9 and a restart all %d calls stored", len(acked))
}

// TestGracefulStopDuringOutage: a SIGTERM while ClickHouse is down and the
// processor holds sessions exits 0 — what it could not write stays in its
// storage, and it says so — and after a restart with ClickHouse up every
// acked call is stored once, analysed, and counted in its session's row.
// During the outage every held call is acknowledged: it is on disk.
func TestGracefulStopDuringOutage(t *testing.T) {
	addr := chtest.Address(t)
	s := chtest.OpenStore(t, addr)
	d := newDurable(t)
	d.extra = []string{holdSessionsConfig(t)}
	c := d.start(t, deadAddress(t, s.Database()))
	snd := newOTLPSender(t, d.otlpHTTP)
	acked := map[string]bool{}
	for r := range 12 {
		batch := ids("stop", r*10, 10)
		if err := snd.send(context.Background(), fmt.Sprintf("stop-q-%d", r), batch); err != nil {
			t.Fatalf("request %d refused during the outage: %v; its calls go to the processor's storage", r, err)
		}
		for _, id := range batch {
			acked[id] = true
		}
	}
	c.stop() // fails the test unless the exit status is 0
	if !strings.Contains(c.logText(), "stay in storage") {
		t.Errorf("the collector did not say that the held sessions stay in storage:\n%s", tail(c.logText(), 2000))
	}
	d.extra = nil // session_idle back to 500ms
	c = d.start(t, addr)
	waitFor(t, "every acked call stored and its session analysed", 2*time.Minute, func() (bool, string) {
		m := missing(acked, storedCalls(t, s, "stop-q-"))
		a, b := diff(rows(t, s, strings.ReplaceAll(otlpSessionRows, "fault-otlp-", "stop-q-")), rows(t, s, strings.ReplaceAll(otlpCallsPerSession, "fault-otlp-", "stop-q-")))
		return len(m) == 0 && len(a)+len(b) == 0, fmt.Sprintf("%d of %d acked calls missing; session rows vs calls: %v vs %v", len(m), len(acked), a, b)
	})
	c.stop()
	if n := count(t, s, "SELECT count() FROM "+s.Database()+".tool_calls FINAL WHERE startsWith(session_id, 'stop-q-') AND version < 9223372036854775808"); n > 0 {
		t.Errorf("%d calls stored without session analysis", n)
	}
	t.Logf("SIGTERM with ClickHouse down: exit 0; %d calls acked, all stored once and analysed after the restart", len(acked))
}

// TestReloadKeepsHeldCalls: a configuration reload (SIGHUP) restarts every
// component in the running process, the processor's storage extension
// included, while sessions are held for analysis. Calls acknowledged before
// the reload are emitted by its shutdown and reloaded as the sessions' start;
// calls of the same sessions after it join them. After a graceful stop each
// acknowledged call is stored once, analysed, and counted in its session's
// row, and nothing was logged as dropped.
func TestReloadKeepsHeldCalls(t *testing.T) {
	addr := chtest.Address(t)
	s := chtest.OpenStore(t, addr)
	d := newDurable(t)
	d.extra = []string{holdSessionsConfig(t)}
	c := d.start(t, addr)
	acked := map[string]bool{}
	sendRound := func(round int) {
		snd := newOTLPSender(t, d.otlpHTTP)
		for r := range 6 {
			batch := ids(fmt.Sprintf("reload-%d", r), round*20, 20)
			if err := snd.send(context.Background(), fmt.Sprintf("reload-q-%d", r), batch); err != nil {
				t.Fatalf("round %d request %d refused: %v", round, r, err)
			}
			for _, id := range batch {
				acked[id] = true
			}
		}
	}
	sendRound(0)
	if err := c.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the collector restarted after SIGHUP", time.Minute, func() (bool, string) {
		n := strings.Count(c.logText(), "Everything is ready")
		return n >= 2, fmt.Sprintf("started %d times", n)
	})
	if !strings.Contains(c.logText(), "Reloaded held sessions from storage") {
		t.Errorf("the processor did not reload its held sessions:\n%s", tail(c.logText(), 2000))
	}
	sendRound(1)
	c.stop()
	stored := storedCalls(t, s, "reload-q-")
	if m := missing(acked, stored); len(m) > 0 || len(stored) != len(acked) {
		t.Fatalf("%d acked, %d stored, not stored once: %v", len(acked), len(stored), m)
	}
	a, b := diff(rows(t, s, strings.ReplaceAll(otlpSessionRows, "fault-otlp-", "reload-q-")), rows(t, s, strings.ReplaceAll(otlpCallsPerSession, "fault-otlp-", "reload-q-")))
	if len(a)+len(b) > 0 {
		t.Errorf("session rows vs calls stored: %v vs %v", a, b)
	}
	if n := count(t, s, "SELECT count() FROM "+s.Database()+".tool_calls FINAL WHERE startsWith(session_id, 'reload-q-') AND version < 9223372036854775808"); n > 0 {
		t.Errorf("%d calls stored without session analysis", n)
	}
	if strings.Contains(c.logText(), "Dropping data") {
		t.Error("the collector logged dropped data")
	}
	t.Logf("SIGHUP between two rounds: %d calls acked, each stored once and analysed", len(acked))
}

// holdSessionsConfig writes a configuration overlay under which no session
// goes idle during a test, so every call stays held by the processor until
// it stops or reloads.
func holdSessionsConfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hold.yaml")
	if err := os.WriteFile(path, []byte("processors:\n  ctxaudit: {session_idle: 1h}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
