package componentmeta

import (
	"errors"
	"fmt"
	"sort"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// stabilities is what the receiver, processor and exporter factories report.
type stabilities interface {
	Type() component.Type
	TracesStability() component.StabilityLevel
	MetricsStability() component.StabilityLevel
	LogsStability() component.StabilityLevel
}

// CheckFactory compares a factory's type, class and stability per signal
// with metadata.yaml.
func CheckFactory(md *Metadata, f component.Factory) error {
	var errs []error
	if got := f.Type().String(); got != md.Type {
		errs = append(errs, fmt.Errorf("type: factory says %q, metadata.yaml %q", got, md.Type))
	}
	class := ""
	switch f.(type) {
	case receiver.Factory:
		class = "receiver"
	case processor.Factory:
		class = "processor"
	case exporter.Factory:
		class = "exporter"
	}
	if class != md.Status.Class {
		errs = append(errs, fmt.Errorf("status.class: factory is a %q, metadata.yaml says %q", class, md.Status.Class))
	}
	s, ok := f.(stabilities)
	if !ok {
		return errors.Join(append(errs, fmt.Errorf("factory %T reports no stability per signal", f))...)
	}
	for _, sig := range []struct {
		name string
		got  component.StabilityLevel
	}{{"traces", s.TracesStability()}, {"metrics", s.MetricsStability()}, {"logs", s.LogsStability()}} {
		if want := md.Stability(sig.name); sig.got != want {
			errs = append(errs, fmt.Errorf("status.stability of %s: factory says %v, metadata.yaml %v", sig.name, sig.got, want))
		}
	}
	return errors.Join(errs...)
}

// Instrument is one instrument a component created.
type Instrument struct {
	Scope, Name, Kind, Unit, Description string
}

// Recorder is a MeterProvider that records every instrument created through
// it (and records no data): give it to a component's TelemetrySettings and
// compare Instruments with metadata.yaml.
type Recorder struct {
	noop.MeterProvider
	mu   sync.Mutex
	seen []Instrument
}

var _ metric.MeterProvider = (*Recorder)(nil)

// Meter returns a meter that records its instruments.
func (r *Recorder) Meter(name string, _ ...metric.MeterOption) metric.Meter {
	return &recordingMeter{r: r, scope: name}
}

// Instruments returns the instruments created in the given scope, by name.
func (r *Recorder) Instruments(scope string) map[string]Instrument {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]Instrument{}
	for _, in := range r.seen {
		if in.Scope == scope {
			out[in.Name] = in
		}
	}
	return out
}

func (r *Recorder) add(in Instrument) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, in)
}

type recordingMeter struct {
	noop.Meter
	r     *Recorder
	scope string
}

func (m *recordingMeter) rec(name, kind, unit, desc string) {
	m.r.add(Instrument{Scope: m.scope, Name: name, Kind: kind, Unit: unit, Description: desc})
}

func (m *recordingMeter) Int64Counter(name string, opts ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	c := metric.NewInt64CounterConfig(opts...)
	m.rec(name, "sum/int/monotonic", c.Unit(), c.Description())
	return m.Meter.Int64Counter(name, opts...)
}

func (m *recordingMeter) Int64UpDownCounter(name string, opts ...metric.Int64UpDownCounterOption) (metric.Int64UpDownCounter, error) {
	c := metric.NewInt64UpDownCounterConfig(opts...)
	m.rec(name, "sum/int", c.Unit(), c.Description())
	return m.Meter.Int64UpDownCounter(name, opts...)
}

func (m *recordingMeter) Int64Histogram(name string, opts ...metric.Int64HistogramOption) (metric.Int64Histogram, error) {
	c := metric.NewInt64HistogramConfig(opts...)
	m.rec(name, "histogram/int", c.Unit(), c.Description())
	return m.Meter.Int64Histogram(name, opts...)
}

func (m *recordingMeter) Int64Gauge(name string, opts ...metric.Int64GaugeOption) (metric.Int64Gauge, error) {
	c := metric.NewInt64GaugeConfig(opts...)
	m.rec(name, "gauge/int", c.Unit(), c.Description())
	return m.Meter.Int64Gauge(name, opts...)
}

func (m *recordingMeter) Int64ObservableCounter(name string, opts ...metric.Int64ObservableCounterOption) (metric.Int64ObservableCounter, error) {
	c := metric.NewInt64ObservableCounterConfig(opts...)
	m.rec(name, "sum/int/monotonic", c.Unit(), c.Description())
	return m.Meter.Int64ObservableCounter(name, opts...)
}

