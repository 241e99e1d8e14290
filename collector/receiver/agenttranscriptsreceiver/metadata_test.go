package agenttranscriptsreceiver

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/metric"

	"github.com/ctxaudit/ctxaudit/internal/componentmeta"
)

// metadata.yaml is the source of truth for the receiver's type, stability
// and self-telemetry: the factory and the instruments it creates must agree.
func TestMetadataYAML(t *testing.T) {
	f := NewFactory()
	err := componentmeta.CheckComponent(".", f, "github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver", func(mp metric.MeterProvider) error {
		set := receivertest.NewNopSettings(f.Type())
		set.MeterProvider = mp
		_, err := f.CreateTraces(context.Background(), set, f.CreateDefaultConfig(), consumertest.NewNop())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The README's example configures the component validly.
func TestReadmeExample(t *testing.T) {
	if err := componentmeta.CheckReadmeExample(".", "receiver", "agenttranscripts", NewFactory().CreateDefaultConfig()); err != nil {
		t.Fatal(err)
	}
}
