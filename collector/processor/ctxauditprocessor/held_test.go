package ctxauditprocessor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/klauspost/compress/s2"

	"github.com/ctxaudit/ctxaudit/collector/forensics"
	"github.com/ctxaudit/ctxaudit/collector/otelconv"
	"github.com/ctxaudit/ctxaudit/collector/processor/ctxauditprocessor/internal/metadata"
	"github.com/ctxaudit/ctxaudit/collector/session"
	"github.com/ctxaudit/ctxaudit/schema"
)

// refusing passes traces on to rows, or refuses them while refuse is set,
// as a full queue does.
type refusing struct {
	*callRows
	mu     sync.Mutex
	refuse bool
}

func (r *refusing) set(v bool) { r.mu.Lock(); r.refuse = v; r.mu.Unlock() }

func (r *refusing) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	r.mu.Lock()
	refuse := r.refuse
	r.mu.Unlock()
	if refuse {
		return errors.New("sending queue is full")
	}
	return r.callRows.ConsumeTraces(ctx, td)
}

// TestRefusedEmissionIsRetriedWhole: an analysis the next consumer refuses
// is emitted again, calls included, once it accepts — not recorded as
// emitted when it was not.
func TestRefusedEmissionIsRetriedWhole(t *testing.T) {
	ctx := context.Background()
	cfg := createDefaultConfig().(*Config)
	cfg.SessionIdle = time.Hour
	sink := &refusing{callRows: newCallRows(nil)}
	p, err := newTracesProcessor(processortest.NewNopSettings(metadata.Type), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.start(ctx, componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	if _, err := process(ctx, p, sessionSpans("retry", 0, 6, time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC))); err != nil {
		t.Fatal(err)
	}
	sink.set(true)
	all := func(*sessionBuffer) bool { return true }
	if err := p.flush(ctx, all); err == nil {
		t.Fatal("flush into a refusing consumer reported success")
	}
	sink.set(false)
	if err := p.flush(ctx, all); err != nil {
		t.Fatal(err)
	}
	if err := p.shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		if id := fmt.Sprintf("retry-c%03d", i); sink.rows[id] != 1 {
			t.Errorf("call %s written %d times; want 1", id, sink.rows[id])
		}
	}
	if s := sink.sessions["retry"]; s.ToolCalls != 6 {
		t.Errorf("session row counts %d calls; want 6", s.ToolCalls)
	}
}

// TestMaxHoldEmitsOpenSessions: a session that never goes quiet is emitted
// once a call has been held for max_hold, and what it receives later is
// emitted again (a call's later row over more of the session).
func TestMaxHoldEmitsOpenSessions(t *testing.T) {
	ctx := context.Background()
	cfg := createDefaultConfig().(*Config)
	cfg.SessionIdle = time.Hour
	cfg.MaxHold = 40 * time.Millisecond
	sink := newCallRows(nil)
	p, err := newTracesProcessor(processortest.NewNopSettings(metadata.Type), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.start(ctx, componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.shutdown(ctx) }()
	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	emittedCalls := func(n int) func() bool {
		return func() bool {
			sink.mu.Lock()
			defer sink.mu.Unlock()
			return sink.sessions["hold"].ToolCalls == n
		}
	}
	if _, err := process(ctx, p, sessionSpans("hold", 0, 3, at)); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the first emission by max_hold", emittedCalls(3))
	if _, err := process(ctx, p, sessionSpans("hold", 3, 2, at)); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the second emission by max_hold", emittedCalls(5))
	sink.mu.Lock()
	defer sink.mu.Unlock()
	for i := range 5 {
		if id := fmt.Sprintf("hold-c%03d", i); sink.rows[id] == 0 {
			t.Errorf("call %s never written", id)
		}
	}
}

// waitUntil polls cond; the bound only ends a hung test, it is no assertion
// on time.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("no %s", what)
}

// TestShutdownWithRefusingConsumer: at shutdown, an analysis the next
// consumer refuses stays in storage and shutdown succeeds; the next start
// emits it. Without storage the shutdown fails, saying what is lost.
func TestShutdownWithRefusingConsumer(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	cfg := createDefaultConfig().(*Config)
	cfg.SessionIdle = time.Hour

	t.Run("memory", func(t *testing.T) {
		sink := &refusing{callRows: newCallRows(nil), refuse: true}
		p, err := newTracesProcessor(processortest.NewNopSettings(metadata.Type), cfg, sink)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.start(ctx, componenttest.NewNopHost()); err != nil {
			t.Fatal(err)
		}
		if _, err := process(ctx, p, sessionSpans("lost", 0, 3, at)); err != nil {
			t.Fatal(err)
		}
		if err := p.shutdown(ctx); err == nil || !strings.Contains(err.Error(), "without `storage`, is lost") {
			t.Fatalf("shutdown = %v; want an error saying the analysis is lost without storage", err)
		}
	})

	t.Run("storage", func(t *testing.T) {
		dir := t.TempDir()
		scfg := *cfg
		scfg.Storage = &fileStorage
		run := func(sink *refusing) {
			host, ext := newFileStorage(t, dir)
			p, err := newTracesProcessor(processortest.NewNopSettings(metadata.Type), &scfg, sink)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.start(ctx, host); err != nil {
				t.Fatal(err)
			}
			if sink.refuse {
				if _, err := process(ctx, p, sessionSpans("kept", 0, 3, at)); err != nil {
					t.Fatal(err)
				}
			}
			if err := p.shutdown(ctx); err != nil {
				t.Fatalf("shutdown with storage: %v", err)
			}
			if err := ext.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
		}
		first := &refusing{callRows: newCallRows(nil), refuse: true}
		run(first)
		second := &refusing{callRows: newCallRows(nil)}
		run(second)
		if len(first.rows) != 0 || len(second.rows) != 3 || second.sessions["kept"].ToolCalls != 3 {
			t.Fatalf("rows before the restart %v, after %v, session %+v; want the 3 calls and their session after it",
				first.rows, second.rows, second.sessions["kept"])
		}
	})
}

