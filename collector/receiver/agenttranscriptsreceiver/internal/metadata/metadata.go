// Package metadata holds the agenttranscripts receiver's identity and its
// self-telemetry instruments. It is written by hand: the receiver's
// metadata.yaml is the source of truth, and TestMetadataYAML checks that the
// type, stability and instruments here agree with it.
package metadata

import (
	"context"
	"errors"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/ctxaudit/ctxaudit/collector/otelconv"
)

// Type is the receiver's component type.
var Type = component.MustNewType("agenttranscripts")

// ScopeName is the instrumentation scope of the receiver's spans and
// metrics. The ctxaudit processor recognises it: spans of this scope are
// analysed already and pass through its session buffer untouched.
const ScopeName = otelconv.ScopeTranscriptReceiver

// TracesStability is the stability of the traces signal.
const TracesStability = component.StabilityLevelAlpha

// Metric names.
const (
	MetricLinesRead       = "ctxaudit_receiver_lines_read"
	MetricLinesSkipped    = "ctxaudit_receiver_lines_skipped"
	MetricToolCalls       = "ctxaudit_receiver_tool_calls"
	MetricSessionsEvicted = "ctxaudit_receiver_sessions_evicted"
	MetricSessionsHeld    = "ctxaudit_receiver_sessions_held"
	MetricFilesReset      = "ctxaudit_receiver_files_reset"
	MetricSavedRefused    = "ctxaudit_receiver_saved_outputs_refused"
)

// Telemetry is the receiver's self-observability, recorded through the
// component's own MeterProvider.
type Telemetry struct {
	linesRead       metric.Int64Counter
	linesSkipped    metric.Int64Counter
	toolCalls       metric.Int64Counter
	sessionsEvicted metric.Int64Counter
	sessionsHeld    metric.Int64UpDownCounter
	filesReset      metric.Int64Counter
	savedRefused    metric.Int64Counter
}

// NewTelemetry creates the instruments.
func NewTelemetry(set component.TelemetrySettings) (*Telemetry, error) {
	m := set.MeterProvider.Meter(ScopeName)
	var t Telemetry
	var err, errs error
	t.linesRead, err = m.Int64Counter(MetricLinesRead,
		metric.WithDescription("Transcript lines read for the first time (re-reads after a restart are not counted), by source format"),
		metric.WithUnit("{line}"))
	errs = errors.Join(errs, err)
	t.linesSkipped, err = m.Int64Counter(MetricLinesSkipped,
		metric.WithDescription("Lines (or calls) that could not be used, by reason: malformed_json, line_too_long, bad_record, orphan_tool_result, unpaired_tool_use"),
		metric.WithUnit("{line}"))
	errs = errors.Join(errs, err)
	t.toolCalls, err = m.Int64Counter(MetricToolCalls,
		metric.WithDescription("Tool calls read, by truncation kind and source format"),
		metric.WithUnit("{call}"))
	errs = errors.Join(errs, err)
	t.sessionsEvicted, err = m.Int64Counter(MetricSessionsEvicted,
		metric.WithDescription("Sessions dropped from memory because max_sessions was reached; they are rebuilt from their files when they grow"),
		metric.WithUnit("{session}"))
	errs = errors.Join(errs, err)
	t.sessionsHeld, err = m.Int64UpDownCounter(MetricSessionsHeld,
		metric.WithDescription("Sessions held in memory for analysis"),
		metric.WithUnit("{session}"))
	errs = errors.Join(errs, err)
	t.filesReset, err = m.Int64Counter(MetricFilesReset,
		metric.WithDescription("Files read again from the start because they were truncated or replaced"),
		metric.WithUnit("{file}"))
	errs = errors.Join(errs, err)
	t.savedRefused, err = m.Int64Counter(MetricSavedRefused,
		metric.WithDescription("Saved tool outputs a notice pointed to that were not read, by reason: not_tool_results, symlink, not_regular_file, too_large"),
		metric.WithUnit("{file}"))
	errs = errors.Join(errs, err)
	if errs != nil {
		return nil, errs
	}
	return &t, nil
}

// LinesRead counts n lines read from a file of the given format.
func (t *Telemetry) LinesRead(ctx context.Context, n int64, format string) {
	if n > 0 {
		t.linesRead.Add(ctx, n, metric.WithAttributes(attribute.String("source", format)))
	}
}

// LineSkipped counts a skipped line.
func (t *Telemetry) LineSkipped(ctx context.Context, reason string) {
	t.linesSkipped.Add(ctx, 1, metric.WithAttributes(attribute.String("reason", reason)))
}

// ToolCall counts a tool call.
func (t *Telemetry) ToolCall(ctx context.Context, kind, format string) {
	t.toolCalls.Add(ctx, 1, metric.WithAttributes(
		attribute.String("truncation_kind", kind), attribute.String("source", format)))
}

// SessionEvicted counts an eviction.
func (t *Telemetry) SessionEvicted(ctx context.Context) { t.sessionsEvicted.Add(ctx, 1) }

// SessionsHeld moves the held-sessions gauge by delta.
func (t *Telemetry) SessionsHeld(ctx context.Context, delta int64) {
	if delta != 0 {
		t.sessionsHeld.Add(ctx, delta)
	}
}

// FileReset counts a file read again from the start.
func (t *Telemetry) FileReset(ctx context.Context, reason string) {
	t.filesReset.Add(ctx, 1, metric.WithAttributes(attribute.String("reason", reason)))
}

// SavedRefused counts a saved output that was not read.
func (t *Telemetry) SavedRefused(ctx context.Context, reason string) {
	t.savedRefused.Add(ctx, 1, metric.WithAttributes(attribute.String("reason", reason)))
}
