//go:build linux

package faultsuite

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/internal/transcriptgen"
)

// zooBoundMiB bounds the peak RSS of `ctxaudit ingest` and of the collector
// over the bad-input zoo: one 64 MiB line buffer (max_line_bytes) and the
// decoded 1M-block line (measured at 250–370 MiB, the bulk of it), but never
// the 200 MB line or a whole file on top.
const zooBoundMiB = 512

// writeZoo fills dir with the bad-input zoo, each file in the Claude Code
// layout, and returns the good session's id and the path:line of every line
// that must be reported as skipped.
func writeZoo(t *testing.T, dir string) (good string, skips []string) {
	t.Helper()
	project := filepath.Join(dir, transcriptgen.CCProject)
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name string, lines ...string) string {
		p := filepath.Join(project, name)
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// A session whose every line is fine, to prove nothing else was lost.
	good = "200d0000-0000-4000-8000-000000000001"
	s := transcriptgen.NewClaudeCode(good, "2.1.6", 9, time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC))
	for i := range 5 {
		id := fmt.Sprintf("toolu_01Zoo%015d", i)
		s.Assistant(fmt.Sprintf("msg_01Zoo%03d", i), 10, transcriptgen.ToolUse(id, "Bash", transcriptgen.Obj{{"command", "ls"}}))
		s.Result(id, "a", transcriptgen.Obj{{"stdout", "a"}, {"stderr", ""}, {"interrupted", false}, {"isImage", false}})
	}
	s.Assistant("msg_01ZooEnd", 10, transcriptgen.Text("Done."))
	tmp := t.TempDir()
	sd := transcriptgen.NewDir(tmp)
	s.Save(sd)
	if err := sd.Err(); err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile(filepath.Join(tmp, "claude-code", transcriptgen.CCProject, good+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	goodLines := strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")

	// A 200 MB line between good lines, written in chunks.
	huge := filepath.Join(project, "200d0000-0000-4000-8000-000000000002.jsonl")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintln(w, goodLines[0])
	w.WriteString(`{"type":"user","message":{"content":"`)
	chunk := strings.Repeat("x", 1<<20)
	for range 200 {
		w.WriteString(chunk)
	}
	w.WriteString("\"}}\n")
	fmt.Fprintln(w, goodLines[1])
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	skips = append(skips, huge+":2")

	// NUL bytes, and JSON nested 100,000 deep.
	p := write("200d0000-0000-4000-8000-000000000003.jsonl", "{\"type\":\"user\",\x00\x00\"message\":{}}", strings.Repeat("[", 100000)+strings.Repeat("]", 100000))
	skips = append(skips, p+":1", p+":2")

	// One assistant message of 1,000,000 content blocks (a 27 MB line).
	var b strings.Builder
	b.WriteString(`{"type":"assistant","sessionId":"200d0000-0000-4000-8000-000000000004","uuid":"z","timestamp":"2026-11-30T07:00:00.000Z","message":{"id":"msg_z","role":"assistant","model":"m","content":[`)
	for i := range 1000000 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"type":"text","text":"a"}`)
	}
	b.WriteString("]}}")
	write("200d0000-0000-4000-8000-000000000004.jsonl", b.String())

	// A FIFO named like a transcript, and a symlink loop.
	if err := syscall.Mkfifo(filepath.Join(project, "fifo.jsonl"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop-b.jsonl", filepath.Join(project, "loop-a.jsonl")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop-a.jsonl", filepath.Join(project, "loop-b.jsonl")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".", filepath.Join(project, "dirloop")); err != nil {
		t.Fatal(err)
	}
	write(good+".jsonl", goodLines...)
	return good, skips
}

// TestBadInputZoo: `ctxaudit ingest` and the collector read a folder of
// bad inputs — a 200 MB line, NUL bytes, 100,000-deep nesting, a line of
// 1,000,000 content blocks, a FIFO and symlink loops named like
// transcripts, a file rotated in place — without hanging, within bounded
// memory, naming every skipped line as file:line (the collector at its
// default log level), and storing the good session whole.
func TestBadInputZoo(t *testing.T) {
	d := newDurable(t)
	dir := d.projects
	good, skips := writeZoo(t, dir)

	// ingest
	addr := chtest.Address(t)
	cmd := exec.Command(binary, "ingest", "--clickhouse", addr, dir)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatal("ingest hung on the zoo")
	}
	if err != nil {
		t.Fatalf("ingest: %v\n%s", err, out)
	}
	for _, sk := range skips {
		if !strings.Contains(string(out), sk+":") {
			t.Errorf("ingest summary does not name %s:\n%s", sk, out)
		}
	}
	maxRSS := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss / 1024
	t.Logf("ingest of the zoo: peak RSS %d MiB", maxRSS)
	if maxRSS > zooBoundMiB {
		t.Errorf("ingest peak RSS %d MiB over %d MiB", maxRSS, zooBoundMiB)
	}
	s := chtest.OpenStore(t, addr)
	if n := count(t, s, "SELECT count() FROM DB.tool_calls FINAL WHERE session_id = ?", good); n != 5 {
		t.Errorf("ingest stored %d of the good session's 5 calls", n)
	}

	// the collector, at its default log level
	colAddr := chtest.Address(t)
	c := d.start(t, colAddr)
	cs := chtest.OpenStore(t, colAddr)
	waitFor(t, "the good session stored", 3*time.Minute, func() (bool, string) {
		if count(t, cs, "SELECT count() FROM system.tables WHERE database = ? AND name = 'sessions'", cs.Database()) == 0 {
			return false, "no schema"
		}
		n := count(t, cs, "SELECT count() FROM DB.tool_calls FINAL WHERE session_id = ?", good)
		m := count(t, cs, "SELECT count() FROM DB.sessions FINAL WHERE session_id = ?", good)
		return n == 5 && m == 1, fmt.Sprintf("%d calls, %d session rows", n, m)
	})
	// Rotation in place: the good file rewritten shorter with another session.
	rotated := filepath.Join(dir, transcriptgen.CCProject, good+".jsonl")
	lines, err := os.ReadFile(rotated)
	if err != nil {
		t.Fatal(err)
	}
	other := strings.ReplaceAll(strings.Join(strings.Split(string(lines), "\n")[:4], "\n")+"\n", good, "200d0000-0000-4000-8000-0000000000f0")
	if err := os.WriteFile(rotated, []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the rotated file read again", 2*time.Minute, func() (bool, string) {
		n := count(t, cs, "SELECT count() FROM DB.tool_calls FINAL WHERE session_id = '200d0000-0000-4000-8000-0000000000f0'")
		return n == 2, fmt.Sprintf("%d calls of the rotated file", n)
	})
	_, peak, _, _ := rss(c.cmd.Process.Pid)
	c.stop()
	log := c.logText()
	for _, sk := range skips {
		if !strings.Contains(log, `"at": "`+sk+`"`) {
			t.Errorf("the collector's log does not name %s", sk)
		}
	}
	t.Logf("collector over the zoo: peak RSS %d MiB", peak/1024)
	if peak/1024 > zooBoundMiB {
		t.Errorf("collector peak RSS %d MiB over %d MiB", peak/1024, zooBoundMiB)
	}
}
