package ctxauditprocessor

import (
	"context"

	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/ctxaudit/ctxaudit/schema"
)

// telemetry is the processor's self-observability, through the component's
// own MeterProvider so it appears on the collector's metrics endpoint.
type telemetry struct {
	toolCalls        metric.Int64Counter
	sessionsAnalysed metric.Int64Counter
	sessionsEvicted  metric.Int64Counter
	sessionsHeld     metric.Int64UpDownCounter
	redactions       metric.Int64Counter
}

func newTelemetry(set processor.Settings) (*telemetry, error) {
	m := set.MeterProvider.Meter("github.com/ctxaudit/ctxaudit/collector/processor/ctxauditprocessor")
	var t telemetry
	var err error
	if t.toolCalls, err = m.Int64Counter("ctxaudit_processor_tool_calls",
		metric.WithDescription("Tool results run through truncation forensics, by truncation kind"), metric.WithUnit("{call}")); err != nil {
		return nil, err
	}
	if t.sessionsAnalysed, err = m.Int64Counter("ctxaudit_processor_sessions_analysed",
		metric.WithDescription("Session analyses run (a session is re-analysed when it grows)"), metric.WithUnit("{session}")); err != nil {
		return nil, err
	}
	if t.sessionsEvicted, err = m.Int64Counter("ctxaudit_processor_sessions_evicted",
		metric.WithDescription("Sessions analysed early and dropped because max_sessions or max_calls_per_session was reached"), metric.WithUnit("{session}")); err != nil {
		return nil, err
	}
	if t.sessionsHeld, err = m.Int64UpDownCounter("ctxaudit_processor_sessions_held",
		metric.WithDescription("Sessions currently buffered for analysis"), metric.WithUnit("{session}")); err != nil {
		return nil, err
	}
	if t.redactions, err = m.Int64Counter("ctxaudit_processor_redactions",
		metric.WithDescription("Secrets replaced in span and log strings before they were passed on"), metric.WithUnit("{secret}")); err != nil {
		return nil, err
	}
	return &t, nil
}

func (t *telemetry) recordRedactions(ctx context.Context, n int) {
	if n > 0 {
		t.redactions.Add(ctx, int64(n))
	}
}

func (t *telemetry) recordCall(ctx context.Context, kind schema.TruncationKind) {
	t.toolCalls.Add(ctx, 1, metric.WithAttributes(attribute.String("truncation_kind", string(kind))))
}
