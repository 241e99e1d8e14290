// Package ctxauditprocessor is the ctxaudit processor. For execute_tool spans
// and Claude Code claude_code.tool_result log records that arrive without
// ctxaudit.* figures (agents instrumented with plain GenAI conventions), it
// runs truncation forensics on what the telemetry carries
// (gen_ai.tool.call.result, tool_result_size_bytes, …) and adds the
// ctxaudit.output.* attributes. For traces it also groups tool calls and
// answers by session and, once a session has been idle for session_idle,
// runs session analysis and emits the answers' verdicts, the calls'
// follow-through and the session summary as spans, so OTLP sources get the
// same audit rows as transcripts.
package ctxauditprocessor

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"

	"github.com/ctxaudit/ctxaudit/collector/processor/ctxauditprocessor/internal/metadata"
	"github.com/ctxaudit/ctxaudit/schema"
)

// NewFactory returns the processor factory.
func NewFactory() processor.Factory {
	return processor.NewFactory(metadata.Type, createDefaultConfig,
		processor.WithTraces(createTraces, metadata.TracesStability),
		processor.WithLogs(createLogs, metadata.LogsStability),
	)
}

func createDefaultConfig() component.Config {
	return &Config{
		DefaultSource:      string(schema.HarnessGeneric),
		AnalyzeSessions:    true,
		SessionIdle:        30 * time.Second,
		MaxHold:            5 * time.Minute,
		MaxSessions:        1000,
		MaxCallsPerSession: 10000,
		MaxWaitingCalls:    20000,
		MaxParkedCalls:     1000000,
	}
}

func createTraces(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
	p, err := newTracesProcessor(set, cfg.(*Config), next)
	if err != nil {
		return nil, err
	}
	return processorhelper.NewTraces(ctx, set, cfg, next, p.processTraces,
		processorhelper.WithStart(p.start), processorhelper.WithShutdown(p.shutdown),
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}))
}

func createLogs(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Logs) (processor.Logs, error) {
	p, err := newLogsProcessor(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	return processorhelper.NewLogs(ctx, set, cfg, next, p.processLogs,
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}))
}
