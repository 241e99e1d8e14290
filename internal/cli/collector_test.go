package cli

import (
	"net"
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
	if code != ExitUsage || !strings.Contains(errOut, "sesion_idle") || !strings.Contains(errOut, path) {
		t.Fatalf("validate with an unknown key: exit %d, stderr %q; want exit 2 naming the file and the key", code, errOut)
	}
}

// collectorConfig writes a minimal collector config running the receiver on
// an empty folder through the processor, with extra lines in the processor's
// section and an otlp receiver if otlp gives its section, and the
// collector's own logs and metrics kept off the terminal and off the network.
func collectorConfig(t *testing.T, processor, otlp string) string {
	t.Helper()
	dir := t.TempDir()
	receivers := "agenttranscripts"
	if otlp != "" {
		otlp = "  otlp:\n" + otlp
		receivers += ", otlp"
	}
	log := filepath.Join(dir, "log")
	cfg := "receivers:\n  agenttranscripts:\n    folders: [\"" + dir + "\"]\n" + otlp +
		"processors:\n  ctxaudit:\n" + processor +
		"exporters:\n  debug:\n" +
		"service:\n  telemetry:\n    logs: {output_paths: [\"" + log + "\"], error_output_paths: [\"" + log + "\"]}\n    metrics: {level: none}\n" +
		"  pipelines:\n    traces:\n      receivers: [" + receivers + "]\n" +
		"      processors: [ctxaudit]\n      exporters: [debug]\n"
	path := filepath.Join(dir, "collector.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A configuration the collector refuses before starting anything is bad
// input: exit 2, one line naming the file and what the collector says of
// the key and value.
func TestCollectorConfigErrorsExit2(t *testing.T) {
	for _, tc := range []struct {
		name, processor string
		want            []string
	}{
		{"unknown key", "    sesion_idle: 5s\n", []string{"has invalid keys: sesion_idle"}},
		{"bad value", "    session_idle: fivesec\n", []string{"'session_idle'", "invalid duration"}},
		{"invalid value", "    max_sessions: -3\n", []string{"processors::ctxaudit", "max_sessions"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := collectorConfig(t, tc.processor, "")
			code, _, errOut := run(t, "collector", "--config", path)
			if code != ExitUsage {
				t.Fatalf("exit %d, want %d; stderr %q", code, ExitUsage, errOut)
			}
			if !strings.HasPrefix(errOut, "ctxaudit: collector config "+path+": ") || strings.Count(errOut, "\n") != 1 {
				t.Errorf("stderr %q; want one line naming %s", errOut, path)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q lacks %q", errOut, w)
				}
			}
		})
	}
	missing := filepath.Join(t.TempDir(), "absent.yaml")
	if code, _, errOut := run(t, "collector", "--config="+missing); code != ExitUsage || !strings.Contains(errOut, missing) {
		t.Errorf("a missing config file: exit %d, stderr %q; want exit 2 naming it", code, errOut)
	}
}

// A valid configuration that fails once running — here a receiver whose
// port is taken — is a runtime failure: exit 1.
func TestCollectorRuntimeFailureExit1(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	path := collectorConfig(t, "", "    protocols:\n      grpc:\n        endpoint: "+taken.Addr().String()+"\n")
	if code, _, errOut := run(t, "collector", "validate", "--config", path); code != ExitOK {
		t.Fatalf("the config must be valid: exit %d, stderr %q", code, errOut)
	}
	code, _, errOut := run(t, "collector", "--config", path)
	if code != ExitFailure || !strings.Contains(errOut, taken.Addr().String()) {
		t.Fatalf("a taken port: exit %d, stderr %q; want exit 1 naming the address", code, errOut)
	}
}

func TestCollectorComponents(t *testing.T) {
	code, out, errOut := run(t, "collector", "components")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, name := range []string{"agenttranscripts", "otlp", "ctxaudit", "batch", "memory_limiter", "ctxaudit_clickhouse", "debug", "nop",
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
