package forensics

import (
	"strings"
	"testing"

	"github.com/ctxaudit/ctxaudit/schema"
)

// lines returns n numbered lines "prefix i\n".
func lines(prefix string, from, n int) string {
	var b strings.Builder
	for i := from; i < from+n; i++ {
		b.WriteString(prefix)
		b.WriteString(" ")
		b.WriteString(itoa(i))
		b.WriteString("\n")
	}
	return b.String()
}

func itoa(i int) string { return schema.KnownInt(i).String() }

// ccReadLines is a Claude Code Read body: "%6d→line" for lines from..to.
func ccReadLines(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		n := itoa(i)
		b.WriteString(strings.Repeat(" ", max(0, 6-len(n))) + n + "→line " + n + "\n")
	}
	return b.String()
}

// TestNotices checks every notice of transcript-formats.md, built from the
// exact format strings quoted there.
func TestNotices(t *testing.T) {
	partialView := "[Truncated: PARTIAL view — …/docs/env-vars.md: showing lines 1-178 of 549 total (65248 tokens, cap 25000). " +
		"Call Read with offset=179 limit=178 for the next page, or Grep to find a specific section. " +
		"Do NOT answer from this page alone if the answer may be further in the file.]"
	big140k := strings.Repeat("x", 139999) + "\n"
	errText := strings.Repeat("a", 5000) + "\n\n... [20012 characters truncated] ...\n\n" + strings.Repeat("b", 5000)
	mcpSaved := "Error: result (85,713 characters) exceeds maximum allowed tokens. Output has been saved to /home/u/.claude/projects/p/s/tool-results/mcp-github-list_issues-1737000000000.json.\n" +
		"Format: JSON array with schema: [{type: string, text: string}]\n" +
		"Use offset and limit parameters to read specific portions of the file, search within it for specific content, and jq to make structured queries.\n" +
		"REQUIREMENTS FOR SUMMARIZATION/ANALYSIS/REVIEW:\n- You MUST read the content from the file at PATH in sequential chunks until 100% of the content has been read.\n"
	tests := []struct {
		name string
		in   Input
		want want
	}{
		// ---- Claude Code
		{
			name: "claude MCP output saved to file (C2)",
			in:   Input{Harness: schema.HarnessClaudeCode, Tool: "mcp__github__list_issues", Context: mcpSaved},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategySpillToFile, truncated: true, reason: "cap_tokens",
				disclosure: "111", shown: "0-0 chars", total: "85713", source: schema.SourceMarker, chars: "85713",
				savedRef: "/home/u/.claude/projects/p/s/tool-results/mcp-github-list_issues-1737000000000.json",
				marker:   "Format: JSON array with schema"},
		},
		{
			name: "claude Bash persisted-output: original bytes from persistedOutputSize",
			in: Input{Harness: schema.HarnessClaudeCode, Tool: "Bash",
				Context: "<persisted-output>\nOutput too large (117.2KB). Full output saved to: /home/u/.claude/projects/p/s/tool-results/bqqw0ykde.txt\n\nPreview (first 2KB):\n" +
					strings.Repeat("o", 1999) + "\n...\n</persisted-output>",
				ToolUseResult: []byte(`{"stdout":"","stderr":"","interrupted":false,"isImage":false,"persistedOutputPath":"/home/u/.claude/projects/p/s/tool-results/bqqw0ykde.txt","persistedOutputSize":120000}`)},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategySpillToFile, truncated: true, reason: "too_large",
				disclosure: "111", shown: "0-1999 chars", total: "unknown", source: schema.SourceHarnessMetadata, bytes: "120000", chars: "unknown", tk: "30000",
				precision: "exact",
				savedRef:  "/home/u/.claude/projects/p/s/tool-results/bqqw0ykde.txt"},
		},
		{
			// Claude Code 2.1.x saves an MCP result's content array as
			// JSON.stringify(blocks, null, 2); its label (181.7KB) is the size
			// of that JSON, not of the tool's text, so without the saved
			// file the original is unknown, not ~186,061 chars.
			name: "claude MCP persisted-output of a JSON content array: the label is not the original",
			in: Input{Harness: schema.HarnessClaudeCode, Tool: "mcp__lab__lab_dump",
				Context: "<persisted-output>\nOutput too large (181.7KB). Full output saved to: /home/u/.claude/projects/p/s/tool-results/toolu_01.json\n\nPreview (first 2KB):\n" +
					"[\n  {\n    \"type\": \"text\",\n    \"text\": \"" + strings.Repeat("m", 1960) + "\n...\n</persisted-output>"},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategySpillToFile, truncated: true, reason: "too_large",
				disclosure: "111", total: "unknown", source: schema.SourceUnknown, chars: "unknown", precision: "none",
				shown: "0-1960 chars", savedRef: "/home/u/.claude/projects/p/s/tool-results/toolu_01.json"},
		},
		{
			name: "claude MCP save failed (C3)",
			in: Input{Harness: schema.HarnessClaudeCode, Tool: "mcp__x__y", Context: "Error: result (120,000 characters) exceeds maximum allowed tokens. " +
				"Failed to save output to file: EACCES. If this MCP server provides pagination or filtering tools, use them to retrieve specific portions of the data."},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyRefused, truncated: true, reason: "cap_tokens",
				disclosure: "111", total: "120000", chars: "120000", next: "pagination or filtering tools"},
		},
		{
			name: "claude MCP [OUTPUT TRUNCATED - exceeded N token limit] (C4)",
			in: Input{Harness: schema.HarnessClaudeCode, Tool: "mcp__x__y", Context: strings.Repeat("z", 100000) +
				"\n\n[OUTPUT TRUNCATED - exceeded 25000 token limit]\n\nThe tool output was truncated. If this MCP server provides pagination or filtering tools, use them to retrieve specific portions of the data. If pagination is not available, inform the user that you are working with truncated output and results may be incomplete."},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyHead, truncated: true, reason: "cap_tokens",
				disclosure: "011", shown: "0-100000 chars", total: "unknown", source: schema.SourceUnknown,
				marker: "[OUTPUT TRUNCATED - exceeded 25000 token limit]", next: "pagination"},
		},
		{
			name: "claude Bash ... [N lines truncated] ... (C5)",
			in:   Input{Harness: schema.HarnessClaudeCode, Tool: "Bash", Context: lines("row", 1, 100) + "partial\n\n... [400 lines truncated] ..."},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyHead, truncated: true, reason: "cap_chars",
				// 100 whole lines, the start of the 101st, and the notice's 400
				// lines counting that 101st: 500 in all.
				disclosure: "100", shown: "1-101 lines", total: "500", source: schema.SourceMarker, lines: "500",
				marker: "... [400 lines truncated] ..."},
		},
		{
			// The kept total sits at Bash's 30,000-char cap: the notice
			// counts what Bash received, not what the command printed.
			name: "claude Bash error head/tail at the cap (C6): at least kept + N, possibly understated, tail not the end",
			in:   Input{Harness: schema.HarnessClaudeCode, Tool: "Bash", IsError: true, Context: errText},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyHeadTail, truncated: true, reason: "cap_chars",
				disclosure: "100", total: "30016", source: schema.SourceMarker, chars: "30016", precision: "lower_bound",
				shown: "0-5002 chars", shownTail: "25014-30016 chars", understated: true,
				marker: "... [20012 characters truncated] ..."},
		},
		{
			name: "claude tool error head/tail below any cap (C6): original = kept + N, exactly; the tail is the end",
			in: Input{Harness: schema.HarnessClaudeCode, Tool: "mcp__x__y", IsError: true,
				Context: strings.Repeat("a", 5000) + "\n\n... [5012 characters truncated] ...\n\n" + strings.Repeat("b", 5000)},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyHeadTail, truncated: true, reason: "cap_chars",
				disclosure: "100", total: "15016", source: schema.SourceMarker, chars: "15016", precision: "exact",
				shown: "0-5002 chars", shownTail: "10014-15016 chars", tailIsEnd: true,
				marker: "... [5012 characters truncated] ..."},
		},
		{
			name: "claude Bash failure path: marker understated against toolUseResult stdout",
			in: Input{Harness: schema.HarnessClaudeCode, Tool: "Bash", IsError: true, Context: errText,
				ToolUseResult: []byte(`{"stdout":"` + strings.TrimSuffix(big140k, "\n") + `","stderr":"","interrupted":false,"isImage":false}`)},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyHeadTail, truncated: true, reason: "cap_chars",
				disclosure: "100", total: "139999", source: schema.SourceHarnessMetadata, chars: "139999", understated: true,
				precision: "exact", shown: "0-5002 chars", shownTail: "25014-30016 chars"},
		},
		{
			name: "claude understated against the OTel original",
			in: Input{Harness: schema.HarnessClaudeCode, Tool: "Bash", IsError: true, Context: errText,
				Attributes: map[string]any{AttrOriginalChars: int64(140000)}},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyHeadTail, truncated: true, reason: "cap_chars",
				disclosure: "100", source: schema.SourceOTelAttribute, chars: "140000", understated: true,
				precision: "exact", total: "140000", shown: "0-5002 chars", shownTail: "25014-30016 chars"},
		},
		{
			name: "claude cleared (C10)",
			in:   Input{Harness: schema.HarnessClaudeCode, Tool: "Read", Context: "[Old tool result content cleared]"},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyCleared, truncated: true, reason: "cleared",
				disclosure: "010", marker: "[Old tool result content cleared]"},
		},
		{
			name: "claude empty stub (C11)",
			in:   Input{Harness: schema.HarnessClaudeCode, Tool: "Bash", Context: "(Bash completed with no output)"},
			want: want{kind: schema.KindNone, strategy: schema.StrategyNone, source: schema.SourceMarker},
		},
		{
			name: "claude Grep default head_limit 250 cut (C12)",
			in: Input{Harness: schema.HarnessClaudeCode, Tool: "Grep", Arguments: []byte(`{"pattern":"x","output_mode":"content"}`),
				Context: lines("a.go:1:x", 1, 250) + "\n[Showing results with pagination = limit: 250, offset: 0]"},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyPaginated, truncated: true, reason: "pagination",
				disclosure: "011", shown: "0-250 lines", total: "unknown", marker: "limit: 250, offset: 0"},
		},
		{
			name: "claude Grep head_limit the call chose is by request",
			in: Input{Harness: schema.HarnessClaudeCode, Tool: "Grep", Arguments: []byte(`{"pattern":"x","head_limit":20}`),
				Context: lines("a.go:1:x", 1, 20) + "\n[Showing results with pagination = limit: 20, offset: 0]"},
			want: want{kind: schema.KindNone, partial: true, disclosure: "011", shown: "0-20 lines"},
		},
		{
			name: "claude Grep files_with_matches with limit (C13)",
			in: Input{Harness: schema.HarnessClaudeCode, Tool: "Grep", Arguments: []byte(`{"pattern":"x","output_mode":"files_with_matches"}`),
				Context: "Found 250 files limit: 250, offset: 0\n" + lines("f.go", 1, 250)},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyPaginated, truncated: true, reason: "pagination",
				shown: "0-250 files", disclosure: "011"},
		},
		{
			name: "claude Glob over 100 files (C15)",
			in: Input{Harness: schema.HarnessClaudeCode, Tool: "Glob", ToolUseResult: []byte(`{"filenames":[],"durationMs":5,"numFiles":100,"truncated":true}`),
				Context: lines("/src/f", 1, 100) + "(Results are truncated. Consider using a more specific path or pattern.)"},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyHead, truncated: true, reason: "cap_items",
				disclosure: "001", shown: "0-100 files", next: "more specific path"},
		},
		{
			name: "claude Glob truncated in toolUseResult only is silent",
			in: Input{Harness: schema.HarnessClaudeCode, Tool: "Glob", ToolUseResult: []byte(`{"filenames":[],"durationMs":5,"numFiles":100,"truncated":true}`),
				Context: lines("/src/f", 1, 100)},
			want: want{kind: schema.KindSilent, strategy: schema.StrategyHead, truncated: true, reason: "cap_items", disclosure: "000", shown: "0-100 files"},
		},
		{
			name: "claude background task keeps the tail (C16), total from the saved file",
			in: Input{Harness: schema.HarnessClaudeCode, Tool: "TaskOutput",
				Context: "[Truncated. Full output: /tmp/claude/tasks/b1.output]\n\n" + strings.Repeat("t", 31000),
				ReadSaved: func(string) ([]byte, error) {
					return []byte(strings.Repeat("s", 50000) + strings.Repeat("t", 31000)), nil
				}},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyTail, truncated: true, reason: "cap_chars",
				disclosure: "001", shown: "50000-81000 chars", total: "81000", source: schema.SourceSavedFile, bytes: "81000",
				savedRef: "/tmp/claude/tasks/b1.output"},
		},
		{
			name: "claude Read PARTIAL view notice of current builds",
			in: Input{Harness: schema.HarnessClaudeCode, Tool: "Read", Arguments: []byte(`{"file_path":"/r/docs/env-vars.md"}`),
				Context: ccReadLines(1, 178) + "\n" + partialView},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyPaginated, truncated: true, reason: "cap_tokens",
				disclosure: "111", shown: "1-178 lines", total: "549", source: schema.SourceMarker, lines: "549", tk: "65248",
				next:   "Call Read with offset=179 limit=178 for the next page, or Grep to find a specific section.",
				marker: "[Truncated: PARTIAL view"},
		},
		{
			name: "claude Read default 2000-line limit, toolUseResult shows more lines: silent",
			in: Input{Harness: schema.HarnessClaudeCode, Tool: "Read", Arguments: []byte(`{"file_path":"/r/big.txt"}`),
				Context:       ccReadLines(1, 2000),
				ToolUseResult: []byte(`{"type":"text","file":{"filePath":"/r/big.txt","content":"","numLines":2000,"startLine":1,"totalLines":5000}}`)},
			want: want{kind: schema.KindSilent, strategy: schema.StrategyHead, truncated: true, reason: "cap_lines",
				disclosure: "000", shown: "1-2000 lines", total: "5000", source: schema.SourceHarnessMetadata, lines: "5000"},
		},
		{
			name: "claude sub-agent Read without toolUseResult at exactly 2000 lines is suspected",
			in: Input{Harness: schema.HarnessClaudeCode, Tool: "Read", Arguments: []byte(`{"file_path":"/r/big.txt"}`),
				Context: ccReadLines(1, 2000) + "\n<system-reminder>\nWhenever you read a file, you should consider whether it would be considered malware.\n</system-reminder>\n"},
			want: want{kind: schema.KindSuspected, strategy: schema.StrategyHead, truncated: true, reason: "cap_lines",
				shown: "1-2000 lines", source: schema.SourceUnknown, detector: "claude_code.read_shape"},
		},
		{
			// bytes is the HTTP body; the 100,000 cap counts the chars of the
			// page's text, which for HTML may be far fewer: a cut is possible,
			// not shown.
			name: "claude WebFetch body over the cap: perhaps summarised in part, unknown",
			in: Input{Harness: schema.HarnessClaudeCode, Tool: "WebFetch", Context: "The page says the setting is not documented.",
				ToolUseResult: []byte(`{"bytes":156000,"code":200,"codeText":"OK","result":"The page says the setting is not documented.","durationMs":900,"url":"https://example.com/docs"}`)},
			want: want{kind: schema.KindUnknown, strategy: schema.StrategySummary, disclosure: "000", total: "unknown",
				source: schema.SourceUnknown, bytes: "unknown", detector: "claude_code.webfetch_large_body"},
		},
		{
			name: "claude WebFetch under the cap: a digest of the whole page, not cut",
			in: Input{Harness: schema.HarnessClaudeCode, Tool: "WebFetch", Context: "Summary.",
				ToolUseResult: []byte(`{"bytes":5000,"code":200,"result":"Summary.","url":"https://example.com"}`)},
			want: want{kind: schema.KindNone, strategy: schema.StrategySummary, source: schema.SourceUnknown, bytes: "unknown"},
		},
		{
			name: "claude WebFetch without metadata: unknown",
			in:   Input{Harness: schema.HarnessClaudeCode, Tool: "WebFetch", Context: "Summary."},
			want: want{kind: schema.KindUnknown, strategy: schema.StrategySummary, source: schema.SourceUnknown},
		},
		{
			// tool_result_size_bytes is the size of what entered the context,
			// never the original: a larger figure is no evidence of a cut.
			name: "claude tool_result_size_bytes is not an original: no verdict from it",
			in: Input{Harness: schema.HarnessClaudeCode, Tool: "Read", Context: strings.Repeat("r\n", 1000),
				Attributes: map[string]any{AttrClaudeCodeToolResultSize: int64(120000)}},
			want: want{kind: schema.KindNone, strategy: schema.StrategyNone, source: schema.SourceEstimate,
				chars: "2000", detector: "generic.complete"},
		},
		// ---- Codex
		{
			name: "codex Total output lines + [... omitted O of T lines ...] (X1)",
			in: Input{Harness: schema.HarnessCodex, Tool: "shell", Context: "Exit code: 0\nWall time: 0.3 seconds\nTotal output lines: 500\nOutput:\n" +
				lines("l", 1, 128) + "\n[... omitted 244 of 500 lines ...]\n\n" + lines("l", 373, 128)},
			want: want{shown: "1-128 lines", shownTail: "373-500 lines", tailIsEnd: true, kind: schema.KindExplicit, strategy: schema.StrategyHeadTail, truncated: true, reason: "cap_lines",
				disclosure: "100", total: "500", source: schema.SourceMarker, lines: "500", marker: "[... omitted 244 of 500 lines ...]"},
		},
		{
			name: "codex [... output truncated to fit N bytes ...] (X2)",
			in: Input{Harness: schema.HarnessCodex, Tool: "shell", Context: "Exit code: 0\nWall time: 1 seconds\nTotal output lines: 90\nOutput:\n" +
				lines("wide", 1, 40) + "\n[... output truncated to fit 10240 bytes ...]\n\n"},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyHead, truncated: true, reason: "cap_bytes",
				disclosure: "110", shown: "1-40 lines", total: "90", lines: "90"},
		},
		{
			name: "codex …N tokens truncated… (X4), tokens = kept + removed",
			in: Input{Harness: schema.HarnessCodex, Tool: "exec_command", Context: "Chunk ID: 1a2b\nWall time: 2.0012 seconds\nProcess exited with code 0\nOutput:\n" +
				strings.Repeat("h", 400) + "…1500 tokens truncated…" + strings.Repeat("t", 400)},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyHeadTail, truncated: true, reason: "cap_tokens",
				disclosure: "100", total: "1700", source: schema.SourceMarker, tk: "1700", marker: "…1500 tokens truncated…"},
		},
		{
			name: "codex [… N bytes truncated…] bracketed (X5)",
			in: Input{Harness: schema.HarnessCodex, Context: "Exit code: 1\nWall time: 0 seconds\nOutput:\n" +
				strings.Repeat("h", 100) + "[…4000 bytes truncated…]" + strings.Repeat("t", 100)},
			want: want{shown: "0-100 bytes", shownTail: "4100-4200 bytes", tailIsEnd: true, kind: schema.KindExplicit, strategy: schema.StrategyHeadTail, truncated: true, reason: "cap_bytes",
				disclosure: "100", total: "4200", bytes: "4200", marker: "[…4000 bytes truncated…]"},
		},
		{
			name: "codex …N chars truncated… (X6)",
			in: Input{Harness: schema.HarnessCodex, Context: "Exit code: 0\nWall time: 0 seconds\nOutput:\n" +
				strings.Repeat("é", 50) + "…950 chars truncated…" + strings.Repeat("e", 50)},
			want: want{shown: "0-50 chars", shownTail: "1000-1050 chars", tailIsEnd: true, kind: schema.KindExplicit, strategy: schema.StrategyHeadTail, truncated: true, reason: "cap_chars",
				total: "1050", chars: "1050", disclosure: "100"},
		},
		{
			name: "codex Warning: truncated output (original token count: N) (X7)",
			in: Input{Harness: schema.HarnessCodex, Context: "Exit code: 0\nWall time: 3 seconds\nOutput:\n" +
				"Warning: truncated output (original token count: 174999)\nTotal output lines: 20000\n\n" +
				lines("x", 1, 100) + "…170000 tokens truncated…" + lines("x", 19900, 100)},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyHeadTail, truncated: true, reason: "cap_tokens",
				disclosure: "100", total: "174999", source: schema.SourceMarker, tk: "174999", lines: "20000"},
		},
		{
			name: "codex unified exec Original token count above the body",
			in: Input{Harness: schema.HarnessCodex, Context: "Chunk ID: 74f6d2\nWall time: 0.0000 seconds\nProcess exited with code 0\nOriginal token count: 174999\nOutput:\n" +
				lines("x", 1, 200)},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyHeadTail, truncated: true, reason: "cap_tokens",
				disclosure: "100", total: "174999", tk: "174999", detector: "codex.original_token_count"},
		},
		{
			name: "codex unified exec Original token count the body reaches is not a cut",
			in:   Input{Harness: schema.HarnessCodex, Context: "Chunk ID: 9\nWall time: 0.1000 seconds\nProcess exited with code 0\nOriginal token count: 3\nOutput:\nhello world\n"},
			want: want{kind: schema.KindNone, strategy: schema.StrategyNone, source: schema.SourceMarker, tk: "3"},
		},
		{
			name: "codex [omitted N text items ...] (X3)",
			in:   Input{Harness: schema.HarnessCodex, Context: "first item\nsecond item\n[omitted 7 text items ...]"},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyHead, truncated: true, reason: "cap_items", disclosure: "100"},
		},
		{
			name: "codex timeout prefix",
			in:   Input{Harness: schema.HarnessCodex, Context: "Exit code: 124\nWall time: 10 seconds\nOutput:\ncommand timed out after 10000 milliseconds\npartial\n"},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyHead, truncated: true, reason: "timeout", disclosure: "010"},
		},
		{
			name: "codex cut to the call's own max_output_tokens is by request",
			in: Input{Harness: schema.HarnessCodex, Tool: "exec_command", Arguments: []byte(`{"cmd":"cat big.log","max_output_tokens":200}`),
				Context: "Chunk ID: 1\nWall time: 0.5000 seconds\nProcess exited with code 0\nOriginal token count: 5200\nOutput:\n" +
					strings.Repeat("h", 400) + "…5000 tokens truncated…" + strings.Repeat("t", 400)},
			want: want{kind: schema.KindNone, partial: true, disclosure: "100", total: "5200", tk: "5200", marker: "…5000 tokens truncated…"},
		},
		{
			name: "codex structured JSON output with a middle cut",
			in: Input{Harness: schema.HarnessCodex, Tool: "shell",
				Context: `{"output":"` + strings.Repeat("h", 80) + `…300 chars truncated…` + strings.Repeat("t", 80) + `","metadata":{"exit_code":0,"duration_seconds":0.1}}`},
			want: want{shown: "0-80 chars", shownTail: "380-460 chars", tailIsEnd: true, kind: schema.KindExplicit, strategy: schema.StrategyHeadTail, truncated: true, reason: "cap_chars",
				disclosure: "100", total: "460", chars: "460"},
		},
		// ---- pi
		{
			name: "pi bash keeps the tail and saves the full output",
			in: Input{Harness: schema.HarnessPi, Tool: "bash", Context: lines("log", 2001, 2000) +
				"\n\n[Showing lines 2001-4000 of 4000. Full output: /tmp/pi-bash-1a2b.log]"},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyTail, truncated: true, reason: "cap_lines",
				// The kept tail ends in a newline, which pi's "of 4000" counts as a line.
				disclosure: "101", shown: "2001-4000 lines", total: "4000", lines: "3999", savedRef: "/tmp/pi-bash-1a2b.log"},
		},
		{
			name: "pi bash last line over the byte cap",
			in: Input{Harness: schema.HarnessPi, Tool: "bash", Context: strings.Repeat("j", 100) +
				"\n\n[Showing last 50.0KB of line 1 (line is 1.2MB). Full output: /tmp/pi-bash-9.log]"},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyTail, truncated: true, reason: "cap_bytes",
				disclosure: "111", savedRef: "/tmp/pi-bash-9.log"},
		},
		{
			name: "pi read first line over the limit: refused",
			in:   Input{Harness: schema.HarnessPi, Tool: "read", Context: "[Line 1 is 1.2MB, exceeds 50.0KB limit. Use bash: sed -n '1p' /r/min.js | head -c 51200]"},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyRefused, truncated: true, reason: "cap_bytes",
				disclosure: "111", next: "Use bash: sed -n '1p'"},
		},
		{
			name: "pi grep match limit and byte limit",
			in: Input{Harness: schema.HarnessPi, Tool: "grep", Context: lines("m.go:1: x", 1, 100) +
				"\n[100 matches limit reached. Use limit=200 for more, or refine pattern. 50.0KB limit reached. Some lines truncated to 500 chars. Use read tool to see full lines]"},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyHead, truncated: true, reason: "cap_items",
				disclosure: "011", shown: "0-100 items", next: "Use limit=200"},
		},
		{
			name: "pi grep limit the call chose is by request",
			in: Input{Harness: schema.HarnessPi, Tool: "grep", Arguments: []byte(`{"pattern":"x","limit":10}`),
				Context: lines("m.go:1: x", 1, 10) + "\n[10 matches limit reached. Use limit=20 for more, or refine pattern]"},
			want: want{kind: schema.KindNone, partial: true, disclosure: "011", shown: "0-10 items"},
		},
		{
			name: "pi bashExecution [Output truncated. Full output: PATH]",
			in:   Input{Harness: schema.HarnessPi, Tool: "bashExecution", Context: "tail of output\n\n[Output truncated. Full output: /tmp/pi-exec.log]"},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyTail, truncated: true, disclosure: "001", savedRef: "/tmp/pi-exec.log"},
		},
		{
			name: "pi compaction [... N more characters truncated]",
			in:   Input{Harness: schema.HarnessPi, Context: strings.Repeat("c", 2000) + "\n\n[... 3000 more characters truncated]"},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyHead, truncated: true, reason: "cap_chars",
				disclosure: "100", shown: "0-2000 chars", total: "5000", chars: "5000"},
		},
		// ---- MCP servers
		{
			name: "mcp fetch default page: truncated, next start_index",
			in: Input{Harness: schema.HarnessClaudeCode, Tool: "mcp__fetch__fetch", Arguments: []byte(`{"url":"https://example.com"}`),
				Context: "Contents of https://example.com:\n" + strings.Repeat("w", 5000) +
					"\n\n<error>Content truncated. Call the fetch tool with a start_index of 5000 to get more content.</error>"},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyPaginated, truncated: true, reason: "pagination",
				disclosure: "001", shown: "0-5000 chars", total: "unknown", source: schema.SourceUnknown, bytes: "unknown",
				next: "start_index of 5000"},
		},
		{
			name: "mcp fetch explicit max_length that the page filled is by request",
			in: Input{Harness: schema.HarnessMCP, Tool: "fetch", Arguments: []byte(`{"url":"https://example.com","max_length":2000,"start_index":4000}`),
				Context: "Contents of https://example.com:\n" + strings.Repeat("w", 2000) +
					"\n\n<error>Content truncated. Call the fetch tool with a start_index of 6000 to get more content.</error>"},
			want: want{kind: schema.KindNone, partial: true, disclosure: "001", shown: "4000-6000 chars", refetched: true,
				precision: "exact", source: schema.SourceEstimate},
		},
		{
			// The server states no total, but the page without a notice after
			// start_index is the last: its end is the total, and the page a
			// requested part, so coverage of the paged fetch can reach 1.
			name: "mcp fetch last page: the rest, by request, ending at the total",
			in: Input{Harness: schema.HarnessClaudeCode, Tool: "mcp__fetch__fetch", Arguments: []byte(`{"url":"https://example.com","start_index":10000}`),
				Context: "Contents of https://example.com:\n" + strings.Repeat("w", 1234)},
			want: want{kind: schema.KindNone, partial: true, shown: "10000-11234 chars", total: "11234", refetched: true,
				precision: "exact"},
		},
		{
			name: "mcp fetch past the end",
			in:   Input{Harness: schema.HarnessMCP, Tool: "fetch", Arguments: []byte(`{"url":"u","start_index":90000}`), Context: "<error>No more content available.</error>"},
			want: want{kind: schema.KindNone, strategy: schema.StrategyNone, refetched: true, precision: "exact"},
		},
		{
			name: "github get_job_logs: original_length counts lines",
			in: Input{Harness: schema.HarnessClaudeCode, Tool: "mcp__github__get_job_logs", Arguments: []byte(`{"owner":"o","repo":"r","job_id":1,"return_content":true}`),
				Context: `{"job_id":1,"logs_content":"` + strings.Repeat(`line\n`, 500) + `","message":"Job logs content retrieved successfully","original_length":12000}`},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyTail, truncated: true, reason: "cap_lines",
				disclosure: "100", shown: "11501-12000 lines", total: "12000", source: schema.SourceSDK, lines: "12000"},
		},
		// ---- Gemini CLI, OpenCode, OpenHands, OpenClaw
		{
			name: "gemini output too large: head 20 %, tail 80 %, saved file",
			in: Input{Harness: schema.HarnessGeminiCLI, Tool: "run_shell_command",
				Context: "Output too large. Showing first 8,000 and last 32,000 characters. For full output see: /tmp/g/tool-outputs/out.txt\n" +
					strings.Repeat("h", 8000) + "\n\n... [60,000 characters omitted] ...\n\n" + strings.Repeat("t", 32000)},
			want: want{shown: "0-8000 chars", shownTail: "68000-100000 chars", tailIsEnd: true, kind: schema.KindExplicit, strategy: schema.StrategyHeadTail, truncated: true, reason: "cap_chars",
				disclosure: "111", total: "100000", chars: "100000", savedRef: "/tmp/g/tool-outputs/out.txt"},
		},
		{
			name: "gemini read_file truncated",
			in: Input{Harness: schema.HarnessGeminiCLI, Tool: "read_file",
				Context: "\nIMPORTANT: The file content has been truncated.\nStatus: Showing lines 1-2000 of 9000 total lines.\nAction: To read more of the file, you can use the 'start_line' and 'end_line' parameters in a subsequent 'read_file' call. For example, to read the next section of the file, use start_line: 2001.\n\n--- FILE CONTENT (truncated) ---\n" + lines("g", 1, 2000)},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyPaginated, truncated: true, reason: "cap_lines",
				disclosure: "101", shown: "1-2000 lines", total: "9000", next: "start_line: 2001"},
		},
		{
			name: "gemini masked output",
			in: Input{Harness: schema.HarnessGeminiCLI, Context: "<tool_output_masked>\n" + lines("m", 1, 10) + "\n... [980 lines omitted] ...\n\n" + lines("m", 991, 10) +
				"\n\nOutput too large. Full output available at: /tmp/g/masked.txt\n</tool_output_masked>"},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyHeadTail, truncated: true, reason: "too_large",
				disclosure: "111", savedRef: "/tmp/g/masked.txt"},
		},
		{
			name: "gemini [... OMITTED N chars ...]",
			in:   Input{Harness: schema.HarnessGeminiCLI, Context: strings.Repeat("a", 100) + "\n\n[... OMITTED 900 chars ...]\n\n" + strings.Repeat("b", 100)},
			want: want{shown: "0-102 chars", shownTail: "1002-1104 chars", tailIsEnd: true, kind: schema.KindExplicit, strategy: schema.StrategyHeadTail, truncated: true, reason: "cap_chars", disclosure: "100", chars: "1104"},
		},
		{
			name: "opencode head mode with saved file",
			in: Input{Harness: schema.HarnessOpenCode, Tool: "bash", Context: lines("o", 1, 2000) + "\n...3000 lines truncated...\n\n" +
				"The tool call succeeded but the output was truncated. Full output saved to: /home/u/.local/share/opencode/tool-output/t1\nUse Grep to search the full content or Read with offset/limit to view specific sections."},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyHead, truncated: true, reason: "cap_lines",
				disclosure: "101", shown: "1-2000 lines", total: "5000", lines: "5000", savedRef: "/home/u/.local/share/opencode/tool-output/t1"},
		},
		{
			name: "opencode tail mode",
			in: Input{Harness: schema.HarnessOpenCode, Tool: "bash", Context: "...70000 bytes truncated...\n\n" +
				"The tool call succeeded but the output was truncated. Full output saved to: /tmp/oc/t2\nUse the Task tool to have explore agent process this file with Grep and Read (with offset/limit). Do NOT read the full file yourself - delegate to save context.\n\n" + strings.Repeat("z", 1000)},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyTail, truncated: true, reason: "cap_bytes",
				disclosure: "101", shown: "70000-71000 bytes", total: "71000", bytes: "71000", savedRef: "/tmp/oc/t2"},
		},
		{
			name: "opencode streaming bash",
			in:   Input{Harness: schema.HarnessOpenCode, Tool: "bash", Context: "The command output was 900000 bytes and was truncated (inline limit: 51200 bytes).\nFull output saved to: /tmp/oc/stream\n" + strings.Repeat("s", 100)},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyHead, truncated: true, reason: "cap_bytes",
				disclosure: "111", total: "900000", bytes: "900000", savedRef: "/tmp/oc/stream"},
		},
		{
			name: "openhands observation truncated",
			in:   Input{Harness: schema.HarnessOpenHands, Context: strings.Repeat("h", 100) + "\n[... Observation truncated due to length ...]\n" + strings.Repeat("t", 100)},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyHeadTail, truncated: true, reason: "cap_chars", disclosure: "010"},
		},
		{
			name: "openhands response clipped",
			in: Input{Harness: schema.HarnessOpenHands, Tool: "str_replace_editor", Context: strings.Repeat("c", 16000) +
				"<response clipped><NOTE>Due to the max output limit, only part of this file has been shown to you. You should retry this tool after you have searched inside the file with `grep -n` in order to find the line numbers of what you are looking for.</NOTE>"},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyHead, truncated: true, reason: "cap_chars",
				disclosure: "011", shown: "0-16000 chars", next: "grep -n"},
		},
		{
			name: "openclaw header with original chars and bytes",
			in: Input{Harness: schema.HarnessOpenClaw, Tool: "exec", Context: "⚠️ OpenClaw truncated an oversized tool result before adding it to live session context.\n" +
				"Tool: exec\nTool call: call_1\nStatus: ok\nExit code: 0\nOriginal size: 90000 chars, 91000 UTF-8 bytes\nLive transcript budget: 16000 chars\n" +
				"Full output reference: /tmp/openclaw/ref-1.txt\nShowing first and last excerpts; retrieve/read the reference for full raw output when available.\n\n--- first excerpt ---\n" +
				strings.Repeat("f", 7000) + "\n\n--- middle omitted: 76000 chars ---\n\n--- last excerpt ---\n" + strings.Repeat("l", 7000)},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyHeadTail, truncated: true, reason: "cap_chars",
				disclosure: "111", total: "90000", source: schema.SourceMarker, chars: "90000", bytes: "91000", savedRef: "/tmp/openclaw/ref-1.txt"},
		},
		{
			name: "openclaw [... N more characters truncated; rerun …]",
			in:   Input{Harness: schema.HarnessOpenClaw, Context: strings.Repeat("k", 16000) + "\n\n[... 4000 more characters truncated; rerun with narrower args if needed]"},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyHead, truncated: true, reason: "cap_chars",
				disclosure: "101", total: "20000", chars: "20000", next: "rerun with narrower args"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			check(t, Detect(tc.in), tc.want)
		})
	}
}

