// Package metadata holds the agenttranscripts receiver's identity and its
// self-telemetry. generated_*.go are rendered from metadata.yaml by `make
// generate`; this file adds the attributes each measurement carries.
package metadata

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// The receiver's type, scope and stability are generated from metadata.yaml
// (generated_status.go); ScopeName there is otelconv.ScopeTranscriptReceiver,
// which the ctxaudit processor recognises.

// Metric names, as metadata.yaml declares them.
const (
	MetricLinesRead       = "ctxaudit_receiver_lines_read"
	MetricLinesSkipped    = "ctxaudit_receiver_lines_skipped"
	MetricToolCalls       = "ctxaudit_receiver_tool_calls"
	MetricSessionsEvicted = "ctxaudit_receiver_sessions_evicted"
	MetricSessionsHeld    = "ctxaudit_receiver_sessions_held"
	MetricFilesReset      = "ctxaudit_receiver_files_reset"
	MetricSavedRefused    = "ctxaudit_receiver_saved_outputs_refused"
)

// Telemetry records the receiver's self-observability through the
// instruments of the generated TelemetryBuilder, with their attributes.
type Telemetry struct{ b *TelemetryBuilder }

// NewTelemetry creates the instruments from the component's MeterProvider.
func NewTelemetry(set component.TelemetrySettings) (*Telemetry, error) {
	b, err := NewTelemetryBuilder(set)
	if err != nil {
		return nil, err
	}
	return &Telemetry{b: b}, nil
}

// LinesRead counts n lines read from a file of the given format.
func (t *Telemetry) LinesRead(ctx context.Context, n int64, format string) {
	if n > 0 {
		t.b.CtxauditReceiverLinesRead.Add(ctx, n, metric.WithAttributes(attribute.String("source", format)))
	}
}

// LineSkipped counts a skipped line.
func (t *Telemetry) LineSkipped(ctx context.Context, reason string) {
	t.b.CtxauditReceiverLinesSkipped.Add(ctx, 1, metric.WithAttributes(attribute.String("reason", reason)))
}

// ToolCall counts a tool call.
func (t *Telemetry) ToolCall(ctx context.Context, kind, format string) {
	t.b.CtxauditReceiverToolCalls.Add(ctx, 1, metric.WithAttributes(
		attribute.String("truncation_kind", kind), attribute.String("source", format)))
}

// SessionEvicted counts an eviction.
func (t *Telemetry) SessionEvicted(ctx context.Context) {
	t.b.CtxauditReceiverSessionsEvicted.Add(ctx, 1)
}

// SessionsHeld moves the held-sessions gauge by delta.
func (t *Telemetry) SessionsHeld(ctx context.Context, delta int64) {
	if delta != 0 {
		t.b.CtxauditReceiverSessionsHeld.Add(ctx, delta)
	}
}

// FileReset counts a file read again from the start.
func (t *Telemetry) FileReset(ctx context.Context, reason string) {
	t.b.CtxauditReceiverFilesReset.Add(ctx, 1, metric.WithAttributes(attribute.String("reason", reason)))
}

// SavedRefused counts a saved output that was not read.
func (t *Telemetry) SavedRefused(ctx context.Context, reason string) {
	t.b.CtxauditReceiverSavedOutputsRefused.Add(ctx, 1, metric.WithAttributes(attribute.String("reason", reason)))
}
