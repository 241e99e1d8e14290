package ctxauditprocessor

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/ctxaudit/ctxaudit/collector/forensics"
	"github.com/ctxaudit/ctxaudit/collector/otelconv"
	"github.com/ctxaudit/ctxaudit/collector/processor/ctxauditprocessor/internal/metadata"
	"github.com/ctxaudit/ctxaudit/internal/benchcollector"
)

// BenchmarkHoldAndEmit is the processor's share of the collector benchmark
// (internal/benchcollector), in one process and without storage: requests of
// 512 execute_tool spans of the load's payload (a third cut around Claude
// Code's marker, 31% with a stated original size, 50 calls per
// conversation) are held, then every session is analysed and emitted to a
// consumer that drops the spans. An op is one round of 2,000 calls; ns/call
// is what one call costs, held and emitted.
func BenchmarkHoldAndEmit(b *testing.B) {
	const perRequest, sessions = 512, 40
	ctx := context.Background()
	payload := benchcollector.NewPayload("bench")
	calls := perRequest * (sessions * benchcollector.SpansPerConversation / perRequest)
	requests := make([]ptrace.Traces, 0, calls/perRequest)
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for i := 0; i < calls; i += perRequest {
		td := ptrace.NewTraces()
		spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
		for j := i; j < i+perRequest; j++ {
			c := payload.Call(j)
			sp := spans.AppendEmpty()
			sp.SetName(otelconv.OperationExecuteTool + " " + c.Tool)
			sp.SetSpanID(pcommon.SpanID{byte(j >> 24), byte(j >> 16), byte(j >> 8), byte(j), 1})
			sp.SetStartTimestamp(pcommon.NewTimestampFromTime(at.Add(time.Duration(j) * time.Millisecond)))
			m := sp.Attributes()
			m.PutStr(otelconv.AttrOperationName, otelconv.OperationExecuteTool)
			m.PutStr(otelconv.AttrToolName, c.Tool)
			m.PutStr(otelconv.AttrToolCallID, c.CallID)
			m.PutStr(otelconv.AttrConversationID, c.ConversationID)
			m.PutStr(otelconv.AttrSource, "claude_code")
			m.PutStr(otelconv.AttrToolCallResult, c.Result)
			if c.OriginalBytes > 0 {
				m.PutInt(forensics.AttrOriginalBytes, c.OriginalBytes)
			}
		}
		requests = append(requests, td)
	}
	cfg := createDefaultConfig().(*Config)
	cfg.SessionIdle = time.Hour
	next := new(consumertest.TracesSink)
	p, err := newTracesProcessor(processortest.NewNopSettings(metadata.Type), cfg, next)
	if err != nil {
		b.Fatal(err)
	}
	if err := p.start(ctx, componenttest.NewNopHost()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.shutdown(ctx) })
	all := func(*sessionBuffer) bool { return true }
	work := ptrace.NewTraces()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		for _, td := range requests {
			b.StopTimer()
			td.CopyTo(work) // the pipeline's own decoding, not the processor's
			b.StartTimer()
			if _, err := process(ctx, p, work); err != nil {
				b.Fatal(err)
			}
		}
		if err := p.flush(ctx, all); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if got := next.SpanCount(); got < calls {
			b.Fatalf("emitted %d spans for %d calls", got, calls)
		}
		next.Reset()
		// The next round's calls are new to the processor: forget this one's.
		p.mu.Lock()
		for id, el := range p.sessions {
			p.lru.Remove(el)
			delete(p.sessions, id)
		}
		p.mu.Unlock()
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*calls), "ns/call")
}