// TestRestartedBufferSurvivesACrash: a session whose buffer started again
// (max_calls_per_session) while the next consumer refused the old buffer's
// emission keeps both buffers across a crash: the next process emits the
// old one and the new one, each call once.
func TestRestartedBufferSurvivesACrash(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := createDefaultConfig().(*Config)
	cfg.SessionIdle = time.Hour
	cfg.MaxCallsPerSession = 4
	cfg.Storage = &fileStorage
	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	start := func(sink *refusing) (*tracesProcessor, extension.Extension) {
		host, ext := newFileStorage(t, dir)
		p, err := newTracesProcessor(processortest.NewNopSettings(metadata.Type), cfg, sink)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.start(ctx, host); err != nil {
			t.Fatal(err)
		}
		return p, ext
	}
	first := &refusing{callRows: newCallRows(nil), refuse: true}
	p, ext := start(first)
	for i := range 6 {
		if _, err := process(ctx, p, sessionSpans("runaway", i, 1, at)); err != nil {
			t.Fatal(err)
		}
	}
	// The loop tries the dropped buffer at once and keeps it when refused.
	waitUntil(t, "the refused old buffer kept for a retry", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.retry) == 1 && len(first.rows) == 0
	})
	crash(t, p, ext)

	sink := new(consumertest.TracesSink)
	second := &refusing{callRows: newCallRows(sink)}
	p, ext = start(second)
	if err := p.shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ext.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		if id := fmt.Sprintf("runaway-c%03d", i); second.rows[id] != 1 {
			t.Errorf("call %s written %d times after the restart; want 1", id, second.rows[id])
		}
	}
	// The session went on past the old buffer: its cut calls none of its
	// calls followed up may have been followed up later, which no analysis
	// sees, so that is not known.
	judged := 0
	for i := range 4 {
		c := keptOf(sink).calls[fmt.Sprintf("runaway/runaway-c%03d", i)]
		if c.Truncated && !c.FollowedUp {
			judged++
			if !c.FollowUpUnknown {
				t.Errorf("%s of the old buffer: a known \"not followed up\"; want unknown", c.CallID)
			}
		}
	}
	if judged == 0 {
		t.Error("no cut call of the old buffer left not followed up: the check above checked nothing")
	}
}

// With forward_held_spans, only calls the processor holds pass on marked
// pending: not with analyze_sessions off, not spans analysed upstream, not
// calls without a session.
func TestPendingOnlyWhenHeld(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		analyze bool
		edit    func(ptrace.Span)
		want    bool
	}{
		{"held", true, func(ptrace.Span) {}, true},
		{"analyze_sessions off", false, func(ptrace.Span) {}, false},
		{"analysed upstream", true, func(sp ptrace.Span) { sp.Attributes().PutBool(otelconv.AttrAnalysisUpstream, true) }, false},
		{"no session", true, func(sp ptrace.Span) { sp.Attributes().Remove(otelconv.AttrConversationID) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			cfg.AnalyzeSessions = tc.analyze
			cfg.ForwardHeldSpans = true
			p, err := newTracesProcessor(processortest.NewNopSettings(metadata.Type), cfg, newCallRows(nil))
			if err != nil {
				t.Fatal(err)
			}
			if err := p.start(ctx, componenttest.NewNopHost()); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = p.shutdown(ctx) }()
			td := ptrace.NewTraces()
			spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
			shellSpan(spans, "pending", "c1", "a\n", at)
			tc.edit(spans.At(0))
			out, err := process(ctx, p, td)
			if err != nil {
				t.Fatal(err)
			}
			sp := out.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
			if got := otelconv.AnalysisPending(sp.Attributes()); got != tc.want {
				t.Errorf("pending = %v; want %v", got, tc.want)
			}
		})
	}
}

// By default what the processor holds does not pass on: a held call's span
// (and a held answer's) leaves only with the session's analysis, while
// every span it does not hold passes on, and a request it holds entirely
// is answered without calling the next consumer.
func TestHeldSpansPassOnOnlyWithTheirAnalysis(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	sink := new(consumertest.TracesSink)
	cfg := createDefaultConfig().(*Config)
	cfg.SessionIdle = time.Hour
	p, err := NewFactory().CreateTraces(ctx, processortest.NewNopSettings(metadata.Type), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx, componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}

	// Held entirely: nothing passes on, the request is accepted.
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	shellSpan(spans, "whole", "c1", "a\n", at)
	chatSpan(spans, "whole", "Done.", at.Add(time.Second))
	if err := p.ConsumeTraces(ctx, td); err != nil {
		t.Fatal(err)
	}
	if n := sink.SpanCount(); n != 0 {
		t.Fatalf("%d spans passed on from a request held entirely; want 0", n)
	}

	// Mixed: the spans it does not hold pass on, in their own resources.
	td = ptrace.NewTraces()
	held := td.ResourceSpans().AppendEmpty()
	held.Resource().Attributes().PutStr("service.name", "held-only")
	shellSpan(held.ScopeSpans().AppendEmpty().Spans(), "mixed", "c1", "a\n", at)
	other := td.ResourceSpans().AppendEmpty()
	other.Resource().Attributes().PutStr("service.name", "other")
	rest := other.ScopeSpans().AppendEmpty().Spans()
	shellSpan(rest, "mixed", "c2", "b\n", at)
	rest.At(0).Attributes().Remove(otelconv.AttrConversationID) // no session: not held
	plain := rest.AppendEmpty()
	plain.SetName("GET /")
	if err := p.ConsumeTraces(ctx, td); err != nil {
		t.Fatal(err)
	}
	if n := len(sink.AllTraces()); n != 1 {
		t.Fatalf("%d batches passed on; want 1", n)
	}
	out := sink.AllTraces()[0]
	if out.ResourceSpans().Len() != 1 {
		t.Fatalf("%d resources passed on; want only the one with spans left", out.ResourceSpans().Len())
	}
	if name, _ := out.ResourceSpans().At(0).Resource().Attributes().Get("service.name"); name.Str() != "other" {
		t.Errorf("resource %q passed on; want other", name.Str())
	}
	left := out.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	if left.Len() != 2 {
		t.Fatalf("%d spans passed on; want the call without a session and the plain span", left.Len())
	}
	for i := 0; i < left.Len(); i++ {
		if otelconv.AnalysisPending(left.At(i).Attributes()) {
			t.Errorf("span %d passed on marked pending", i)
		}
	}
	if _, ok := left.At(0).Attributes().Get(forensics.AttrTruncationKind); !ok {
		t.Error("the call passed on carries no verdict")
	}

	// Shutdown analyses what is held: the held calls and the answer leave
	// now, once, analysed.
	if err := p.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	calls, answers := map[string]int{}, 0
	for _, td := range sink.AllTraces()[1:] {
		otelconv.EachSpan(td, func(_ pcommon.Map, _ string, sp ptrace.Span) {
			a := sp.Attributes()
			switch otelconv.Operation(a) {
			case otelconv.OperationExecuteTool:
				id, _ := a.Get(otelconv.AttrToolCallID)
				calls[id.Str()]++
				if !otelconv.AnalysedUpstream(a) {
					t.Errorf("call %s emitted without the analysed mark", id.Str())
				}
			case otelconv.OperationChat:
				answers++
			}
		})
	}
	if calls["c1"] != 2 || len(calls) != 1 {
		t.Errorf("analysed calls %v; want c1 of both sessions, once each", calls)
	}
	if answers != 1 {
		t.Errorf("%d answers emitted; want 1", answers)
	}
}

