package ctxauditprocessor

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/ctxaudit/ctxaudit/collector/forensics"
	"github.com/ctxaudit/ctxaudit/collector/otelconv"
	"github.com/ctxaudit/ctxaudit/collector/processor/ctxauditprocessor/internal/metadata"
	"github.com/ctxaudit/ctxaudit/collector/redact"
	"github.com/ctxaudit/ctxaudit/schema"
)

var fileStorage = component.MustNewID("file_storage")

func TestConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := componenttest.CheckConfigStruct(createDefaultConfig()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id      component.ID
		want    *Config
		wantErr string
	}{
		{id: component.NewID(metadata.Type), want: createDefaultConfig().(*Config)},
		{id: component.NewIDWithName(metadata.Type, "custom"), want: &Config{DefaultSource: "codex", AnalyzeSessions: true,
			SessionIdle: 5 * time.Second, MaxSessions: 10, MaxCallsPerSession: 100, MaxWaitingCalls: 500, MaxParkedCalls: 2000, MaxHold: time.Minute, ForwardHeldSpans: true, Storage: &fileStorage,
			Redact: redact.Config{Patterns: []redact.Pattern{{Name: "acme_key", Regex: `acme_(?P<secret>[a-z0-9]{12})`, Keywords: []string{"acme_"}}}}}},
		{id: component.NewIDWithName(metadata.Type, "bad"), wantErr: "default_source: unknown harness aider"},
	} {
		t.Run(tc.id.String(), func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			sub, err := cm.Sub(tc.id.String())
			if err != nil {
				t.Fatal(err)
			}
			if err := sub.Unmarshal(cfg); err != nil {
				t.Fatal(err)
			}
			err = confmap.Validate(cfg)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "session_idle") ||
					!strings.Contains(err.Error(), "max_parked_calls") {
					t.Fatalf("Validate = %v; want errors naming default_source, session_idle and max_parked_calls", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cfg, tc.want) {
				t.Fatalf("config %+v, want %+v", *cfg, *tc.want)
			}
		})
	}
}

// shellSpan is an execute_tool span that carries only the tool's result text,
// as a harness instrumented with plain GenAI conventions reports it.
func shellSpan(spans ptrace.SpanSlice, session, id, result string, at time.Time) {
	callSpan(spans, session, id, "shell_command", "codex", at).PutStr(otelconv.AttrToolCallResult, result)
}

// callSpan is an execute_tool span of a call, with no result yet: its
// attributes.
func callSpan(spans ptrace.SpanSlice, session, id, tool, source string, at time.Time) pcommon.Map {
	sp := spans.AppendEmpty()
	sp.SetName("execute_tool " + tool)
	sp.SetTraceID(otelconv.TraceID(session))
	sp.SetSpanID(otelconv.SpanID(session, "call", id))
	sp.SetStartTimestamp(pcommonTS(at))
	sp.SetEndTimestamp(pcommonTS(at))
	a := sp.Attributes()
	a.PutStr(otelconv.AttrOperationName, otelconv.OperationExecuteTool)
	a.PutStr(otelconv.AttrToolName, tool)
	a.PutStr(otelconv.AttrToolCallID, id)
	a.PutStr(otelconv.AttrConversationID, session)
	a.PutStr(otelconv.AttrSource, source)
	return a
}

