package forensics

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ctxaudit/ctxaudit/schema"
)

// Copies a harness keeps of an output are not always the output: a page, a
// capped buffer, a prefix. These tests hold the records of such copies to
// what the copy can tell (docs/design.md §4.1: a size is exact, approximate
// or a lower bound, and says which).

// grepPage is n lines of Grep content-mode output (path:line:text, as
// ripgrep prints them for Claude Code's Grep with -n).
func grepPage(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "src/app/h%03d.go:%d:\tdo(%d)", i%40, i, i)
	}
	return b.String()
}

// ccGrepResult is a Grep content-mode result as Claude Code writes it: the
// tool_result text the model saw and the toolUseResult beside it. Its shape
// is the real 2.1.6 line of testdata/transcripts/claude-code/selected-lines.jsonl
// row 19 (a page of 5 with appliedLimit 5); CC-src GrepTool builds content
// from the lines applyHeadLimit kept and sets appliedLimit only when it cut,
// appliedOffset only when the call gave an offset.
func ccGrepResult(t *testing.T, page string, lines int, limit, offset int, notice string) Input {
	t.Helper()
	content, err := json.Marshal(page)
	if err != nil {
		t.Fatal(err)
	}
	tur := fmt.Sprintf(`{"mode":"content","numFiles":0,"filenames":[],"content":%s,"numLines":%d`, content, lines)
	if limit > 0 {
		tur += fmt.Sprintf(`,"appliedLimit":%d`, limit)
	}
	if offset > 0 {
		tur += fmt.Sprintf(`,"appliedOffset":%d`, offset)
	}
	tur += "}"
	text := page
	if notice != "" {
		text += "\n\n[Showing results with pagination = " + notice + "]"
	}
	return Input{Harness: schema.HarnessClaudeCode, HarnessVersion: "2.1.6", Tool: "Grep",
		Arguments: []byte(`{"pattern":"do\\(","output_mode":"content","-n":true}`),
		Context:   text, ToolUseResult: []byte(tur)}
}

// TestGrepPageIsNotTheOriginal: a Grep in content mode that hit the default
// head limit of 250 gets the first 250 lines, and toolUseResult.content holds
// those same 250 lines — the page, not the search's output, whose size no
// part of the line tells. Recording the page as the exact original stated an
// original smaller than the context, from harness_metadata.
func TestGrepPageIsNotTheOriginal(t *testing.T) {
	page := grepPage(250)
	pageSizes := Measure(page)
	for _, tc := range []struct {
		name string
		in   Input
		kind schema.TruncationKind
	}{
		{"default head limit, notice and appliedLimit", ccGrepResult(t, page, 250, 250, 0, "limit: 250, offset: 0"), schema.KindExplicit},
		{"appliedLimit without the notice", ccGrepResult(t, page, 250, 250, 0, ""), schema.KindSilent},
		{"notice without appliedLimit", ccGrepResult(t, page, 250, 0, 0, "limit: 250, offset: 0"), schema.KindExplicit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			marker := strings.TrimPrefix(tc.in.Context, page)
			got := Detect(tc.in)
			check(t, got, want{kind: tc.kind, strategy: schema.StrategyPaginated, truncated: true, reason: "pagination",
				shown: "0-250 lines", total: "unknown", source: schema.SourceHarnessMetadata, precision: "lower_bound",
				bytes: pageSizes.Bytes.String(), lines: "250", detector: "claude_code.grep_pagination",
				marker: strings.TrimSpace(marker)})
		})
	}
	// Without a cut the content is the whole output, and exact.
	small := grepPage(12)
	got := Detect(ccGrepResult(t, small, 12, 0, 0, ""))
	check(t, got, want{kind: schema.KindNone, strategy: schema.StrategyNone, source: schema.SourceHarnessMetadata,
		precision: "exact", bytes: Measure(small).Bytes.String(), lines: "12"})
}

