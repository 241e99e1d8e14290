package ingest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxaudit/ctxaudit/collector/transcript"
	"github.com/ctxaudit/ctxaudit/collector/transcript/transcripttest"
	"github.com/ctxaudit/ctxaudit/schema"
)

// recorder is a Writer that keeps every batch.
type recorder struct {
	sessions []schema.Session
	calls    []schema.ToolCall
	answers  []schema.Answer
	outputs  []schema.ToolOutput
	batches  map[string][]int
	failOn   string
}

func (r *recorder) note(what string, n int) error {
	if r.batches == nil {
		r.batches = map[string][]int{}
	}
	r.batches[what] = append(r.batches[what], n)
	if r.failOn == what {
		return errors.New("clickhouse is down")
	}
	return nil
}

func (r *recorder) WriteSessions(_ context.Context, s []schema.Session) error {
	r.sessions = append(r.sessions, s...)
	return r.note("sessions", len(s))
}

func (r *recorder) WriteToolCalls(_ context.Context, c []schema.ToolCall) error {
	r.calls = append(r.calls, c...)
	return r.note("calls", len(c))
}

func (r *recorder) WriteAnswers(_ context.Context, a []schema.Answer) error {
	r.answers = append(r.answers, a...)
	return r.note("answers", len(a))
}

func (r *recorder) WriteToolOutputs(_ context.Context, o []schema.ToolOutput) error {
	r.outputs = append(r.outputs, o...)
	return r.note("outputs", len(o))
}

func (r *recorder) call(id string) *schema.ToolCall {
	for i := range r.calls {
		if r.calls[i].CallID == id {
			return &r.calls[i]
		}
	}
	return nil
}

const session216 = "637ef6e7-e740-4503-8ff8-5780d7c0918f"

// Expected numbers are counted on the fixtures with jq and wc (see the
// parser tests for the per-file breakdown).
func TestRunFixtures(t *testing.T) {
	fx := transcripttest.FixturesDir(t)
	tests := []struct {
		name                                   string
		paths                                  []string
		files, sessions, calls, answers, trunc int
		lines                                  int64
		skipped                                map[string]int
		skippedFiles                           int
	}{
		{name: "claude code session folder (main + sub-agent)",
			paths: []string{filepath.Join(fx, "claude-code", "session-2.1.6-637ef6e7")},
			files: 2, lines: 86 + 18, sessions: 1, calls: 19 + 7, answers: 2 + 1, trunc: 1, skipped: map[string]int{}},
		{name: "codex rollout",
			paths: []string{filepath.Join(fx, "codex", "rollout-0.60.1-rtchess-first-turn.jsonl")},
			files: 1, lines: 299, sessions: 1, calls: 41, answers: 1, trunc: 0, skipped: map[string]int{}},
		{name: "pi session lines",
			paths: []string{filepath.Join(fx, "pi", "selected-lines.jsonl")},
			files: 1, lines: 9, sessions: 1, calls: 3, answers: 0, trunc: 1,
			skipped: map[string]int{transcript.SkipUnpairedToolUse: 1}},
		{name: "every fixture at once",
			paths: []string{fx},
			// claude selected-lines and the lone codex turn_aborted line
			// hold no call, answer or turn: files, but no sessions.
			files: 6, lines: 35 + 86 + 18 + 299 + 1 + 9, sessions: 3, calls: 26 + 41 + 3, answers: 4, trunc: 2,
			skipped: map[string]int{transcript.SkipOrphanResult: 18, transcript.SkipUnpairedToolUse: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &recorder{}
			sum, err := Run(context.Background(), tt.paths, Options{}, w)
			if err != nil {
				t.Fatal(err)
			}
			if sum.Files != tt.files || sum.Lines != tt.lines || sum.Sessions != tt.sessions ||
				sum.ToolCalls != tt.calls || sum.Answers != tt.answers || sum.Truncated != tt.trunc {
				t.Errorf("summary files/lines/sessions/calls/answers/truncated = %d/%d/%d/%d/%d/%d, want %d/%d/%d/%d/%d/%d",
					sum.Files, sum.Lines, sum.Sessions, sum.ToolCalls, sum.Answers, sum.Truncated,
					tt.files, tt.lines, tt.sessions, tt.calls, tt.answers, tt.trunc)
			}
			if !reflect.DeepEqual(sum.SkippedLines, tt.skipped) {
				t.Errorf("skipped = %v, want %v", sum.SkippedLines, tt.skipped)
			}
			if len(w.sessions) != tt.sessions || len(w.calls) != tt.calls || len(w.answers) != tt.answers {
				t.Errorf("written sessions/calls/answers = %d/%d/%d", len(w.sessions), len(w.calls), len(w.answers))
			}
			if len(w.outputs) != 0 {
				t.Errorf("tool outputs written without being asked: %d", len(w.outputs))
			}
			for _, s := range sum.Skipped {
				if s.File == "" || s.Line < 1 {
					t.Errorf("skipped line without file:line: %+v", s)
				}
			}
		})
	}
}