func (m *recordingMeter) Int64ObservableUpDownCounter(name string, opts ...metric.Int64ObservableUpDownCounterOption) (metric.Int64ObservableUpDownCounter, error) {
	c := metric.NewInt64ObservableUpDownCounterConfig(opts...)
	m.rec(name, "sum/int", c.Unit(), c.Description())
	return m.Meter.Int64ObservableUpDownCounter(name, opts...)
}

func (m *recordingMeter) Int64ObservableGauge(name string, opts ...metric.Int64ObservableGaugeOption) (metric.Int64ObservableGauge, error) {
	c := metric.NewInt64ObservableGaugeConfig(opts...)
	m.rec(name, "gauge/int", c.Unit(), c.Description())
	return m.Meter.Int64ObservableGauge(name, opts...)
}

func (m *recordingMeter) Float64Counter(name string, opts ...metric.Float64CounterOption) (metric.Float64Counter, error) {
	c := metric.NewFloat64CounterConfig(opts...)
	m.rec(name, "sum/double/monotonic", c.Unit(), c.Description())
	return m.Meter.Float64Counter(name, opts...)
}

func (m *recordingMeter) Float64UpDownCounter(name string, opts ...metric.Float64UpDownCounterOption) (metric.Float64UpDownCounter, error) {
	c := metric.NewFloat64UpDownCounterConfig(opts...)
	m.rec(name, "sum/double", c.Unit(), c.Description())
	return m.Meter.Float64UpDownCounter(name, opts...)
}

func (m *recordingMeter) Float64Histogram(name string, opts ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	c := metric.NewFloat64HistogramConfig(opts...)
	m.rec(name, "histogram/double", c.Unit(), c.Description())
	return m.Meter.Float64Histogram(name, opts...)
}

func (m *recordingMeter) Float64Gauge(name string, opts ...metric.Float64GaugeOption) (metric.Float64Gauge, error) {
	c := metric.NewFloat64GaugeConfig(opts...)
	m.rec(name, "gauge/double", c.Unit(), c.Description())
	return m.Meter.Float64Gauge(name, opts...)
}

func (m *recordingMeter) Float64ObservableCounter(name string, opts ...metric.Float64ObservableCounterOption) (metric.Float64ObservableCounter, error) {
	c := metric.NewFloat64ObservableCounterConfig(opts...)
	m.rec(name, "sum/double/monotonic", c.Unit(), c.Description())
	return m.Meter.Float64ObservableCounter(name, opts...)
}

func (m *recordingMeter) Float64ObservableUpDownCounter(name string, opts ...metric.Float64ObservableUpDownCounterOption) (metric.Float64ObservableUpDownCounter, error) {
	c := metric.NewFloat64ObservableUpDownCounterConfig(opts...)
	m.rec(name, "sum/double", c.Unit(), c.Description())
	return m.Meter.Float64ObservableUpDownCounter(name, opts...)
}

func (m *recordingMeter) Float64ObservableGauge(name string, opts ...metric.Float64ObservableGaugeOption) (metric.Float64ObservableGauge, error) {
	c := metric.NewFloat64ObservableGaugeConfig(opts...)
	m.rec(name, "gauge/double", c.Unit(), c.Description())
	return m.Meter.Float64ObservableGauge(name, opts...)
}

// CheckMetrics compares the instruments a component created in its scope
// with metadata.yaml's telemetry: the same names, and per name the same kind,
// unit and description.
func CheckMetrics(md *Metadata, got map[string]Instrument) error {
	var errs []error
	for _, name := range md.MetricNames() {
		m := md.Telemetry.Metrics[name]
		in, ok := got[name]
		if !ok {
			errs = append(errs, fmt.Errorf("telemetry.metrics.%s: the component registers no such instrument", name))
			continue
		}
		if in.Kind != m.Kind() {
			errs = append(errs, fmt.Errorf("telemetry.metrics.%s: registered as %s, metadata.yaml says %s", name, in.Kind, m.Kind()))
		}
		if in.Unit != m.Unit {
			errs = append(errs, fmt.Errorf("telemetry.metrics.%s: unit %q, metadata.yaml says %q", name, in.Unit, m.Unit))
		}
		if in.Description != m.Description {
			errs = append(errs, fmt.Errorf("telemetry.metrics.%s: description %q, metadata.yaml says %q", name, in.Description, m.Description))
		}
	}
	var extra []string
	for name := range got {
		if _, ok := md.Telemetry.Metrics[name]; !ok {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	for _, name := range extra {
		errs = append(errs, fmt.Errorf("instrument %s is registered but not in metadata.yaml", name))
	}
	return errors.Join(errs...)
}
