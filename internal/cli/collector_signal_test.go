//go:build unix

package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/collector/transcript/transcripttest"
	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/internal/collectortest"
)

// Ctrl-C stops the collector cleanly: exit 0, no "failed to shutdown …
// context canceled" (the command's context, cancelled by the same signal,
// is not the one the collector shuts down with).
func TestCollectorCtrlCIsClean(t *testing.T) {
	dir := t.TempDir()
	cfg := "receivers:\n  agenttranscripts:\n    folders: [\"" + dir + "\"]\n" +
		"exporters:\n  debug:\n" +
		"service:\n  telemetry:\n    logs: {output_paths: [\"" + filepath.Join(dir, "log") + "\"], error_output_paths: [\"" + filepath.Join(dir, "log") + "\"]}\n    metrics: {level: none}\n" +
		"  pipelines:\n    traces:\n      receivers: [agenttranscripts]\n      exporters: [debug]\n"
	path := filepath.Join(dir, "collector.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	// As main does: a context cancelled by SIGINT. Registering also keeps
	// the test process alive whichever handler gets a signal first.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var out, errOut bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- Run(ctx, []string{"collector", "--config", path}, &out, &errOut) }()
	// The collector listens for SIGINT once it has started; until then a
	// signal only reaches the context above, so keep sending.
	tick := time.NewTicker(300 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(2 * time.Minute)
	for {
		select {
		case code := <-done:
			if code != ExitOK || strings.Contains(errOut.String(), "failed to shutdown") {
				t.Fatalf("Ctrl-C: exit %d, stderr %q", code, errOut.String())
			}
			return
		case <-tick.C:
			if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
		case <-deadline:
			t.Fatal("the collector did not stop on SIGINT")
		}
	}
}

// SIGTERM stops the collector cleanly (exit 0) and sessions still open,
// whose session_idle has not elapsed, are not lost: the receiver analyses
// them on the way out, through the pipeline before the exporter stops, and
// their answers and session rows reach ClickHouse.
func TestCollectorSIGTERMWritesOpenSessions(t *testing.T) {
	addr := chtest.Address(t)
	dir := t.TempDir()
	watched := filepath.Join(dir, "watched")
	src := filepath.Join(transcripttest.FixturesDir(t), "claude-code", "session-2.1.6-637ef6e7")
	collectortest.CopyTree(t, src, watched) // fresh files: not idle for an hour
	const session = "637ef6e7-e740-4503-8ff8-5780d7c0918f"
	log := filepath.Join(dir, "log")
	cfg := fmt.Sprintf(`
receivers:
  agenttranscripts:
    include: ["%s/**/*.jsonl"]
    poll_interval: 100ms
    session_idle: 1h
processors:
  ctxaudit: {session_idle: 1h}
exporters:
  ctxaudit_clickhouse:
    endpoint: %s
service:
  pipelines:
    traces: {receivers: [agenttranscripts], processors: [ctxaudit], exporters: [ctxaudit_clickhouse]}
  telemetry:
    logs: {output_paths: [%q], error_output_paths: [%q]}
    metrics: {level: none}
`, watched, addr, log, log)
	path := filepath.Join(dir, "collector.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}

	// As main does; registering also keeps the test process alive.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	var out, errOut bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- Run(ctx, []string{"collector", "--config", path}, &out, &errOut) }()

	s := chtest.OpenStore(t, addr)
	count := func(table string) string {
		var n string
		q := "SELECT toString(count()) FROM " + s.Database() + "." + table + " FINAL WHERE session_id = ?"
		if err := s.Conn().QueryRow(context.Background(), q, session).Scan(&n); err != nil {
			return "error: " + err.Error() // the exporter has not created the schema yet
		}
		return n
	}
	collectortest.WaitFor(t, "every call stored", 2*time.Minute, func() (bool, string) {
		select {
		case code := <-done:
			t.Fatalf("the collector exited early with %d: %s", code, errOut.String())
		default:
		}
		c := count("tool_calls")
		return c == "26", "calls=" + c
	})
	if a, ss := count("answers"), count("sessions"); a != "0" || ss != "0" {
		t.Fatalf("before session_idle: answers=%s sessions=%s, want none yet", a, ss)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != ExitOK {
			t.Fatalf("SIGTERM: exit %d, stderr %q", code, errOut.String())
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the collector did not stop on SIGTERM")
	}
	if a, ss := count("answers"), count("sessions"); a != "3" || ss != "1" {
		t.Fatalf("after SIGTERM: answers=%s sessions=%s, want 3 and 1", a, ss)
	}
}
