package ingest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxaudit/ctxaudit/collector/transcript/transcripttest"
	"github.com/ctxaudit/ctxaudit/schema"
)

// TestExamples ingests the reproductions in examples/sessions (see its
// README) and checks each shows the case it reproduces.
func TestExamples(t *testing.T) {
	dir := transcripttest.ExamplesDir(t)
	w := &recorder{}
	sum, err := Run(context.Background(), []string{dir}, Options{}, w)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Files != 7 || sum.Sessions != 7 || sum.ToolCalls != 11 || sum.Answers != 7 || sum.Truncated != 7 ||
		sum.TruncatedByKind[schema.KindSilent] != 1 || sum.TruncatedByKind[schema.KindExplicit] != 6 || sum.SkippedTotal() != 0 {
		t.Fatalf("summary = %+v", sum)
	}
	answer := func(session string) schema.Answer {
		for _, a := range w.answers {
			if strings.HasPrefix(a.SessionID, session) {
				return a
			}
		}
		t.Fatalf("no answer in session %s", session)
		return schema.Answer{}
	}
	tests := []struct {
		name    string
		call    string
		tool    string
		check   func(c *schema.ToolCall) bool
		session string
		risk    schema.Risk
	}{
		// 2.1.22 says nothing of a cut, and its only size, 156,000 bytes,
		// is the HTTP body's, not the page text's the 100,000-char cap
		// counts: whether the digest covered the page is unknown, and so is
		// the original. Nothing is known to be missing, so the risk is none.
		{name: "WebFetch of a 156,000-byte page: a digest of unknown completeness", call: "toolu_01WebFetch00000000001", tool: "WebFetch",
			check: func(c *schema.ToolCall) bool {
				return !c.Truncated && c.Kind == schema.KindUnknown && c.Strategy == schema.StrategySummary &&
					c.Original.Source == schema.SourceUnknown && !c.Original.Bytes.Known && !c.Total.Known && !c.Shown.End.Known
			}, session: "11111111", risk: schema.RiskNone},
		{name: "partial Read (default 2000 of 2600 lines), silent", call: "toolu_01ReadHead000000000001", tool: "Read",
			check: func(c *schema.ToolCall) bool {
				return c.Truncated && c.Kind == schema.KindSilent && c.Shown.End == schema.Known(2000) &&
					c.Total == schema.Known(2600) && c.FollowedUp && c.SessionCoverage == schema.KnownRatio(1)
			}, session: "22222222", risk: schema.RiskLow},
		{name: "offset Read to the end: partial by request", call: "toolu_01ReadOffset00000002", tool: "Read",
			check: func(c *schema.ToolCall) bool {
				return !c.Truncated && c.PartialByRequest && c.Shown.Start == schema.Known(2301) && c.Shown.End == schema.Known(2600)
			}},
		{name: "Bash failure: head/tail, understated marker", call: "toolu_01BashFailure0000001", tool: "Bash",
			check: func(c *schema.ToolCall) bool {
				return c.Truncated && c.Strategy == schema.StrategyHeadTail && c.MarkerUnderstated &&
					c.Marker == "... [20012 characters truncated] ..." && c.Original.Chars == schema.Known(139999) && c.IsError
			}, session: "33333333", risk: schema.RiskHigh}, // "nothing in the output shows a failing test"
		{name: "MCP fetch paged by start_index", call: "toolu_01McpFetch0000000002", tool: "mcp__fetch__fetch",
			check: func(c *schema.ToolCall) bool {
				return c.Truncated && c.Strategy == schema.StrategyPaginated && c.Shown.Start == schema.Known(5000) &&
					c.Shown.End == schema.Known(10000) && c.Disclosure.Next
			}, session: "44444444"},
		{name: "persisted Grep with sidecar, needle only in the saved file", call: "toolu_01PersistedGrep000001", tool: "Grep",
			check: func(c *schema.ToolCall) bool {
				return c.Truncated && c.Strategy == schema.StrategySpillToFile && c.Original.Source == schema.SourceSavedFile &&
					c.Original.Bytes == schema.Known(104262) && c.Original.Chars == schema.Known(101862)
			}, session: "55555555", risk: schema.RiskHigh},
		{name: "Codex Total output lines + omitted lines", call: "call_OmittedLines0000000001", tool: "shell_command",
			check: func(c *schema.ToolCall) bool {
				return c.Truncated && c.Kind == schema.KindExplicit && c.Strategy == schema.StrategyHeadTail && c.Total == schema.Known(5000)
			}, session: "01990a6e", risk: schema.RiskHigh},
		{name: "pi truncated read", call: "toolu_01PiRead0000000000001", tool: "read",
			check: func(c *schema.ToolCall) bool {
				// "of 3100" in pi's count, which counts a final newline as a line:
				// the line count is untold, the bytes come from details.
				return c.Truncated && c.Kind == schema.KindExplicit && !c.Original.Lines.Known && c.Original.Bytes == schema.Known(60905) &&
					c.Shown.End == schema.Known(2000) && c.Total == schema.Known(3100)
			}, session: "77777777", risk: schema.RiskHigh},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := w.call(tt.call)
			if c == nil {
				t.Fatalf("call %s not ingested", tt.call)
			}
			if c.Tool != tt.tool || !tt.check(c) {
				t.Errorf("%s: %+v", tt.call, *c)
			}
			if tt.session == "" {
				return
			}
			a := answer(tt.session)
			if tt.risk != "" && a.Risk != tt.risk {
				t.Errorf("answer %s risk = %s (%v), want %s", a.MessageID, a.Risk, a.Reasons, tt.risk)
			}
		})
	}

	// The preview the model saw lacks the needle; the saved file has it.
	grep := w.call("toolu_01PersistedGrep000001")
	sidecar, err := os.ReadFile(filepath.Join(dir, "claude-code", "-Users-dev-acme", grep.SessionID, "tool-results", "toolu_01PersistedGrep000001.txt"))
	if err != nil || !strings.Contains(string(sidecar), "UPLOAD_DISABLED") {
		t.Errorf("sidecar lacks the needle: %v", err)
	}
	if a := answer("55555555"); !a.AbsenceClaim || !strings.Contains(a.Text, "not found") {
		t.Errorf("persisted-output answer = %+v", a)
	}
}