// TestNotTruncations: ordinary outputs that merely mention truncation.
func TestNotTruncations(t *testing.T) {
	goSource := "package truncate\n\n// formatOmitted renders the Codex notice.\nfunc formatOmitted(o, t int) string {\n" +
		"\treturn fmt.Sprintf(\"\\n[... omitted %d of %d lines ...]\\n\\n\", o, t)\n}\n\nconst example = \"[... omitted 5 of 10 lines ...]\"\n" +
		"// ...N tokens truncated... is how the marker reads\n"
	tests := []struct {
		name string
		in   Input
	}{
		{"claude grep hit for the word truncated", Input{Harness: schema.HarnessClaudeCode, Tool: "Grep",
			Context: "src/log.go:12:// the output is truncated to fit the window\nsrc/log.go:40:\tif truncated {\nREADME.md:3:Results are truncated when too long."}},
		{"codex cat of source with [... omitted in a string literal", Input{Harness: schema.HarnessCodex,
			Context: "Exit code: 0\nWall time: 0 seconds\nOutput:\n" + goSource}},
		{"codex source quoting a notice mid-file, with a mismatching total", Input{Harness: schema.HarnessCodex,
			Context: "Exit code: 0\nWall time: 0 seconds\nTotal output lines: 12\nOutput:\nline\n[... omitted 5 of 10 lines ...]\n\nmore\n" + lines("x", 1, 9)}},
		{"claude Read of a file that documents markers", Input{Harness: schema.HarnessClaudeCode, Tool: "Read",
			Context:       ccReadLines(1, 3) + "     4→... [12 lines truncated] ...\n     5→[Old tool result content cleared]\n",
			ToolUseResult: []byte(`{"type":"text","file":{"filePath":"/d.md","content":"","numLines":5,"startLine":1,"totalLines":5}}`)}},
		{"pi bash printing a pi notice mid-output", Input{Harness: schema.HarnessPi, Tool: "bash",
			Context: "[Showing lines 1-10 of 20. Use offset=11 to continue]\nthat was the notice format\n"}},
		{"generic JSON without report keys", Input{Harness: schema.HarnessGeneric, Context: `{"items":[1,2,3],"total":3}`}},
		{"generic JSON saying complete", Input{Harness: schema.HarnessGeneric, Context: `{"items":[1,2,3],"truncated":false}`}},
		{"mcp fetch content mentioning truncation", Input{Harness: schema.HarnessMCP, Tool: "fetch",
			Context: "Contents of https://x:\nContent truncated. Call the fetch tool with a start_index of 5 to get more content.\nThat is how it reads."}},
		{"openhands text mentioning a clipped response", Input{Harness: schema.HarnessOpenHands, Context: "The <response clipped> tag marks clipped output.\n"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Detect(tc.in)
			if got.Truncated || got.Kind != schema.KindNone || got.Strategy != schema.StrategyNone {
				t.Errorf("verdict = truncated %v kind %s strategy %s (detector %s, marker %q), want complete",
					got.Truncated, got.Kind, got.Strategy, got.Detector, got.Marker)
			}
			if got.Original.Bytes != got.Context.Bytes {
				t.Errorf("original bytes %v != context bytes %v", got.Original.Bytes, got.Context.Bytes)
			}
		})
	}
}

