package forensics

import (
	"strings"
	"testing"

	"github.com/ctxaudit/ctxaudit/schema"
)

// TestPrecision checks the precision of original sizes, the second shown
// range of head+tail cuts and refetched continuations, with every field of
// the verdict. The Claude Code 2.1.328 cases are faithful reproductions of
// what that release put in the context, with the notices verbatim: a Bash
// command that printed 184,600 chars and exited 2, and a WebFetch of a page
// whose text is 195,757 chars (214,995 bytes of HTML, which toolUseResult
// gives and which measure the body, not the text: no original).
func TestPrecision(t *testing.T) {
	// Bash's failure path builds its error from the first 30,000 chars it
	// received, trailing white space trimmed, a newline and "Exit code 2",
	// and the error formatter keeps its head and tail around the notice.
	// The figures are those of the run: 20,011 dropped, 30,016 claimed.
	bashHead := strings.Repeat("h", 5000)
	bashTail := strings.Repeat("t", 4989) + "\nExit code 2"
	bash2328 := bashHead + "\n\n... [20011 characters truncated] ...\n\n" + bashTail
	answer := "The page describes the configuration keys of the service: listen, workers, log_level and upload."
	note := "[WebFetch note: this page's text is 195757 characters long and the answer above covers only characters 0 to 100000; " +
		"the final 95757 were not read — to read on, call WebFetch again with the same url and offset: 100000.]"
	webFetchResult := `{"bytes":214995,"code":200,"codeText":"OK","result":"…","durationMs":2310,"url":"https://example.com/docs/config"}`
	tests := []struct {
		name string
		in   Input
		want want
	}{
		{
			name: "claude 2.1.328 Bash failure path: at least 30,016 chars, notice possibly understated, tail not the end",
			in: Input{Harness: schema.HarnessClaudeCode, HarnessVersion: "2.1.328", Tool: "Bash", IsError: true,
				Arguments: []byte(`{"command":"./gen.sh"}`), Context: bash2328,
				ToolUseResult: []byte(`"Error: Exit code 2\n` + strings.Repeat("h", 40) + `"`)},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyHeadTail, truncated: true, reason: "cap_chars",
				disclosure: "100", shown: "0-5002 chars", shownTail: "25013-30016 chars", tailIsEnd: false, total: "30016",
				source: schema.SourceMarker, precision: "lower_bound", bytes: "unknown", chars: "30016", lines: "unknown", tk: "unknown",
				ctxChars: "10041", ctxBytes: "10041", marker: "... [20011 characters truncated] ...", understated: true,
				detector: "claude_code.chars_truncated"},
		},
		{
			name: "claude 2.1.328 WebFetch note: explicit, all three told, total in page chars",
			in: Input{Harness: schema.HarnessClaudeCode, HarnessVersion: "2.1.328", Tool: "WebFetch",
				Arguments: []byte(`{"url":"https://example.com/docs/config","prompt":"List the configuration keys"}`),
				Context:   answer + "\n\n" + note, ToolUseResult: []byte(webFetchResult)},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategySummary, truncated: true, reason: "summarised",
				disclosure: "111", shown: "0-100000 chars", total: "195757", source: schema.SourceMarker,
				precision: "exact", bytes: "unknown", chars: "195757", lines: "unknown", tk: "unknown",
				next: "to read on, call WebFetch again with the same url and offset: 100000", marker: note,
				detector: "claude_code.webfetch_note"},
		},
		{
			name: "claude 2.1.328 WebFetch continuation with offset and no note: the rest, by request, refetched",
			in: Input{Harness: schema.HarnessClaudeCode, HarnessVersion: "2.1.328", Tool: "WebFetch",
				Arguments: []byte(`{"url":"https://example.com/docs/config","prompt":"List the configuration keys","offset":100000}`),
				Context:   "The rest of the page adds the key upload_limit.", ToolUseResult: []byte(webFetchResult)},
			want: want{kind: schema.KindNone, strategy: schema.StrategySummary, partial: true, shown: "100000-unknown chars",
				total: "unknown", source: schema.SourceUnknown, precision: "none", bytes: "unknown", chars: "unknown",
				refetched: true, detector: "claude_code.webfetch_whole"},
		},
		{
			name: "claude 2.1.328 WebFetch without a note covers the page: not a cut, whatever the HTML bytes",
			in: Input{Harness: schema.HarnessClaudeCode, HarnessVersion: "2.1.328", Tool: "WebFetch",
				Arguments: []byte(`{"url":"https://example.com/docs/config","prompt":"List the configuration keys"}`),
				Context:   answer, ToolUseResult: []byte(webFetchResult)},
			want: want{kind: schema.KindNone, strategy: schema.StrategySummary, shown: "unknown-unknown ", total: "unknown",
				source: schema.SourceUnknown, precision: "none", bytes: "unknown", chars: "unknown",
				detector: "claude_code.webfetch_whole"},
		},
		{
			// The old releases cut without a word, and their only size is the
			// HTML body's: whether this page's text passed the cap is not known.
			name: "claude 2.1.22 WebFetch of the same page: a cut is possible, not shown",
			in: Input{Harness: schema.HarnessClaudeCode, HarnessVersion: "2.1.22", Tool: "WebFetch",
				Arguments: []byte(`{"url":"https://example.com/docs/config","prompt":"List the configuration keys"}`),
				Context:   answer, ToolUseResult: []byte(webFetchResult)},
			want: want{kind: schema.KindUnknown, strategy: schema.StrategySummary, disclosure: "000", shown: "unknown-unknown ",
				total: "unknown", source: schema.SourceUnknown, precision: "none", bytes: "unknown",
				detector: "claude_code.webfetch_large_body"},
		},
		{
			name: "claude 2.1.328 WebFetch note, short form: where and the next offset",
			in: Input{Harness: schema.HarnessClaudeCode, HarnessVersion: "2.1.328", Tool: "WebFetch",
				Arguments:     []byte(`{"url":"https://example.com/docs/config","prompt":"List the configuration keys"}`),
				Context:       answer + "\n\n[WebFetch note: the answer above covers characters 0 to 100000 of this page's 195757 characters. Next offset: 100000.]",
				ToolUseResult: []byte(webFetchResult)},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategySummary, truncated: true, reason: "summarised",
				disclosure: "101", shown: "0-100000 chars", total: "195757", source: schema.SourceMarker,
				precision: "exact", bytes: "unknown", chars: "195757", next: "Next offset: 100000",
				marker:   "[WebFetch note: the answer above covers characters 0 to 100000 of this page's 195757 characters. Next offset: 100000.]",
				detector: "claude_code.webfetch_note"},
		},
		{
			name: "claude 2.1.328 WebFetch note on a stored copy: the retrieval time is the version read",
			in: Input{Harness: schema.HarnessClaudeCode, HarnessVersion: "2.1.328", Tool: "WebFetch",
				Arguments: []byte(`{"url":"https://example.com/docs/config","prompt":"List the configuration keys","offset":100000}`),
				Context: answer + "\n\n[WebFetch note: this page's text is 195757 characters long and the answer above covers only characters 100000 to 150000; " +
					"the final 45757 were not read — to read on, call WebFetch again with the same url and offset: 150000.]" +
					"\n\n[WebFetch note: this result comes from a stored copy of the page, retrieved from the site on 2026-11-29 at 17:05 UTC (yesterday); the live page may have changed since then.]",
				ToolUseResult: []byte(webFetchResult)},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategySummary, truncated: true, reason: "summarised",
				disclosure: "111", shown: "100000-150000 chars", total: "195757", source: schema.SourceMarker,
				precision: "exact", bytes: "unknown", chars: "195757", next: "offset: 150000", refetched: true,
				refVersion: "2026-11-29T17:05Z", marker: "the final 45757 were not read", detector: "claude_code.webfetch_note"},
		},
		{
			name: "claude 2.1.328 WebFetch offset past the end: nothing left, the total told",
			in: Input{Harness: schema.HarnessClaudeCode, HarnessVersion: "2.1.328", Tool: "WebFetch",
				Arguments: []byte(`{"url":"https://example.com/docs/config","prompt":"keys","offset":200000}`),
				Context:   "Nothing left to read from offset 200000: this page's text is 195757 characters long.", ToolUseResult: []byte(webFetchResult)},
			want: want{kind: schema.KindNone, strategy: schema.StrategyNone, partial: true, shown: "195757-195757 chars", total: "195757",
				source: schema.SourceMarker, precision: "exact", bytes: "unknown", chars: "195757", refetched: true,
				detector: "claude_code.webfetch_note"},
		},
		{
			name: "claude 2.1.328 WebFetch verbatim text, then a summary, the final part unread",
			in: Input{Harness: schema.HarnessClaudeCode, HarnessVersion: "2.1.328", Tool: "WebFetch",
				Arguments: []byte(`{"url":"https://example.com/docs/config","prompt":"List the configuration keys"}`),
				Context: "Fetched https://example.com/docs/config from a non-preapproved source (HTTP 200 OK, text/html, 195757 characters, truncated to the first 92000, " +
					"then a model-extracted summary of the rest; the final 3757 characters were not read — to read on, call WebFetch again with the same url and offset: 192000).\n" +
					"<fetched-web-content>\n" + strings.Repeat("p", 92000) + "\n\n[The verbatim page text stops here, 92000 of 195757 characters in; re-fetching this URL at the same offset returns the same split. " +
					"What follows is a model-extracted summary, for your request, of the remaining 103757 characters (its final 3757 characters were not read at all).]\n" +
					"The rest lists upload_limit.\n</fetched-web-content>",
				ToolUseResult: []byte(webFetchResult)},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategySummary, truncated: true, reason: "summarised",
				disclosure: "111", shown: "0-192000 chars", total: "195757", source: schema.SourceMarker, precision: "exact",
				bytes: "unknown", chars: "195757", next: "to read on, call WebFetch again with the same url and offset: 192000",
				marker: "truncated to the first 92000, then a model-extracted summary of the rest", detector: "claude_code.webfetch_raw"},
		},
		{
			name: "claude 2.1.328 WebFetch verbatim head only, the summary failed",
			in: Input{Harness: schema.HarnessClaudeCode, HarnessVersion: "2.1.328", Tool: "WebFetch",
				Arguments: []byte(`{"url":"https://example.com/docs/config","prompt":"keys"}`),
				Context: "Fetched https://example.com/docs/config (HTTP 200 OK, text/html, 195757 characters, truncated to the first 92000; the remaining 103757 characters " +
					"could not be summarized and were not read — to read on, call WebFetch again with the same url and offset: 92000).\n<fetched-web-content>\n" +
					strings.Repeat("p", 92000) + "\n</fetched-web-content>",
				ToolUseResult: []byte(webFetchResult)},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyHead, truncated: true, reason: "cap_chars",
				disclosure: "111", shown: "0-92000 chars", total: "195757", source: schema.SourceMarker, precision: "exact",
				bytes: "unknown", chars: "195757", next: "offset: 92000", detector: "claude_code.webfetch_raw"},
		},
		{
			name: "claude 2.1.328 WebFetch verbatim rest from an offset: complete, by request, refetched",
			in: Input{Harness: schema.HarnessClaudeCode, HarnessVersion: "2.1.328", Tool: "WebFetch",
				Arguments: []byte(`{"url":"https://example.com/docs/config","prompt":"keys","offset":192000}`),
				Context: "Fetched https://example.com/docs/config (HTTP 200 OK, text/html, 195757 characters, shown from character 192000).\n<fetched-web-content>\n" +
					strings.Repeat("p", 3757) + "\n</fetched-web-content>",
				ToolUseResult: []byte(webFetchResult)},
			want: want{kind: schema.KindNone, strategy: schema.StrategyNone, partial: true, shown: "192000-195757 chars", total: "195757",
				source: schema.SourceMarker, precision: "exact", bytes: "unknown", chars: "195757", refetched: true,
				detector: "claude_code.webfetch_raw"},
		},
		{
			name: "claude 2.1.328 WebFetch verbatim whole page",
			in: Input{Harness: schema.HarnessClaudeCode, HarnessVersion: "2.1.328", Tool: "WebFetch",
				Arguments:     []byte(`{"url":"https://example.com/small","prompt":"keys"}`),
				Context:       "Fetched https://example.com/small (HTTP 200 OK, text/markdown, 40 characters).\n<fetched-web-content>\n" + strings.Repeat("p", 40) + "\n</fetched-web-content>",
				ToolUseResult: []byte(`{"bytes":40,"code":200,"codeText":"OK","result":"…","durationMs":20,"url":"https://example.com/small"}`)},
			want: want{kind: schema.KindNone, strategy: schema.StrategyNone, shown: "0-40 chars", total: "40",
				source: schema.SourceMarker, precision: "exact", bytes: "unknown", chars: "40", detector: "claude_code.webfetch_raw"},
		},
		{
			name: "claude Read refused by size label: approximate bytes",
			in: Input{Harness: schema.HarnessClaudeCode, HarnessVersion: "2.1.328", Tool: "Read", IsError: true,
				Arguments: []byte(`{"file_path":"/srv/data/big.json"}`),
				Context: "<tool_use_error>File content (444.3KB) exceeds maximum allowed size (256KB). " +
					"Please use offset and limit parameters to read specific portions of the file, or use the GrepTool to search for specific content.</tool_use_error>"},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyRefused, truncated: true, reason: "cap_bytes",
				disclosure: "111", shown: "0-0 bytes", total: "454963", source: schema.SourceMarker, precision: "approximate",
				bytes: "454963", chars: "unknown", lines: "unknown", tk: "113741", next: "offset and limit",
				marker: "File content (444.3KB) exceeds maximum allowed size (256KB).", detector: "claude_code.read_refused"},
		},
		{
			name: "claude Read refused by a byte count: exact",
			in: Input{Harness: schema.HarnessClaudeCode, Tool: "Read", IsError: true,
				Context: "File content (900 bytes) exceeds maximum allowed size (512 bytes)."},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyRefused, truncated: true, reason: "cap_bytes",
				disclosure: "110", shown: "0-0 bytes", total: "900", source: schema.SourceMarker, precision: "exact",
				bytes: "900", tk: "225", detector: "claude_code.read_refused"},
		},
		{
			name: "claude persisted-output label without metadata: approximate chars",
			in: Input{Harness: schema.HarnessClaudeCode, Tool: "Grep",
				Context: "<persisted-output>\nOutput too large (83.7KB). Full output saved to: /home/u/.claude/projects/p/s/tool-results/toolu_01.txt\n\nPreview (first 2KB):\n" +
					strings.Repeat("g", 1999) + "\n...\n</persisted-output>"},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategySpillToFile, truncated: true, reason: "too_large",
				disclosure: "111", shown: "0-1999 chars", total: "85709", source: schema.SourceMarker, precision: "approximate",
				bytes: "unknown", chars: "85709", savedRef: "/home/u/.claude/projects/p/s/tool-results/toolu_01.txt",
				marker: "Output too large (83.7KB)", detector: "claude_code.persisted_output"},
		},
		{
			name: "claude persisted-output with the saved file readable: exact",
			in: Input{Harness: schema.HarnessClaudeCode, Tool: "Grep",
				Context: "<persisted-output>\nOutput too large (2.9KB). Full output saved to: /tmp/tool-results/toolu_02.txt\n\nPreview (first 2KB):\n" +
					strings.Repeat("g", 1999) + "\n...\n</persisted-output>",
				ReadSaved: func(string) ([]byte, error) { return []byte(strings.Repeat("g", 2999) + "\n"), nil }},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategySpillToFile, truncated: true, reason: "too_large",
				disclosure: "111", shown: "0-1999 chars", total: "3000", source: schema.SourceSavedFile, precision: "exact",
				bytes: "3000", chars: "3000", lines: "1", tk: "750", savedRef: "/tmp/tool-results/toolu_02.txt",
				detector: "claude_code.persisted_output"},
		},
		{
			name: "claude 2.1.328 persisted-output past the persist limit: the limit is a lower bound",
			in: Input{Harness: schema.HarnessClaudeCode, HarnessVersion: "2.1.328", Tool: "Bash",
				Context: "<persisted-output>\nOutput exceeded the 64.0MB persist limit; only the first 64.0MB were saved to: /tmp/tool-results/b1.txt\n\nPreview (first 2KB):\n" +
					strings.Repeat("o", 1999) + "\n...\n</persisted-output>"},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategySpillToFile, truncated: true, reason: "cap_bytes",
				disclosure: "111", shown: "0-1999 chars", total: "unknown", source: schema.SourceMarker, precision: "lower_bound",
				bytes: "67108864", chars: "unknown", savedRef: "/tmp/tool-results/b1.txt",
				marker: "Output exceeded the 64.0MB persist limit", detector: "claude_code.persisted_output"},
		},
		{
			name: "claude 2.1.328 persisted-output past the persist limit, saved prefix readable: still a lower bound",
			in: Input{Harness: schema.HarnessClaudeCode, HarnessVersion: "2.1.328", Tool: "Bash",
				Context: "<persisted-output>\nOutput exceeded the 1.0KB persist limit; only the first 1.0KB were saved to: /tmp/tool-results/b2.txt\n\nPreview (first 2KB):\n" +
					strings.Repeat("o", 999) + "\n...\n</persisted-output>",
				ReadSaved: func(string) ([]byte, error) { return []byte(strings.Repeat("o", 1024)), nil }},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategySpillToFile, truncated: true, reason: "cap_bytes",
				disclosure: "111", shown: "0-999 chars", total: "1024", source: schema.SourceSavedFile, precision: "lower_bound",
				bytes: "1024", chars: "1024", lines: "1", tk: "256", savedRef: "/tmp/tool-results/b2.txt",
				detector: "claude_code.persisted_output"},
		},
		{
			name: "otel original reported as a lower bound",
			in: Input{Harness: schema.HarnessGeneric, Tool: "run", Context: strings.Repeat("z", 4096),
				Attributes: map[string]any{AttrOriginalBytes: int64(65536), AttrOriginalPrecision: "lower_bound", AttrTruncated: true,
					AttrStrategy: "head", AttrShownStart: int64(0), AttrShownEnd: int64(4096), AttrShownUnit: "bytes"}},
			want: want{kind: schema.KindSilent, strategy: schema.StrategyHead, truncated: true, shown: "0-4096 bytes",
				source: schema.SourceOTelAttribute, precision: "lower_bound", bytes: "65536", tk: "16384",
				detector: "otel.ctxaudit_attributes"},
		},
		{
			name: "otel head+tail with the second range and refetch reported",
			in: Input{Harness: schema.HarnessGeneric, Tool: "fetch_page", Context: strings.Repeat("z", 2000),
				Attributes: map[string]any{AttrOriginalChars: int64(9000), AttrTruncated: true, AttrStrategy: "head_tail",
					AttrShownStart: int64(0), AttrShownEnd: int64(1000), AttrShownUnit: "chars", AttrShownTailStart: int64(8000),
					AttrShownTailEnd: int64(9000), AttrShownTailIsEnd: true, AttrRefetchedSource: true}},
			want: want{kind: schema.KindSilent, strategy: schema.StrategyHeadTail, truncated: true, shown: "0-1000 chars",
				shownTail: "8000-9000 chars", tailIsEnd: true, refetched: true, source: schema.SourceOTelAttribute,
				precision: "exact", chars: "9000", detector: "otel.ctxaudit_attributes"},
		},
		{
			name: "complete output: the context, exactly",
			in:   Input{Harness: schema.HarnessClaudeCode, Tool: "Bash", Context: "ok\n"},
			want: want{kind: schema.KindNone, strategy: schema.StrategyNone, source: schema.SourceEstimate, precision: "exact",
				bytes: "3", chars: "3", lines: "1", tk: "1", detector: "generic.complete"},
		},
		{
			name: "nothing known: no precision",
			in: Input{Harness: schema.HarnessClaudeCode, Tool: "mcp__x__y", Context: strings.Repeat("z", 100000) +
				"\n\n[OUTPUT TRUNCATED - exceeded 25000 token limit]\n\nThe tool output was truncated. If this MCP server provides pagination or filtering tools, use them to retrieve specific portions of the data."},
			want: want{kind: schema.KindExplicit, strategy: schema.StrategyHead, truncated: true, reason: "cap_tokens",
				disclosure: "011", shown: "0-100000 chars", total: "unknown", source: schema.SourceUnknown, precision: "none",
				bytes: "unknown", chars: "unknown", marker: "[OUTPUT TRUNCATED - exceeded 25000 token limit]",
				detector: "claude_code.mcp_truncated"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check(t, Detect(tt.in), tt.want)
		})
	}
}

func TestClaudeCodeVersionFacts(t *testing.T) {
	tests := []struct {
		version string
		notes   bool
	}{
		{"", false}, {"2.0.58", false}, {"2.1.22", false}, {"2.1.327", false}, {"2.1.328", true}, {"2.2.0", true},
	}
	for _, tt := range tests {
		if got := ccFacts(tt.version).webFetchNotes; got != tt.notes {
			t.Errorf("ccFacts(%q).webFetchNotes = %v, want %v", tt.version, got, tt.notes)
		}
	}
}
