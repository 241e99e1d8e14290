package integrity

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxaudit/ctxaudit/collector/transcript/transcripttest"
	"github.com/ctxaudit/ctxaudit/internal/chtest"
)

// readmePostmortem is the output README.md shows for its headline postmortem.
func readmePostmortem(t *testing.T) (args []string, output string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(transcripttest.ExamplesDir(t), "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The command closes its sh block; the next fenced block is its output.
	const cmd = "ctxaudit postmortem --session 55555555-0005-4005-8005-000000000005 --expect UPLOAD_DISABLED"
	_, after, ok := strings.Cut(string(b), cmd+"\n```\n")
	if !ok {
		t.Fatalf("README.md has no %q example followed by its output", cmd)
	}
	_, after, ok = strings.Cut(after, "```\n")
	if !ok {
		t.Fatal("README.md: no output block after the postmortem example")
	}
	output, _, ok = strings.Cut(after, "```")
	if !ok {
		t.Fatal("README.md: unterminated postmortem output")
	}
	return strings.Fields(cmd)[1:], output
}

// TestMakeRunOrder is `make run` followed at once by the README's
// postmortem: `ctxaudit ingest --store-content all examples/sessions`, then
// the collector tailing the same folder (given as an absolute path, as the
// Makefile does) re-reads and re-analyses every session. Nothing the ingest
// stored may be lost or changed, and the postmortem must print what the
// README shows.
func TestMakeRunOrder(t *testing.T) {
	addr := chtest.Address(t)
	args, want := readmePostmortem(t)
	work := t.TempDir()
	copyTree(t, transcripttest.ExamplesDir(t), filepath.Join(work, "examples", "sessions"))
	t.Chdir(work)

	runCLI(t, "migrate", "--clickhouse", addr)
	s := chtest.OpenStore(t, addr)
	stopMerges(t, s)
	runCLI(t, "ingest", "--clickhouse", addr, "--store-content", "all", "examples/sessions")
	ingested := stored(t, s)
	if len(ingested["tool_outputs"]) == 0 {
		t.Fatal("ingest --store-content all stored no output texts")
	}
	raw := func(table string) int {
		n := 0
		for range strings.Fields(scalar(t, s, "SELECT arrayStringConcat(groupArray(toString(version)), ' ') FROM DB."+table)) {
			n++
		}
		return n
	}
	sessions, answers := raw("sessions"), raw("answers")

	c := startCollector(t, receiverConfig(filepath.Join(work, "examples", "sessions"), t.TempDir(), addr))
	waitFor(t, "the collector's analysis of every session", func() (bool, string) {
		gs, ga := raw("sessions"), raw("answers")
		return gs >= 2*sessions && ga >= 2*answers, "sessions " + itoa(gs) + "/" + itoa(2*sessions) + ", answers " + itoa(ga) + "/" + itoa(2*answers)
	})
	c.stop(t)

	compareStored(t, "after the collector re-read the ingested folder", ingested, stored(t, s))

	got := runCLI(t, append(args, "--clickhouse", addr)...)
	if missing := excerptMissing(got, want); missing != "" {
		t.Errorf("README postmortem after make run lacks %q of the README's excerpt:\n%s\nREADME shows:\n%s", missing, got, want)
	}
}

// excerptMissing returns the first part of the README's excerpt that the
// output lacks, or "". The README shows an abridged output: lines are left
// out, long lines are wrapped, and "…" stands for elided text; every other
// piece must appear in the output, in order.
func excerptMissing(out, excerpt string) string {
	out = strings.Join(strings.Fields(out), " ")
	for _, line := range strings.Split(excerpt, "\n") {
		for _, piece := range strings.Split(line, "…") {
			piece = strings.Join(strings.Fields(piece), " ")
			if piece == "" {
				continue
			}
			i := strings.Index(out, piece)
			if i < 0 {
				return piece
			}
			out = out[i+len(piece):]
		}
	}
	return ""
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestIngestThenGrowingSession: a session loaded with `ingest
// --store-content all` goes on growing, and the collector (which stores no
// content) re-analyses it. Its rows must say what an ingest of the whole
// session says — follow-through over all of it — and keep the links to the
// texts the first ingest stored.
func TestIngestThenGrowingSession(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "projects")
	copyTree(t, filepath.Join(transcripttest.FixturesDir(t), "claude-code", "session-2.1.6-637ef6e7"), dir)
	full := readTranscripts(t, dir)
	mainFile := filepath.Join(dir, "637ef6e7-e740-4503-8ff8-5780d7c0918f.jsonl")
	upTo := map[string]int{}
	for p, lines := range full {
		upTo[p] = len(lines)
	}
	upTo[mainFile] = 60
	writeTranscripts(t, full, upTo)

	addr, s := freshStore(t)
	runCLI(t, "ingest", "--clickhouse", addr, "--store-content", "all", dir)
	linked := map[string]string{}
	for id, r := range stored(t, s)["tool_calls"] {
		if r["context_sha256"] != "" {
			linked[id] = r["original_sha256"] + r["context_sha256"]
		}
	}
	if len(linked) == 0 {
		t.Fatal("the first ingest stored no links")
	}

	writeTranscripts(t, full, nil)
	wantAddr, wantStore := freshStore(t)
	runCLI(t, "ingest", "--clickhouse", wantAddr, "--store-content", "all", dir)
	want := stored(t, wantStore)

	c := startCollector(t, receiverConfig(dir, t.TempDir(), addr))
	waitCounts(t, s, countsOf(want))
	c.stop(t)
	got := stored(t, s)
	for id, w := range want["tool_calls"] {
		g, ok := got["tool_calls"][id]
		if !ok {
			t.Errorf("%s: missing", id)
			continue
		}
		for col, wv := range w {
			if col == "version" {
				continue
			}
			if _, had := linked[id]; !had && (col == "original_sha256" || col == "context_sha256" || col == knowledge) {
				continue // the collector stores no content: these calls have no links
			}
			if g[col] != wv {
				t.Errorf("%s %s: %q, want %q", id, col, clip(g[col]), clip(wv))
			}
		}
	}
	compareStored(t, "sessions and answers", want, got, "tool_calls", "tool_outputs")
}
