package ctxauditclickhouseexporter

import (
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ctxaudit/ctxaudit/collector/otelconv"
	"github.com/ctxaudit/ctxaudit/schema"
)

// A call span marked ctxaudit.analysis.pending gets no tool_calls row (the
// processor holding it writes that row with its analysis); the same span
// unmarked does, and the marker counts as no dropped record.
func TestPendingCallWritesNoRow(t *testing.T) {
	c := schema.ToolCall{SessionID: "s", CallID: "c", Tool: "Read", Timestamp: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	for _, pending := range []bool{true, false} {
		spans := ptrace.NewSpanSlice()
		otelconv.AppendToolCall(spans, &c)
		if pending {
			otelconv.MarkAnalysisPending(spans.At(0).Attributes())
		}
		var r otelconv.Rows
		r.AddSpan(spans.At(0), ptrace.NewResourceSpans().Resource().Attributes())
		if want := map[bool]int{true: 0, false: 1}[pending]; len(r.Calls) != want || r.Dropped != 0 {
			t.Errorf("pending=%v: %d call rows, %d dropped; want %d, 0", pending, len(r.Calls), r.Dropped, want)
		}
	}
}
