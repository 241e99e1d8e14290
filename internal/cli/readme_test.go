package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ctxaudit/ctxaudit/collector/transcript/transcripttest"
	"github.com/ctxaudit/ctxaudit/internal/chtest"
)

const readmePath = "../../README.md"

// readmeBlock returns the first fenced block after the line holding marker.
func readmeBlock(t *testing.T, marker string) []string {
	t.Helper()
	b, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, marker)
	if i < 0 {
		t.Fatalf("README.md has no %q", marker)
	}
	s = s[i:]
	start := strings.Index(s, "```\n")
	if start < 0 {
		t.Fatalf("no block after %q", marker)
	}
	s = s[start+4:]
	end := strings.Index(s, "```")
	return strings.Split(strings.TrimRight(s[:end], "\n"), "\n")
}

// wantFragments checks that every README line, cut at its "…" and "..."
// elisions, is in the real output.
func wantFragments(t *testing.T, what string, lines []string, out string) {
	t.Helper()
	flat := strings.Join(strings.Fields(out), " ")
	for _, l := range lines {
		if i := strings.Index(l, "   # "); i >= 0 {
			l = l[:i] // a comment on the README line
		}
		for _, frag := range regexp.MustCompile(`…|\.\.\.`).Split(l, -1) {
			frag = strings.Join(strings.Fields(frag), " ")
			if len(frag) < 4 {
				continue
			}
			if !strings.Contains(flat, frag) {
				t.Errorf("%s: README says %q, the output has no such text:\n%s", what, frag, out)
			}
		}
	}
}

// The README's postmortem is what ctxaudit prints, from the files with no
// server and from ClickHouse after ingest.
func TestREADMEPostmortem(t *testing.T) {
	block := readmeBlock(t, "Both print the same report:")
	examples := transcripttest.ExamplesDir(t)
	file := filepath.Join(examples, "claude-code", "-Users-dev-acme", "55555555-0005-4005-8005-000000000005.jsonl")
	code, out, errOut := run(t, "postmortem", "--clickhouse", noServer, file, "--expect", "UPLOAD_DISABLED")
	if code != ExitOK {
		t.Fatalf("from files: exit %d: %s", code, errOut)
	}
	wantFragments(t, "postmortem from files", block, out)

	addr := chtest.Address(t)
	code, ingestOut, errOut := run(t, "ingest", "--clickhouse", addr, "--store-content", "all", examples)
	if code != ExitOK {
		t.Fatalf("ingest: exit %d: %s", code, errOut)
	}
	code, out, errOut = run(t, "postmortem", "--clickhouse", addr, "--session", "55555555-0005-4005-8005-000000000005", "--expect", "UPLOAD_DISABLED")
	if code != ExitOK {
		t.Fatalf("from ClickHouse: exit %d: %s", code, errOut)
	}
	wantFragments(t, "postmortem from ClickHouse", block, out)

	// "What you should see" after make run: the ingest summary as printed.
	var summary []string
	for _, l := range readmeBlock(t, "What you should see:") {
		if regexp.MustCompile(`^[a-z ]+: `).MatchString(l) {
			summary = append(summary, l)
		}
	}
	if len(summary) < 7 {
		t.Fatalf("README's make run block shows %d summary lines", len(summary))
	}
	for _, l := range summary {
		if !strings.Contains(ingestOut, l+"\n") {
			t.Errorf("README's summary line %q is not what ingest prints:\n%s", l, ingestOut)
		}
	}
}

// make help lists every documented target, and make install puts the
// binary on PATH.
func TestMakeHelpAndInstall(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("no make on PATH")
		}
		t.Skip("no make on PATH")
	}
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("make", "-s", "-C", "../..", "help").CombinedOutput()
	if err != nil {
		t.Fatalf("make help: %v\n%s", err, out)
	}
	targets := regexp.MustCompile(`(?m)^## ([a-z-]+):`).FindAllStringSubmatch(string(mk), -1)
	if len(targets) < 10 {
		t.Fatalf("only %d documented targets", len(targets))
	}
	for _, m := range targets {
		if !regexp.MustCompile(`(?m)^  make ` + regexp.QuoteMeta(m[1]) + ` +\S`).Match(out) {
			t.Errorf("make help lacks %s:\n%s", m[1], out)
		}
	}
	for _, want := range []string{"make install", "make run", "make test"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("make help lacks %s", want)
		}
	}
	dest := t.TempDir()
	out, err = exec.Command("make", "-s", "-n", "-C", "../..", "install", "PREFIX="+dest).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "install -m 0755 bin/ctxaudit "+dest+"/bin/ctxaudit") {
		t.Fatalf("make -n install: %v\n%s", err, out)
	}
}

// Every variable the example collector config reads is in the README, with
// how to switch a source off, and the delay before a collector session is
// listed is the example's session_idle.
func TestREADMEDocumentsTheCollectorSettings(t *testing.T) {
	readme, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile("../../examples/collector.yaml")
	if err != nil {
		t.Fatal(err)
	}
	vars := regexp.MustCompile(`\$\{env:(CTXAUDIT_[A-Z_]+)`).FindAllStringSubmatch(string(cfg), -1)
	if len(vars) < 6 {
		t.Fatalf("the example reads only %d variables", len(vars))
	}
	for _, v := range vars {
		if !strings.Contains(string(readme), "`"+v[1]+"`") {
			t.Errorf("README does not document %s", v[1])
		}
	}
	if !strings.Contains(string(readme), "**Switching a source off:**") {
		t.Error("README does not say how to switch a source off")
	}
	idle := regexp.MustCompile(`(?m)^    session_idle: (\S+)`).FindStringSubmatch(string(cfg))
	if idle == nil || !strings.Contains(string(readme), "`session_idle: "+idle[1]+"`") {
		t.Errorf("README does not explain the collector's session_idle delay (%v)", idle)
	}
	// The collector's resource is logged once, not on every line.
	code, out, errOut := run(t, "collector", "print-config", "--config", "../../examples/collector.yaml")
	if code != ExitOK || !strings.Contains(out, "disable_zap_resource: true") {
		t.Errorf("print-config: exit %d, resource not switched off on log lines\n%s%s", code, out, errOut)
	}
}
