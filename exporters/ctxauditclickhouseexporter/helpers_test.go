package ctxauditclickhouseexporter

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ctxaudit/ctxaudit/exporters/ctxauditclickhouseexporter/internal/metadata"
)

func pcommonTS(t time.Time) pcommon.Timestamp { return pcommon.NewTimestampFromTime(t) }

// exportEach writes each of tds through its own traces exporter of the
// default configuration against the ClickHouse at addr, shut down (its
// queue drained) before the next: the pushes land in the order given.
func exportEach(t *testing.T, addr string, tds ...ptrace.Traces) {
	t.Helper()
	ctx := context.Background()
	for _, td := range tds {
		cfg := createDefaultConfig().(*Config)
		cfg.Endpoint = addr
		te, err := NewFactory().CreateTraces(ctx, exportertest.NewNopSettings(metadata.Type), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := te.Start(ctx, componenttest.NewNopHost()); err != nil {
			t.Fatal(err)
		}
		if err := te.ConsumeTraces(ctx, td); err != nil {
			t.Fatal(err)
		}
		if err := te.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
