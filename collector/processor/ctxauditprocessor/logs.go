package ctxauditprocessor

import (
	"context"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor"

	"github.com/ctxaudit/ctxaudit/collector/otelconv"
	"github.com/ctxaudit/ctxaudit/collector/redact"
	"github.com/ctxaudit/ctxaudit/schema"
)

// logsProcessor adds forensics to Claude Code claude_code.tool_result events
// (and any log record marked as an execute_tool operation).
type logsProcessor struct {
	defaultSource schema.Harness
	tel           *telemetry
	secret        *redact.Redactor
}

func newLogsProcessor(set processor.Settings, cfg *Config) (*logsProcessor, error) {
	tel, err := newTelemetry(set)
	if err != nil {
		return nil, err
	}
	secret, err := cfg.Redact.Redactor()
	if err != nil {
		return nil, err
	}
	return &logsProcessor{defaultSource: schema.Harness(cfg.DefaultSource), tel: tel, secret: secret}, nil
}

func (p *logsProcessor) processLogs(ctx context.Context, ld plog.Logs) (plog.Logs, error) {
	var calls callTally
	otelconv.EachLogRecord(ld, func(res pcommon.Map, lr plog.LogRecord) {
		if !otelconv.IsToolResultLog(lr) || otelconv.HasForensics(lr.Attributes()) {
			return
		}
		harness := p.defaultSource
		if otelconv.IsClaudeCodeToolResult(lr) {
			harness = schema.HarnessClaudeCode
		}
		// Claude Code puts session.id on the resource or the record; copy it
		// where the exporter looks first.
		if _, ok := lr.Attributes().Get(otelconv.ClaudeCodeSessionID); !ok {
			if v, ok := res.Get(otelconv.ClaudeCodeSessionID); ok {
				lr.Attributes().PutStr(otelconv.ClaudeCodeSessionID, v.AsString())
			}
		}
		if f, ok := otelconv.ClaudeCodeEventForensics(lr.Attributes()); ok && harness == schema.HarnessClaudeCode {
			// Sizes only, no text: nothing for detection to read.
			otelconv.PutForensics(lr.Attributes(), &f)
			lr.Attributes().PutStr(otelconv.AttrSource, string(harness))
			calls.add(f.Kind)
			return
		}
		f := detectInto(lr.Attributes(), harness)
		calls.add(f.Kind)
	})
	p.tel.recordCalls(ctx, calls)
	p.redactSecrets(ctx, ld)
	return ld, nil
}

// redactSecrets removes secrets from every string of ld once forensics has
// measured the originals, so no secret reaches a downstream queue.
func (p *logsProcessor) redactSecrets(ctx context.Context, ld plog.Logs) {
	p.tel.recordRedactions(ctx, p.secret.Logs(ld))
}