// TestSuspected: no notice, original unknown, but the shape of a cut.
func TestSuspected(t *testing.T) {
	tests := []struct {
		name   string
		in     Input
		reason string
		shown  string
	}{
		{"generic harness, exactly 4096 bytes ending mid-line", Input{Harness: schema.HarnessGeneric, Context: strings.Repeat("y", 4096)}, "cap_bytes", "0-4096 bytes"},
		{"pi bash at exactly 2000 lines", Input{Harness: schema.HarnessPi, Tool: "bash", Context: lines("p", 1, 2000)}, "cap_lines", "1-2000 lines"},
		{"openhands at exactly 16000 chars", Input{Harness: schema.HarnessOpenHands, Context: strings.Repeat("é", 16000)}, "cap_chars", "0-16000 chars"},
		{"claude Bash at exactly 30000 chars", Input{Harness: schema.HarnessClaudeCode, Tool: "Bash", Context: strings.Repeat("b", 30000)}, "cap_chars", "0-30000 chars"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Detect(tc.in)
			check(t, got, want{kind: schema.KindSuspected, strategy: schema.StrategyHead, truncated: true, reason: tc.reason,
				shown: tc.shown, source: schema.SourceUnknown})
		})
	}
	// Round sizes ending with a newline, or asked for, are not suspect.
	for _, in := range []Input{
		{Harness: schema.HarnessGeneric, Context: strings.Repeat("y", 4095) + "\n"},
		{Harness: schema.HarnessPi, Tool: "read", Arguments: []byte(`{"path":"f","limit":2000}`), Context: lines("p", 1, 2000)},
	} {
		if got := Detect(in); got.Kind != schema.KindNone {
			t.Errorf("%q…: kind %s, want none", in.Context[:8], got.Kind)
		}
	}
}

