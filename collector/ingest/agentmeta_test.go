package ingest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxaudit/ctxaudit/collector/transcript"
	"github.com/ctxaudit/ctxaudit/collector/transcript/claudecode"
	"github.com/ctxaudit/ctxaudit/collector/transcript/transcripttest"
	"github.com/ctxaudit/ctxaudit/schema"
)

// The ids of the lab's sub-agent session (claude-code@2.1.328
// subagent-bash-over-cap) and of its reproduction without the Agent call's
// result (testdata/repro).
const (
	labAgentCall = "toolu_lab000002" // the main thread's Agent call
	labAgentBash = "toolu_lab000004" // the sub-agent's Bash call
	labAgentID   = "a0000000000000001"
	labMainReply = "msg_lab000006" // the main thread's answer
	labSubReply  = "msg_lab000005" // the sub-agent's answer
)

func labAgentSession(t *testing.T) string {
	t.Helper()
	return filepath.Join(transcripttest.LabDir(t), "claude-code@2.1.328", "subagent-bash-over-cap", "transcript")
}

// reproDir is testdata/repro (see its README.md).
func reproDir(t *testing.T) string {
	t.Helper()
	return filepath.Join(filepath.Dir(transcripttest.LabDir(t)), "repro")
}

func ingestDir(t *testing.T, dir string) (*recorder, Summary) {
	t.Helper()
	w := &recorder{}
	sum, err := Run(context.Background(), []string{dir}, Options{}, w)
	if err != nil {
		t.Fatal(err)
	}
	return w, sum
}

func answerOf(w *recorder, id string) *schema.Answer {
	for i := range w.answers {
		if w.answers[i].MessageID == id {
			return &w.answers[i]
		}
	}
	return nil
}

// Claude Code stopped after its sub-agent finished and before it wrote the
// Agent call's result (testdata/repro/…/agent-unfinished): no result names
// the sub-agent, but its metadata file names the call, so the sub-agent's
// records are placed in the call's turn — as the recording with the result
// places them — instead of staying unknown.
func TestRunPlacesSubAgentOfUnfinishedCall(t *testing.T) {
	w, sum := ingestDir(t, filepath.Join(reproDir(t), "claude-code@2.1.328", "agent-unfinished", "transcript"))
	if n := sum.SkippedLines[transcript.SkipUnpairedToolUse]; n != 1 {
		t.Fatalf("unpaired calls %d, want the Agent call's 1 (skipped %v)", n, sum.Skipped)
	}
	if c := w.call(labAgentCall); c != nil {
		t.Fatalf("the Agent call has no result, yet a row: %+v", c)
	}
	bash := w.call(labAgentBash)
	if bash == nil {
		t.Fatal("no row for the sub-agent's Bash call")
	}
	if bash.Turn != schema.KnownTurn(0) || bash.AgentID != labAgentID || !bash.Sidechain {
		t.Errorf("sub-agent Bash: turn %v agent %q sidechain %v, want turn 0 of agent %s", bash.Turn, bash.AgentID, bash.Sidechain, labAgentID)
	}
	sub := answerOf(w, labSubReply)
	if sub == nil || sub.Turn != schema.KnownTurn(0) || !slices.Equal(sub.InputCallIDs, []string{labAgentBash}) {
		t.Errorf("sub-agent answer %+v, want turn 0 resting on %s", sub, labAgentBash)
	}
	if a := answerOf(w, labMainReply); a != nil {
		t.Errorf("the main thread wrote no answer, yet %+v", a)
	}
	if len(w.sessions) != 1 || w.sessions[0].Turns != schema.Known(1) {
		t.Errorf("sessions %+v, want one of 1 turn", w.sessions)
	}

	// The recording itself, whose result names the agent, places the same
	// Bash call the same way.
	rec, _ := ingestDir(t, labAgentSession(t))
	if got := rec.call(labAgentBash); got == nil || got.Turn != bash.Turn {
		t.Fatalf("recorded Bash call %+v, want turn %v", got, bash.Turn)
	}
}

