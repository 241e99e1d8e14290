package ctxauditprocessor

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processorhelper"
)

func pcommonTS(t time.Time) pcommon.Timestamp { return pcommon.NewTimestampFromTime(t) }

// process runs p.processTraces as processorhelper does: a request the
// processor holds entirely is answered with nothing passed on (empty
// traces, no error).
func process(ctx context.Context, p *tracesProcessor, td ptrace.Traces) (ptrace.Traces, error) {
	out, err := p.processTraces(ctx, td)
	if errors.Is(err, processorhelper.ErrSkipProcessingData) {
		return ptrace.NewTraces(), nil
	}
	return out, err
}

func ptr[T any](v T) *T { return &v }