func TestRunClaudeCodeSession(t *testing.T) {
	dir := filepath.Join(transcripttest.FixturesDir(t), "claude-code", "session-2.1.6-637ef6e7")
	w := &recorder{}
	sum, err := Run(context.Background(), []string{dir}, Options{}, w)
	if err != nil {
		t.Fatal(err)
	}
	if sum.TruncatedByKind[schema.KindExplicit] != 1 {
		t.Errorf("truncated by kind = %v, want explicit 1", sum.TruncatedByKind)
	}
	s := w.sessions[0]
	if s.SessionID != session216 || s.Turns != schema.Known(3) || s.ToolCalls != 26 || s.Answers != 3 ||
		s.InputTokens != schema.Known(1698799+114039) || s.OutputTokens != schema.Known(7154+3062) || s.Model != "claude-opus-4-5-20251101" ||
		!strings.HasSuffix(s.SourceFile, session216+".jsonl") {
		t.Errorf("session = %+v", s)
	}

	// The notice names /Users/gray/.claude/projects/…/tool-results/…, a path
	// from the recording machine; the sidecar is found beside the transcript.
	grep := w.call("toolu_01PRASLbbpSRmj2CjAaB1NP4")
	if grep == nil {
		t.Fatal("line-52 Grep not written")
	}
	if grep.SourceLine != 52 || grep.Context.Chars != schema.Known(2153) ||
		grep.Original.Chars != schema.Known(85713) || grep.Original.Bytes != schema.Known(85795) ||
		grep.Strategy != schema.StrategySpillToFile || !grep.Truncated {
		t.Errorf("line 52 = line %d context %v original %v chars / %v bytes strategy %s truncated %v",
			grep.SourceLine, grep.Context.Chars, grep.Original.Chars, grep.Original.Bytes, grep.Strategy, grep.Truncated)
	}

	// Sub-agent calls sit in turn 0, where the Task that ran them was called.
	sidechain := 0
	for _, c := range w.calls {
		if c.Sidechain {
			sidechain++
			if c.AgentID != "a4d534b" || c.Turn != schema.KnownTurn(0) || !strings.Contains(c.SourceFile, "subagents") {
				t.Errorf("sidechain call %s: agent %q turn %s file %s", c.CallID, c.AgentID, c.Turn, c.SourceFile)
			}
		}
	}
	if sidechain != 7 {
		t.Errorf("sidechain calls = %d, want 7", sidechain)
	}
	// Calls are handed to analysis in time order.
	for i := 1; i < len(w.calls); i++ {
		if w.calls[i].Timestamp.Before(w.calls[i-1].Timestamp) {
			t.Fatalf("call %d (%s) is before call %d", i, w.calls[i].CallID, i-1)
		}
	}
}

