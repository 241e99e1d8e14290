package cli

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxaudit/ctxaudit/collector/transcript/transcripttest"
)

// noServer is an address nothing listens on: a command given it that
// still succeeds never needed a database.
const noServer = "clickhouse://default@127.0.0.1:1/none"

// The README's first steps, as a new user runs them.

// sessions lists every session by default (the examples are from January
// 2026), its usage says so, and a --since that hides sessions says it did.
func TestSessionsHidesNothingSilently(t *testing.T) {
	addr := ingestScenarios(t)
	code, out, errOut := run(t, "sessions", "--clickhouse", addr, "--risk", "high")
	if code != ExitOK || !strings.Contains(out, "55555555-0005-4005-8005-000000000005") {
		t.Fatalf("sessions --risk high: exit %d, stdout:\n%s\nstderr: %s", code, out, errOut)
	}
	code, out, errOut = run(t, "sessions", "--clickhouse", addr, "--since", "7d")
	if code != ExitOK || !strings.Contains(out, "no sessions active since") {
		t.Fatalf("sessions --since 7d: exit %d\n%s", code, out)
	}
	if !strings.Contains(errOut, "older sessions are hidden by --since") || !strings.Contains(errOut, "--since all lists them") {
		t.Errorf("a --since that hides sessions should say so; stderr %q", errOut)
	}
	_, _, errOut = run(t, "sessions", "--clickhouse", addr, "--limit", "2")
	if !strings.Contains(errOut, "showing the 2 most recently active sessions; --limit lists more") {
		t.Errorf("a --limit that hides sessions should say so; stderr %q", errOut)
	}
	_, all, _ := run(t, "sessions", "--clickhouse", addr, "--limit", "100000", "--format", "json")
	n := strings.Count(all, `"session_id"`)
	if n < 3 {
		t.Fatalf("the scenarios hold %d sessions; want several", n)
	}
	code, out, errOut = run(t, "sessions", "--clickhouse", addr, "--limit", strconv.Itoa(n), "--format", "json")
	if code != ExitOK || strings.Count(out, `"session_id"`) != n || errOut != "" {
		t.Errorf("a --limit of exactly the number of sessions (%d) hides nothing and says nothing: exit %d, %d sessions, stderr %q",
			n, code, strings.Count(out, `"session_id"`), errOut)
	}
	_, help, _ := run(t, "sessions", "--help")
	if !strings.Contains(help, "[--since all]") || !strings.Contains(help, `(default "all")`) {
		t.Errorf("usage and default disagree:\n%s", help)
	}
}

