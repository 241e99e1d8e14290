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
