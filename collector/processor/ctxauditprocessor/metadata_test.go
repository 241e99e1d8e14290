package ctxauditprocessor

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/ctxaudit/ctxaudit/internal/componentmeta"
)

// metadata.yaml is the source of truth for the processor's type, stability
// and self-telemetry: the factory and the instruments it creates must agree.
func TestMetadataYAML(t *testing.T) {
	md, err := componentmeta.Load("metadata.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f := NewFactory()
	if err := componentmeta.CheckFactory(md, f); err != nil {
		t.Fatal(err)
	}
	rec := &componentmeta.Recorder{}
	set := processortest.NewNopSettings(f.Type())
	set.MeterProvider = rec
	ctx := context.Background()
	if _, err := f.CreateTraces(ctx, set, f.CreateDefaultConfig(), consumertest.NewNop()); err != nil {
		t.Fatal(err)
	}
	if _, err := f.CreateLogs(ctx, set, f.CreateDefaultConfig(), consumertest.NewNop()); err != nil {
		t.Fatal(err)
	}
	// The instrumentation scope is the package's import path, as mdatagen's.
	if err := componentmeta.CheckMetrics(md, rec.Instruments("github.com/ctxaudit/ctxaudit/collector/processor/ctxauditprocessor")); err != nil {
		t.Fatal(err)
	}
}
