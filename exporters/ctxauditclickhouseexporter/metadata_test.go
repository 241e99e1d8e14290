package ctxauditclickhouseexporter

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/otel/metric"

	"github.com/ctxaudit/ctxaudit/internal/componentmeta"
)

// metadata.yaml is the source of truth for the exporter's type, stability
// and self-telemetry: the factory and the instruments it creates must agree.
func TestMetadataYAML(t *testing.T) {
	f := NewFactory()
	err := componentmeta.CheckComponent(".", f, "github.com/ctxaudit/ctxaudit/exporters/ctxauditclickhouseexporter", func(mp metric.MeterProvider) error {
		set := exportertest.NewNopSettings(f.Type())
		set.MeterProvider = mp
		ctx := context.Background()
		_, errTraces := f.CreateTraces(ctx, set, f.CreateDefaultConfig())
		_, errLogs := f.CreateLogs(ctx, set, f.CreateDefaultConfig())
		return errors.Join(errTraces, errLogs)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The README's example configures the component validly.
func TestReadmeExample(t *testing.T) {
	if err := componentmeta.CheckReadmeExample(".", "exporter", "ctxaudit_clickhouse", NewFactory().CreateDefaultConfig()); err != nil {
		t.Fatal(err)
	}
}