// japaneseLog is a log of Japanese lines exactly n bytes long (3 bytes a
// character, ASCII digits and newlines).
func japaneseLog(n int) string {
	var b strings.Builder
	for i := 1; b.Len() < n; i++ {
		fmt.Fprintf(&b, "ログ行 %05d: 処理が完了しました\n", i)
	}
	s := b.String()[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + strings.Repeat("x", n-len(s))
}

// ccBashPersisted is a Bash result over the persist threshold as Claude
// Code 2.1.x writes it (the shape of the harness lab's bash-over-cap
// recording, testdata/lab/claude-code@2.1.328): the <persisted-output>
// preview of the first 2,000 chars, and a toolUseResult whose stdout is the
// first chunk and whose persistedOutputSize is the saved file's size in
// bytes. The label is formatFileSize(persistedOutputSize) (CC-src
// BashTool.tsx): bytes, in KiB with one decimal.
func ccBashPersisted(t *testing.T, out, label string, withResult bool) Input {
	t.Helper()
	const path = "/home/u/.claude/projects/-home-u-w/s/tool-results/b7x2k9qwe.txt"
	preview := []rune(out)[:2000]
	p := string(preview)
	if i := strings.LastIndexByte(p, '\n'); i > 1000 {
		p = p[:i]
	}
	in := Input{Harness: schema.HarnessClaudeCode, HarnessVersion: "2.1.22", Tool: "Bash",
		Arguments: []byte(`{"command":"./export-log.sh"}`),
		Context: "<persisted-output>\nOutput too large (" + label + "). Full output saved to: " + path +
			"\n\nPreview (first 2KB):\n" + p + "\n...\n</persisted-output>"}
	if withResult {
		stdout, _ := json.Marshal(string([]rune(out)[:30000]))
		in.ToolUseResult = []byte(`{"stdout":` + string(stdout) + `,"stderr":"","interrupted":false,"isImage":false,` +
			`"persistedOutputPath":"` + path + `","persistedOutputSize":` + itoa(len(out)) + `}`)
	}
	return in
}

// TestBashPersistedLabelCountsBytes: Claude Code labels a Bash spill with
// formatFileSize(persistedOutputSize), the file's size in bytes, unlike the
// generic spill, whose label is the text's JavaScript length. 100,000 bytes
// of Japanese log lines (46,666 chars) are labelled 97.7KB; read as chars
// the label gave "about 100,045 chars", beside the exact 100,000 bytes —
// more chars than bytes, which no UTF-8 text has.
func TestBashPersistedLabelCountsBytes(t *testing.T) {
	out := japaneseLog(100000)
	if len(out) != 100000 || utf8.RuneCountInString(out) != 46666 {
		t.Fatalf("log of %d bytes, %d chars", len(out), utf8.RuneCountInString(out))
	}
	check(t, Detect(ccBashPersisted(t, out, "97.7KB", true)), want{kind: schema.KindExplicit, strategy: schema.StrategySpillToFile,
		truncated: true, reason: "too_large", disclosure: "111", total: "unknown", source: schema.SourceHarnessMetadata,
		precision: "exact", bytes: "100000", chars: "unknown", marker: "Output too large (97.7KB)"})
	// Without toolUseResult (a sub-agent's line) the label is all there is:
	// about 100,045 bytes, and the chars untold.
	check(t, Detect(ccBashPersisted(t, out, "97.7KB", false)), want{kind: schema.KindExplicit, strategy: schema.StrategySpillToFile,
		truncated: true, reason: "too_large", disclosure: "111", total: "unknown", source: schema.SourceMarker,
		precision: "approximate", bytes: "100045", chars: "unknown", marker: "Output too large (97.7KB)"})
	// Other tools' labels count the text's length, as before.
	grep := ccBashPersisted(t, out, "97.7KB", false)
	grep.Tool = "Grep"
	check(t, Detect(grep), want{kind: schema.KindExplicit, strategy: schema.StrategySpillToFile,
		truncated: true, reason: "too_large", disclosure: "111", total: "100045", source: schema.SourceMarker,
		precision: "approximate", bytes: "unknown", chars: "100045"})
}

// codexRows is n bytes of command output, rows of text, the last one cut
// where the n bytes end.
func codexRows(n int) string {
	var b strings.Builder
	for i := 1; b.Len() < n; i++ {
		fmt.Fprintf(&b, "row %07d payload=%s\n", i, strings.Repeat("z", 20))
	}
	return b.String()[:n]
}

// TestCodexExecOutputAtCapIsALowerBound: Codex keeps at most 1 MiB of a
// command's output (EXEC_OUTPUT_MAX_BYTES, codex-rs exec.rs: the first
// 1 MiB; unified exec keeps head and tail within the same 1 MiB), and
// exec_command_end.aggregated_output is that copy. A copy exactly at the cap
// is where the command's output starts (or its two ends), not all of it: at
// least 1,048,576 bytes, never exactly that.
func TestCodexExecOutputAtCapIsALowerBound(t *testing.T) {
	codexIn := func(full string) Input {
		return Input{Harness: schema.HarnessCodex, HarnessVersion: "0.46.0", Tool: "shell",
			Arguments: []byte(`{"command":["bash","-lc","./dump.sh"]}`),
			Context:   "Exit code: 0\nWall time: 2.4 seconds\nOutput:\n" + full[:10240], OriginalText: &full}
	}
	atCap := codexRows(1 << 20)
	check(t, Detect(codexIn(atCap)), want{kind: schema.KindSilent, strategy: schema.StrategyHead, truncated: true,
		source: schema.SourceHarnessMetadata, precision: "lower_bound", bytes: "1048576", detector: "generic.size_mismatch"})
	// Below the cap the copy is the whole output.
	under := codexRows(500000)
	check(t, Detect(codexIn(under)), want{kind: schema.KindSilent, strategy: schema.StrategyHead, truncated: true,
		source: schema.SourceHarnessMetadata, precision: "exact", bytes: "500000", detector: "generic.size_mismatch"})
}

// TestBashSavedPrefixIsNotTheOriginal: Claude Code 2.1.88 stats a Bash
// output's file (persistedOutputSize), then truncates a file over 64 MiB
// to 64 MiB before it links it into tool-results (CC-src BashTool.tsx,
// MAX_PERSISTED_SIZE), and its notice says nothing of the cut. A saved file
// smaller than persistedOutputSize is the first part of the output: its
// measure is no exact original, and persistedOutputSize is the exact size.
func TestBashSavedPrefixIsNotTheOriginal(t *testing.T) {
	const full = 80000000 // 76.3MB by formatFileSize
	saved := codexRows(64 << 20)
	in := ccBashPersisted(t, saved[:2000], "76.3MB", false)
	in.ToolUseResult = []byte(`{"stdout":` + strconvQuote(saved[:30000]) + `,"stderr":"","interrupted":false,"isImage":false,` +
		`"persistedOutputPath":"/home/u/.claude/projects/-home-u-w/s/tool-results/b7x2k9qwe.txt","persistedOutputSize":` + itoa(full) + `}`)
	in.ReadSaved = func(string) ([]byte, error) { return []byte(saved), nil }
	check(t, Detect(in), want{kind: schema.KindExplicit, strategy: schema.StrategySpillToFile, truncated: true, reason: "too_large",
		disclosure: "111", total: "unknown", source: schema.SourceHarnessMetadata, precision: "exact",
		bytes: itoa(full), chars: "unknown", lines: "unknown", marker: "Output too large (76.3MB)"})
	// A saved file as large as persistedOutputSize is the output itself.
	whole := codexRows(120000)
	in = ccBashPersisted(t, whole, "117.2KB", true)
	in.ReadSaved = func(string) ([]byte, error) { return []byte(whole), nil }
	check(t, Detect(in), want{kind: schema.KindExplicit, strategy: schema.StrategySpillToFile, truncated: true, reason: "too_large",
		disclosure: "111", total: "120000", source: schema.SourceSavedFile, precision: "exact",
		bytes: "120000", chars: "120000", marker: "Output too large (117.2KB)"})
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestBashLinesNoticeCountsTheCutLineOnce: Claude Code's Bash formatOutput
// (CC-src BashTool/utils.ts, transcript-formats.md C5) keeps the first
// 30,000 chars of the output, trimmed of its trailing blank lines, and
// counts the rest as countCharInString(content, '\n', 30000) + 1: the
// newlines after the cut, plus the line the cut fell in. That line is
// already in the notice's count, so the original has newlines(head) + N
// lines; counting the head's partial last line again claimed one line too
// many (6,001 of a 6,000-line output, 6,002 when the output ended in a
// newline).
func TestBashLinesNoticeCountsTheCutLineOnce(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 6000; i++ {
		if i > 1 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "[build] step %04d of 6000: compiled %s", i, strings.Repeat("o", i%7))
	}
	out := b.String()
	head, rest := out[:30000], out[30000:]
	if strings.HasSuffix(head, "\n") {
		t.Fatal("the cut must fall inside a line")
	}
	n := strings.Count(rest, "\n") + 1
	in := Input{Harness: schema.HarnessClaudeCode, Tool: "Bash", Arguments: []byte(`{"command":"make"}`),
		Context: head + "\n\n... [" + itoa(n) + " lines truncated] ..."}
	check(t, Detect(in), want{kind: schema.KindExplicit, strategy: schema.StrategyHead, truncated: true, reason: "cap_chars",
		disclosure: "100", total: "6000", source: schema.SourceMarker, precision: "exact", lines: "6000",
		marker: "lines truncated] ...", detector: "claude_code.bash_lines_truncated"})
}

// TestWebFetchBodyIsNotThePageText: WebFetch's toolUseResult.bytes is the
// length of the HTTP body (CC-src WebFetchTool/utils.ts: bytes =
// rawBuffer.length, before an HTML page is turned into markdown), while its
// 100,000 cap counts the chars of that markdown. A 350,000-byte HTML page
// may give far fewer chars, so the bytes only make a cut possible: before
// the releases that note their cuts the kind is unknown, and the body's
// bytes are neither the original's size nor a total in chars. The
// toolUseResult is the CC-src shape ({bytes, code, codeText, result,
// durationMs, url}, transcript-formats.md §1.4).
func TestWebFetchBodyIsNotThePageText(t *testing.T) {
	digest := "The page documents the settings listen, workers and log_level."
	tur := func(bytes int) []byte {
		return []byte(fmt.Sprintf(`{"bytes":%d,"code":200,"codeText":"OK","result":%q,"durationMs":1200,"url":"https://example.com/docs"}`, bytes, digest))
	}
	in := func(version string, bytes int) Input {
		return Input{Harness: schema.HarnessClaudeCode, HarnessVersion: version, Tool: "WebFetch",
			Arguments: []byte(`{"url":"https://example.com/docs","prompt":"List the settings"}`),
			Context:   digest, ToolUseResult: tur(bytes)}
	}
	// Over the cap in body bytes: perhaps cut, perhaps not.
	check(t, Detect(in("2.1.22", 350000)), want{kind: schema.KindUnknown, strategy: schema.StrategySummary,
		shown: "unknown-unknown ", total: "unknown", source: schema.SourceUnknown, precision: "none",
		detector: "claude_code.webfetch_large_body"})
	// Under it: nothing shows a cut, but the body's bytes are still not the
	// page text's size.
	check(t, Detect(in("2.1.22", 5000)), want{kind: schema.KindNone, strategy: schema.StrategySummary,
		shown: "unknown-unknown ", total: "unknown", source: schema.SourceUnknown, precision: "none"})
	// A release that notes its cut gives the page text's length in chars;
	// the body's bytes are not added to it as the same text's bytes.
	noted := in("2.1.328", 350000)
	noted.Context += "\n\n[WebFetch note: this page's text is 195757 characters long and the answer above covers only characters 0 to 100000; " +
		"the final 95757 were not read — to read on, call WebFetch again with the same url and offset: 100000.]"
	check(t, Detect(noted), want{kind: schema.KindExplicit, strategy: schema.StrategySummary, truncated: true, reason: "summarised",
		disclosure: "111", shown: "0-100000 chars", total: "195757", source: schema.SourceMarker, precision: "exact",
		chars: "195757", bytes: "unknown", tk: "unknown", next: "offset: 100000", marker: "[WebFetch note:",
		detector: "claude_code.webfetch_note"})
}