// chunks keeps the order, bounds each run's calls, and gives a buffer over
// the limit a run of its own.
func TestChunksOfEmission(t *testing.T) {
	buf := func(id string, calls int) *sessionBuffer {
		b := newSessionBuffer(id, schema.HarnessCodex, false, 1)
		for i := range calls {
			b.addCall(&schema.ToolCall{SessionID: id, CallID: fmt.Sprintf("%s-%d", id, i), Tool: "shell"})
		}
		return b
	}
	a, b, c, big, d := buf("a", 900), buf("b", 900), buf("c", 900), buf("big", 2500), buf("d", 10)
	var got []string
	for _, run := range chunks([]*sessionBuffer{a, b, c, big, d}, 2000) {
		var ids []string
		for _, x := range run {
			ids = append(ids, x.id)
		}
		got = append(got, strings.Join(ids, "+"))
	}
	if want := "a+b|c|big|d"; strings.Join(got, "|") != want {
		t.Errorf("runs %q; want %q", strings.Join(got, "|"), want)
	}
	if n := len(chunks(nil, 2000)); n != 0 {
		t.Errorf("%d runs of nothing", n)
	}
}

// Many sessions falling due at once leave in emissions of at most
// emitCalls calls each (the size of an export batch), every call once; a
// refusal midway keeps the rest, in order, for the next flush.
func TestEmissionsAreBounded(t *testing.T) {
	ctx := context.Background()
	cfg := createDefaultConfig().(*Config)
	cfg.SessionIdle = time.Hour
	rows := &refusing{callRows: newCallRows(nil)}
	batches := 0
	maxCalls := 0
	counted := consumerFunc(func(ctx context.Context, td ptrace.Traces) error {
		if err := rows.ConsumeTraces(ctx, td); err != nil {
			return err
		}
		n := 0
		otelconv.EachSpan(td, func(_ pcommon.Map, _ string, sp ptrace.Span) {
			if otelconv.Operation(sp.Attributes()) == otelconv.OperationExecuteTool {
				n++
			}
		})
		batches++
		maxCalls = max(maxCalls, n)
		return nil
	})
	p, err := newTracesProcessor(processortest.NewNopSettings(metadata.Type), cfg, counted)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.start(ctx, componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	const sessions, perSession = 9, 700
	for s := range sessions {
		if _, err := process(ctx, p, sessionSpans(fmt.Sprintf("bound-%d", s), 0, perSession, at)); err != nil {
			t.Fatal(err)
		}
	}
	// The first flush is refused: nothing is recorded as emitted.
	rows.set(true)
	if err := p.flush(ctx, func(*sessionBuffer) bool { return true }); err == nil {
		t.Fatal("a refused flush reported no error")
	}
	if len(rows.rows) != 0 {
		t.Fatalf("%d calls recorded while refused", len(rows.rows))
	}
	rows.set(false)
	if err := p.flush(ctx, func(*sessionBuffer) bool { return true }); err != nil {
		t.Fatal(err)
	}
	if err := p.shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if len(rows.rows) != sessions*perSession {
		t.Fatalf("%d calls emitted; want %d", len(rows.rows), sessions*perSession)
	}
	for id, n := range rows.rows {
		if n != 1 {
			t.Errorf("call %s emitted %d times", id, n)
		}
	}
	// 700-call sessions: eight per emission (5,600 ≤ 6,000 < 6,300).
	perEmission := emitCalls / perSession
	want := (sessions + perEmission - 1) / perEmission
	if maxCalls > emitCalls || batches != want {
		t.Errorf("%d emissions, the largest %d calls; want %d of at most %d", batches, maxCalls, want, emitCalls)
	}
}

// consumerFunc is a consumer.Traces from a function.
type consumerFunc func(context.Context, ptrace.Traces) error

func (f consumerFunc) ConsumeTraces(ctx context.Context, td ptrace.Traces) error { return f(ctx, td) }
func (consumerFunc) Capabilities() consumer.Capabilities                         { return consumer.Capabilities{} }

// An emission of a held session writes only its meta: the records it
// covered stay in their increments (no base rewriting every record of the
// session at each emission), the meta says up to which increment they were
// emitted, and a restart finds the session clean until it grows.
func TestEmissionWritesOnlyTheMeta(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := createDefaultConfig().(*Config)
	cfg.SessionIdle = time.Hour
	cfg.Storage = &fileStorage
	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	rows := newCallRows(nil)
	p, ext := startOnStorage(t, dir, cfg, rows)
	for r := range 2 {
		if _, err := process(ctx, p, sessionSpans("meta-only", 3*r, 3, at)); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.flush(ctx, func(*sessionBuffer) bool { return true }); err != nil {
		t.Fatal(err)
	}
	l, err := p.store.load(ctx, func(k string, err error) { t.Errorf("%s: %v", k, err) })
	if err != nil {
		t.Fatal(err)
	}
	if len(l.buffers) != 1 {
		t.Fatalf("%d buffers stored; want 1", len(l.buffers))
	}
	b := l.buffers[0]
	seqs, _ := b.sortedIncs()
	if b.base != nil || len(seqs) != 2 || b.meta.Emitted != seqs[1] || len(b.meta.Sent.Calls) != 6 {
		t.Fatalf("stored after the emission: base %v, increments %v, emitted up to %d, %d fingerprints; want no base, 2 increments, emitted up to the last, 6",
			b.base != nil, seqs, b.meta.Emitted, len(b.meta.Sent.Calls))
	}
	crash(t, p, ext)

	// After a restart the session is clean: nothing is emitted again until
	// it grows, and then the analysis covers all of it.
	again := newCallRows(nil)
	p, ext = startOnStorage(t, dir, cfg, again)
	if err := p.flush(ctx, func(*sessionBuffer) bool { return true }); err != nil {
		t.Fatal(err)
	}
	if len(again.rows) != 0 {
		t.Fatalf("%d calls emitted again after the restart; want none", len(again.rows))
	}
	if _, err := process(ctx, p, sessionSpans("meta-only", 6, 1, at)); err != nil {
		t.Fatal(err)
	}
	if err := p.shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ext.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if s := again.sessions["meta-only"]; s.ToolCalls != 7 || s.Analysis.Records < 7 {
		t.Errorf("session after growing: %d calls over %d records; want the analysis of all 7", s.ToolCalls, s.Analysis.Records)
	}
}

// State written by earlier versions — a base key holding what was emitted,
// increments after it, a meta without Emitted — still loads: the base as
// emitted, every increment as not emitted yet.
func TestStateWithABaseStillLoads(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := createDefaultConfig().(*Config)
	cfg.SessionIdle = time.Hour
	cfg.Storage = &fileStorage
	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	call := func(i int) schema.ToolCall {
		return schema.ToolCall{SessionID: "old", CallID: fmt.Sprintf("old-c%d", i), Tool: "shell", Source: schema.HarnessCodex,
			Timestamp: at.Add(time.Duration(i) * time.Second), Forensics: schema.Forensics{Kind: schema.KindNone}}
	}
	p, ext := startOnStorage(t, dir, cfg, newCallRows(nil))
	var ops []*storage.Operation
	for key, v := range map[string]any{
		metaKey(7):    storedMeta{SessionID: "old", Source: schema.HarnessCodex, Sent: session.Sent{Calls: map[string]uint64{}, Answers: map[string]uint64{}}},
		baseKey(7):    storedRecords{At: at, Calls: []*schema.ToolCall{ptr(call(0)), ptr(call(1))}},
		incKey(7, 9):  storedRecords{At: at.Add(time.Minute), Calls: []*schema.ToolCall{ptr(call(2))}},
		incKey(7, 12): storedRecords{At: at.Add(2 * time.Minute), Calls: []*schema.ToolCall{ptr(call(3))}},
	} {
		op, err := setValue(key, v)
		if err != nil {
			t.Fatal(err)
		}
		ops = append(ops, op)
	}
	if err := p.store.write(ctx, ops); err != nil {
		t.Fatal(err)
	}
	crash(t, p, ext)

	rows := newCallRows(nil)
	p, ext = startOnStorage(t, dir, cfg, rows)
	el, ok := p.sessions["old"]
	if !ok {
		t.Fatal("the old session was not reloaded")
	}
	b := el.Value.(*sessionBuffer)
	if !b.dirty || !b.hasBase || !slices.Equal(b.incs, []uint64{9, 12}) || len(b.emittedIncs) != 0 || b.b.Calls() != 4 {
		t.Fatalf("reloaded: dirty %v, base %v, increments %v (emitted %v), %d calls; want dirty, a base, 9 and 12 not emitted, 4 calls",
			b.dirty, b.hasBase, b.incs, b.emittedIncs, b.b.Calls())
	}
	if want := at.Add(time.Minute); !b.pendingSince.Equal(want) {
		t.Errorf("pending since %v; want %v, the oldest increment not emitted", b.pendingSince, want)
	}
	if err := p.shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ext.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if len(rows.rows) != 4 {
		t.Errorf("%d calls emitted after the restart; want the session's 4", len(rows.rows))
	}
}

// An earlier version left a call's turn out of its stored record when it
// was 0; a record it wrote reads back in turn 0, not in none known, or the
// upgrade would store NULL over the 0 the call's row already has. A record
// this version writes says a turn is unknown the same way, and reads back
// so.
func TestHeldCallOfAnEarlierVersionKeepsTurnZero(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := createDefaultConfig().(*Config)
	cfg.SessionIdle = time.Hour
	cfg.Storage = &fileStorage
	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	call := func(id string, i int) *schema.ToolCall {
		return &schema.ToolCall{SessionID: "upgrade", CallID: id, Tool: "shell", Source: schema.HarnessCodex,
			Timestamp: at.Add(time.Duration(i) * time.Second), Forensics: schema.Forensics{Kind: schema.KindNone}}
	}
	p, ext := startOnStorage(t, dir, cfg, consumertest.NewNop())
	meta, err := setValue(metaKey(3), storedMeta{SessionID: "upgrade", Source: schema.HarnessCodex,
		Sent: session.Sent{Calls: map[string]uint64{}, Answers: map[string]uint64{}}})
	if err != nil {
		t.Fatal(err)
	}
	// As an earlier version stored it: no explicit_turns, no turn key.
	legacy, err := (&storedRecords{At: at, Calls: []*schema.ToolCall{call("earlier", 0)}}).MarshalMsg(nil)
	if err != nil {
		t.Fatal(err)
	}
	now, err := setValue(incKey(3, 2), storedRecords{At: at.Add(time.Minute), Calls: []*schema.ToolCall{call("now", 1)}})
	if err != nil {
		t.Fatal(err)
	}
	ops := []*storage.Operation{meta, storage.SetOperation(incKey(3, 1), append([]byte{tagMsgpack}, s2.Encode(nil, legacy)...)), now}
	if err := p.store.write(ctx, ops); err != nil {
		t.Fatal(err)
	}
	crash(t, p, ext)

	sink := new(consumertest.TracesSink)
	p, ext = startOnStorage(t, dir, cfg, sink)
	if err := p.shutdown(ctx); err != nil { // emits what it reloaded
		t.Fatal(err)
	}
	if err := ext.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	turns := map[string]schema.Turn{}
	for _, td := range sink.AllTraces() {
		otelconv.EachSpan(td, func(res pcommon.Map, _ string, sp ptrace.Span) {
			if otelconv.Operation(sp.Attributes()) == otelconv.OperationExecuteTool {
				c := otelconv.ToolCallFromAttributes(sp.Attributes(), res, sp.StartTimestamp().AsTime())
				turns[c.CallID] = c.Turn
			}
		})
	}
	if len(turns) != 2 || turns["earlier"] != schema.KnownTurn(0) || turns["now"] != (schema.Turn{}) {
		t.Fatalf("emitted calls in turns %v; want earlier in turn 0 and now in none known", turns)
	}
}

// startOnStorage starts a processor keeping what it holds in a file_storage
// on dir, as a collector process would; opts set what the configuration
// does not before it starts.
func startOnStorage(t testing.TB, dir string, cfg *Config, next consumer.Traces, opts ...func(*tracesProcessor)) (*tracesProcessor, extension.Extension) {
	t.Helper()
	host, ext := newFileStorage(t, dir)
	p, err := newTracesProcessor(processortest.NewNopSettings(metadata.Type), cfg, next)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range opts {
		o(p)
	}
	if err := p.start(context.Background(), host); err != nil {
		t.Fatal(err)
	}
	return p, ext
}

// A buffer dropped in the middle of a request (max_calls_per_session)
// holds records of that request; once it is emitted, none of its keys stays
// in storage — not even those the request wrote after dropping it.
func TestBufferDroppedMidRequestLeavesNoKeys(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := createDefaultConfig().(*Config)
	cfg.SessionIdle = time.Hour
	cfg.MaxCallsPerSession = 2
	// Any dropped buffer fills an emission: it is emitted as it is dropped,
	// not after dropWait.
	cfg.MaxWaitingCalls = 1
	cfg.Storage = &fileStorage
	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	for round := range 20 { // the loop and the request race: try it often
		rows := newCallRows(nil)
		p, ext := startOnStorage(t, dir, cfg, rows)
		sid := fmt.Sprintf("mid-%d", round)
		if _, err := process(ctx, p, sessionSpans(sid, 0, 3, at)); err != nil {
			t.Fatal(err)
		}
		waitUntil(t, "the dropped buffer's emission", func() bool {
			rows.mu.Lock()
			defer rows.mu.Unlock()
			return rows.rows[sid+"-c000"] == 1 && rows.rows[sid+"-c001"] == 1
		})
		l, err := p.store.load(ctx, func(k string, err error) { t.Errorf("round %d: %s left in storage: %v", round, k, err) })
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range l.buffers {
			if b.meta.SessionID == sid && b.meta.Partial == false {
				t.Errorf("round %d: the dropped buffer's keys are still stored", round)
			}
		}
		crash(t, p, ext)
	}
}

// TestShutdownGivesUpAWaitingEmission: with an exporter that answers only
// once rows are written (wait_for_result), an emission can wait as long as
// ClickHouse does not answer. Shutdown gives up the loop's waiting
// emission and its own after the shutdown context ends, instead of hanging;
// the calls stay in storage and the next start emits each once.
func TestShutdownGivesUpAWaitingEmission(t *testing.T) {
	dir := t.TempDir()
	cfg := createDefaultConfig().(*Config)
	cfg.SessionIdle = 10 * time.Millisecond
	cfg.Storage = &fileStorage
	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	waiting := make(chan struct{}, 1)
	hanging := consumerFunc(func(ctx context.Context, _ ptrace.Traces) error {
		select {
		case waiting <- struct{}{}:
		default:
		}
		<-ctx.Done() // ClickHouse never answers
		return ctx.Err()
	})
	p, ext := startOnStorage(t, dir, cfg, hanging)
	if _, err := process(context.Background(), p, sessionSpans("hang", 0, 4, at)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-waiting: // the loop's emission is waiting
	case <-time.After(10 * time.Second):
		t.Fatal("the loop never emitted the idle session")
	}
	stopped := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		stopped <- p.shutdown(ctx)
	}()
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatalf("shutdown with storage: %v; want the calls kept in storage and no error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("shutdown hangs on an emission that waits for ClickHouse")
	}
	if err := ext.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	rows := newCallRows(nil)
	p, ext = startOnStorage(t, dir, cfg, rows)
	if err := p.shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := ext.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(rows.rows) != 4 {
		t.Fatalf("%d calls emitted after the restart; want 4", len(rows.rows))
	}
	for id, n := range rows.rows {
		if n != 1 {
			t.Errorf("call %s emitted %d times", id, n)
		}
	}
}

// TestShutdownLetsAnEmissionUnderWayFinish: an emission still being written
// when the collector stops is let finish, not given up — giving it up made
// the exporter log its rows as dropped and the shutdown flush write them a
// second time. Each call is emitted once, and nothing is left in storage.
func TestShutdownLetsAnEmissionUnderWayFinish(t *testing.T) {
	dir := t.TempDir()
	cfg := createDefaultConfig().(*Config)
	cfg.SessionIdle = 10 * time.Millisecond
	cfg.Storage = &fileStorage
	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	rows := newCallRows(nil)
	writing := make(chan struct{}, 1)
	var canceled atomic.Bool
	slow := consumerFunc(func(ctx context.Context, td ptrace.Traces) error {
		select {
		case writing <- struct{}{}:
		default:
		}
		select {
		case <-time.After(300 * time.Millisecond): // ClickHouse takes its time
		case <-ctx.Done():
			canceled.Store(true)
			return ctx.Err()
		}
		return rows.ConsumeTraces(ctx, td)
	})
	p, ext := startOnStorage(t, dir, cfg, slow)
	if _, err := process(context.Background(), p, sessionSpans("slow", 0, 4, at)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-writing:
	case <-time.After(10 * time.Second):
		t.Fatal("the loop never emitted the idle session")
	}
	if err := p.shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := ext.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if canceled.Load() {
		t.Error("shutdown canceled the emission under way")
	}
	if len(rows.rows) != 4 {
		t.Fatalf("%d calls emitted; want 4", len(rows.rows))
	}
	for id, n := range rows.rows {
		if n != 1 {
			t.Errorf("call %s emitted %d times; want once", id, n)
		}
	}

	// Restarted on the same storage: nothing is left to emit.
	again := newCallRows(nil)
	p, ext = startOnStorage(t, dir, cfg, again)
	if err := p.shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := ext.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(again.rows) != 0 {
		t.Errorf("%d calls emitted again after the restart; want none", len(again.rows))
	}
}

// An answer the processor emitted for a message that then calls a tool (the
// chat span came before the message's tool call) is taken back: the next
// emission carries its retraction, a chat span of the same message and
// timestamp marked ctxaudit.answer.retracted, which the exporter writes as
// the row that replaces the answer's.
func TestEmittedAnswerIsTakenBack(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := createDefaultConfig().(*Config)
	cfg.SessionIdle = time.Hour
	cfg.Storage = &fileStorage
	sink := new(consumertest.TracesSink)
	p, ext := startOnStorage(t, dir, cfg, sink)
	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	shellSpan(spans, "open", "c1", "a\nb\n", at)
	chatSpan(spans, "open", "Let me look at b.go.", at.Add(time.Second))
	spans.At(1).Attributes().PutStr(otelconv.AttrMessageID, "m-open")
	if _, err := process(ctx, p, td); err != nil {
		t.Fatal(err)
	}
	if err := p.flush(ctx, func(*sessionBuffer) bool { return true }); err != nil {
		t.Fatal(err)
	}
	td = ptrace.NewTraces()
	spans = td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	shellSpan(spans, "open", "c2", "a\nb\n", at.Add(2*time.Second))
	spans.At(0).Attributes().PutStr(otelconv.AttrMessageID, "m-open") // the message called a tool
	if _, err := process(ctx, p, td); err != nil {
		t.Fatal(err)
	}
	if err := p.shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ext.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	answers := chatsOf(sink)
	if len(answers) != 2 {
		t.Fatalf("%d chat spans emitted; want the answer and its retraction: %+v", len(answers), answers)
	}
	answer, back := answers[0], answers[1]
	if answer.Retracted || answer.MessageID != "m-open" || answer.Risk == "" {
		t.Errorf("first emission: %+v; want the analysed answer", answer)
	}
	if !back.Retracted || back.MessageID != "m-open" || !back.Timestamp.Equal(answer.Timestamp) ||
		back.Analysis.Records < answer.Analysis.Records || back.Risk != schema.RiskNone {
		t.Errorf("second emission: %+v; want the retraction of %+v", back, answer)
	}

	// After a restart the session grows: it is taken back once, not again.
	if got := chatsOf(restartWithCall(t, dir, cfg, "open", "c3", at.Add(3*time.Second))); len(got) != 0 {
		t.Errorf("after the restart %d chat spans emitted again: %+v", len(got), got)
	}
}

// restartWithCall starts a processor on the storage in dir, gives it one
// more call of session, and shuts it down: what it emitted.
func restartWithCall(t *testing.T, dir string, cfg *Config, session, callID string, at time.Time) *consumertest.TracesSink {
	t.Helper()
	ctx := context.Background()
	sink := new(consumertest.TracesSink)
	p, ext := startOnStorage(t, dir, cfg, sink)
	td := ptrace.NewTraces()
	shellSpan(td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans(), session, callID, "a\nb\n", at)
	if _, err := process(ctx, p, td); err != nil {
		t.Fatal(err)
	}
	if err := p.shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ext.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	return sink
}

// An answer emitted before a crash, whose message then called a tool before
// the crash but after the emission, is taken back by the next process —
// also when its chat span came again after the call (a sender's retry).
// The reloaded session learned that the message was no answer before it
// learned that the answer had been emitted, and the answer's row stayed,
// stating an answer the message never was
// (FuzzIncrementalAnalysisStoresTheOneShotRows in schema/chstore).
func TestAnswerTakenBackAcrossACrash(t *testing.T) {
	for _, resent := range []bool{false, true} {
		t.Run(fmt.Sprintf("chat span sent again: %v", resent), func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			cfg := createDefaultConfig().(*Config)
			cfg.SessionIdle = time.Hour
			cfg.Storage = &fileStorage
			at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
			chat := func(spans ptrace.SpanSlice) {
				chatSpan(spans, "crash", "Let me look at b.go.", at.Add(time.Second))
				spans.At(spans.Len()-1).Attributes().PutStr(otelconv.AttrMessageID, "m-open")
			}
			first := new(consumertest.TracesSink)
			p, ext := startOnStorage(t, dir, cfg, first)
			td := ptrace.NewTraces()
			spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
			shellSpan(spans, "crash", "c1", "a\nb\n", at)
			chat(spans)
			if _, err := process(ctx, p, td); err != nil {
				t.Fatal(err)
			}
			if err := p.flush(ctx, func(*sessionBuffer) bool { return true }); err != nil {
				t.Fatal(err)
			}
			if got := chatsOf(first); len(got) != 1 || got[0].Retracted {
				t.Fatalf("first emission: %+v; want the answer", got)
			}
			td = ptrace.NewTraces()
			spans = td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
			shellSpan(spans, "crash", "c2", "a\nb\n", at.Add(2*time.Second))
			spans.At(0).Attributes().PutStr(otelconv.AttrMessageID, "m-open") // the message called a tool
			if _, err := process(ctx, p, td); err != nil {
				t.Fatal(err)
			}
			if resent {
				td = ptrace.NewTraces()
				chat(td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans())
				if _, err := process(ctx, p, td); err != nil {
					t.Fatal(err)
				}
			}
			crash(t, p, ext)

			second := new(consumertest.TracesSink)
			p, ext = startOnStorage(t, dir, cfg, second)
			if err := p.shutdown(ctx); err != nil {
				t.Fatal(err)
			}
			if err := ext.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
			got := chatsOf(second)
			if len(got) != 1 || !got[0].Retracted || got[0].MessageID != "m-open" {
				t.Fatalf("after the crash: %+v; want the answer's retraction", got)
			}

			// Taken back once: a third process does not do it again.
			if got := chatsOf(restartWithCall(t, dir, cfg, "crash", "c3", at.Add(3*time.Second))); len(got) != 0 {
				t.Errorf("a later process emitted %d chat spans: %+v; want none", len(got), got)
			}
		})
	}
}

