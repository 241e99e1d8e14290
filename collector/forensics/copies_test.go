package forensics

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

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
