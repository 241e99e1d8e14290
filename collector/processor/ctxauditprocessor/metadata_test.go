package ctxauditprocessor

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/metric"

	"github.com/ctxaudit/ctxaudit/internal/componentmeta"
)

// metadata.yaml is the source of truth for the processor's type, stability
// and self-telemetry: the factory and the instruments it creates must agree.
func TestMetadataYAML(t *testing.T) {
	f := NewFactory()
	err := componentmeta.CheckComponent(".", f, "github.com/ctxaudit/ctxaudit/collector/processor/ctxauditprocessor", func(mp metric.MeterProvider) error {
		set := processortest.NewNopSettings(f.Type())
		set.MeterProvider = mp
		ctx := context.Background()
		_, errTraces := f.CreateTraces(ctx, set, f.CreateDefaultConfig(), consumertest.NewNop())
		_, errLogs := f.CreateLogs(ctx, set, f.CreateDefaultConfig(), consumertest.NewNop())
		return errors.Join(errTraces, errLogs)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The README's example configures the component validly.
func TestReadmeExample(t *testing.T) {
	if err := componentmeta.CheckReadmeExample(".", "processor", "ctxaudit", NewFactory().CreateDefaultConfig()); err != nil {
		t.Fatal(err)
	}
}