func TestRunIsRepeatable(t *testing.T) {
	fx := transcripttest.FixturesDir(t)
	var runs [2]*recorder
	for i := range runs {
		runs[i] = &recorder{}
		if _, err := Run(context.Background(), []string{fx}, Options{}, runs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(runs[0].sessions, runs[1].sessions) || !reflect.DeepEqual(runs[0].calls, runs[1].calls) ||
		!reflect.DeepEqual(runs[0].answers, runs[1].answers) {
		t.Fatal("re-ingesting the same files produced different rows")
	}
	ids := map[string]bool{}
	for _, c := range runs[0].calls {
		if ids[c.CallID] {
			t.Errorf("duplicate call id %s", c.CallID)
		}
		ids[c.CallID] = true
	}
}

func TestRunBatches(t *testing.T) {
	dir := filepath.Join(transcripttest.FixturesDir(t), "claude-code", "session-2.1.6-637ef6e7")
	w := &recorder{}
	if _, err := Run(context.Background(), []string{dir}, Options{BatchSize: 10}, w); err != nil {
		t.Fatal(err)
	}
	if got, want := w.batches["calls"], []int{10, 10, 6}; !reflect.DeepEqual(got, want) {
		t.Errorf("call batches = %v, want %v", got, want)
	}

	w = &recorder{failOn: "calls"}
	_, err := Run(context.Background(), []string{dir}, Options{}, w)
	if err == nil || !strings.Contains(err.Error(), "clickhouse is down") || errors.Is(err, ErrInput) {
		t.Errorf("writer failure: err = %v, want a wrapped runtime error", err)
	}
}

func TestRunDryRun(t *testing.T) {
	path := filepath.Join(transcripttest.FixturesDir(t), "codex", "rollout-0.60.1-rtchess-first-turn.jsonl")
	var out bytes.Buffer
	sum, err := Run(context.Background(), []string{path}, Options{DryRun: &out}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<24)
	n := 0
	for sc.Scan() {
		n++
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("line %d: %v", n, err)
		}
		for _, k := range []string{"call_id", "tool", "timestamp", "original", "context", "truncated", "truncation_kind",
			"strategy", "shown", "total", "disclosure", "marker", "marker_understated", "saved_ref", "followed_up", "session_coverage"} {
			if _, ok := rec[k]; !ok {
				t.Fatalf("line %d lacks %q", n, k)
			}
		}
		if orig := rec["original"].(map[string]any); orig["bytes"] != nil && orig["source"] == "unknown" {
			t.Errorf("line %d: unknown original with bytes %v (must be null)", n, orig["bytes"])
		}
	}
	if n != 41 || sum.ToolCalls != 41 {
		t.Errorf("dry-run lines = %d, summary calls = %d, want 41", n, sum.ToolCalls)
	}
}

func TestRunInputErrors(t *testing.T) {
	tmp := t.TempDir()
	unknown := filepath.Join(tmp, "notes.jsonl")
	if err := os.WriteFile(unknown, []byte(`{"hello":"world"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(tmp, "nope", "session.jsonl")
	tests := []struct {
		name  string
		paths []string
		opts  Options
		want  string
	}{
		{"missing file", []string{missing}, Options{}, missing},
		{"unknown format", []string{unknown}, Options{}, unknown},
		{"unknown --source", []string{unknown}, Options{Source: "aider"}, "aider"},
		{"no paths", nil, Options{}, "no paths"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &recorder{}
			_, err := Run(context.Background(), tt.paths, tt.opts, w)
			if !errors.Is(err, ErrInput) {
				t.Fatalf("err = %v, want ErrInput", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %q, want it to name %q", err, tt.want)
			}
			if len(w.batches) != 0 {
				t.Errorf("wrote %v before failing", w.batches)
			}
		})
	}

	t.Run("unreadable folder", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root reads any folder")
		}
		locked := filepath.Join(tmp, "locked")
		if err := os.Mkdir(locked, 0o000); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(locked, 0o755)
		_, err := Run(context.Background(), []string{tmp}, Options{}, &recorder{})
		if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), locked) {
			t.Errorf("err = %v, want ErrInput naming %s", err, locked)
		}
	})

	t.Run("unknown format found by walking is skipped, not fatal", func(t *testing.T) {
		sum, err := Run(context.Background(), []string{tmp}, Options{}, &recorder{})
		if err != nil {
			t.Fatal(err)
		}
		if len(sum.SkippedFiles) != 1 || sum.SkippedFiles[0].File != unknown {
			t.Errorf("skipped files = %+v", sum.SkippedFiles)
		}
	})
}

func TestRunBadLines(t *testing.T) {
	tmp := t.TempDir()
	path := filepath.Join(tmp, "s.jsonl")
	lines := []string{
		`{"type":"user","sessionId":"s","message":{"role":"user","content":"q"}}`,
		`{"type":"assistant","sessionId":"s","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"` + strings.Repeat("x", 5000) + `"}}]}}`,
		`{"type":"assistant","sessionId":"s","message":{"id":"m2","content":[{"type":"tool_use","id":"t2","name":"Bash","input":{"command":"ls"}}]}}`,
		`{"type":"user","sessionId":"s","message":{"content":[{"type":"tool_result","tool_use_id":"t2","content":"a"}]}}`,
		`{"type":"user","sessionId":"s","message":{"content":[{"type":"tool_res`,
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := &recorder{}
	sum, err := Run(context.Background(), []string{path}, Options{MaxLineBytes: 4096}, w)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{transcript.SkipTooLong: 1, transcript.SkipMalformed: 1}
	if !reflect.DeepEqual(sum.SkippedLines, want) || sum.ToolCalls != 1 || sum.Lines != 5 {
		t.Errorf("skipped %v calls %d lines %d; want %v, 1, 5", sum.SkippedLines, sum.ToolCalls, sum.Lines, want)
	}
	if len(sum.Skipped) != 2 || sum.Skipped[0].Line != 2 || sum.Skipped[1].Line != 5 || sum.Skipped[0].File != path {
		t.Errorf("skipped = %+v", sum.Skipped)
	}
	var text bytes.Buffer
	if err := sum.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"files:        1 (5 lines", "tool calls:   1", "skipped:      2 lines (line_too_long 1, malformed_json 1)",
		path + ":2: line_too_long", path + ":5: malformed_json"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("summary text lacks %q:\n%s", s, text.String())
		}
	}
}

// With store_content: context only what the model saw is stored.
func TestRunStoresContextOnly(t *testing.T) {
	dir := filepath.Join(transcripttest.FixturesDir(t), "claude-code", "session-2.1.6-637ef6e7")
	w := &recorder{}
	if _, err := Run(context.Background(), []string{dir}, Options{Outputs: OutputOptions{Store: true, Redact: func(s string) (string, int) { return s, 0 }}}, w); err != nil {
		t.Fatal(err)
	}
	grep := w.call("toolu_01PRASLbbpSRmj2CjAaB1NP4")
	if grep.ContextSHA256 == "" || grep.OriginalSHA256 != "" {
		t.Fatalf("context-only storing: hashes %q / %q; want a context hash and no original", grep.ContextSHA256, grep.OriginalSHA256)
	}
	for _, o := range w.outputs {
		if o.Bytes == 85795 {
			t.Fatal("the saved original was stored although only contexts were asked for")
		}
	}
}

func TestRunStoresOutputs(t *testing.T) {
	dir := filepath.Join(transcripttest.FixturesDir(t), "claude-code", "session-2.1.6-637ef6e7")
	redact := func(s string) (string, int) { return strings.ReplaceAll(s, "gray", "[user]"), strings.Count(s, "gray") }
	w := &recorder{}
	if _, err := Run(context.Background(), []string{dir}, Options{Outputs: OutputOptions{Store: true, Originals: true, MaxBytes: 4096, Redact: redact}}, w); err != nil {
		t.Fatal(err)
	}
	grep := w.call("toolu_01PRASLbbpSRmj2CjAaB1NP4")
	if grep.ContextSHA256 == "" || grep.OriginalSHA256 == "" {
		t.Fatalf("hashes = %q / %q", grep.ContextSHA256, grep.OriginalSHA256)
	}
	var orig *schema.ToolOutput
	for i := range w.outputs {
		if w.outputs[i].SHA256 == grep.OriginalSHA256 {
			orig = &w.outputs[i]
		}
	}
	if orig == nil || orig.Bytes != 85795 || !orig.Capped || len(orig.Text) > 4096 || strings.Contains(orig.Text, "gray") {
		t.Errorf("original output row = %+v", orig)
	}
	if _, err := Run(context.Background(), []string{dir}, Options{Outputs: OutputOptions{Store: true}}, w); err == nil {
		t.Error("storing outputs without a redactor must fail")
	}
}

func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Run(ctx, []string{transcripttest.FixturesDir(t)}, Options{}, &recorder{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

// Without the saved file, store_content all still stores the line-52 Grep's
// original: the full output in toolUseResult.content.
func TestRunStoresMetadataOriginal(t *testing.T) {
	src := filepath.Join(transcripttest.FixturesDir(t), "claude-code", "session-2.1.6-637ef6e7", "637ef6e7-e740-4503-8ff8-5780d7c0918f.jsonl")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, filepath.Base(src)), data, 0o644); err != nil {
		t.Fatal(err)
	}
	w := &recorder{}
	opts := Options{Outputs: OutputOptions{Store: true, Originals: true, Redact: func(s string) (string, int) { return s, 0 }}}
	if _, err := Run(context.Background(), []string{dir}, opts, w); err != nil {
		t.Fatal(err)
	}
	grep := w.call("toolu_01PRASLbbpSRmj2CjAaB1NP4")
	if grep.OriginalSHA256 == "" || grep.OriginalSHA256 == grep.ContextSHA256 {
		t.Fatalf("hashes %q / %q; want a stored original distinct from the preview", grep.OriginalSHA256, grep.ContextSHA256)
	}
	for _, o := range w.outputs {
		if o.SHA256 == grep.OriginalSHA256 && o.Bytes != 85795 {
			t.Fatalf("stored original is %d bytes, want 85795", o.Bytes)
		}
	}
}

// linkChecker is a recorder that fails a batch of calls linking to a text
// not written before it.
type linkChecker struct {
	recorder
	t       *testing.T
	linked  int
	written map[string]bool
}

func (l *linkChecker) WriteToolOutputs(ctx context.Context, o []schema.ToolOutput) error {
	for _, out := range o {
		l.written[out.SHA256] = true
	}
	return l.recorder.WriteToolOutputs(ctx, o)
}

func (l *linkChecker) WriteToolCalls(ctx context.Context, c []schema.ToolCall) error {
	for _, call := range c {
		for _, sha := range []string{call.ContextSHA256, call.OriginalSHA256} {
			if sha == "" {
				continue
			}
			l.linked++
			if !l.written[sha] {
				l.t.Errorf("call %s is written linking to text %s before the text", call.CallID, sha)
			}
		}
	}
	return l.recorder.WriteToolCalls(ctx, c)
}

// Texts are written before the calls that link to them, in every batch: a
// store with links holds their texts (chstore carries links over only from
// a store that holds texts).
func TestRunWritesTextsBeforeTheirLinks(t *testing.T) {
	dir := filepath.Join(transcripttest.FixturesDir(t), "claude-code", "session-2.1.6-637ef6e7")
	w := &linkChecker{t: t, written: map[string]bool{}}
	opts := Options{BatchSize: 3, Outputs: OutputOptions{Store: true, Originals: true, Redact: func(s string) (string, int) { return s, 0 }}}
	if _, err := Run(context.Background(), []string{dir}, opts, w); err != nil {
		t.Fatal(err)
	}
	if n := len(w.batches["calls"]); n < 3 || w.linked == 0 {
		t.Fatalf("%d batches of calls, %d links: the test checks nothing", n, w.linked)
	}
}

// A saved Bash output shorter than its persistedOutputSize is the part
// Claude Code 2.1.88 kept (it truncates an output over 64 MiB before saving
// it, without a word in the notice): not the original, so not stored as
// one. The session is written in Claude Code's layout (the notice names the
// absolute path on the recording machine; the file lies beside the
// transcript) with the Bash toolUseResult shape of the harness lab's
// bash-over-cap recording.
func TestRunStoresNoSavedPrefixAsTheOriginal(t *testing.T) {
	const (
		session = "6a6a6a6a-0006-4006-8006-000000000006"
		full    = 80000000
	)
	var out strings.Builder
	for i := 1; out.Len() < 64<<20; i++ {
		out.WriteString("row " + strings.Repeat("0", 7-len(itoa(i))) + itoa(i) + " payload\n")
	}
	saved := out.String()[:64<<20]
	project := filepath.Join(t.TempDir(), "-home-u-w")
	if err := os.MkdirAll(filepath.Join(project, session, "tool-results"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, session, "tool-results", "b7x2k9qwe.txt"), []byte(saved), 0o644); err != nil {
		t.Fatal(err)
	}
	path := "/home/u/.claude/projects/-home-u-w/" + session + "/tool-results/b7x2k9qwe.txt"
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	preview := saved[:2000]
	preview = preview[:strings.LastIndexByte(preview, '\n')]
	notice := "<persisted-output>\nOutput too large (76.3MB). Full output saved to: " + path + "\n\nPreview (first 2KB):\n" + preview + "\n...\n</persisted-output>"
	lines := []string{
		`{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/home/u/w","sessionId":"` + session + `","version":"2.1.88","type":"user","message":{"role":"user","content":"dump the log"},"uuid":"u1","timestamp":"2026-01-15T10:00:00.000Z"}`,
		`{"parentUuid":"u1","isSidechain":false,"userType":"external","cwd":"/home/u/w","sessionId":"` + session + `","version":"2.1.88","message":{"model":"claude-opus-4-5-20251101","id":"msg_1","type":"message","role":"assistant","content":[{"type":"tool_use","id":"toolu_dump","name":"Bash","input":{"command":"./dump.sh"}}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1}},"type":"assistant","uuid":"a1","timestamp":"2026-01-15T10:00:01.000Z"}`,
		`{"parentUuid":"a1","isSidechain":false,"userType":"external","cwd":"/home/u/w","sessionId":"` + session + `","version":"2.1.88","type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_dump","type":"tool_result","content":` + q(notice) + `,"is_error":false}]},"uuid":"u2","timestamp":"2026-01-15T10:00:09.000Z",` +
			`"toolUseResult":{"stdout":` + q(saved[:30000]) + `,"stderr":"","interrupted":false,"isImage":false,"persistedOutputPath":"` + path + `","persistedOutputSize":` + itoa(full) + `}}`,
	}
	if err := os.WriteFile(filepath.Join(project, session+".jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := &recorder{}
	opts := Options{Outputs: OutputOptions{Store: true, Originals: true, Redact: func(s string) (string, int) { return s, 0 }}}
	if _, err := Run(context.Background(), []string{project}, opts, w); err != nil {
		t.Fatal(err)
	}
	c := w.call("toolu_dump")
	if c == nil {
		t.Fatal("call not ingested")
	}
	if c.Original.Bytes != schema.Known(full) || c.Original.Precision != schema.PrecisionExact {
		t.Errorf("original = %+v, want persistedOutputSize's exact %d bytes", c.Original, full)
	}
	if c.OriginalSHA256 != "" {
		t.Errorf("the saved 64 MiB prefix was stored as the original (%s)", c.OriginalSHA256)
	}
}

func itoa(i int) string { return schema.KnownInt(i).String() }
