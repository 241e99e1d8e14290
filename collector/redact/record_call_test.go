package redact

import (
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/schema"
)

// BenchmarkRecordToolCall is Record on what the collector's processor
// redacts for every call it holds: a schema.ToolCall, about forty string
// fields in nested structs, most of them empty. It measures the whole
// walk, reflection included, against which an offset-based plan was
// measured (docs/performance.md, "Where the collector's CPU goes").
func BenchmarkRecordToolCall(b *testing.B) {
	r := Default()
	c := schema.ToolCall{SessionID: "0b1c7f9e-2d4a-4c39-9e55-6c1f0f3f6a10", CallID: "toolu_01PersistedGrep000001", Tool: "Bash",
		Timestamp: time.Unix(1_700_000_000, 0), Source: "claude_code", Model: "claude-sonnet-4", Project: "/home/dev/app",
		Cwd: "/home/dev/app", GitBranch: "main", Arguments: `{"command":"grep -rn TODO src/ | head -200"}`, Target: "src/"}
	c.Marker = "[1200 characters truncated]"
	b.ReportAllocs()
	x := new(schema.ToolCall)
	for b.Loop() {
		*x = c
		if r.Record(x) != 0 {
			b.Fatal("a call without secrets had some replaced")
		}
	}
}
