package integrity

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/collector/distribution"
	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/internal/cli"
	"github.com/ctxaudit/ctxaudit/internal/collectortest"
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

func freePort(t testing.TB) int { return collectortest.FreePort(t) }

// startCollector runs the distribution in-process with the given YAML; stop
// it with stop (a cleanup stops it too, if the test did not).
func startCollector(t *testing.T, yaml string) *collector {
	t.Helper()
	return &collector{collectortest.Start(t, distribution.Settings("test"), yaml)}
}

// collector is the distribution running in-process.
type collector struct{ c *collectortest.Collector }

func (c *collector) stop(t *testing.T) { c.c.Stop(t) }

func waitFor(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	collectortest.WaitFor(t, what, 120*time.Second, cond)
}

func copyTree(t *testing.T, src, dst string) { collectortest.CopyTree(t, src, dst) }

func scalar(t *testing.T, s *chstore.Store, query string, args ...any) string {
	t.Helper()
	return collectortest.Scalar(t, s, query, args...)
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
