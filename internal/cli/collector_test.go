package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The shipped example config validates; one with an unknown key fails and
// names the key.
func TestCollectorValidate(t *testing.T) {
	example := filepath.Join("..", "..", "examples", "collector.yaml")
	if code, out, errOut := run(t, "collector", "validate", "--config", example); code != ExitOK {
		t.Fatalf("validate %s: exit %d\n%s%s", example, code, out, errOut)
	}
	b, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(b), "  ctxaudit:\n", "  ctxaudit:\n    sesion_idle: 5s\n", 1)
	if bad == string(b) {
		t.Fatal("example config has no ctxaudit processor section to break")
	}
	path := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := run(t, "collector", "validate", "--config", path)
	if code == ExitOK || !strings.Contains(errOut, "sesion_idle") {
		t.Fatalf("validate with an unknown key: exit %d, stderr %q; want a failure naming the key", code, errOut)
	}
}

func TestCollectorComponents(t *testing.T) {
	code, out, errOut := run(t, "collector", "components")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, name := range []string{"agenttranscripts", "otlp", "ctxaudit", "batch", "memory_limiter", "ctxaudit_clickhouse", "debug",
		"health_check", "file_storage", "bearertokenauth", "zpages", "pprof"} {
		if !strings.Contains(out, "name: "+name+"\n") {
			t.Errorf("components lack %s", name)
		}
	}
}

// Setting a folder variable of the example config to nothing switches that
// source off; it never widens the watch to the whole filesystem.
func TestCollectorEmptyFolderOverride(t *testing.T) {
	example := filepath.Join("..", "..", "examples", "collector.yaml")
	for _, v := range []string{"CTXAUDIT_CLAUDE_PROJECTS", "CTXAUDIT_CODEX_SESSIONS", "CTXAUDIT_PI_SESSIONS", "CTXAUDIT_EXAMPLES"} {
		t.Run(v, func(t *testing.T) {
			t.Setenv("HOME", t.TempDir())
			t.Setenv(v, "")
			code, out, errOut := run(t, "collector", "print-config", "--config", example)
			if code != ExitOK {
				t.Fatalf("print-config: exit %d\n%s", code, errOut)
			}
			if strings.Contains(out, "/**") {
				t.Errorf("%s= puts a pattern from the root into the config:\n%s", v, out)
			}
			if !strings.Contains(out, "- \"\"\n") {
				t.Errorf("%s= should leave an empty (off) folders entry:\n%s", v, out)
			}
			if code, _, errOut := run(t, "collector", "validate", "--config", example); code != ExitOK {
				t.Fatalf("validate with %s=: exit %d\n%s", v, code, errOut)
			}
		})
	}
	// The form the example used to have is refused, naming the key.
	cfg := "receivers:\n  agenttranscripts:\n    include: [\"${env:CTXAUDIT_PI_SESSIONS:-~/.pi/agent/sessions}/**/*.jsonl\"]\n" +
		"exporters:\n  debug:\nservice:\n  pipelines:\n    traces:\n      receivers: [agenttranscripts]\n      exporters: [debug]\n"
	path := filepath.Join(t.TempDir(), "old.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CTXAUDIT_PI_SESSIONS", "")
	code, _, errOut := run(t, "collector", "validate", "--config", path)
	if code == ExitOK || !strings.Contains(errOut, "include[0]") || !strings.Contains(errOut, "filesystem root") {
		t.Fatalf("an include from the root: exit %d, stderr %q; want a failure naming include[0]", code, errOut)
	}
}
