package integrity

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/otelcol"

	"github.com/ctxaudit/ctxaudit/collector/distribution"
	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/internal/cli"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

func TestMain(m *testing.M) { chtest.Main(m) }

// runCLI runs the ctxaudit command line in-process, as a user would.
func runCLI(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := cli.Run(context.Background(), args, &out, &errOut); code != cli.ExitOK {
		t.Fatalf("ctxaudit %s: exit %d\n%s\n%s", strings.Join(args, " "), code, out.String(), errOut.String())
	}
	return out.String()
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// collector is the distribution running in-process.
type collector struct {
	col  *otelcol.Collector
	errc chan error
}

// startCollector runs the distribution with the given YAML; stop it with
// stop (a cleanup stops it too, if the test did not).
func startCollector(t *testing.T, yaml string) *collector {
	t.Helper()
	path := filepath.Join(t.TempDir(), "collector.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	set := distribution.Settings("test")
	set.ConfigProviderSettings.ResolverSettings.URIs = []string{"file:" + path}
	col, err := otelcol.NewCollector(set)
	if err != nil {
		t.Fatal(err)
	}
	c := &collector{col: col, errc: make(chan error, 1)}
	go func() { c.errc <- col.Run(context.Background()) }()
	deadline := time.Now().Add(60 * time.Second)
	for col.GetState() != otelcol.StateRunning {
		select {
		case err := <-c.errc:
			t.Fatalf("collector exited during start: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("collector not running after 60s (state %v)", col.GetState())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Cleanup(func() { c.stop(t) })
	return c
}

func (c *collector) stop(t *testing.T) {
	t.Helper()
	if c.col == nil {
		return
	}
	c.col.Shutdown()
	select {
	case err := <-c.errc:
		if err != nil {
			t.Errorf("collector run: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Error("collector did not stop within 60s")
	}
	c.col = nil
}

func waitFor(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(120 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		ok, state := cond()
		if ok {
			return
		}
		last = state
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s; last: %s", what, last)
}

// copyTree copies a folder of transcripts into dst, keeping its layout.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
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
		t.Fatal(err)
	}
}

// scalar runs a query returning one value; DB. names the store's database.
func scalar(t *testing.T, s *chstore.Store, query string, args ...any) string {
	t.Helper()
	var v string
	q := strings.ReplaceAll(query, "DB.", s.Database()+".")
	if err := s.Conn().QueryRow(context.Background(), "SELECT toString(("+q+"))", args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return v
}

// stopMerges keeps every written row visible, so a test can see the rows a
// later path wrote even when they lost to earlier ones.
func stopMerges(t *testing.T, s *chstore.Store) {
	t.Helper()
	for _, table := range tables {
		if err := s.Conn().Exec(context.Background(), fmt.Sprintf("SYSTEM STOP MERGES %s.%s", s.Database(), table.name)); err != nil {
			t.Fatalf("stop merges of %s: %v", table.name, err)
		}
	}
}

// receiverConfig is the collector of `make run` (examples/collector.yaml)
// reduced to the transcript path, watching dir, with short idle times.
func receiverConfig(dir, state, addr string) string {
	return fmt.Sprintf(`
extensions:
  file_storage: {directory: %q}
receivers:
  agenttranscripts:
    include: ["%s/**/*.jsonl"]
    storage: file_storage
    poll_interval: 50ms
    session_idle: 200ms
processors:
  ctxaudit: {session_idle: 200ms}
  batch: {timeout: 100ms}
exporters:
  ctxaudit_clickhouse:
    endpoint: %s
    create_schema: true
    retry_on_failure: {initial_interval: 100ms, max_interval: 1s}
service:
  extensions: [file_storage]
  pipelines:
    traces: {receivers: [agenttranscripts], processors: [ctxaudit, batch], exporters: [ctxaudit_clickhouse]}
  telemetry:
    metrics: {level: none}
`, state, dir, addr)
}
