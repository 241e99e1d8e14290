package forensics

import (
	"testing"

	"github.com/ctxaudit/ctxaudit/schema"
)

const (
	ccSession  = "claude-code/session-2.1.6-637ef6e7/637ef6e7-e740-4503-8ff8-5780d7c0918f.jsonl"
	ccSidecars = "claude-code/session-2.1.6-637ef6e7/637ef6e7-e740-4503-8ff8-5780d7c0918f/tool-results"
	ccSelected = "claude-code/selected-lines.jsonl"
)

// TestFixtures runs Detect on real transcript lines (testdata/transcripts).
func TestFixtures(t *testing.T) {
	const line52Path = "/Users/gray/.claude/projects/-Users-gray-Projects-claude-bug/637ef6e7-e740-4503-8ff8-5780d7c0918f/tool-results/toolu_01PRASLbbpSRmj2CjAaB1NP4.txt"
	tests := []struct {
		name  string
		input func(t *testing.T) Input
		want  want
	}{
		{
			name: "claude 2.1.6 line 52 Grep persisted-output, original from toolUseResult",
			input: func(t *testing.T) Input {
				return claudeToolResult(t, ccSession, 52, "Grep", `{"pattern":"collect_wsd_files","output_mode":"content","-n":true}`)
			},
			want: want{
				kind: schema.KindExplicit, strategy: schema.StrategySpillToFile, truncated: true, reason: "too_large",
				disclosure: "111", shown: "0-1893 chars", total: "85713",
				source: schema.SourceHarnessMetadata, chars: "85713", bytes: "85795", lines: "584", tk: "21449",
				ctxChars: "2153", savedRef: line52Path, next: "Full output saved to: " + line52Path,
				marker: "Output too large (83.7KB)", detector: "claude_code.persisted_output",
			},
		},
		{
			name: "claude 2.1.6 line 52 with the sidecar readable: original from saved_file",
			input: func(t *testing.T) Input {
				in := claudeToolResult(t, ccSession, 52, "Grep", "")
				in.ReadSaved = savedReader(t, ccSidecars)
				return in
			},
			want: want{
				kind: schema.KindExplicit, strategy: schema.StrategySpillToFile, truncated: true, reason: "too_large",
				disclosure: "111", total: "85713", source: schema.SourceSavedFile, bytes: "85795", chars: "85713",
				ctxChars: "2153", savedRef: line52Path, marker: "<persisted-output>",
			},
		},
		{
			name: "claude 2.1.6 line 52 text only: original chars from the UTF-16 size label",
			input: func(t *testing.T) Input {
				in := claudeToolResult(t, ccSession, 52, "Grep", "")
				in.ToolUseResult = nil
				return in
			},
			want: want{
				kind: schema.KindExplicit, strategy: schema.StrategySpillToFile, truncated: true, reason: "too_large",
				disclosure: "111", total: "85709", source: schema.SourceMarker, chars: "85709", bytes: "unknown", tk: "unknown",
			},
		},
		{
			name: "claude selected row 30 Grep persisted-output 22.9KB with its sidecar",
			input: func(t *testing.T) Input {
				in := claudeToolResult(t, ccSelected, 30, "Grep", "")
				in.ReadSaved = savedReader(t, "claude-code/sidecar-4238e5fb/tool-results")
				return in
			},
			want: want{
				kind: schema.KindExplicit, strategy: schema.StrategySpillToFile, truncated: true, reason: "too_large",
				disclosure: "111", total: "23495", source: schema.SourceSavedFile, bytes: "23495", chars: "23495",
				savedRef: "/Users/gray/.claude/projects/-Users-gray-Projects-claude-bug/4238e5fb-6bf4-479e-90dd-6fad78571fce/tool-results/toolu_01TSSkquDwSy5Y3dHa1dWGsw.txt",
			},
		},
		{
			name: "claude line 58 Read limit 200 of 1626 lines is a partial view by request",
			input: func(t *testing.T) Input {
				return claudeToolResult(t, ccSession, 58, "Read", `{"file_path":"/x/Update-System.md","limit":200}`)
			},
			want: want{
				kind: schema.KindNone, strategy: schema.StrategyNone, partial: true,
				shown: "1-200 lines", total: "1626", source: schema.SourceHarnessMetadata, detector: "claude_code.read_file",
			},
		},
		{
			name: "claude line 66 Read offset 200 limit 100 is a partial view by request",
			input: func(t *testing.T) Input {
				return claudeToolResult(t, ccSession, 66, "Read", `{"file_path":"/x/Stage.md","offset":200,"limit":100}`)
			},
			want: want{kind: schema.KindNone, partial: true, shown: "200-299 lines", total: "627"},
		},
		{
			name: "claude line 41 whole-file Read is complete, original = context",
			input: func(t *testing.T) Input {
				return claudeToolResult(t, ccSession, 41, "Read", `{"file_path":"/x/Overview.md"}`)
			},
			want: want{kind: schema.KindNone, strategy: schema.StrategyNone, shown: "1-390 lines", total: "390",
				source: schema.SourceHarnessMetadata, chars: "24168", ctxChars: "24168"},
		},
		{
			name:  "claude line 9 Bash is complete",
			input: func(t *testing.T) Input { return claudeToolResult(t, ccSession, 9, "Bash", "") },
			want:  want{kind: schema.KindNone, strategy: schema.StrategyNone, source: schema.SourceHarnessMetadata, chars: "21", detector: "generic.complete"},
		},
		{
			name:  "claude line 22 Task result is complete",
			input: func(t *testing.T) Input { return claudeToolResult(t, ccSession, 22, "Task", "") },
			want:  want{kind: schema.KindNone, strategy: schema.StrategyNone},
		},
		{
			name:  "claude row 19 Grep page of 5 (head_limit chosen) with elided long lines",
			input: func(t *testing.T) Input { return claudeToolResult(t, ccSelected, 19, "Grep", "") },
			want: want{
				kind: schema.KindExplicit, strategy: schema.StrategyHeadTail, truncated: true, reason: "cap_bytes",
				disclosure: "110", shown: "0-5 lines", marker: "[Omitted long matching line]",
				detector: "claude_code.grep_omitted_long_line",
			},
		},
		{
			name:  "claude row 20 Read refused: 268KB exceeds 256KB",
			input: func(t *testing.T) Input { return claudeToolResult(t, ccSelected, 20, "Read", "") },
			want: want{
				kind: schema.KindExplicit, strategy: schema.StrategyRefused, truncated: true, reason: "cap_bytes",
				disclosure: "111", shown: "0-0 bytes", total: "274432", source: schema.SourceMarker, bytes: "274432",
				next: "Please use offset and limit", marker: "File content (268KB) exceeds maximum allowed size (256KB).",
			},
		},
		{
			name:  "claude row 21 Read refused: 50155 tokens exceed 25000",
			input: func(t *testing.T) Input { return claudeToolResult(t, ccSelected, 21, "Read", "") },
			want: want{
				kind: schema.KindExplicit, strategy: schema.StrategyRefused, truncated: true, reason: "cap_tokens",
				disclosure: "111", shown: "0-0 tokens", total: "50155", source: schema.SourceMarker, tk: "50155", bytes: "unknown",
			},
		},
		{
			name:  "claude row 22 Read at offset 390 of 390 is by request",
			input: func(t *testing.T) Input { return claudeToolResult(t, ccSelected, 22, "Read", "") },
			want:  want{kind: schema.KindNone, partial: true, shown: "390-390 lines", total: "390"},
		},
		{
			name:  "claude row 16 Glob with no files, truncated:false",
			input: func(t *testing.T) Input { return claudeToolResult(t, ccSelected, 16, "Glob", "") },
			want:  want{kind: schema.KindNone, strategy: schema.StrategyNone},
		},
		{
			name:  "claude row 29 tool_use_error is not a truncation",
			input: func(t *testing.T) Input { return claudeToolResult(t, ccSelected, 29, "Read", "") },
			want:  want{kind: schema.KindNone, strategy: schema.StrategyNone},
		},
		{
			name:  "claude row 35 sidechain Read of 393 lines without toolUseResult",
			input: func(t *testing.T) Input { return claudeToolResult(t, ccSelected, 35, "Read", "") },
			want:  want{kind: schema.KindNone, strategy: schema.StrategyNone, source: schema.SourceEstimate},
		},
		{
			name:  "pi row 4 read cut by bytes: notice plus details.truncation",
			input: func(t *testing.T) Input { return piToolResult(t, 4, `{"path":"x.ts"}`) },
			want: want{
				kind: schema.KindExplicit, strategy: schema.StrategyPaginated, truncated: true, reason: "cap_bytes",
				disclosure: "111", shown: "1-1603 lines", total: "2377",
				// pi's "of 2377" counts a final newline as a line; a head cut
				// does not show whether the file ends in one: lines untold.
				source: schema.SourceHarnessMetadata, bytes: "75229", lines: "unknown", tk: "18808",
				next: "Use offset=1604 to continue", marker: "[Showing lines 1-1603 of 2377 (50.0KB limit).",
				detector: "pi.read_lines",
			},
		},
		{
			name:  "pi row 4 read, details only (notice stripped) is silent",
			input: func(t *testing.T) Input { in := piToolResult(t, 4, ""); in.Context = in.Context[:51190]; return in },
			want: want{
				kind: schema.KindSilent, strategy: schema.StrategyHead, truncated: true, reason: "cap_bytes",
				disclosure: "000", shown: "1-1603 lines", total: "2377", source: schema.SourceHarnessMetadata, bytes: "75229",
			},
		},
		{
			name:  "pi row 5 read with the call's own limit is by request",
			input: func(t *testing.T) Input { return piToolResult(t, 5, `{"path":"x.ts","limit":120}`) },
			want: want{
				kind: schema.KindNone, partial: true, disclosure: "101", shown: "1-120 lines", total: "1669",
				next: "Use offset=121 to continue", detector: "pi.read_more_lines",
			},
		},
		{
			name:  "pi row 3 bash done",
			input: func(t *testing.T) Input { return piToolResult(t, 3, "") },
			want:  want{kind: schema.KindNone, strategy: schema.StrategyNone, bytes: "5", source: schema.SourceEstimate},
		},
		{
			name:  "codex 0.60.1 line 12 freeform wrapper is not truncation; context is the whole text",
			input: func(t *testing.T) Input { return codexOutput(t, 12) },
			want:  want{kind: schema.KindNone, strategy: schema.StrategyNone, ctxBytes: "132", bytes: "132"},
		},
		{
			name:  "codex 0.60.1 line 250 sed output, 2740 chars",
			input: func(t *testing.T) Input { return codexOutput(t, 250) },
			want:  want{kind: schema.KindNone, strategy: schema.StrategyNone, ctxChars: "2740"},
		},
		{
			name:  "codex 0.60.1 line 48 structured apply_patch output",
			input: func(t *testing.T) Input { return codexOutput(t, 48) },
			want:  want{kind: schema.KindNone, strategy: schema.StrategyNone, ctxBytes: "116"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			check(t, Detect(tc.input(t)), tc.want)
		})
	}
}