// A misspelt key in ctxaudit.yaml is an error naming the file and the key,
// and a bad value from the file names the file, not a flag.
func TestConfigFileMistakes(t *testing.T) {
	t.Setenv("CTXAUDIT_STORE_CONTENT", "")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "ctxaudit.yaml")
	write := func(s string) {
		if err := os.WriteFile(cfg, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("clickhuose: clickhouse://default@db:9000/x\nstore_content: all\n")
	code, _, errOut := run(t, "sessions", "--config", cfg)
	if code != ExitUsage || !strings.Contains(errOut, cfg) || !strings.Contains(errOut, `unknown key "clickhuose"`) || !strings.Contains(errOut, "clickhouse,") {
		t.Fatalf("misspelt key: exit %d, stderr %q", code, errOut)
	}
	write("store_content: everything\n")
	code, _, errOut = run(t, "ingest", "--config", cfg, "--dry-run", dir)
	if code != ExitUsage || !strings.Contains(errOut, "store_content in "+cfg+` must be none, context or all, not "everything"`) {
		t.Fatalf("bad value in the file: exit %d, stderr %q", code, errOut)
	}
	t.Setenv("CTXAUDIT_STORE_CONTENT", "everything")
	_, _, errOut = run(t, "ingest", "--config", cfg, "--dry-run", dir)
	if !strings.Contains(errOut, "CTXAUDIT_STORE_CONTENT must be") {
		t.Errorf("bad value from the environment: stderr %q", errOut)
	}
	_, _, errOut = run(t, "ingest", "--config", cfg, "--dry-run", "--store-content", "some", dir)
	if !strings.Contains(errOut, "--store-content must be") {
		t.Errorf("bad value from the flag: stderr %q", errOut)
	}
	// Keys of every command are known, in either spelling.
	write("clickhouse: " + noServer + "\nmax_line_bytes: 1000\nformat: text\nsince: all\n")
	if code, _, errOut := run(t, "version", "--config", cfg); code != ExitOK {
		t.Fatalf("known keys refused: %s", errOut)
	}
}

func TestIngestFirstMistakes(t *testing.T) {
	examples := transcripttest.ExamplesDir(t)
	t.Run("no path", func(t *testing.T) {
		code, _, errOut := run(t, "ingest")
		if code != ExitUsage || !strings.Contains(errOut, "ingest needs at least one transcript file or folder") {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
	})
	t.Run("missing file fails before connecting", func(t *testing.T) {
		code, out, errOut := run(t, "ingest", "--clickhouse", noServer, "nope.jsonl")
		if code != ExitUsage || !strings.Contains(errOut, "nope.jsonl: no such file or folder") || strings.Contains(errOut, "connect") {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
		if out != "" {
			t.Errorf("an all-zero summary was printed:\n%s", out)
		}
	})
	t.Run("an alias of a format says what it means", func(t *testing.T) {
		code, _, errOut := run(t, "ingest", "--dry-run", "--source", "claude", filepath.Join(examples, "claude-code"))
		if code != ExitOK || !strings.Contains(errOut, "--source claude reads every file as claude-code") {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
	})
	t.Run("a forced wrong format is not a success", func(t *testing.T) {
		code, _, errOut := run(t, "ingest", "--dry-run", "--source", "codex", filepath.Join(examples, "claude-code"))
		if code != ExitUsage || !strings.Contains(errOut, "found no session in them: are they codex transcripts?") {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
	})
	t.Run("the HTTP port is named as such", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("Ok.\n")) }))
		defer srv.Close()
		addr := "clickhouse://default@" + strings.TrimPrefix(srv.URL, "http://") + "/x"
		code, _, errOut := run(t, "migrate", "--clickhouse", addr)
		if code != ExitFailure || !strings.Contains(errOut, "answers HTTP: that is ClickHouse's HTTP port") || !strings.Contains(errOut, "9000") {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
	})
}

// The README's postmortem, straight from the example transcript, with no
// server anywhere.
func TestPostmortemFromFilesWithoutAServer(t *testing.T) {
	file := filepath.Join(transcripttest.ExamplesDir(t), "claude-code", "-Users-dev-acme", "55555555-0005-4005-8005-000000000005.jsonl")
	code, out, errOut := run(t, "postmortem", "--clickhouse", noServer, file, "--expect", "UPLOAD_DISABLED")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"Turn 0\n",
		"cut        explicit spill_to_file (too_large); shown chars 0–1,982 of 101,862",
		"cut from               toolu_01PersistedGrep000001 (Grep): it was in the part the model never saw",
		`Answer at 14:30:30 says "UPLOAD_DISABLED is not found anywhere in the code: no environment variable disables uploads; they…"; it was built on Grep of upload, which delivered a preview of the first 1,982 of 101,862 chars`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("postmortem lacks %q:\n%s", want, out)
		}
	}
	// A folder of several sessions needs --session, and lists them.
	code, _, errOut = run(t, "postmortem", filepath.Dir(file))
	if code != ExitUsage || !strings.Contains(errOut, "name one with --session") || !strings.Contains(errOut, "55555555-0005-4005-8005-000000000005") {
		t.Fatalf("several sessions without --session: exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = run(t, "postmortem", filepath.Dir(file), "--session", "nope")
	if code != ExitUsage || !strings.Contains(errOut, `session "nope" is not in these transcripts`) {
		t.Fatalf("unknown session: exit %d, stderr %q", code, errOut)
	}
}
