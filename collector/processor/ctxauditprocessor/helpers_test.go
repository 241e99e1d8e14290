package ctxauditprocessor

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/ctxaudit/ctxaudit/collector/processor/ctxauditprocessor/internal/metadata"
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

// startedTraces is the traces processor with cfg, passing on to next,
// started with a no-op host.
func startedTraces(t *testing.T, cfg *Config, next consumer.Traces) processor.Traces {
	t.Helper()
	p, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, next)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	return p
}
