// Command gen writes the reproduction sessions under examples/sessions: cases
// the real fixtures in testdata/transcripts lack, in each harness's exact on-disk
// format (line envelope, field order, notice wording). Everything is
// deterministic, so regenerating changes nothing; see ../README.md for what
// each file reproduces.
//
//go:generate go run . -out ..
package main

import (
	"flag"
	"fmt"
	"github.com/ctxaudit/ctxaudit/internal/transcriptgen"
	"log"
	"strings"
	"time"
	"unicode/utf8"
)

func main() {
	out := flag.String("out", "..", "examples/sessions directory to write into")
	flag.Parse()
	g := &gen{transcriptgen.NewDir(*out)}
	g.webFetchSummary()
	g.partialRead()
	g.bashFailure()
	g.mcpFetchPages()
	g.persistedGrep()
	g.codexOmittedLines()
	g.piTruncatedRead()
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

// newCC starts example session number seed (1–9), each on its own hour.
func newCC(seed int, version string) *cc {
	return transcriptgen.NewClaudeCode(fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", seed*0x11111111, seed, seed, seed, seed),
		version, seed, time.Date(2026, 1, 15, 9, 30, 0, 0, time.UTC).Add(time.Duration(seed)*time.Hour))
}

// webFetchSummary: a 156,000-char page; WebFetch hands a second model the
// first 100,000 chars and the main model only its digest, with no notice.
// The setting sits at char ~141,000, so the answer "there is no such
// setting" is built on an input that never contained it — which the
// transcript cannot show: its only size is the HTTP body's bytes, not the
// page text's chars the cap counts (see the README).
func (g *gen) webFetchSummary() {
	s := newCC(1, "2.1.22")
	url := "https://docs.acme.example/cli/configuration"
	s.Prompt("Is there a setting in acme-cli to stop it uploading telemetry? The docs are at " + url)
	s.Assistant("msg_01WebFetchAsk0000000001", 96,
		text("I'll check the configuration reference."),
		toolUse("toolu_01WebFetch00000000001", "WebFetch", obj{{"url", url},
			{"prompt", "List every configuration setting this page documents, with what it does."}}))
	summary := "The page documents these acme-cli configuration settings:\n\n" +
		"- `api.endpoint` — base URL of the Acme API (default https://api.acme.example)\n" +
		"- `api.timeout` — request timeout in seconds (default 30)\n" +
		"- `auth.profile` — credentials profile to use\n" +
		"- `cache.dir` — where downloaded artifacts are cached\n" +
		"- `cache.max_size` — cache size limit, e.g. \"2GB\"\n" +
		"- `log.level` — one of debug, info, warn, error\n" +
		"- `log.format` — text or json\n" +
		"- `proxy.url` — HTTP(S) proxy for all requests\n" +
		"- `update.channel` — stable or beta\n" +
		"- `update.check` — whether to check for new versions at start-up\n\n" +
		"Settings are read from ~/.config/acme/config.toml and can be overridden with ACME_* environment variables."
	page := 156000
	s.Result("toolu_01WebFetch00000000001", summary, obj{
		{"bytes", page}, {"code", 200}, {"codeText", "OK"}, {"result", summary},
		{"durationMs", 8123}, {"url", url}})
	s.Assistant("msg_01WebFetchAnswer000001", 61,
		text("There is no such setting: the acme-cli configuration reference lists no option for turning off telemetry uploads. The closest is `update.check`, which only controls version checks."))
	s.Save(g.Dir)
}

// changelogLine is line n (1-based) of a 2,600-line changelog whose answer
// sits at line 2,412, past the 2,000 lines a Read returns by default.
func changelogLine(n int) string {
	if n == 2412 {
		return "- 0.4.0: add --no-upload to skip telemetry uploads"
	}
	return fmt.Sprintf("- 0.%d.%d: maintenance release %d", 30-n/100, n%100, n)
}

// partialRead: a Read without offset/limit returns lines 1-2000 of 2,600
// and says nothing (only toolUseResult.file shows it); the model reads on
// with offset until the end, then answers from the part it recovered.
func (g *gen) partialRead() {
	s := newCC(2, "2.1.22")
	path := ccCwd + "/docs/CHANGELOG.md"
	total := 2600
	all := make([]string, total)
	for i := range all {
		all[i] = changelogLine(i + 1)
	}
	read := func(id string, start, n int, input obj) {
		lines := all[start-1 : start-1+n]
		s.Result(id, numbered(lines, start)+ccReadReminder, obj{{"type", "text"},
			{"file", obj{{"filePath", path}, {"content", strings.Join(lines, "\n")},
				{"numLines", n}, {"startLine", start}, {"totalLines", total}}}})
		_ = input
	}
	s.Prompt("In which release was the --no-upload flag added? See docs/CHANGELOG.md.")
	s.Assistant("msg_01PartialRead00000001", 70, toolUse("toolu_01ReadHead000000000001", "Read", obj{{"file_path", path}}))
	read("toolu_01ReadHead000000000001", 1, 2000, nil)
	s.Assistant("msg_01PartialRead00000002", 88,
		text("The changelog is longer than what came back; reading the rest."),
		toolUse("toolu_01ReadOffset00000001", "Read", obj{{"file_path", path}, {"offset", 2001}, {"limit", 300}}))
	read("toolu_01ReadOffset00000001", 2001, 300, nil)
	s.Assistant("msg_01PartialRead00000003", 52,
		toolUse("toolu_01ReadOffset00000002", "Read", obj{{"file_path", path}, {"offset", 2301}, {"limit", 300}}))
	read("toolu_01ReadOffset00000002", 2301, 300, nil)
	s.Assistant("msg_01PartialRead00000004", 40,
		text("--no-upload was added in release 0.4.0 (docs/CHANGELOG.md line 2412)."))
	s.Save(g.Dir)
}

// testLogLine is one line of a long failing test run.
func testLogLine(n int) string {
	return fmt.Sprintf("=== RUN   TestIntegration/case_%05d\n--- PASS: TestIntegration/case_%05d (0.01s)\n", n, n)
}

// bashFailure: a failing command printed 140,000 chars. The failure path
// formats the error text from output already capped near 30,000 chars,
// keeps its first and last 5,000, and says "[20012 characters truncated]":
// the model is told of 20,012 missing chars when 130,000 are. The real
// cause is at the end of the output, which the model never saw.
func (g *gen) bashFailure() {
	s := newCC(3, "1.0.3")
	var out strings.Builder
	for i := 1; out.Len() < 140000; i++ {
		out.WriteString(testLogLine(i))
	}
	tailText := "--- FAIL: TestUploadRetry (30.00s)\n    upload_test.go:88: dial tcp 127.0.0.1:4318: connect: connection refused\nFAIL\n"
	full := out.String()
	full = full[:140000-len(tailText)] + tailText
	capped := full[:30012]
	shown := capped[:5000] + "\n\n... [20012 characters truncated] ...\n\n" + capped[len(capped)-5000:]
	s.Prompt("Run the integration tests and tell me why they fail.")
	s.Assistant("msg_01BashFailure00000001", 77, toolUse("toolu_01BashFailure0000001", "Bash",
		obj{{"command", "make integration-test"}, {"description", "Run the integration test suite"}}))
	s.ErrorResult("toolu_01BashFailure0000001", shown, obj{
		{"stdout", strings.TrimSuffix(full, "\n")}, {"stderr", ""}, {"interrupted", false}, {"isImage", false}})
	s.Assistant("msg_01BashFailure00000002", 64,
		text("The suite ran thousands of passing cases; nothing in the output shows a failing test, so the failure is probably the make target's exit status rather than a test."))
	s.Save(g.Dir)
}

// fetchPage is the 12,300-char page served through the MCP fetch server.
func fetchPage() string {
	var b strings.Builder
	for i := 1; b.Len() < 12300; i++ {
		fmt.Fprintf(&b, "## Section %d\nRequests in this section are limited per API key; see Limits.\n\n", i)
	}
	p := b.String()[:12300-60]
	return p + "\n## Limits\nRate limit: 600 requests per minute per API key.\n"
}

// mcpFetchPages: mcp__fetch__fetch returns 5,000 chars per call with the
// server's "start_index" notice; the model pages through with start_index
// until the last page (no notice) before answering.
func (g *gen) mcpFetchPages() {
	s := newCC(4, "2.1.22")
	url := "https://api.acme.example/docs/limits"
	page := fetchPage()
	s.Prompt("What is the API rate limit? The docs are at " + url)
	for i, start := range []int{0, 5000, 10000} {
		id := fmt.Sprintf("toolu_01McpFetch000000000%d", i+1)
		input := obj{{"url", url}}
		if start > 0 {
			input = append(input, kv{"start_index", start})
		}
		s.Assistant(fmt.Sprintf("msg_01McpFetch0000000000%d", i+1), 60, toolUse(id, "mcp__fetch__fetch", input))
		end := min(start+5000, len(page))
		body := "Contents of " + url + ":\n" + page[start:end]
		if end < len(page) {
			body += fmt.Sprintf("\n\n<error>Content truncated. Call the fetch tool with a start_index of %d to get more content.</error>", end)
		}
		blocks := []obj{{{"type", "text"}, {"text", body}}}
		s.Result(id, blocks, blocks)
	}
	s.Assistant("msg_01McpFetch00000000004", 30, text("The API allows 600 requests per minute per API key (see the Limits section)."))
	s.Save(g.Dir)
}

// grepOutput is 1,200 lines of `rg -n upload` output; only line 900 holds
// UPLOAD_DISABLED. The em dashes make chars and bytes differ, as in real output.
func grepOutput() string {
	var b strings.Builder
	for i := 1; i <= 1200; i++ {
		if i == 900 {
			b.WriteString("internal/telemetry/uploader.go:41:\tif os.Getenv(\"UPLOAD_DISABLED\") == \"1\" { return nil } // kill switch — skips every upload\n")
			continue
		}
		fmt.Fprintf(&b, "internal/pkg%02d/file%03d.go:%d:\t// upload — retry the chunk upload with backoff (%d)\n", i%37, i%113, 10+i%400, i)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// persistedGrep: Grep output over 20,000 chars is saved to
// tool-results/<tool_use_id>.txt and the model gets a 2 KB preview. The
// needle is in the saved file, not in the preview; the model answers
// "not found" without opening the file.
func (g *gen) persistedGrep() {
	s := newCC(5, "2.1.6")
	id := "toolu_01PersistedGrep000001"
	full := grepOutput()
	chars := utf8.RuneCountInString(full)
	savedAt := "/Users/dev/.claude/projects/" + ccProject + "/" + s.SID + "/tool-results/" + id + ".txt"
	preview, more := ccPreview(full)
	notice := "<persisted-output>\nOutput too large (" + ccFileSize(chars) + "). Full output saved to: " + savedAt +
		"\n\nPreview (first 2KB):\n" + preview
	if more {
		notice += "\n..."
	}
	notice += "\n</persisted-output>\n"
	s.Prompt("Is there an environment variable that disables uploads? Search the code.")
	s.Assistant("msg_01PersistedGrep0000001", 90, toolUse(id, "Grep",
		obj{{"pattern", "upload"}, {"output_mode", "content"}, {"-n", true}}))
	s.Result(id, notice, obj{{"mode", "content"}, {"numFiles", 0}, {"filenames", []string{}},
		{"content", full}, {"numLines", 1200}})
	s.Assistant("msg_01PersistedGrep0000002", 58,
		text("UPLOAD_DISABLED is not found anywhere in the code: no environment variable disables uploads; they always run with retry and backoff."))
	s.Save(g.Dir)
	g.Write("claude-code/"+ccProject+"/"+s.SID+"/tool-results/"+id+".txt", []byte(full))
}

// ---------------------------------------------------------------- Codex

// codexOmittedLines: Codex 0.60-era head+tail truncation of shell output
// (MODEL_FORMAT_MAX_LINES 256: 128 head + 128 tail lines) with the
// "Total output lines" header; the error is in the omitted middle.
func (g *gen) codexOmittedLines() {
	s := transcriptgen.NewCodex("01990a6e-66c6-7e66-8666-666666666666", time.Date(2026, 1, 15, 16, 0, 0, 0, time.UTC),
		"/Users/dev/acme", "Check logs/server.log: did the server hit any errors last night?")
	logLine := func(n int) string {
		if n == 2731 {
			return "03:12:09 ERROR db pool exhausted"
		}
		return fmt.Sprintf("%02d:%02d:%02d INFO req ok id=%d", n/3600%24, n/60%60, n%60, n)
	}
	s.ShellCall("call_OmittedLines0000000001", `{"command":"cat logs/server.log","workdir":".","timeout_ms":120000}`, time.Second,
		transcriptgen.CodexShellOutput(0, "0.1", 5000, logLine), 200*time.Millisecond)
	s.Answer("No: logs/server.log shows only successful requests (INFO req ok) from start to end; there are no errors.", 18421, 9216, 412, 256)
	s.Save(g.Dir, "codex/2026/01/15/rollout-2026-01-15T16-00-00-"+s.SID+".jsonl")
}

// ---------------------------------------------------------------- pi

// piTruncatedRead: pi's read stops at 2,000 lines and appends
// "[Showing lines 1-2000 of 3100. Use offset=2001 to continue.]", with the
// exact figures in details.truncation; the model answers without reading on.
func (g *gen) piTruncatedRead() {
	s := transcriptgen.NewPi("77777777-7777-4777-8777-777777777777", "/Users/dev/acme", time.Date(2026, 1, 15, 17, 0, 0, 0, time.UTC), 0x7a000000)
	s.User("Where is retryUpload defined in src/uploader.ts?", 10*time.Second)
	const id = "toolu_01PiRead0000000000001"
	s.Assistant([]obj{{{"type", "toolCall"}, {"id", id}, {"name", "read"}, {"arguments", obj{{"path", s.Cwd + "/src/uploader.ts"}}}}}, 2100, 64, "toolUse", 3*time.Second)
	text, details := transcriptgen.PiLineTruncatedRead(transcriptgen.UploaderSource())
	s.ToolResult(id, "read", text, details, time.Second)
	s.Assistant([]obj{{{"type", "text"}, {"text", "retryUpload is not defined in src/uploader.ts; the file only declares constants."}}}, 24800, 38, "stop", 4*time.Second)
	s.Save(g.Dir, "pi/--Users-dev-acme--/2026-01-15T17-00-00-000Z_"+s.SID+".jsonl")
}