func chatSpan(spans ptrace.SpanSlice, session, text string, at time.Time) {
	sp := spans.AppendEmpty()
	sp.SetName("chat")
	sp.SetSpanID(otelconv.SpanID(session, "answer", "m1"))
	sp.SetStartTimestamp(pcommonTS(at))
	sp.SetEndTimestamp(pcommonTS(at))
	a := sp.Attributes()
	a.PutStr(otelconv.AttrOperationName, otelconv.OperationChat)
	a.PutStr(otelconv.AttrConversationID, session)
	a.PutStr("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"`+text+`"}]}]`)
}

const codexCut = "Exit code: 0\nWall time: 0.1 seconds\nTotal output lines: 300\nOutput:\nhead\n[... omitted 298 of 300 lines ...]\n\ntail\n"

func TestTracesDetectAndAnalyse(t *testing.T) {
	tel := componenttest.NewTelemetry()
	defer func() { _ = tel.Shutdown(context.Background()) }()
	set := processortest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	cfg := createDefaultConfig().(*Config)
	cfg.SessionIdle = 50 * time.Millisecond
	sink := new(consumertest.TracesSink)
	p, err := NewFactory().CreateTraces(context.Background(), set, cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	shellSpan(spans, "s1", "c1", codexCut, at)
	chatSpan(spans, "s1", "There is no such file in the output.", at.Add(time.Second))
	if err := p.ConsumeTraces(context.Background(), td); err != nil {
		t.Fatal(err)
	}

	if n := sink.SpanCount(); n != 0 {
		t.Fatalf("%d spans passed on at once; the held call and answer leave only with their analysis", n)
	}

	// Once idle, the session's analysis arrives as new spans: the call with
	// its verdict, and the answer with its risk.
	deadline := time.Now().Add(5 * time.Second)
	for len(sink.AllTraces()) < 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if len(sink.AllTraces()) < 1 {
		t.Fatal("no analysis emitted after the session went idle")
	}
	var risk, kind, strategy, verdict string
	var uncertain bool
	analysed := sink.AllTraces()[0].ResourceSpans().At(0).ScopeSpans().At(0)
	if analysed.Scope().Name() != ScopeName {
		t.Errorf("analysis scope %q", analysed.Scope().Name())
	}
	for i := 0; i < analysed.Spans().Len(); i++ {
		a := analysed.Spans().At(i).Attributes()
		switch otelconv.Operation(a) {
		case otelconv.OperationChat:
			v, _ := a.Get(otelconv.AttrAnswerRisk)
			risk = v.AsString()
			vd, _ := a.Get(otelconv.AttrAnswerVerdict)
			verdict = vd.AsString()
			u, _ := a.Get(otelconv.AttrAnswerInputsUncertain)
			uncertain = u.Bool()
		case otelconv.OperationExecuteTool:
			k, _ := a.Get(forensics.AttrTruncationKind)
			st, _ := a.Get(forensics.AttrStrategy)
			kind, strategy = k.AsString(), st.AsString()
		}
	}
	if kind != "explicit" || strategy != "head_tail" {
		t.Fatalf("analysed call: kind %q strategy %q; want explicit head_tail", kind, strategy)
	}
	if risk != "high" {
		t.Fatalf("answer risk %q; an absence claim on a cut output is high", risk)
	}
	// Plain GenAI spans say neither the answer's inputs nor any turn: the
	// call is one the answer may rest on, and the row and verdict say so.
	if !uncertain || !strings.Contains(verdict, "; it may have been built on shell_command") {
		t.Fatalf("answer inputs_uncertain %v, verdict %q; want inputs marked uncertain and a verdict that says \"may have been built on\"", uncertain, verdict)
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	m, err := tel.GetMetric("ctxaudit_processor_sessions_analysed")
	if err != nil {
		t.Fatal(err)
	}
	if sum := m.Data.(metricdata.Sum[int64]).DataPoints[0].Value; sum != 1 {
		t.Errorf("sessions analysed = %d, want 1", sum)
	}
}

func TestEvictionIsBoundedAndCounted(t *testing.T) {
	tel := componenttest.NewTelemetry()
	defer func() { _ = tel.Shutdown(context.Background()) }()
	set := processortest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	cfg := createDefaultConfig().(*Config)
	cfg.MaxSessions = 2
	cfg.SessionIdle = time.Hour
	sink := new(consumertest.TracesSink)
	p, err := NewFactory().CreateTraces(context.Background(), set, cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, s := range []string{"a", "b", "c", "d"} {
		td := ptrace.NewTraces()
		shellSpan(td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans(), s, "c1", "ok\n", at)
		if err := p.ConsumeTraces(context.Background(), td); err != nil {
			t.Fatal(err)
		}
	}
	m, err := tel.GetMetric("ctxaudit_processor_sessions_evicted")
	if err != nil {
		t.Fatal(err)
	}
	if n := m.Data.(metricdata.Sum[int64]).DataPoints[0].Value; n != 2 {
		t.Fatalf("evicted = %d, want 2 (four sessions, room for two)", n)
	}
	// The held calls pass on only analysed: the 2 evicted sessions,
	// analysed early, by the processor's loop (not by the requests that
	// evicted them), before anything goes idle.
	waitUntil(t, "emission of the evicted sessions", func() bool { return len(analysedSessions(sink)) >= 2 })
	if got := analysedSessions(sink); len(got) != 2 || got[0].SessionID != "a" || got[1].SessionID != "b" {
		t.Fatalf("sessions analysed before shutdown %+v; want a and b, the two evicted", got)
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := analysedSessions(sink); len(got) != 4 || got[2].SessionID+got[3].SessionID != "dc" {
		t.Fatalf("%d sessions analysed after shutdown; want a, b and then the two held, most recent first: d, c", len(got))
	}
	last := sink.AllTraces()[len(sink.AllTraces())-1]
	flushed := 0
	otelconv.EachSpan(last, func(_ pcommon.Map, _ string, sp ptrace.Span) {
		if otelconv.Operation(sp.Attributes()) == otelconv.OperationInvokeAgent {
			flushed++
		}
	})
	if flushed != 2 {
		t.Errorf("the shutdown's batch holds %d sessions; want the two held, flushed together", flushed)
	}
}

func TestClaudeCodeLogEvent(t *testing.T) {
	sink := new(consumertest.LogsSink)
	p, err := NewFactory().CreateLogs(context.Background(), processortest.NewNopSettings(metadata.Type), createDefaultConfig(), sink)
	if err != nil {
		t.Fatal(err)
	}
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("session.id", "cc-1")
	lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.Body().SetStr("claude_code.tool_result")
	lr.Attributes().PutStr("event.name", "tool_result")
	lr.Attributes().PutStr("tool_name", "Read")
	lr.Attributes().PutStr("tool_result_size_bytes", "12345")
	if err := p.ConsumeLogs(context.Background(), ld); err != nil {
		t.Fatal(err)
	}
	out := sink.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Attributes()
	kind, ok := out.Get(forensics.AttrTruncationKind)
	if !ok {
		t.Fatal("no forensics on the claude_code.tool_result event")
	}
	// The event carries a size, never the text the model saw: whether the
	// output was cut cannot be told, so the kind is unknown, not none.
	if kind.AsString() != string(schema.KindUnknown) {
		t.Errorf("kind %q for an event without its text, want unknown", kind.AsString())
	}
	if v, _ := out.Get("session.id"); v.AsString() != "cc-1" {
		t.Errorf("session.id not copied from the resource: %q", v.AsString())
	}
	if v, _ := out.Get(otelconv.AttrSource); v.AsString() != "claude_code" {
		t.Errorf("source %q, want claude_code", v.AsString())
	}
	// The event reports the size of what entered the context, in bytes, and
	// nothing else: no other size, no original, and no verdict from size alone.
	c := otelconv.ToolCallFromAttributes(out, pcommon.NewMap(), time.Time{})
	want := schema.Sizes{Bytes: schema.Known(12345)}
	if c.Context != want {
		t.Errorf("context = %+v, want bytes 12345 and nothing else", c.Context)
	}
	if c.Original != (schema.Original{Source: schema.SourceUnknown}) {
		t.Errorf("original = %+v, want unknown", c.Original)
	}
	if c.Kind != schema.KindUnknown || c.Truncated || c.Strategy != schema.StrategyNone {
		t.Errorf("verdict = %s/%v/%s, want unknown, not truncated, no strategy", c.Kind, c.Truncated, c.Strategy)
	}
}

// Whether a span is analysed already is said by ctxaudit.analysis.upstream,
// not by its scope: a span marked so (as the transcript receiver marks all it
// emits) passes through without entering the session buffer, while a foreign
// span that merely uses the receiver's scope name is analysed.
func TestUpstreamMarkerDecidesReanalysis(t *testing.T) {
	for _, tc := range []struct {
		name     string
		marked   bool
		batches  int
		analysed int
	}{
		{"receiver span, marked", true, 1, 0},                             // passes through
		{"foreign span with the receiver's scope, unmarked", false, 1, 1}, // held, then analysed
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			cfg.SessionIdle = time.Hour // only shutdown flushes the buffer
			sink := new(consumertest.TracesSink)
			p := startedTraces(t, cfg, sink)
			td := ptrace.NewTraces()
			ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
			ss.Scope().SetName(otelconv.ScopeTranscriptReceiver)
			shellSpan(ss.Spans(), "r1", "c1", codexCut, time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
			if tc.marked {
				otelconv.MarkAnalysedUpstream(ss.Spans())
			}
			if err := p.ConsumeTraces(context.Background(), td); err != nil {
				t.Fatal(err)
			}
			if err := p.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			if n := len(sink.AllTraces()); n != tc.batches {
				t.Fatalf("%d batches downstream, want %d", n, tc.batches)
			}
			if got := analysedSessions(sink); len(got) != tc.analysed {
				t.Fatalf("%d sessions analysed, want %d", len(got), tc.analysed)
			}
		})
	}
}

// The processor's analysis output is marked too, so a second processor in
// the pipeline passes it through instead of analysing it again, and it sits
// under a resource naming the processor as its service.
func TestProcessorOutputIsNotReanalysed(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.SessionIdle = time.Hour
	mid := new(consumertest.TracesSink)
	first, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, mid)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	shellSpan(spans, "s1", "c1", codexCut, at)
	chatSpan(spans, "s1", "There is no such file in the output.", at.Add(time.Second))
	if err := first.ConsumeTraces(context.Background(), td); err != nil {
		t.Fatal(err)
	}
	if err := first.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(mid.AllTraces()); n != 1 {
		t.Fatalf("%d batches from the first processor, want only the analysis", n)
	}
	output := mid.AllTraces()[0]
	for i := 0; i < output.ResourceSpans().Len(); i++ {
		name, _ := output.ResourceSpans().At(i).Resource().Attributes().Get(string(semconv.ServiceNameKey))
		if name.AsString() != "ctxaudit-processor" {
			t.Errorf("analysis resource service.name %q, want ctxaudit-processor", name.AsString())
		}
	}
	otelconv.EachSpan(output, func(_ pcommon.Map, _ string, sp ptrace.Span) {
		if !otelconv.AnalysedUpstream(sp.Attributes()) {
			t.Errorf("analysis span %q is not marked %s", sp.Name(), otelconv.AttrAnalysisUpstream)
		}
	})

	sink := new(consumertest.TracesSink)
	second, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := second.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	if err := second.ConsumeTraces(context.Background(), output); err != nil {
		t.Fatal(err)
	}
	if err := second.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(sink.AllTraces()); n != 1 {
		t.Fatalf("%d batches from the second processor, want only the pass-through", n)
	}
}

// analysedSessions returns the analysis stamped on each session span the
// processor emitted, in order.
func analysedSessions(sink *consumertest.TracesSink) []schema.Session {
	var out []schema.Session
	for _, td := range sink.AllTraces() {
		otelconv.EachSpan(td, func(_ pcommon.Map, scope string, sp ptrace.Span) {
			if scope == ScopeName && otelconv.Operation(sp.Attributes()) == otelconv.OperationInvokeAgent {
				out = append(out, otelconv.SessionFromAttributes(sp.Attributes(), sp.StartTimestamp().AsTime(), sp.EndTimestamp().AsTime()))
			}
		})
	}
	return out
}

// A session's buffer restarted past max_calls_per_session, or started again
// after an eviction, does not hold the session from its start: its analysis
// says so, so that the store never puts it over the complete one.
func TestRestartedBufferIsPartial(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.SessionIdle = time.Hour
	cfg.MaxCallsPerSession = 2
	cfg.MaxSessions = 1
	sink := new(consumertest.TracesSink)
	p := startedTraces(t, cfg, sink)
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	send := func(session, id string) {
		td := ptrace.NewTraces()
		shellSpan(td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans(), session, id, "ok\n", at)
		at = at.Add(time.Second)
		if err := p.ConsumeTraces(context.Background(), td); err != nil {
			t.Fatal(err)
		}
	}
	send("a", "c1")
	send("a", "c2")
	send("a", "c3") // past the limit: c1, c2 analysed, the buffer starts again
	send("b", "c1") // evicts a's second buffer
	send("a", "c4") // a again, after its eviction
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := analysedSessions(sink)
	want := []schema.Analysis{
		{Done: true, Records: 2},                // a: c1, c2 — from the start
		{Done: true, Partial: true, Records: 1}, // a: c3, restarted
		{Done: true, Records: 1},                // b, evicted by a's return
		{Done: true, Partial: true, Records: 1}, // a: c4, after eviction
	}
	if len(got) != len(want) {
		t.Fatalf("%d sessions analysed, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i].Analysis != want[i] {
			t.Errorf("session %d (%s): analysis %+v, want %+v", i, got[i].SessionID, got[i].Analysis, want[i])
		}
	}
}

// With the text at hand, tool_result_size_bytes (the size of what entered the
// context) is never taken for the original: a size alone is no truncation.
func TestClaudeCodeResultSizeIsNeverTheOriginal(t *testing.T) {
	sink := new(consumertest.LogsSink)
	p, err := NewFactory().CreateLogs(context.Background(), processortest.NewNopSettings(metadata.Type), createDefaultConfig(), sink)
	if err != nil {
		t.Fatal(err)
	}
	ld := plog.NewLogs()
	lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.Body().SetStr("claude_code.tool_result")
	lr.Attributes().PutStr("session.id", "cc-2")
	lr.Attributes().PutStr("tool_name", "Read")
	lr.Attributes().PutStr("tool_result_size_bytes", "99999")
	lr.Attributes().PutStr(otelconv.AttrToolCallResult, "a short result\n")
	if err := p.ConsumeLogs(context.Background(), ld); err != nil {
		t.Fatal(err)
	}
	out := sink.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Attributes()
	c := otelconv.ToolCallFromAttributes(out, pcommon.NewMap(), time.Time{})
	if c.Original.Chars == schema.Known(99999) || c.Original.Bytes == schema.Known(99999) || c.Kind == schema.KindSilent {
		t.Errorf("original %+v kind %s: the reported context size was taken for the original", c.Original, c.Kind)
	}
	if c.Context.Bytes != schema.Known(15) {
		t.Errorf("context bytes %v, want the 15 bytes of the text", c.Context.Bytes)
	}
}

// A span whose status says its call failed, with no attribute saying so,
// is stored failed whether the processor holds it for its session's
// analysis or passes it on: both rows read as the exporter reads them.
func TestFailedSpanStaysFailed(t *testing.T) {
	for _, analyse := range []bool{true, false} {
		t.Run(fmt.Sprintf("analyze_sessions=%v", analyse), func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			cfg.SessionIdle = 20 * time.Millisecond
			cfg.AnalyzeSessions = analyse
			sink := new(consumertest.TracesSink)
			p := startedTraces(t, cfg, sink)
			at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
			td := ptrace.NewTraces()
			spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
			shellSpan(spans, "s1", "failed", "command not found\n", at)
			spans.At(0).Status().SetCode(ptrace.StatusCodeError)
			shellSpan(spans, "s1", "fine", "ok\n", at.Add(time.Second))
			if err := p.ConsumeTraces(context.Background(), td); err != nil {
				t.Fatal(err)
			}
			if err := p.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			var r otelconv.Rows
			for _, out := range sink.AllTraces() {
				r.AddTraces(out)
			}
			got := map[string]bool{}
			for _, c := range r.Calls {
				got[c.CallID] = c.IsError
			}
			if want := map[string]bool{"failed": true, "fine": false}; !reflect.DeepEqual(got, want) {
				t.Errorf("is_error by call %v, want %v", got, want)
			}
		})
	}
}

// Detection hears of a failure its span states only by status, too: a
// failed pi read from an offset is pi's error message, not the rest of the
// file, and gets no range or total — held or passed on.
func TestFailedSpanIsDetectedAsFailed(t *testing.T) {
	for _, analyse := range []bool{true, false} {
		t.Run(fmt.Sprintf("analyze_sessions=%v", analyse), func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			cfg.SessionIdle = 20 * time.Millisecond
			cfg.AnalyzeSessions = analyse
			sink := new(consumertest.TracesSink)
			p := startedTraces(t, cfg, sink)
			td := ptrace.NewTraces()
			spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
			shellSpan(spans, "s1", "read-1", "Offset 500 is beyond end of file (42 lines total)", time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
			sp := spans.At(0)
			sp.Status().SetCode(ptrace.StatusCodeError)
			a := sp.Attributes()
			a.PutStr(otelconv.AttrSource, "pi")
			a.PutStr(otelconv.AttrToolName, "read")
			a.PutStr(otelconv.AttrToolCallArguments, `{"path":"/w/f.txt","offset":500}`)
			if err := p.ConsumeTraces(context.Background(), td); err != nil {
				t.Fatal(err)
			}
			if err := p.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			var r otelconv.Rows
			for _, out := range sink.AllTraces() {
				r.AddTraces(out)
			}
			if len(r.Calls) != 1 {
				t.Fatalf("%d calls, want 1", len(r.Calls))
			}
			c := r.Calls[0]
			if !c.IsError || c.PartialByRequest || c.Total.Known || c.Shown.Start.Known {
				t.Errorf("failed read: is_error %v, partial %v, shown %v–%v of %v; want failed, no part of the file", c.IsError, c.PartialByRequest, c.Shown.Start, c.Shown.End, c.Total)
			}
		})
	}
}

// A call span sent without a start time has no place among the session's
// calls: the processor's analysis orders it first by assumption only, so
// the answer that follows a timed call of the same turn may rest on it but
// is not known to — inputs uncertain, "may have been built on". The assumed
// place made it a known input, and its complete output of the same command
// a read of the rest of the cut one before the answer: risk low, "cut at
// first but read in full before the answer".
func TestCallSpanWithoutTimeIsAnUncertainInput(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.SessionIdle = 50 * time.Millisecond
	sink := new(consumertest.TracesSink)
	p := startedTraces(t, cfg, sink)
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	shellSpan(spans, "s1", "u1", "Exit code: 0\nWall time: 0.1 seconds\nOutput:\nok\n", time.Time{})
	spans.At(0).SetStartTimestamp(0)
	spans.At(0).SetEndTimestamp(0)
	shellSpan(spans, "s1", "c1", codexCut, at)
	chatSpan(spans, "s1", "The build passes.", at.Add(time.Second))
	for i := 0; i < spans.Len(); i++ {
		spans.At(i).Attributes().PutInt(otelconv.AttrTurn, 0)
	}
	if err := p.ConsumeTraces(context.Background(), td); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(sink.AllTraces()) < 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	var answers []schema.Answer
	for _, td := range sink.AllTraces() {
		otelconv.EachSpan(td, func(_ pcommon.Map, _ string, sp ptrace.Span) {
			if otelconv.Operation(sp.Attributes()) == otelconv.OperationChat {
				answers = append(answers, otelconv.AnswerFromAttributes(sp.Attributes(), sp.EndTimestamp().AsTime()))
			}
		})
	}
	if len(answers) != 1 {
		t.Fatalf("%d analysed answers, want 1", len(answers))
	}
	a := answers[0]
	if !slices.Equal(a.InputCallIDs, []string{"u1", "c1"}) || !a.InputsUncertain {
		t.Errorf("inputs %v, uncertain %v; want [u1 c1], uncertain: u1 has no time to place it", a.InputCallIDs, a.InputsUncertain)
	}
	want := "Answer at 12:00:01 may have been built on shell_command, which delivered only the start and end of 300 lines with a notice, and the model is not known to have read further."
	if a.Risk != schema.RiskMedium || a.Verdict != want {
		t.Errorf("risk %s, verdict\n%s\nwant medium,\n%s", a.Risk, a.Verdict, want)
	}
}

// A call span without a start time leaves not known the follow-up of only
// the cut calls it could have continued: in s1 it runs the cut call's
// command again (its follow-up is not known), in s2 another command (the cut
// call is known not followed up). What the emitted spans say is what the
// exporter stores.
func TestUntimedSpanLeavesUnknownOnlyTheFollowUpsItCouldBe(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.SessionIdle = 50 * time.Millisecond
	sink := new(consumertest.TracesSink)
	p := startedTraces(t, cfg, sink)
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for _, s := range []struct{ session, cutCmd, untimedCmd string }{
		{"s1", "go test ./...", "go test ./..."},
		{"s2", "go test ./...", "ls /tmp"},
	} {
		shellSpan(spans, s.session, "c-"+s.session, codexCut, at)
		spans.At(spans.Len()-1).Attributes().PutStr(otelconv.AttrToolCallArguments, `{"command":"`+s.cutCmd+`"}`)
		shellSpan(spans, s.session, "u-"+s.session, "Exit code: 0\nWall time: 0.1 seconds\nOutput:\nok\n", time.Time{})
		u := spans.At(spans.Len() - 1)
		u.SetStartTimestamp(0)
		u.SetEndTimestamp(0)
		u.Attributes().PutStr(otelconv.AttrToolCallArguments, `{"command":"`+s.untimedCmd+`"}`)
	}
	if err := p.ConsumeTraces(context.Background(), td); err != nil {
		t.Fatal(err)
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	calls := map[string]schema.ToolCall{}
	for _, td := range sink.AllTraces() {
		otelconv.EachSpan(td, func(res pcommon.Map, _ string, sp ptrace.Span) {
			if otelconv.Operation(sp.Attributes()) == otelconv.OperationExecuteTool {
				c := otelconv.ToolCallFromAttributes(sp.Attributes(), res, sp.StartTimestamp().AsTime())
				calls[c.CallID] = c
			}
		})
	}
	for id, want := range map[string]bool{"c-s1": true, "c-s2": false} {
		c, ok := calls[id]
		switch {
		case !ok:
			t.Errorf("%s not emitted", id)
		case !c.Truncated || c.FollowedUp:
			t.Errorf("%s: truncated %v, followed up %v; want cut, not followed up", id, c.Truncated, c.FollowedUp)
		case c.FollowUpUnknown != want:
			t.Errorf("%s: follow-up unknown %v, want %v", id, c.FollowUpUnknown, want)
		case !c.FollowUpExact:
			// The span says its "not followed up" is known where it is not
			// marked unknown, so a reader need not hedge on it.
			t.Errorf("%s: emitted without %s", id, otelconv.AttrFollowUpExact)
		}
	}
}
