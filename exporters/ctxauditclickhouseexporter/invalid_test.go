package ctxauditclickhouseexporter

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ctxaudit/ctxaudit/collector/forensics"
	"github.com/ctxaudit/ctxaudit/collector/otelconv"
	"github.com/ctxaudit/ctxaudit/exporters/ctxauditclickhouseexporter/internal/metadata"
	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/schema"
)

// TestValueATableCannotHoldLosesNothingElse: a sender's span may carry a
// value no Enum8 column holds. ClickHouse refuses the whole INSERT for one
// such value, which lost every row pushed with it; now a call's unknown
// verdict is read as unknown and stored, an answer's unknown risk or a
// call's time out of range leaves that row out, counted, and everything
// else is written.
func TestValueATableCannotHoldLosesNothingElse(t *testing.T) {
	addr := chtest.Address(t)
	tel := componenttest.NewTelemetry()
	defer func() { _ = tel.Shutdown(context.Background()) }()
	set := exportertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	cfg := createDefaultConfig().(*Config)
	cfg.Endpoint = addr
	// The push's own result: no queue to hide it, no retries to wait on.
	cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
	cfg.BackOffConfig.Enabled = false
	ctx := context.Background()
	te, err := NewFactory().CreateTraces(ctx, set, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := te.Start(ctx, componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}

	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for _, id := range []string{"good", "odd"} {
		c := schema.ToolCall{SessionID: "enum-1", CallID: id, Tool: "Read", Timestamp: at,
			Forensics: schema.Forensics{Kind: schema.KindExplicit, Strategy: schema.StrategyHead, Truncated: true,
				Original: schema.Original{Sizes: schema.Sizes{Bytes: schema.Known(9000)}, Source: schema.SourceMarker, Precision: schema.PrecisionExact}}}
		otelconv.AppendToolCall(spans, &c)
	}
	odd := spans.At(1).Attributes()
	odd.PutStr(forensics.AttrTruncationKind, "cut")
	odd.PutInt(forensics.AttrStrategy, 3)
	odd.PutStr(otelconv.AttrOriginalSource, "guess")
	odd.PutStr(forensics.AttrOriginalPrecision, "roughly")
	// A time no DateTime holds: the driver would store 2300 as 2027.
	late := schema.ToolCall{SessionID: "enum-1", CallID: "late", Tool: "Read", Timestamp: time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)}
	otelconv.AppendToolCall(spans, &late)
	for _, risk := range []schema.Risk{schema.RiskHigh, "severe"} {
		a := schema.Answer{SessionID: "enum-1", MessageID: "m-" + string(risk), Timestamp: at, Text: "there is no x", Risk: risk}
		otelconv.AppendAnswer(spans, &a)
	}
	if err := te.ConsumeTraces(ctx, td); err != nil {
		t.Fatalf("push: %v; the rows that can be written must be, and the push succeed", err)
	}
	if err := te.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	s := chtest.OpenStore(t, addr)
	calls, err := s.ToolCalls(ctx, "enum-1")
	if err != nil || len(calls) != 2 {
		t.Fatalf("tool calls %+v, %v; want good and odd", calls, err)
	}
	type verdict struct {
		kind      schema.TruncationKind
		strategy  schema.Strategy
		source    schema.OriginalSource
		precision schema.Precision
	}
	for _, c := range calls {
		want := verdict{schema.KindExplicit, schema.StrategyHead, schema.SourceMarker, schema.PrecisionExact}
		if c.CallID == "odd" {
			// What the span states that ctxaudit does not know is stored as
			// not known; the rest of the verdict as the span states it.
			want = verdict{schema.KindUnknown, schema.StrategyNone, schema.SourceUnknown, schema.PrecisionNone}
		}
		got := verdict{c.Kind, c.Strategy, c.Original.Source, c.Original.Precision}
		if got != want || !c.Truncated || c.Original.Bytes != schema.Known(9000) {
			t.Errorf("call %s stored as %+v, truncated %v, original bytes %+v; want %+v, true, 9000",
				c.CallID, got, c.Truncated, c.Original.Bytes, want)
		}
	}
	answers, err := s.Answers(ctx, "enum-1")
	if err != nil || len(answers) != 1 || answers[0].Risk != schema.RiskHigh {
		t.Fatalf("answers %+v, %v; want only the one whose risk is known", answers, err)
	}
	m, err := tel.GetMetric("ctxaudit_exporter_records_dropped")
	if err != nil {
		t.Fatal(err)
	}
	if n := m.Data.(metricdata.Sum[int64]).DataPoints[0].Value; n != 2 {
		t.Errorf("records dropped = %d, want 2 (the call of 2300, the answer with risk %q)", n, "severe")
	}
}
