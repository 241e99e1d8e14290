package ctxauditprocessor

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/ctxaudit/ctxaudit/collector/forensics"
	"github.com/ctxaudit/ctxaudit/collector/otelconv"
	"github.com/ctxaudit/ctxaudit/collector/processor/ctxauditprocessor/internal/metadata"
	"github.com/ctxaudit/ctxaudit/collector/redact"
	"github.com/ctxaudit/ctxaudit/collector/redact/redacttest"
)

// corpusText is every secret of the corpus, one per line.
func corpusText() string {
	var b strings.Builder
	for _, s := range redacttest.Corpus() {
		b.WriteString(s.Text + "\n")
	}
	return b.String()
}

// TestTracesRedacted: no secret of the corpus leaves the processor — not in
// the passed-through spans (arguments, result, answer text) nor in the
// session analysis it emits — while forensics measured the original result.
func TestTracesRedacted(t *testing.T) {
	for _, forward := range []bool{false, true} {
		t.Run(fmt.Sprintf("forward_held_spans=%v", forward), func(t *testing.T) { testTracesRedacted(t, forward) })
	}
}

func testTracesRedacted(t *testing.T, forward bool) {
	// Batches: the session's analysis, after the pass-through when held
	// spans are forwarded.
	batches, wantPassed := 1, 0
	if forward {
		batches, wantPassed = 2, 1
	}
	cfg := createDefaultConfig().(*Config)
	cfg.ForwardHeldSpans = forward
	cfg.SessionIdle = 20 * time.Millisecond
	cfg.Redact.Patterns = []redact.Pattern{{Name: "acme", Regex: `acme_[a-z0-9]{12}`}}
	sink := new(consumertest.TracesSink)
	p := startedTraces(t, cfg, sink)
	secrets := corpusText() + "internal acme_0123456789ab\n"
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	shellSpan(spans, "s1", "c1", secrets, at)
	spans.At(0).Attributes().PutStr(otelconv.AttrToolCallArguments, `{"command":`+quote(secrets)+`}`)
	spans.At(0).Attributes().PutStr(otelconv.AttrTarget, secrets)
	chatSpan(spans, "s1", "done", at.Add(time.Second))
	spans.At(1).Attributes().PutStr(otelconv.AttrAnswerText, "I used "+strings.ReplaceAll(secrets, "\n", " "))
	if err := p.ConsumeTraces(context.Background(), td); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(sink.AllTraces()) < batches && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(sink.AllTraces()) < batches {
		t.Fatalf("%d batches emitted; want %d", len(sink.AllTraces()), batches)
	}
	for i, out := range sink.AllTraces() {
		text := dumpTraces(out)
		if leaks := redacttest.Leaks(text); len(leaks) > 0 {
			t.Errorf("batch %d leaks %v", i, leaks)
		}
		if strings.Contains(text, "acme_0123456789ab") {
			t.Errorf("batch %d leaks the configured pattern's secret", i)
		}
	}
	// Sizes are of the original, not the redacted text: on the pass-through
	// span and on the analysed call alike (either batch may come first).
	passed, analysed := 0, 0
	for _, out := range sink.AllTraces() {
		otelconv.EachSpan(out, func(_ pcommon.Map, _ string, sp ptrace.Span) {
			if otelconv.Operation(sp.Attributes()) != otelconv.OperationExecuteTool {
				return
			}
			if otelconv.AnalysisPending(sp.Attributes()) {
				passed++
			} else {
				analysed++
			}
			bytes, _ := sp.Attributes().Get(forensics.AttrOriginalBytes)
			if bytes.Int() != int64(len(secrets)) {
				t.Errorf("original bytes %d, want %d (measured before redaction)", bytes.Int(), len(secrets))
			}
		})
	}
	// (The session may be analysed twice, if the processor's tick falls
	// between the call and the answer.)
	if passed != wantPassed || analysed == 0 {
		t.Errorf("%d pass-through and %d analysed execute_tool spans; want %d and at least 1", passed, analysed, wantPassed)
	}
}

func TestLogsRedacted(t *testing.T) {
	sink := new(consumertest.LogsSink)
	p, err := NewFactory().CreateLogs(context.Background(), processortest.NewNopSettings(metadata.Type), createDefaultConfig(), sink)
	if err != nil {
		t.Fatal(err)
	}
	ld := plog.NewLogs()
	lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.Body().SetStr(corpusText())
	lr.Attributes().PutStr("event.name", "claude_code.tool_result")
	lr.Attributes().PutStr("tool_parameters", corpusText())
	if err := p.ConsumeLogs(context.Background(), ld); err != nil {
		t.Fatal(err)
	}
	out := sink.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	text := out.Body().AsString()
	for _, v := range out.Attributes().All() {
		text += "\n" + v.AsString()
	}
	if leaks := redacttest.Leaks(text); len(leaks) > 0 {
		t.Fatalf("log record leaks %v", leaks)
	}
}

func quote(s string) string {
	return `"` + strings.NewReplacer("\\", "\\\\", "\"", "\\\"", "\n", "\\n").Replace(s) + `"`
}

func dumpTraces(td ptrace.Traces) string {
	var b strings.Builder
	otelconv.EachSpan(td, func(_ pcommon.Map, _ string, sp ptrace.Span) {
		b.WriteString(sp.Name() + "\n")
		for k, v := range sp.Attributes().All() {
			b.WriteString(k + "=" + v.AsString() + "\n")
		}
	})
	return b.String()
}