// TestStructured: the generic JSON shape, in the result and as metadata.
func TestStructured(t *testing.T) {
	tests := []struct {
		name string
		in   Input
		want want
	}{
		{
			name: "visible JSON report",
			in: Input{Harness: schema.HarnessGeneric, Tool: "search", Context: `{"results":["a","b"],"truncated":true,"original_size_bytes":90000,"returned_size_bytes":2000,` +
				`"total":120,"shown":[0,2],"truncation_reason":"max_tokens","next_page":"cursor-abc","ref":"s3://bucket/full.json"}`},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyPaginated, truncated: true, reason: "cap_tokens",
				disclosure: "111", shown: "0-2 items", total: "120", source: schema.SourceSDK, bytes: "90000", tk: "22500",
				next: "cursor-abc", savedRef: "s3://bucket/full.json", marker: `"truncated":true`},
		},
		{
			name: "nested report with range in lines and is_complete false",
			in:   Input{Harness: schema.HarnessGeneric, Tool: "read", Context: `{"content":"…","truncation":{"is_complete":false,"range":{"start_line":1,"end_line":400},"total":2000,"reason":"line limit","continue_options":{"offset":401}}}`},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyPaginated, truncated: true, reason: "cap_lines",
				disclosure: "111", shown: "1-400 lines", total: "2000", next: `{"offset":401}`},
		},
		{
			name: "a page the call asked for is by request",
			in:   Input{Harness: schema.HarnessGeneric, Tool: "list", Arguments: []byte(`{"page_size":2}`), Context: `{"items":[1,2],"next_cursor":"c2"}`},
			want: want{kind: schema.KindNone, partial: true, next: "c2"},
		},
		{
			name: "invisible metadata reporting a cut: silent",
			in: Input{Harness: schema.HarnessMCP, Tool: "query", Context: "row1\nrow2\n",
				Metadata: []byte(`{"truncated":true,"original_size_bytes":50000,"returned_size_bytes":10,"reason":"cap_bytes"}`)},
			want: want{kind: schema.KindSilent, strategy: schema.StrategyHead, truncated: true, reason: "cap_bytes",
				disclosure: "000", source: schema.SourceSDK, bytes: "50000"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { check(t, Detect(tc.in), tc.want) })
	}
}