// Where the result names the agent, the metadata changes nothing: the
// lab recording ingested with and without its metadata file gives the same
// rows.
func TestRunMetaChangesNothingWhereTheResultPlaces(t *testing.T) {
	with, _ := ingestDir(t, labAgentSession(t))
	dir := t.TempDir()
	copyDir(t, labAgentSession(t), dir)
	metas, _ := filepath.Glob(filepath.Join(dir, "*", "*", "subagents", "*.meta.json"))
	if len(metas) != 1 {
		t.Fatalf("meta files %v", metas)
	}
	if err := os.Remove(metas[0]); err != nil {
		t.Fatal(err)
	}
	without, _ := ingestDir(t, dir)
	if len(with.calls) != len(without.calls) || len(with.answers) != len(without.answers) {
		t.Fatalf("calls %d/%d answers %d/%d", len(with.calls), len(without.calls), len(with.answers), len(without.answers))
	}
	for i := range with.calls {
		a, b := with.calls[i], without.calls[i]
		a.SourceFile, b.SourceFile = "", "" // the two folders differ
		a.Analysis, b.Analysis = schema.Analysis{}, schema.Analysis{}
		if !sameJSON(t, a, b) {
			t.Errorf("call %s differs with the metadata:\n%+v\n%+v", a.CallID, a, b)
		}
	}
	for i := range with.answers {
		if !sameJSON(t, with.answers[i], without.answers[i]) {
			t.Errorf("answer %s differs with the metadata", with.answers[i].MessageID)
		}
	}
	main := answerOf(with, labMainReply)
	if main == nil || !slices.Contains(main.InputCallIDs, labAgentBash) {
		t.Fatalf("main answer %+v, want the sub-agent's Bash among its inputs", main)
	}
}

// A metadata file that cannot be used is a counted, reported bad input
// naming the file; the session's records are all still ingested, placed as
// without it.
func TestRunReportsBadAgentMeta(t *testing.T) {
	for name, write := range map[string]func(t *testing.T, path string){
		"malformed":       func(t *testing.T, p string) { writeFile(t, p, `{"toolUseId":"toolu_lab000002"`) },
		"not an object":   func(t *testing.T, p string) { writeFile(t, p, `["toolu_lab000002"]`) },
		"id not a string": func(t *testing.T, p string) { writeFile(t, p, `{"toolUseId":2}`) },
		"oversized": func(t *testing.T, p string) {
			writeFile(t, p, `{"toolUseId":"toolu_lab000002","pad":"`+strings.Repeat("x", claudecode.MaxAgentMetaBytes)+`"}`)
		},
		"a folder": func(t *testing.T, p string) {
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
		},
		"a symlink": func(t *testing.T, p string) {
			target := filepath.Join(t.TempDir(), "meta.json")
			writeFile(t, target, `{"toolUseId":"toolu_lab000002"}`)
			if err := os.Symlink(target, p); err != nil {
				t.Skip("no symlinks here:", err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			copyDir(t, filepath.Join(reproDir(t), "claude-code@2.1.328", "agent-unfinished", "transcript"), dir)
			metas, _ := filepath.Glob(filepath.Join(dir, "*", "*", "subagents", "*.meta.json"))
			if len(metas) != 1 {
				t.Fatalf("meta files %v", metas)
			}
			if err := os.Remove(metas[0]); err != nil {
				t.Fatal(err)
			}
			write(t, metas[0])
			w, sum := ingestDir(t, dir)
			if sum.SkippedLines[transcript.SkipBadAgentMeta] != 1 {
				t.Fatalf("skipped %v, want one %s", sum.SkippedLines, transcript.SkipBadAgentMeta)
			}
			i := slices.IndexFunc(sum.Skipped, func(s SkippedLine) bool { return s.Reason == transcript.SkipBadAgentMeta })
			if s := sum.Skipped[i]; s.File != metas[0] || s.Detail == "" {
				t.Errorf("report %+v, want the file %s and why", s, metas[0])
			}
			bash := w.call(labAgentBash)
			if bash == nil || bash.Turn.Known {
				t.Errorf("sub-agent Bash %+v, want its row, turn unknown", bash)
			}
		})
	}
}

// A metadata file names a call that must be in the main thread: one naming
// the sub-agent's own call, or a call the session lacks, places nothing.
func TestRunTrustsOnlyMainThreadCalls(t *testing.T) {
	for _, id := range []string{labAgentBash, "toolu_elsewhere"} {
		dir := t.TempDir()
		copyDir(t, filepath.Join(reproDir(t), "claude-code@2.1.328", "agent-unfinished", "transcript"), dir)
		metas, _ := filepath.Glob(filepath.Join(dir, "*", "*", "subagents", "*.meta.json"))
		writeFile(t, metas[0], `{"agentType":"general-purpose","toolUseId":"`+id+`"}`)
		w, sum := ingestDir(t, dir)
		if n := sum.SkippedLines[transcript.SkipBadAgentMeta]; n != 0 {
			t.Errorf("%s: a well-formed file reported bad", id)
		}
		if bash := w.call(labAgentBash); bash == nil || bash.Turn.Known {
			t.Errorf("%s: sub-agent Bash %+v, want turn unknown", id, bash)
		}
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func sameJSON(t *testing.T, a, b any) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(ja) == string(jb)
}
