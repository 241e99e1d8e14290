package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxaudit/ctxaudit/internal/chdbtest"
	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/schema/migrations"
)

func TestMain(m *testing.M) { os.Exit(chdbtest.Done(chtest.Run(m))) }

// run executes the CLI in-process and returns its exit code and output.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestVersion(t *testing.T) {
	code, out, _ := run(t, "version")
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"ctxaudit ", "commit:", "schema:", "go.opentelemetry.io/otel", "github.com/ClickHouse/clickhouse-go/v2"} {
		if !strings.Contains(out, want) {
			t.Errorf("version output lacks %q:\n%s", want, out)
		}
	}
}

func TestMigrateTwiceThroughTheCLI(t *testing.T) {
	addr := chtest.Address(t)
	code, out, errOut := run(t, "migrate", "--clickhouse", addr)
	if code != ExitOK {
		t.Fatalf("first migrate: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "applied 0001_audit_tables") || !strings.Contains(out, ".tool_calls") {
		t.Errorf("first migrate output:\n%s", out)
	}
	code, out, errOut = run(t, "migrate", "--clickhouse", addr, "--retention", "30d")
	if code != ExitOK {
		t.Fatalf("second migrate: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, fmt.Sprintf("up to date at schema version %d", migrations.Latest())) {
		t.Errorf("second migrate should be a no-op:\n%s", out)
	}
}

func TestExitCodes(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"bad address is usage", []string{"migrate", "--clickhouse", "not-a-dsn"}, ExitUsage, "invalid ClickHouse address"},
		{"unknown flag is usage", []string{"migrate", "--nope"}, ExitUsage, "unknown flag"},
		{"bad retention is usage", []string{"migrate", "--retention", "soon"}, ExitUsage, "invalid retention period"},
		{"prune needs a period", []string{"prune"}, ExitUsage, "--older-than"},
		{"unreachable server is a failure", []string{"migrate", "--clickhouse", "clickhouse://default@127.0.0.1:1/x"}, ExitFailure, "connect to ClickHouse at 127.0.0.1:1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := run(t, tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d, stderr %q; want exit %d mentioning %q", code, errOut, tc.code, tc.want)
			}
		})
	}
}

// The address is taken from the flag over the environment over the config
// file (docs/design.md §8.2). Each layer names an unreachable port, so the error says
// which one won.
func TestConfigPrecedence(t *testing.T) {
	// An empty variable counts as unset, so an address exported by the caller
	// (e.g. make) cannot leak into the cases that expect the file to win.
	t.Setenv("CTXAUDIT_CLICKHOUSE", "")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "ctxaudit.yaml")
	if err := os.WriteFile(cfg, []byte("clickhouse: clickhouse://default@127.0.0.1:1/fromfile\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wantPort := func(t *testing.T, port string, args ...string) {
		t.Helper()
		_, _, errOut := run(t, args...)
		if !strings.Contains(errOut, "127.0.0.1:"+port+":") && !strings.Contains(errOut, "127.0.0.1:"+port+" ") {
			t.Fatalf("want the address on port %s to win; stderr: %s", port, errOut)
		}
	}
	t.Run("file", func(t *testing.T) {
		wantPort(t, "1", "migrate", "--config", cfg)
	})
	t.Run("env over file", func(t *testing.T) {
		t.Setenv("CTXAUDIT_CLICKHOUSE", "clickhouse://default@127.0.0.1:2/fromenv")
		wantPort(t, "2", "migrate", "--config", cfg)
	})
	t.Run("flag over env", func(t *testing.T) {
		t.Setenv("CTXAUDIT_CLICKHOUSE", "clickhouse://default@127.0.0.1:2/fromenv")
		wantPort(t, "3", "migrate", "--config", cfg, "--clickhouse", "clickhouse://default@127.0.0.1:3/fromflag")
	})
	t.Run("config file from the working directory", func(t *testing.T) {
		t.Chdir(dir)
		wantPort(t, "1", "migrate")
	})
	t.Run("missing explicit config file is usage", func(t *testing.T) {
		code, _, errOut := run(t, "migrate", "--config", filepath.Join(dir, "nope.yaml"))
		if code != ExitUsage || !strings.Contains(errOut, "nope.yaml") {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
	})
}

// A file named just "ctxaudit" (the binary, typically) in the working
// directory is not a config file.
func TestBinaryBesideIsNotConfig(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ctxaudit"), []byte("\x7fELF\x00\x01binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	if code, _, errOut := run(t, "version"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

// Config files use underscores for dashed flag names (store_content for
// --store-content, DESIGN's spelling).
func TestConfigFileUnderscoreKeys(t *testing.T) {
	t.Setenv("CTXAUDIT_STORE_CONTENT", "")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "ctxaudit.yaml")
	if err := os.WriteFile(cfg, []byte("store_content: everything\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := run(t, "ingest", "--config", cfg, "--dry-run", dir)
	if code != ExitUsage || !strings.Contains(errOut, `not "everything"`) {
		t.Fatalf("exit %d, stderr %q; want the config file's store_content to reach --store-content", code, errOut)
	}
}
