//go:build unix

package cli

import (
	"bytes"
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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