// TestAttributes: ctxaudit.output.* attributes override inference.
func TestAttributes(t *testing.T) {
	tests := []struct {
		name string
		in   Input
		want want
	}{
		{
			name: "instrumented harness reports an explicit tail cut",
			in: Input{Harness: schema.HarnessGeneric, Tool: "shell", Context: "last lines\n[cut]\n", Attributes: map[string]any{
				AttrOriginalBytes: int64(70000), AttrOriginalLines: "1200", AttrTruncated: true, AttrTruncationKind: "explicit",
				AttrStrategy: "tail", AttrShownStart: int64(1100), AttrShownEnd: float64(1200), AttrShownUnit: "lines", AttrTotal: int64(1200),
				AttrReason: "cap_lines", AttrNext: "read /tmp/full.log", AttrSavedRef: "/tmp/full.log", AttrMarker: "[cut]"}},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyTail, truncated: true, reason: "cap_lines",
				shown: "1100-1200 lines", total: "1200", source: schema.SourceOTelAttribute, bytes: "70000", lines: "1200", tk: "17500",
				next: "read /tmp/full.log", savedRef: "/tmp/full.log", marker: "[cut]", detector: "otel.ctxaudit_attributes"},
		},
		{
			name: "span with sizes only and no text",
			in: Input{Harness: schema.HarnessGeneric, Tool: "shell", ContextUnavailable: true, Attributes: map[string]any{
				AttrOriginalBytes: int64(70000), AttrContextBytes: int64(2000)}},
			want: want{kind: schema.KindSilent, strategy: schema.StrategyHead, truncated: true, source: schema.SourceOTelAttribute,
				bytes: "70000", ctxBytes: "2000", ctxChars: "unknown"},
		},
		{
			name: "gen_ai.tool.call.result supplies the context text",
			in: Input{Harness: schema.HarnessGeneric, Tool: "fetch", Attributes: map[string]any{
				AttrGenAIToolCallResult: "Contents of https://x:\n" + strings.Repeat("w", 5000) +
					"\n\n<error>Content truncated. Call the fetch tool with a start_index of 5000 to get more content.</error>"}},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyPaginated, truncated: true, reason: "pagination",
				disclosure: "001", shown: "0-5000 chars", next: "start_index of 5000"},
		},
		{
			name: "harness says complete despite a notice-like text",
			in: Input{Harness: schema.HarnessGeneric, Context: "x\n\n[... 10 more characters truncated]", Attributes: map[string]any{
				AttrTruncated: false}},
			want: want{kind: schema.KindNone, strategy: schema.StrategyNone, disclosure: "100", marker: "more characters truncated"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { check(t, Detect(tc.in), tc.want) })
	}
}

