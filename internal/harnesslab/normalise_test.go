package harnesslab

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestNormaliseTree normalises a small recording in the layout Claude Code
// writes (session file named by its id, a saved output named in a notice)
// and checks what must hold: the same raw id becomes the same placeholder in
// names and content alike, ids keep their length, clock readings keep their
// order and format, numbers that are not readings of the run stay, and the
// substitutions are logged so they can be reversed.
func TestNormaliseTree(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	root := "/tmp/" + labRootPrefix + "0123456789"
	sid := "93640833-4cb6-4699-b6b2-1226ee816c06"
	start := time.Date(2026, 12, 1, 12, 16, 40, 0, time.UTC)
	proj := "-tmp-" + labRootPrefix + "0123456789-home-work"
	main := `{"type":"user","sessionId":"` + sid + `","timestamp":"2026-12-01T12:16:42.491Z","cwd":"` + root + `/home/work"}` + "\n" +
		`{"type":"user","sessionId":"` + sid + `","timestamp":"2026-12-01T12:16:41.002Z","toolUseResult":{"durationMs":346,"bytes":1234567890,"at":1796127401500},` +
		`"content":"Full output saved to: ` + root + `/home/.claude/projects/` + proj + `/` + sid + `/tool-results/b7y172kwz.txt"}` + "\n"
	files := map[string]string{
		filepath.Join("transcript", proj, sid+".jsonl"):                         main,
		filepath.Join("transcript", proj, sid, "tool-results", "b7y172kwz.txt"): "saved output 1234567890\n",
	}
	for rel, body := range files {
		p := filepath.Join(src, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	n := newNormaliser(root, start, start.Add(time.Minute))
	if err := n.normaliseTree(src, dst); err != nil {
		t.Fatal(err)
	}
	nproj := "-tmp-" + labRootPrefix + "0000000000-home-work"
	nsid := "00000000-0000-4000-8000-000000000001"
	got, err := os.ReadFile(filepath.Join(dst, "transcript", nproj, nsid+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
	want0 := `{"type":"user","sessionId":"` + nsid + `","timestamp":"2026-01-01T00:00:02.000Z","cwd":"` + normalisedRoot + `/home/work"}`
	if lines[0] != want0 {
		t.Errorf("line 1:\n got %s\nwant %s", lines[0], want0)
	}
	// The second line's reading is the earlier one: it ranks first, and its
	// epoch ms reading next (with its line). The 10-digit "bytes" is no
	// reading of this run (2009), so it stays; the duration is fixed.
	want1 := `{"type":"user","sessionId":"` + nsid + `","timestamp":"2026-01-01T00:00:00.000Z","toolUseResult":{"durationMs":0,"bytes":1234567890,"at":1767225601000},` +
		`"content":"Full output saved to: ` + normalisedRoot + `/home/.claude/projects/` + nproj + `/` + nsid + `/tool-results/b00000001.txt"}`
	if lines[1] != want1 {
		t.Errorf("line 2:\n got %s\nwant %s", lines[1], want1)
	}
	if len(lines[1]) != len(strings.Split(main, "\n")[1])-len("346")+len("0")-len("1796127401500")+len("1767225601000") {
		t.Errorf("line 2 changed length beyond the duration")
	}
	saved, err := os.ReadFile(filepath.Join(dst, "transcript", nproj, nsid, "tool-results", "b00000001.txt"))
	if err != nil {
		t.Fatalf("the saved output must move with its renamed id: %v", err)
	}
	if string(saved) != files[filepath.Join("transcript", proj, sid, "tool-results", "b7y172kwz.txt")] {
		t.Errorf("saved output changed: %q", saved)
	}
	kinds := map[string]bool{}
	for _, s := range n.subst {
		kinds[s.Kind] = true
		if s.Kind == "uuid" && (s.Raw != sid || s.Norm != nsid) {
			t.Errorf("uuid substitution %+v", s)
		}
	}
	for _, k := range []string{"uuid", "claude-saved", "time", "value"} {
		if !kinds[k] {
			t.Errorf("no %s substitution logged: %+v", k, n.subst)
		}
	}
}

func TestSplitOTLP(t *testing.T) {
	in := `{"resourceLogs":[{"resource":{"attributes":[]},"scopeLogs":[{"scope":{"name":"s"},"logRecords":[{"body":{"stringValue":"a"}},{"body":{"stringValue":"b"}}]}]}]}` + "\n" +
		`{"resourceLogs":[{"resource":{"attributes":[]},"scopeLogs":[{"scope":{"name":"s"},"logRecords":[{"body":{"stringValue":"c"}}]}]}]}` + "\n"
	out, err := splitOTLP([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("got %d requests, want one a record (3):\n%s", len(lines), out)
	}
	for i, body := range []string{"a", "b", "c"} {
		want := `{"resourceLogs":[{"resource":{"attributes":[]},"scopeLogs":[{"logRecords":[{"body":{"stringValue":"` + body + `"}}],"scope":{"name":"s"}}]}]}`
		if lines[i] != want {
			t.Errorf("request %d:\n got %s\nwant %s", i, lines[i], want)
		}
	}
	if _, err := splitOTLP([]byte("{not json\n")); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("bad line: err %v, want one naming line 1", err)
	}
}

// TestCheckCompactions: a truth that expects another compaction count than
// the session records carry fails the check, with the counts named.
func TestCheckCompactions(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join("..", "..", "testdata", "lab", "pi@0.73.1", "compaction-after-answer")
	if err := copyTree(src, dir); err != nil {
		t.Fatal(err)
	}
	tr, err := ReadTruth(dir)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Compactions == nil || *tr.Compactions != 1 {
		t.Fatalf("recorded truth: compactions %v, want 1", tr.Compactions)
	}
	tr.Compactions = ptr(0)
	if err := WriteTruth(dir, tr); err != nil {
		t.Fatal(err)
	}
	r, err := Check(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	want := "session: 1 compactions recorded, want 0"
	if r.OK() || len(r.Problems) != 1 || r.Problems[0] != want {
		t.Errorf("problems %q, want just %q", r.Problems, want)
	}
}
