// Package collectortest runs a collector distribution in-process for
// end-to-end tests, and holds the small helpers those tests share: free
// loopback ports, waiting for a condition, copying transcript folders and
// reading one value from ClickHouse.
package collectortest

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/otelcol"

	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

// Collector is a collector running in-process.
type Collector struct {
	col  *otelcol.Collector
	errc chan error
}

// Start runs a collector built from set with the given YAML configuration,
// once it is running. It is stopped by Stop, or at the end of the test.
func Start(tb testing.TB, set otelcol.CollectorSettings, yaml string) *Collector {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "collector.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		tb.Fatal(err)
	}
	set.ConfigProviderSettings.ResolverSettings.URIs = []string{"file:" + path}
	col, err := otelcol.NewCollector(set)
	if err != nil {
		tb.Fatal(err)
	}
	c := &Collector{col: col, errc: make(chan error, 1)}
	go func() { c.errc <- col.Run(context.Background()) }()
	deadline := time.Now().Add(60 * time.Second)
	for col.GetState() != otelcol.StateRunning {
		select {
		case err := <-c.errc:
			tb.Fatalf("collector exited during start: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			tb.Fatalf("collector not running after 60s (state %v)", col.GetState())
		}
		time.Sleep(20 * time.Millisecond)
	}
	tb.Cleanup(func() { c.Stop(tb) })
	return c
}

// Stop shuts the collector down and waits for it; stopping twice is a no-op.
func (c *Collector) Stop(tb testing.TB) {
	tb.Helper()
	if c.col == nil {
		return
	}
	c.col.Shutdown()
	select {
	case err := <-c.errc:
		if err != nil {
			tb.Errorf("collector run: %v", err)
		}
	case <-time.After(60 * time.Second):
		tb.Error("collector did not stop within 60s")
	}
	c.col = nil
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// WaitFor polls cond until it holds, failing the test after timeout with
// the last state cond described.
func WaitFor(tb testing.TB, what string, timeout time.Duration, cond func() (bool, string)) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		ok, state := cond()
		if ok {
			return
		}
		last = state
		time.Sleep(100 * time.Millisecond)
	}
	tb.Fatalf("timed out waiting for %s; last: %s", what, last)
}

// CopyTree copies a folder of transcripts into dst, keeping its layout.
func CopyTree(tb testing.TB, src, dst string) {
	tb.Helper()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// Scalar runs a query that returns one value, as text; "DB." in it names
// the store's database.
func Scalar(tb testing.TB, s *chstore.Store, query string, args ...any) string {
	tb.Helper()
	var v string
	q := strings.ReplaceAll(query, "DB.", s.Database()+".")
	if err := s.Conn().QueryRow(context.Background(), "SELECT toString(("+q+"))", args...).Scan(&v); err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
	return v
}
