package ctxauditclickhouseexporter

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/featuregate"

	"github.com/ctxaudit/ctxaudit/exporters/ctxauditclickhouseexporter/internal/metadata"
)

// TestRefusesProtoPooling: with pdata.useProtoPooling on, the collector
// lost calls in the sending queue's batcher (see protoPoolingGate), so
// neither a traces nor a logs exporter is created, and the error says how
// to start without the gate. With the gate off (the default) both are.
func TestRefusesProtoPooling(t *testing.T) {
	reg := featuregate.GlobalRegistry()
	f := NewFactory()
	create := func() []error {
		set := exportertest.NewNopSettings(metadata.Type)
		_, terr := f.CreateTraces(context.Background(), set, f.CreateDefaultConfig())
		_, lerr := f.CreateLogs(context.Background(), set, f.CreateDefaultConfig())
		return []error{terr, lerr}
	}
	for _, err := range create() {
		if err != nil {
			t.Fatalf("gate off: %v", err)
		}
	}
	if err := reg.Set(protoPoolingGate, true); err != nil {
		t.Fatalf("the gate %s is not registered: %v", protoPoolingGate, err)
	}
	t.Cleanup(func() { _ = reg.Set(protoPoolingGate, false) })
	for i, err := range create() {
		if err == nil {
			t.Fatalf("signal %d: created with %s on; want it refused", i, protoPoolingGate)
		}
		if !strings.Contains(err.Error(), "--feature-gates=-"+protoPoolingGate) {
			t.Errorf("signal %d: %v; want it to say how to start without the gate", i, err)
		}
	}
}
