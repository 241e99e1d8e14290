// Package componentmeta reads a collector component's metadata.yaml (the
// format of the collector's mdatagen tool), checks that the component agrees
// with it, and renders the documentation generated from it. metadata.yaml is
// the source of truth for a component's type, stability and self-telemetry;
// the tests of each component compare its factory and the instruments it
// registers against the file, and `make generate` renders its README status
// table and documentation.md.
package componentmeta

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sort"

	"go.opentelemetry.io/collector/component"
	"go.yaml.in/yaml/v3"
)

// Metadata is the part of mdatagen's metadata.yaml schema ctxaudit uses.
type Metadata struct {
	Type        string               `yaml:"type"`
	DisplayName string               `yaml:"display_name"`
	Description string               `yaml:"description"`
	Status      Status               `yaml:"status"`
	Attributes  map[string]Attribute `yaml:"attributes"`
	Telemetry   struct {
		Metrics map[string]Metric `yaml:"metrics"`
	} `yaml:"telemetry"`
	Tests Tests `yaml:"tests"`
}

// Tests configures the generated lifecycle tests, as mdatagen's `tests` key.
type Tests struct {
	// SkipLifecycle leaves out the start of each signal, for a component
	// that cannot start without what a unit test does not have (a server).
	SkipLifecycle bool `yaml:"skip_lifecycle"`
}

// Status is the component's class, stability per signal and distributions.
type Status struct {
	Class         string              `yaml:"class"`
	Stability     map[string][]string `yaml:"stability"`
	Distributions []string            `yaml:"distributions"`
}

// Attribute is a metric attribute.
type Attribute struct {
	Description string `yaml:"description"`
	Type        string `yaml:"type"`
}

// Metric is one self-telemetry metric.
type Metric struct {
	Enabled     bool       `yaml:"enabled"`
	Description string     `yaml:"description"`
	Unit        string     `yaml:"unit"`
	Sum         *Sum       `yaml:"sum"`
	Gauge       *ValueType `yaml:"gauge"`
	Histogram   *ValueType `yaml:"histogram"`
	Attributes  []string   `yaml:"attributes"`
}

// Sum is a counter (monotonic) or an up-down counter.
type Sum struct {
	ValueType string `yaml:"value_type"`
	Monotonic bool   `yaml:"monotonic"`
}

// ValueType is a gauge's or histogram's number type.
type ValueType struct {
	ValueType string `yaml:"value_type"`
}

// Signals in the order the documentation lists them.
var signals = []string{"traces", "metrics", "logs"}

// Load reads and validates a metadata.yaml; unknown keys are errors, so a
// typo does not silently document nothing.
func Load(path string) (*Metadata, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var md Metadata
	if err := dec.Decode(&md); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := md.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &md, nil
}

func (md *Metadata) validate() error {
	var errs []error
	if _, err := component.NewType(md.Type); err != nil {
		errs = append(errs, fmt.Errorf("type: %w", err))
	}
	switch md.Status.Class {
	case "receiver", "processor", "exporter", "connector", "extension":
	default:
		errs = append(errs, fmt.Errorf("status.class: unknown class %q", md.Status.Class))
	}
	seen := map[string]bool{}
	for level, sigs := range md.Status.Stability {
		if stabilityLevel(level) == component.StabilityLevelUndefined {
			errs = append(errs, fmt.Errorf("status.stability: unknown level %q", level))
		}
		for _, s := range sigs {
			if seen[s] {
				errs = append(errs, fmt.Errorf("status.stability: signal %q listed twice", s))
			}
			seen[s] = true
		}
	}
	for name, m := range md.Telemetry.Metrics {
		kinds := 0
		for _, set := range []bool{m.Sum != nil, m.Gauge != nil, m.Histogram != nil} {
			if set {
				kinds++
			}
		}
		if kinds != 1 {
			errs = append(errs, fmt.Errorf("telemetry.metrics.%s: needs exactly one of sum, gauge, histogram", name))
		}
		if m.Description == "" || m.Unit == "" {
			errs = append(errs, fmt.Errorf("telemetry.metrics.%s: description and unit are required", name))
		}
		for _, a := range m.Attributes {
			if _, ok := md.Attributes[a]; !ok {
				errs = append(errs, fmt.Errorf("telemetry.metrics.%s: attribute %q is not defined under attributes", name, a))
			}
		}
	}
	return errors.Join(errs...)
}

// Stability returns the stability metadata.yaml states for a signal
// (traces, metrics, logs), or StabilityLevelUndefined if it lists none.
func (md *Metadata) Stability(signal string) component.StabilityLevel {
	for level, sigs := range md.Status.Stability {
		for _, s := range sigs {
			if s == signal {
				return stabilityLevel(level)
			}
		}
	}
	return component.StabilityLevelUndefined
}

// stabilityLevel parses a level with the collector's own parser.
func stabilityLevel(name string) component.StabilityLevel {
	var l component.StabilityLevel
	if name == "undefined" || l.UnmarshalText([]byte(name)) != nil {
		return component.StabilityLevelUndefined
	}
	return l
}

// Kind is how a metric is recorded: "sum/int/monotonic" (a counter),
// "sum/int" (an up-down counter), "gauge/double", "histogram/int", ….
func (m Metric) Kind() string {
	switch {
	case m.Sum != nil && m.Sum.Monotonic:
		return "sum/" + m.Sum.ValueType + "/monotonic"
	case m.Sum != nil:
		return "sum/" + m.Sum.ValueType
	case m.Gauge != nil:
		return "gauge/" + m.Gauge.ValueType
	case m.Histogram != nil:
		return "histogram/" + m.Histogram.ValueType
	}
	return ""
}

// MetricNames returns the telemetry metric names, sorted.
func (md *Metadata) MetricNames() []string {
	out := make([]string, 0, len(md.Telemetry.Metrics))
	for n := range md.Telemetry.Metrics {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
