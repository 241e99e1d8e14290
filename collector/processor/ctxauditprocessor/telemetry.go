package ctxauditprocessor

import (
	"context"

	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/ctxaudit/ctxaudit/collector/processor/ctxauditprocessor/internal/metadata"
	"github.com/ctxaudit/ctxaudit/schema"
)

// telemetry is the processor's self-observability, through the component's
// own MeterProvider so it appears on the collector's metrics endpoint. The
// instruments are metadata.yaml's, created by the generated TelemetryBuilder.
type telemetry struct {
	toolCalls        metric.Int64Counter
	sessionsAnalysed metric.Int64Counter
	sessionsEvicted  metric.Int64Counter
	sessionsResumed  metric.Int64Counter
	callsParked      metric.Int64UpDownCounter
	sessionsHeld     metric.Int64UpDownCounter
	callsWaiting     metric.Int64UpDownCounter
	requestsRefused  metric.Int64Counter
	redactions       metric.Int64Counter
}

func newTelemetry(set processor.Settings) (*telemetry, error) {
	b, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	return &telemetry{
		toolCalls:        b.CtxauditProcessorToolCalls,
		sessionsAnalysed: b.CtxauditProcessorSessionsAnalysed,
		sessionsEvicted:  b.CtxauditProcessorSessionsEvicted,
		sessionsResumed:  b.CtxauditProcessorSessionsResumed,
		callsParked:      b.CtxauditProcessorCallsParked,
		sessionsHeld:     b.CtxauditProcessorSessionsHeld,
		callsWaiting:     b.CtxauditProcessorCallsWaiting,
		requestsRefused:  b.CtxauditProcessorRequestsRefused,
		redactions:       b.CtxauditProcessorRedactions,
	}, nil
}

func (t *telemetry) recordRedactions(ctx context.Context, n int) {
	if n > 0 {
		t.redactions.Add(ctx, int64(n))
	}
}

// callTally counts one request's tool calls by truncation kind, so the
// counter is added to once per kind and request rather than once per call:
// building the attribute set of each Add was 1.6% of the collector's CPU
// under load (docs/performance.md).
type callTally map[schema.TruncationKind]int64

func (c *callTally) add(kind schema.TruncationKind) {
	if *c == nil {
		*c = make(callTally, 2)
	}
	(*c)[kind]++
}

func (t *telemetry) recordCalls(ctx context.Context, calls callTally) {
	for kind, n := range calls {
		t.toolCalls.Add(ctx, n, metric.WithAttributes(attribute.String("truncation_kind", string(kind))))
	}
}
