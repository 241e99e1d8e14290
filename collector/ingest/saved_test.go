//go:build unix

package ingest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/collector/transcript"
	"github.com/ctxaudit/ctxaudit/internal/transcriptgen"
)

func TestSavedReaderConfinement(t *testing.T) {
	tmp := t.TempDir()
	project := filepath.Join(tmp, "proj")
	mkdir := func(p string) {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, data string) {
		mkdir(filepath.Dir(p))
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	symlink := func(target, link string) {
		mkdir(filepath.Dir(link))
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	sidecars := filepath.Join(project, "sid", "tool-results")
	write(filepath.Join(sidecars, "t1.txt"), "full")
	secretDir := filepath.Join(tmp, "etc")
	write(filepath.Join(secretDir, "passwd"), "root:x:0:0")
	// A symlink inside tool-results, to a file outside the tree.
	symlink(filepath.Join(secretDir, "passwd"), filepath.Join(sidecars, "link.txt"))
	// A FIFO: opening it for reading would block.
	if err := syscall.Mkfifo(filepath.Join(sidecars, "fifo.txt"), 0o644); err != nil {
		t.Fatal(err)
	}
	mkdir(filepath.Join(sidecars, "dir.txt"))
	// A sibling session whose tool-results folder is a symlink to "/etc".
	symlink(secretDir, filepath.Join(project, "sibling", "tool-results"))
	write(filepath.Join(project, "sibling2", "tool-results", "only-there.txt"), "other session")
	// An absolute */tool-results/* path outside the transcript tree.
	write(filepath.Join(tmp, "outside", "tool-results", "passwd"), "root:x:0:0")
	write(filepath.Join(sidecars, "big.txt"), strings.Repeat("x", 100))

	var refused []*RefusalError
	read := newSavedReader(file{path: filepath.Join(project, "sid.jsonl"), format: transcript.FormatClaudeCode}, "sid", 64,
		func(e *RefusalError) { refused = append(refused, e) })
	tests := []struct {
		ref    string
		want   string
		reason string // the refusal, if refused
	}{
		{"/Users/someone/.claude/projects/proj/sid/tool-results/t1.txt", "full", ""},
		{`C:\Users\someone\.claude\projects\proj\sid\tool-results\t1.txt`, "full", ""},
		{"/elsewhere/other-session/tool-results/t1.txt", "full", ""}, // the name, looked up in this session's folder
		{filepath.Join(tmp, "etc", "passwd"), "", RefuseNotToolResults},
		{"/etc/passwd", "", RefuseNotToolResults},
		{"/x/tool-results/../../secret.txt", "", RefuseNotToolResults},
		{filepath.Join(sidecars, "link.txt"), "", RefuseSymlink},
		{filepath.Join(sidecars, "fifo.txt"), "", RefuseNotRegular},
		{filepath.Join(sidecars, "dir.txt"), "", RefuseNotRegular},
		{filepath.Join(sidecars, "big.txt"), "", RefuseTooLarge},
		{filepath.Join(project, "sibling", "tool-results", "passwd"), "", ""}, // not this session's: not found here
		{filepath.Join(project, "sibling2", "tool-results", "only-there.txt"), "", ""},
		{filepath.Join(tmp, "outside", "tool-results", "passwd"), "", ""},
		{`C:\Windows\tool-results\passwd`, "", ""},
	}
	for _, tt := range tests {
		refused = nil
		b, err := read(tt.ref)
		if string(b) != tt.want || (tt.want == "" && err == nil) {
			t.Errorf("read(%q) = %q, %v; want %q", tt.ref, b, err, tt.want)
		}
		switch {
		case tt.reason == "" && len(refused) > 0:
			t.Errorf("read(%q) reported refusal %v", tt.ref, refused[0])
		case tt.reason != "" && (len(refused) != 1 || refused[0].Reason != tt.reason || !errors.Is(err, ErrSavedRefused)):
			t.Errorf("read(%q): refusals %v, err %v; want one %s", tt.ref, refused, err, tt.reason)
		}
	}

	// A symlinked session folder is refused too.
	symlink(filepath.Join(tmp, "outside"), filepath.Join(project, "linked"))
	refused = nil
	read = newSavedReader(file{path: filepath.Join(project, "linked.jsonl"), format: transcript.FormatClaudeCode}, "linked", 0,
		func(e *RefusalError) { refused = append(refused, e) })
	if b, err := read("/x/linked/tool-results/passwd"); err == nil || len(refused) != 1 || refused[0].Reason != RefuseSymlink {
		t.Errorf("symlinked session folder: %q, %v, refusals %v", b, err, refused)
	}
	if newSavedReader(file{path: "x.jsonl", format: transcript.FormatCodex}, "s", 0, nil) != nil {
		t.Error("non-Claude formats get no saved reader")
	}
}

// A notice pointing at a FIFO neither hangs ingest nor is read: the refusal
// is counted and named with file:line in the summary.
func TestRunReportsRefusedSavedOutput(t *testing.T) {
	dir := t.TempDir()
	project := filepath.Join(dir, "claude-code", transcriptgen.CCProject)
	sid := "0f1f0000-0000-4000-8000-000000000001"
	if err := os.MkdirAll(filepath.Join(project, sid, "tool-results"), 0o755); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(project, sid, "tool-results", "toolu_01Fifo.txt")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	notice := "<persisted-output>\nOutput too large (83.7KB). Full output saved to: " + fifo +
		"\n\nPreview (first 2KB):\nline 1\n...\n</persisted-output>\n"
	cc := transcriptgen.NewClaudeCode(sid, "2.1.6", 1, time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC))
	cc.Assistant("msg_01Fifo", 10, transcriptgen.ToolUse("toolu_01Fifo", "Grep", transcriptgen.Obj{{"pattern", "x"}}))
	cc.Result("toolu_01Fifo", notice, transcriptgen.Obj{{"mode", "content"}, {"numLines", 2000}})
	d := transcriptgen.NewDir(dir)
	cc.Save(d)
	if err := d.Err(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "claude-code", transcriptgen.CCProject, sid+".jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sum, err := Run(ctx, []string{dir}, Options{}, &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.ToolCalls != 1 || sum.SavedRefused[RefuseNotRegular] != 1 || len(sum.SavedRefusals) != 1 {
		t.Fatalf("calls %d, refused %v %v; want 1 call and one not_regular_file refusal (summary %+v)", sum.ToolCalls, sum.SavedRefused, sum.SavedRefusals, sum)
	}
	if r := sum.SavedRefusals[0]; r.File != path || r.Line != 2 || r.Ref != fifo {
		t.Errorf("refusal %+v; want %s:2 naming %s", r, path, fifo)
	}
	var text strings.Builder
	if err := sum.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if want := path + ":2: not_regular_file: " + fifo; !strings.Contains(text.String(), want) {
		t.Errorf("summary does not name the refusal %q:\n%s", want, text.String())
	}
}

// A FIFO named on the command line is refused before anything is opened.
func TestRunRefusesFIFOPath(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "session.jsonl")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := Run(ctx, []string{fifo}, Options{}, &recorder{})
	if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), fifo) || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("err = %v; want an input error naming the FIFO", err)
	}
}
