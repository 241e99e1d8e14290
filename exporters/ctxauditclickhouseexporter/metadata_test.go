package ctxauditclickhouseexporter

import (
	"context"
	"os"
	"testing"

	"go.opentelemetry.io/collector/confmap"

	"go.opentelemetry.io/collector/exporter/exportertest"

	"github.com/ctxaudit/ctxaudit/internal/componentmeta"
)

// metadata.yaml is the source of truth for the exporter's type, stability
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
	set := exportertest.NewNopSettings(f.Type())
	set.MeterProvider = rec
	ctx := context.Background()
	if _, err := f.CreateTraces(ctx, set, f.CreateDefaultConfig()); err != nil {
		t.Fatal(err)
	}
	if _, err := f.CreateLogs(ctx, set, f.CreateDefaultConfig()); err != nil {
		t.Fatal(err)
	}
	// The instrumentation scope is the package's import path, as mdatagen's.
	if err := componentmeta.CheckMetrics(md, rec.Instruments("github.com/ctxaudit/ctxaudit/exporters/ctxauditclickhouseexporter")); err != nil {
		t.Fatal(err)
	}
}

// The README's example configures the component validly.
func TestReadmeExample(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	conf, err := componentmeta.ExampleConfig(readme, "exporter", "ctxaudit_clickhouse")
	if err != nil {
		t.Fatal(err)
	}
	cfg := NewFactory().CreateDefaultConfig()
	if err := conf.Unmarshal(cfg); err != nil {
		t.Fatal(err)
	}
	if err := confmap.Validate(cfg); err != nil {
		t.Fatal(err)
	}
}
