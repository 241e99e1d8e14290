package ctxauditprocessor

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap/confmaptest"
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
// consumer that drops the spans. An op is one round of 1,536 calls; ns/call
// is what one call costs, held and emitted, and emitted-B/call the size of
// its analysed span as the exporter's queue counts it.
func BenchmarkHoldAndEmit(b *testing.B) {
	const perRequest, sessions = 512, 40
	ctx := context.Background()
	calls := perRequest * (sessions * benchcollector.SpansPerConversation / perRequest)
	requests := loadRequests(calls, perRequest)
	next := new(consumertest.TracesSink)
	p := startHolding(b, next)
	all := func(*sessionBuffer) bool { return true }
	work := ptrace.NewTraces()
	var sizer ptrace.ProtoMarshaler
	emitted := 0
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
		for _, td := range next.AllTraces() {
			emitted += sizer.TracesSize(td)
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
	// What the exporter's byte-sized batches count (examples/collector.yaml
	// sizes them for emitCalls of these).
	b.ReportMetric(float64(emitted)/float64(b.N*calls), "emitted-B/call")
}

// startHolding starts a processor with the default configuration, memory
// only, whose sessions go idle only when flushed, emitting into next.
func startHolding(tb testing.TB, next *consumertest.TracesSink) *tracesProcessor {
	tb.Helper()
	ctx := context.Background()
	cfg := createDefaultConfig().(*Config)
	cfg.SessionIdle = time.Hour
	p, err := newTracesProcessor(processortest.NewNopSettings(metadata.Type), cfg, next)
	if err != nil {
		tb.Fatal(err)
	}
	if err := p.start(ctx, componenttest.NewNopHost()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = p.shutdown(ctx) })
	return p
}

// loadRequests are OTLP requests of perRequest execute_tool spans each,
// calls in all, shaped as the collector benchmark's load generator sends
// them (benchcollector.Payload).
func loadRequests(calls, perRequest int) []ptrace.Traces {
	payload := benchcollector.NewPayload("bench")
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	var requests []ptrace.Traces
	for i := 0; i < calls; i += perRequest {
		td := ptrace.NewTraces()
		spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
		for j := i; j < min(i+perRequest, calls); j++ {
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
	return requests
}

// TestFullEmissionIsOneExportBatch: an emission of emitCalls analysed calls
// of the benchmark's load — short calls, with no arguments, model or
// working directory — is between the example's export batch min_size and
// max_size. Below min_size the exporter's batcher holds every emission for
// flush_timeout before writing it, and requests waiting for dropped
// sessions to be written wait with it (accepted spans/s halved when a
// change made these spans a quarter smaller); above max_size it is split
// into more INSERTs.
func TestFullEmissionIsOneExportBatch(t *testing.T) {
	ctx := context.Background()
	conf, err := confmaptest.LoadConf(filepath.Join("..", "..", "..", "examples", "collector.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	batch := "exporters::ctxaudit_clickhouse::sending_queue::batch::"
	minSize, maxSize := conf.Get(batch+"min_size"), conf.Get(batch+"max_size")
	if conf.Get(batch+"sizer") != "bytes" {
		t.Fatalf("the example's export batches are sized by %v, not bytes", conf.Get(batch+"sizer"))
	}
	next := new(consumertest.TracesSink)
	p := startHolding(t, next)
	for _, td := range loadRequests(emitCalls, 512) {
		if _, err := process(ctx, p, td); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.flush(ctx, func(*sessionBuffer) bool { return true }); err != nil {
		t.Fatal(err)
	}
	emissions := next.AllTraces()
	if len(emissions) != 1 {
		t.Fatalf("%d emissions of %d calls; want one", len(emissions), emitCalls)
	}
	size := (&ptrace.ProtoMarshaler{}).TracesSize(emissions[0])
	t.Logf("an emission of %d calls: %d bytes (%d per call); batch min_size %v, max_size %v",
		emitCalls, size, size/emitCalls, minSize, maxSize)
	if lo, ok := minSize.(int); !ok || size < lo {
		t.Errorf("an emission of %d calls is %d bytes, under the example's min_size %v", emitCalls, size, minSize)
	}
	if hi, ok := maxSize.(int); !ok || size > hi {
		t.Errorf("an emission of %d calls is %d bytes, over the example's max_size %v", emitCalls, size, maxSize)
	}
}
