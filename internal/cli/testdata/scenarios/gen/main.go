// Command gen writes the postmortem scenario sessions beside it: the cases
// the scenario tests need that examples/sessions does not have, in
// each harness's exact on-disk format and folder layout (line envelope, field
// order, notice wording), following examples/sessions/gen and the real
// transcripts in testdata/transcripts. Output is deterministic, so
// regenerating changes nothing; ../README.md says what each file reproduces.
//
// Run from internal/cli: go run ./testdata/scenarios/gen -out testdata/scenarios
package main

import (
	"flag"
	"fmt"
	"github.com/ctxaudit/ctxaudit/internal/transcriptgen"
	"log"
	"strings"
	"time"
)

func main() {
	out := flag.String("out", "testdata/scenarios", "scenarios directory to write into")
	flag.Parse()
	g := &gen{transcriptgen.NewDir(*out)}
	g.bashPersistedThenGrep()
	g.codexHeadTailNoClaim()
	g.codexNoFailingTests()
	g.completeRead()
	g.piChineseAbsenceClaim()
	if err := g.Err(); err != nil {
		log.Fatal(err)
	}
}

// gen writes the reproductions; its methods each write one session.
type gen struct{ *transcriptgen.Dir }

type (
	obj = transcriptgen.Obj
	kv  = transcriptgen.KV
)

func line(v any) string { return transcriptgen.Line(v) }

func marshal(v any) ([]byte, error) { return transcriptgen.Marshal(v) }

// ---------------------------------------------------------------- Claude Code

// The Claude Code builder is shared with the other reproduction generator.
type cc = transcriptgen.ClaudeCode

const (
	ccProject      = transcriptgen.CCProject
	ccCwd          = transcriptgen.CCCwd
	ccReadReminder = transcriptgen.CCReadReminder
)

var (
	text       = transcriptgen.Text
	toolUse    = transcriptgen.ToolUse
	numbered   = transcriptgen.Numbered
	ccFileSize = transcriptgen.CCFileSize
	ccPreview  = transcriptgen.CCPreview
)

func newCC(sid, version string, seed int, start time.Time) *cc {
	return transcriptgen.NewClaudeCode(sid, version, seed, start)
}

// testRunOutput is `go test ./...` over 3,000 packages; package 2,400 fails.
func testRunOutput() string {
	var b strings.Builder
	for i := 1; i <= 3000; i++ {
		if i == 2400 {
			b.WriteString("--- FAIL: TestUploadRetry (30.00s)\n    upload_test.go:88: dial tcp 127.0.0.1:4318: connect: connection refused\n")
			fmt.Fprintf(&b, "FAIL\tgithub.com/acme/acme/internal/pkg%04d\t30.012s\n", i)
			continue
		}
		fmt.Fprintf(&b, "ok  \tgithub.com/acme/acme/internal/pkg%04d\t0.%03ds\n", i, 10+i%900)
	}
	b.WriteString("FAIL")
	return b.String()
}

