package ctxauditclickhouseexporter

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ctxaudit/ctxaudit/collector/otelconv"
	"github.com/ctxaudit/ctxaudit/exporters/ctxauditclickhouseexporter/internal/metadata"
	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/schema"
)

// A running exporter keeps the dashboards' rollups current: a day it wrote
// gets a snapshot without anyone running migrate again, and a snapshot taken
// before a later write of that day is replaced by one that includes it.
func TestRollupsRefreshedWhileRunning(t *testing.T) {
	addr := chtest.Address(t)
	cfg := createDefaultConfig().(*Config)
	cfg.Endpoint = addr
	cfg.RollupInterval = 50 * time.Millisecond
	ctx := context.Background()
	te, err := NewFactory().CreateTraces(ctx, exportertest.NewNopSettings(metadata.Type), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := te.Start(ctx, componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := te.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	}()
	s := chtest.OpenStore(t, addr)
	day := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	snapshotCalls := func() uint64 {
		var n uint64
		// The day's newest snapshot of its all-calls hourly rows.
		q := "SELECT toUInt64(sum(calls)) FROM (SELECT calls FROM " + s.Database() + ".tool_call_rollup" +
			" WHERE day = 20260301 AND scope = 1 AND period = 3600 ORDER BY base_block DESC LIMIT 1 BY period_start)"
		if err := s.Conn().QueryRow(ctx, q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for i, id := range []string{"c1", "c2"} {
		td := ptrace.NewTraces()
		spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
		otelconv.AppendToolCall(spans, &schema.ToolCall{SessionID: "roll-1", CallID: id, Tool: "Read", Timestamp: day.Add(time.Duration(i) * time.Minute), Source: schema.HarnessPi})
		if err := te.ConsumeTraces(ctx, td); err != nil {
			t.Fatal(err)
		}
		want := uint64(i + 1)
		deadline := time.Now().Add(60 * time.Second)
		for snapshotCalls() != want {
			if time.Now().After(deadline) {
				t.Fatalf("after writing %d calls the day's rollup counts %d; the refresher did not catch up", want, snapshotCalls())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}