// chatsOf is the answers (chat spans) a sink received, in order.
func chatsOf(sink *consumertest.TracesSink) []schema.Answer {
	var out []schema.Answer
	for _, td := range sink.AllTraces() {
		otelconv.EachSpan(td, func(_ pcommon.Map, _ string, sp ptrace.Span) {
			if otelconv.Operation(sp.Attributes()) == otelconv.OperationChat {
				out = append(out, otelconv.AnswerFromAttributes(sp.Attributes(), sp.StartTimestamp().AsTime()))
			}
		})
	}
	return out
}

// TestRequestsWaitForDroppedSessions: while the sessions dropped from the
// held set keep more than max_waiting_calls calls unwritten, a request
// waits for their emission — and goes through once they are written — or,
// when its context ends first, is refused with a retryable error having
// held nothing.
func TestRequestsWaitForDroppedSessions(t *testing.T) {
	ctx := context.Background()
	cfg := createDefaultConfig().(*Config)
	cfg.SessionIdle = time.Hour
	cfg.MaxSessions = 1
	cfg.MaxWaitingCalls = 3
	rows := newCallRows(nil)
	gate := make(chan struct{})
	var gated sync.WaitGroup
	gated.Add(1)
	var once sync.Once
	next := consumerFunc(func(ctx context.Context, td ptrace.Traces) error {
		once.Do(func() {
			gated.Done()
			<-gate // the first emission is written only once the test opens the gate
		})
		return rows.ConsumeTraces(ctx, td)
	})
	tel := componenttest.NewTelemetry()
	defer func() { _ = tel.Shutdown(ctx) }()
	set := processortest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	metricValue := func(name string) int64 {
		t.Helper()
		m, err := tel.GetMetric(name)
		if err != nil {
			t.Fatal(err)
		}
		return m.Data.(metricdata.Sum[int64]).DataPoints[0].Value
	}
	p, err := newTracesProcessor(set, cfg, next)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.start(ctx, componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	if _, err := process(ctx, p, sessionSpans("wait-a", 0, 5, at)); err != nil {
		t.Fatal(err)
	}
	// wait-b drops wait-a (max_sessions 1): 5 calls wait for their emission,
	// which the gate holds.
	if _, err := process(ctx, p, sessionSpans("wait-b", 0, 1, at)); err != nil {
		t.Fatal(err)
	}
	gated.Wait()

	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	_, err = process(short, p, sessionSpans("wait-c", 0, 1, at))
	cancel()
	if !errors.Is(err, errWaitingCalls) || consumererror.IsPermanent(err) {
		t.Fatalf("a request while 5 calls wait (max_waiting_calls 3) gave %v; want a retryable errWaitingCalls", err)
	}
	if n := metricValue("ctxaudit_processor_calls_waiting"); n != 5 {
		t.Errorf("calls_waiting = %d while wait-a is unwritten; want 5", n)
	}
	if n := metricValue("ctxaudit_processor_requests_refused"); n != 1 {
		t.Errorf("requests_refused = %d; want 1", n)
	}
	p.mu.Lock()
	_, heldC := p.sessions["wait-c"]
	p.mu.Unlock()
	if heldC {
		t.Error("the refused request's session is held")
	}

	done := make(chan error, 1)
	go func() {
		_, err := process(ctx, p, sessionSpans("wait-d", 0, 1, at))
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("a request went through while 5 calls wait unwritten (err %v)", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(gate)
	if err := <-done; err != nil {
		t.Fatalf("the waiting request, once wait-a was written: %v", err)
	}
	if err := p.shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if n := metricValue("ctxaudit_processor_calls_waiting"); n != 0 {
		t.Errorf("calls_waiting = %d once everything is written; want 0", n)
	}
	for _, id := range []string{"wait-a-c000", "wait-a-c004", "wait-b-c000", "wait-d-c000"} {
		if rows.rows[id] != 1 {
			t.Errorf("call %s written %d times; want 1", id, rows.rows[id])
		}
	}
	if n := rows.rows["wait-c-c000"]; n != 0 {
		t.Errorf("the refused call was written %d times", n)
	}
}

// TestDroppedBuffersFillEmissions: dropped buffers are emitted as soon as
// they fill an emission (here max_waiting_calls, 10 calls); fewer wait for
// more — for dropWait, an hour here, so only a full emission is written
// before shutdown.
func TestDroppedBuffersFillEmissions(t *testing.T) {
	ctx := context.Background()
	cfg := createDefaultConfig().(*Config)
	cfg.SessionIdle = time.Hour
	cfg.MaxSessions = 1
	cfg.MaxWaitingCalls = 10
	rows := newCallRows(nil)
	p, err := newTracesProcessor(processortest.NewNopSettings(metadata.Type), cfg, rows)
	if err != nil {
		t.Fatal(err)
	}
	p.dropWait = time.Hour
	if err := p.start(ctx, componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	written := func(sid string, n int) bool {
		rows.mu.Lock()
		defer rows.mu.Unlock()
		for i := range n {
			if rows.rows[fmt.Sprintf("%s-c%03d", sid, i)] != 1 {
				return false
			}
		}
		return true
	}
	// Each session drops the one before it (max_sessions 1).
	for _, s := range []struct {
		sid   string
		calls int
	}{{"fill-a", 4}, {"fill-b", 4}, {"fill-c", 12}} {
		if _, err := process(ctx, p, sessionSpans(s.sid, 0, s.calls, at)); err != nil {
			t.Fatal(err)
		}
	}
	// fill-a and fill-b wait (8 calls). Give the loop its chance to emit
	// them wrongly before looking.
	time.Sleep(100 * time.Millisecond)
	rows.mu.Lock()
	early := len(rows.rows)
	rows.mu.Unlock()
	if early != 0 {
		t.Fatalf("%d calls written while the dropped buffers held 8 (< 10)", early)
	}
	// fill-d drops fill-c: 20 calls wait, a full emission.
	if _, err := process(ctx, p, sessionSpans("fill-d", 0, 1, at)); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the full emission", func() bool { return written("fill-a", 4) && written("fill-b", 4) && written("fill-c", 12) })
	if written("fill-d", 1) {
		t.Error("the held session fill-d was written before it was dropped or quiet")
	}
	if err := p.shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if !written("fill-d", 1) {
		t.Error("fill-d not written at shutdown")
	}
}

// TestDroppedRunsKeepSessionOrder: runs of dropped buffers are emitted two
// at a time, but a run holding a session of an earlier run starts only once
// that one is written, and not at all if it failed; the runs not written go
// back in order.
func TestDroppedRunsKeepSessionOrder(t *testing.T) {
	ctx := context.Background()
	cfg := createDefaultConfig().(*Config)
	cfg.SessionIdle = time.Hour
	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	buffer := func(sid string, gen uint64) *sessionBuffer {
		b := newSessionBuffer(sid, schema.HarnessCodex, gen > 1, gen)
		b.addCall(&schema.ToolCall{SessionID: sid, CallID: fmt.Sprintf("%s-g%d", sid, gen), Tool: "shell", Source: schema.HarnessCodex,
			Timestamp: at, Forensics: schema.Forensics{Kind: schema.KindNone}})
		b.dirty, b.retired = true, true
		return b
	}
	var mu sync.Mutex
	var started []string
	release := map[string]chan error{}
	for _, id := range []string{"a-g1", "b-g1", "a-g2", "b-g2"} {
		release[id] = make(chan error, 1)
	}
	next := consumerFunc(func(ctx context.Context, td ptrace.Traces) error {
		var id string
		otelconv.EachSpan(td, func(_ pcommon.Map, _ string, sp ptrace.Span) {
			if v, ok := sp.Attributes().Get(otelconv.AttrToolCallID); ok {
				id = v.Str()
			}
		})
		mu.Lock()
		started = append(started, id)
		mu.Unlock()
		return <-release[id]
	})
	startedNow := func() []string { mu.Lock(); defer mu.Unlock(); return slices.Clone(started) }
	p, err := newTracesProcessor(processortest.NewNopSettings(metadata.Type), cfg, next)
	if err != nil {
		t.Fatal(err)
	}
	// Two sessions, each dropped twice: one buffer per run.
	runs := [][]*sessionBuffer{{buffer("a", 1)}, {buffer("a", 2)}, {buffer("b", 1)}, {buffer("b", 2)}}
	errc := make(chan error, 1)
	go func() { errc <- p.emitRuns(ctx, runs) }()
	defer func() {
		for _, c := range release {
			select {
			case c <- nil: // ends a run the test did not
			default:
			}
		}
	}()
	waitUntil(t, "a-g1 under way", func() bool { return len(startedNow()) == 1 })
	time.Sleep(50 * time.Millisecond) // a lane is free: a-g2 must still wait for a-g1
	if got := startedNow(); !slices.Equal(got, []string{"a-g1"}) {
		t.Fatalf("under way: %v; want a-g1 only", got)
	}
	release["a-g1"] <- nil
	waitUntil(t, "a-g2 and b-g1 once a-g1 is written", func() bool {
		got := startedNow()
		return slices.Contains(got, "a-g2") && slices.Contains(got, "b-g1")
	})
	release["a-g2"] <- nil
	release["b-g1"] <- errors.New("queue full")
	select {
	case err = <-errc:
	case <-time.After(10 * time.Second): // ends a hung test; no assertion on time
		t.Fatalf("emitRuns still running; started %v", startedNow())
	}
	if err == nil || !strings.Contains(err.Error(), "queue full") {
		t.Fatalf("emitRuns = %v; want b-g1's failure", err)
	}
	if slices.Contains(startedNow(), "b-g2") {
		t.Error("b-g2 was emitted after b-g1 failed")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var back []string
	for _, b := range p.retry {
		back = append(back, fmt.Sprintf("%s-g%d", b.id, b.gen))
	}
	if want := []string{"b-g1", "b-g2"}; !slices.Equal(back, want) {
		t.Errorf("queued again: %v; want %v", back, want)
	}
}

// Without storage an acknowledged request's held calls are in memory only:
// the processor says so once at start, and not when storage keeps them.
func TestStartWarnsWithoutStorage(t *testing.T) {
	ctx := context.Background()
	for _, withStorage := range []bool{false, true} {
		cfg := createDefaultConfig().(*Config)
		var host component.Host = componenttest.NewNopHost()
		var ext extension.Extension
		if withStorage {
			cfg.Storage = &fileStorage
			host, ext = newFileStorage(t, t.TempDir())
		}
		core, logs := observer.New(zap.WarnLevel)
		set := processortest.NewNopSettings(metadata.Type)
		set.Logger = zap.New(core)
		p, err := newTracesProcessor(set, cfg, consumertest.NewNop())
		if err != nil {
			t.Fatal(err)
		}
		if err := p.start(ctx, host); err != nil {
			t.Fatal(err)
		}
		if err := p.shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		if ext != nil {
			if err := ext.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
		}
		warned := logs.FilterMessageSnippet("No storage configured").Len()
		if want := map[bool]int{false: 1, true: 0}[withStorage]; warned != want {
			t.Errorf("storage %v: %d warnings about storage; want %d", withStorage, warned, want)
		}
	}
}