// bashPersistedThenGrep: Bash output over the 30,000-char threshold is saved
// to the session's tool-results/ and the model gets a 2 KB <persisted-output>
// preview of passing packages. It greps the saved file for FAIL, finds the
// failing test and answers from it: the first call is followed up by a
// search (searched, not read).
func (g *gen) bashPersistedThenGrep() {
	s := newCC("c0c0c0c0-000c-400c-800c-00000000000c", "2.1.22", 12, time.Date(2026, 1, 16, 9, 0, 0, 0, time.UTC))
	id := "toolu_01BashPersisted000001"
	name := "b3k9x2mqp.txt"
	full := testRunOutput()
	savedAt := "/Users/dev/.claude/projects/" + ccProject + "/" + s.SID + "/tool-results/" + name
	preview, more := ccPreview(full)
	notice := "<persisted-output>\nOutput too large (" + ccFileSize(len(full)) + "). Full output saved to: " + savedAt +
		"\n\nPreview (first 2KB):\n" + preview
	if more {
		notice += "\n..."
	}
	notice += "\n</persisted-output>"
	s.Prompt("Run the whole test suite and tell me which test fails.")
	s.Assistant("msg_01BashPersisted0000001", 71, toolUse(id, "Bash",
		obj{{"command", "go test ./... 2>&1"}, {"description", "Run every package's tests"}}))
	s.Result(id, notice, obj{{"stdout", preview}, {"stderr", ""}, {"interrupted", false}, {"isImage", false},
		{"persistedOutputPath", savedAt}, {"persistedOutputSize", len(full)}})

	grepID := "toolu_01GrepSavedOutput0001"
	s.Assistant("msg_01BashPersisted0000002", 64,
		text("The output was saved to a file; searching it for failures."),
		toolUse(grepID, "Grep", obj{{"pattern", "FAIL"}, {"path", savedAt}, {"output_mode", "content"}, {"-n", true}}))
	var hits []string
	for i, l := range strings.Split(full, "\n") {
		if strings.Contains(l, "FAIL") {
			hits = append(hits, fmt.Sprintf("%d:%s", i+1, l))
		}
	}
	content := strings.Join(hits, "\n")
	s.Result(grepID, content, obj{{"mode", "content"}, {"numFiles", 0}, {"filenames", []string{}},
		{"content", content}, {"numLines", len(hits)}})
	s.Assistant("msg_01BashPersisted0000003", 48,
		text("TestUploadRetry fails in internal/pkg2400: upload_test.go:88 cannot dial 127.0.0.1:4318 (connection refused). Every other package passes."))
	s.Save(g.Dir)
	g.Write("claude-code/"+ccProject+"/"+s.SID+"/tool-results/"+name, []byte(full))
}

// completeRead: a Read of a short file, delivered whole; the answer is
// built on complete input.
func (g *gen) completeRead() {
	s := newCC("e0e0e0e0-000e-400e-800e-00000000000e", "2.1.22", 14, time.Date(2026, 1, 16, 11, 0, 0, 0, time.UTC))
	path := ccCwd + "/config/defaults.go"
	src := []string{
		"package config", "", "// Defaults used when acme.toml sets nothing.", "const (",
		"\tDefaultHost = \"127.0.0.1\"", "\tDefaultPort = 8080", "\tDefaultTimeout = 30 // seconds", ")",
	}
	id := "toolu_01ReadComplete000001"
	s.Prompt("What port does the server listen on by default?")
	s.Assistant("msg_01ReadComplete00000001", 40, toolUse(id, "Read", obj{{"file_path", path}}))
	s.Result(id, numbered(src, 1)+ccReadReminder, obj{{"type", "text"},
		{"file", obj{{"filePath", path}, {"content", strings.Join(src, "\n")},
			{"numLines", len(src)}, {"startLine", 1}, {"totalLines", len(src)}}}})
	s.Assistant("msg_01ReadComplete00000002", 22,
		text("It listens on port 8080 by default (DefaultPort in config/defaults.go)."))
	s.Save(g.Dir)
}

// ---------------------------------------------------------------- Codex

// codexHeadTailNoClaim: Codex head+tail truncation of shell output (128 head
// and 128 tail lines of 5,000) under "Total output lines"; the model answers
// from the tail without revisiting the omitted middle, and without claiming
// that anything is absent, so the answer is graded medium, not high.
func (g *gen) codexHeadTailNoClaim() {
	s := transcriptgen.NewCodex("019a0d0d-0d0d-7d0d-8d0d-0d0d0d0d0d0d", time.Date(2026, 1, 16, 10, 0, 0, 0, time.UTC),
		"/Users/dev/acme", "How long did last night's import job take? The log is logs/import.log.")
	const total = 5000
	logLine := func(n int) string {
		switch n {
		case 1:
			return "00:00:01 INFO import started batch=nightly"
		case 2600:
			return "01:43:20 WARN import paused: upstream rate limit, resuming in 45m"
		case total:
			return "03:12:41 INFO import finished rows=4998000"
		}
		return fmt.Sprintf("%02d:%02d:%02d INFO imported chunk=%d rows=1000", n/1500, n/25%60, n%60, n)
	}
	s.ShellCall("call_HeadTailImportLog00001", `{"command":"cat logs/import.log","workdir":".","timeout_ms":120000}`, time.Second,
		transcriptgen.CodexShellOutput(0, "0.1", total, logLine), 200*time.Millisecond)
	s.Answer("The import ran from 00:00:01 to 03:12:41, so it took about 3 hours 13 minutes and imported 4,998,000 rows.", 18410, 9216, 388, 240)
	s.Save(g.Dir, "codex/2026/01/16/rollout-2026-01-16T10-00-00-"+s.SID+".jsonl")
}