// TestMeasure pins the four sizes and the fast rune count.
func TestMeasure(t *testing.T) {
	tests := []struct {
		in                          string
		bytes, chars, lines, tokens uint64
	}{
		{"", 0, 0, 0, 0},
		{"a", 1, 1, 1, 1},
		{"a\n", 2, 2, 1, 1},
		{"a\nb", 3, 3, 2, 1},
		{"héllo wörld €𝄞\n", 22, 15, 1, 6},
		{"\xff\xfe bad utf8", 11, 11, 1, 3},
	}
	for _, tc := range tests {
		got := Measure(tc.in)
		w := schema.Sizes{Bytes: schema.Known(tc.bytes), Chars: schema.Known(tc.chars), Lines: schema.Known(tc.lines), Tokens: schema.Known(tc.tokens)}
		if got != w {
			t.Errorf("Measure(%q) = %+v, want %+v", tc.in, got, w)
		}
	}
}

// TestVersions pins the version comparison the cap tables rely on.
func TestVersions(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"2.1.6", "2.1.20", -1}, {"0.60.1", "0.60.0", 1}, {"v1.2", "1.2.0", 0}, {"2.1.88-source.0", "2.1.88", 0}, {"x", "1", -1}} {
		if got := compareVersions(tc.a, tc.b); got != tc.want {
			t.Errorf("compareVersions(%q,%q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	if (capFact{versions: versionRange{Max: "0.60.0"}}).appliesTo("shell", "0.60.1") {
		t.Error("cap for < 0.60.0 applied to 0.60.1")
	}
}
