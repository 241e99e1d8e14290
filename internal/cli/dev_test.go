package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

// TestDevClickHouseTimeZone: `dev clickhouse --timezone` starts the server
// in that zone (its days, which partitions and retention follow, are that
// zone's), and a name that is not a zone is refused before anything starts.
func TestDevClickHouseTimeZone(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ch")
	code, _, errOut := run(t, "dev", "clickhouse", "--dir", dir, "--port", "0", "--http-port", "0", "--detach", "--timezone", "Mars/Olympus_Mons")
	if code != ExitUsage || !strings.Contains(errOut, "Mars/Olympus_Mons") {
		t.Fatalf("unknown zone: exit %d, %q; want a usage error naming it", code, errOut)
	}

	if _, err := exec.LookPath("clickhouse-server"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but clickhouse-server is not on PATH")
		}
		t.Skip("clickhouse-server not on PATH")
	}
	code, out, errOut := run(t, "dev", "clickhouse", "--dir", dir, "--port", "0", "--http-port", "0", "--detach", "--print-address", "--timezone", "America/Los_Angeles")
	if code != ExitOK {
		t.Fatalf("start: exit %d: %s", code, errOut)
	}
	t.Cleanup(func() {
		if code, _, errOut := run(t, "dev", "clickhouse", "--stop", "--dir", dir); code != ExitOK {
			t.Errorf("stop: exit %d: %s", code, errOut)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := chstore.Open(ctx, strings.TrimSpace(out)+"/default", chstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var tz string
	if err := s.Conn().QueryRow(ctx, "SELECT timezone()").Scan(&tz); err != nil {
		t.Fatal(err)
	}
	if tz != "America/Los_Angeles" {
		t.Errorf("server time zone %q; want America/Los_Angeles", tz)
	}
}
