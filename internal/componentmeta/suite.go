package componentmeta

import (
	"fmt"
	"os"
	"path/filepath"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/otel/metric"
)

// CheckComponent checks a component package against its metadata.yaml (in
// dir): the factory's type and stability, and the instruments create makes
// when given a recording meter provider. Instruments are looked up under the
// scope scope, the package's import path as mdatagen uses it.
//
// create builds every signal of the component with settings whose
// MeterProvider is mp; the settings type differs per component class, so the
// caller supplies it (receivertest, processortest, exportertest).
func CheckComponent(dir string, f component.Factory, scope string, create func(mp metric.MeterProvider) error) error {
	md, err := Load(filepath.Join(dir, "metadata.yaml"))
	if err != nil {
		return err
	}
	if err := CheckFactory(md, f); err != nil {
		return err
	}
	rec := &Recorder{}
	if err := create(rec); err != nil {
		return fmt.Errorf("creating the component: %w", err)
	}
	return CheckMetrics(md, rec.Instruments(scope))
}

// CheckReadmeExample loads the configuration that the first YAML example of
// dir/README.md gives the component `id` of `class` into cfg (the factory's
// default config) and validates it, so a README never shows a configuration
// the component refuses.
func CheckReadmeExample(dir, class, id string, cfg component.Config) error {
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		return err
	}
	conf, err := ExampleConfig(readme, class, id)
	if err != nil {
		return fmt.Errorf("README.md: %w", err)
	}
	if err := conf.Unmarshal(cfg); err != nil {
		return fmt.Errorf("README.md example: %w", err)
	}
	if err := confmap.Validate(cfg); err != nil {
		return fmt.Errorf("README.md example: %w", err)
	}
	return nil
}