// codexNoFailingTests: `go test ./...` over 3,000 packages, cut to 128 head
// and 128 tail lines with "[... omitted 2744 of 3000 lines ...]"; the one
// failing package is in the omitted middle. The answer says, in plain
// English and with no scope, that no failing tests were found: an unscoped
// absence claim on an incomplete input, graded high.
func (g *gen) codexNoFailingTests() {
	s := transcriptgen.NewCodex("019a0e0e-0e0e-7e0e-8e0e-0e0e0e0e0e0e", time.Date(2026, 1, 16, 13, 0, 0, 0, time.UTC),
		"/Users/dev/acme", "Run the whole test suite and tell me whether anything fails.")
	pkgLine := func(n int) string {
		if n == 1500 {
			return fmt.Sprintf("FAIL\tgithub.com/acme/acme/internal/pkg%04d\t30.012s", n)
		}
		return fmt.Sprintf("ok  \tgithub.com/acme/acme/internal/pkg%04d\t0.%03ds", n, 10+n%900)
	}
	s.ShellCall("call_HeadTailGoTest0000001", `{"command":"go test ./...","workdir":".","timeout_ms":600000}`, time.Second,
		transcriptgen.CodexShellOutput(1, "212.4", 3000, pkgLine), 212*time.Second)
	s.Answer("The suite ran; no failing tests were found in the output, every package reports ok.", 21230, 9216, 212, 160)
	s.Save(g.Dir, "codex/2026/01/16/rollout-2026-01-16T13-00-00-"+s.SID+".jsonl")
}

// ---------------------------------------------------------------- pi

// piChineseAbsenceClaim: pi's read stops at 2,000 of 3,100 lines with its
// "[Showing lines 1-2000 of 3100. Use offset=2001 to continue.]" notice; the
// function is on line 2,900 and the model answers in Chinese that the file
// does not define it (沒有定義) without reading on.
func (g *gen) piChineseAbsenceClaim() {
	s := transcriptgen.NewPi("f0f0f0f0-000f-400f-800f-00000000000f", "/Users/dev/acme", time.Date(2026, 1, 16, 12, 0, 0, 0, time.UTC), 0x7f000000)
	s.User("src/uploader.ts 裡有定義 retryUpload 嗎？", 10*time.Second)
	const id = "toolu_01PiReadChinese0000001"
	s.Assistant([]obj{{{"type", "toolCall"}, {"id", id}, {"name", "read"}, {"arguments", obj{{"path", s.Cwd + "/src/uploader.ts"}}}}}, 2100, 64, "toolUse", 3*time.Second)
	text, details := transcriptgen.PiLineTruncatedRead(transcriptgen.UploaderSource())
	s.ToolResult(id, "read", text, details, time.Second)
	s.Assistant([]obj{{{"type", "text"}, {"text", "src/uploader.ts 裡沒有定義 retryUpload，這個檔案只宣告了常數。"}}}, 24800, 41, "stop", 4*time.Second)
	s.Save(g.Dir, "pi/--Users-dev-acme--/2026-01-16T12-00-00-000Z_"+s.SID+".jsonl")
}
