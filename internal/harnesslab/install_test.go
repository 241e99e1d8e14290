package harnesslab

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeNPM puts an `npm` on PATH that stands for `npm install --prefix DIR
// PKG@VERSION`. Each call writes DIR/node_modules/.bin/<bin>; the first
// failing calls write one that exits as Codex does when npm left out its
// platform package, the later ones one that prints the version and the
// HOME it ran with into DIR/home-seen and its CODEX_HOME into
// DIR/codex-home-seen. It returns the file counting calls.
func fakeNPM(t *testing.T, bin, version string, failing int) string {
	t.Helper()
	tools := t.TempDir()
	calls := filepath.Join(tools, "calls")
	script := fmt.Sprintf(`#!/bin/sh
set -e
n=$(cat %[1]q 2>/dev/null || echo 0); n=$((n+1)); echo $n > %[1]q
while [ "$1" != "--prefix" ]; do shift; done
dir=$2
mkdir -p "$dir/node_modules/.bin"
b="$dir/node_modules/.bin/%[2]s"
if [ $n -le %[4]d ]; then
  printf '#!/bin/sh\necho "Error: Missing optional dependency @openai/codex-linux-x64." >&2\nexit 1\n' > "$b"
else
  printf '#!/bin/sh\necho "$HOME" > %%s/home-seen\necho "$CODEX_HOME" > %%s/codex-home-seen\necho "%[2]s-cli %[3]s"\n' "$dir" "$dir" > "$b"
fi
chmod +x "$b"
`, calls, bin, version, failing)
	if err := os.WriteFile(filepath.Join(tools, "npm"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", tools+string(os.PathListSeparator)+os.Getenv("PATH"))
	return calls
}

func npmCalls(t *testing.T, calls string) string {
	b, err := os.ReadFile(calls)
	if err != nil {
		return "0"
	}
	return strings.TrimSpace(string(b))
}

// An install whose harness does not run — npm left out a dependency — is
// made again; one that runs is kept, and the check runs the harness in a
// temp HOME, never the machine's own, without the caller's agent settings.
func TestInstallRetriesAHarnessThatDoesNotRun(t *testing.T) {
	h := Harness{Name: "codex", Package: "@openai/codex", Version: "0.169.0", Bin: "codex"}
	calls := fakeNPM(t, h.Bin, h.Version, 1)
	t.Setenv("CODEX_HOME", "/the/callers/codex-home")
	var logged []string
	lab := &Lab{Cache: t.TempDir(), Log: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }}
	bin, err := lab.Install(context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	if n := npmCalls(t, calls); n != "2" {
		t.Errorf("npm ran %s times, want 2 (the first install does not run)", n)
	}
	if !strings.Contains(strings.Join(logged, "\n"), "Missing optional dependency") {
		t.Errorf("the failed attempt's reason is not logged: %q", logged)
	}
	dir := filepath.Dir(filepath.Dir(filepath.Dir(bin)))
	home, err := os.ReadFile(filepath.Join(dir, "home-seen"))
	if err != nil {
		t.Fatal(err)
	}
	if own, _ := os.UserHomeDir(); strings.TrimSpace(string(home)) == own || !strings.Contains(string(home), "harnesslab-version-") {
		t.Errorf("the harness ran with HOME %q, want a temp one", home)
	}
	if seen, err := os.ReadFile(filepath.Join(dir, "codex-home-seen")); err != nil || strings.TrimSpace(string(seen)) != "" {
		t.Errorf("the harness saw CODEX_HOME %q (%v), want none of the caller's", seen, err)
	}
	// Installed and running: the next Install uses it as it is.
	if _, err := lab.Install(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	if n := npmCalls(t, calls); n != "2" {
		t.Errorf("npm ran %s times after a second Install, want still 2", n)
	}
}

// A harness that never runs fails the install after installAttempts, with
// the harness's own words; one that reports another version fails too.
func TestInstallGivesUp(t *testing.T) {
	h := Harness{Name: "codex", Package: "@openai/codex", Version: "0.169.0", Bin: "codex"}
	calls := fakeNPM(t, h.Bin, h.Version, installAttempts)
	lab := &Lab{Cache: t.TempDir(), Log: func(string, ...any) {}}
	_, err := lab.Install(context.Background(), h)
	if err == nil || !strings.Contains(err.Error(), "Missing optional dependency") {
		t.Errorf("error %v, want the harness's own reason", err)
	}
	if n := npmCalls(t, calls); n != fmt.Sprint(installAttempts) {
		t.Errorf("npm ran %s times, want %d", n, installAttempts)
	}

	other := h
	other.Version = "0.170.0" // the fake prints 0.169.0
	fakeNPM(t, other.Bin, h.Version, 0)
	_, err = (&Lab{Cache: t.TempDir(), Log: func(string, ...any) {}}).Install(context.Background(), other)
	if err == nil || !strings.Contains(err.Error(), "not version 0.170.0") {
		t.Errorf("error %v, want the wrong version named", err)
	}
}
