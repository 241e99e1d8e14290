package ctxauditclickhouseexporter

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
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

// The traces and logs instances of one exporter (one component id) run one
// rollup refresher between them, not one each; when the instance running it
// stops, the other takes over and keeps the rollups current; an instance of
// another id has its own.
func TestOneRollupRefresherPerExporter(t *testing.T) {
	addr := chtest.Address(t)
	cfg := createDefaultConfig().(*Config)
	cfg.Endpoint = addr
	cfg.RollupInterval = 50 * time.Millisecond
	ctx := context.Background()
	rollups := newRollupLeaders()
	set := exportertest.NewNopSettings(metadata.Type)
	other := exportertest.NewNopSettings(metadata.Type)
	other.ID = component.NewIDWithName(metadata.Type, "other")
	te, err := createTraces(ctx, set, cfg, rollups)
	if err != nil {
		t.Fatal(err)
	}
	le, err := createLogs(ctx, set, cfg, rollups)
	if err != nil {
		t.Fatal(err)
	}
	oe, err := createTraces(ctx, other, cfg, rollups)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []component.Component{te, le, oe} {
		if err := c.Start(ctx, componenttest.NewNopHost()); err != nil {
			t.Fatal(err)
		}
	}
	// refreshing: per id, how many instances run, and how many of them run
	// a refresher.
	refreshing := func() map[component.ID][2]int {
		rollups.mu.Lock()
		defer rollups.mu.Unlock()
		out := map[component.ID][2]int{}
		for id, rs := range rollups.running {
			n := 0
			for _, e := range rs {
				if e.stopRollups != nil {
					n++
				}
			}
			out[id] = [2]int{len(rs), n}
		}
		return out
	}
	if got := refreshing(); got[set.ID] != [2]int{2, 1} || got[other.ID] != [2]int{1, 1} {
		t.Fatalf("instances and refreshers per id %v; want 2 instances with 1 refresher for %s, 1 with 1 for %s", got, set.ID, other.ID)
	}
	if err := oe.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := te.Shutdown(ctx); err != nil { // the leader
		t.Fatal(err)
	}
	if got := refreshing(); got[set.ID] != [2]int{1, 1} || len(got) != 1 {
		t.Fatalf("after the leader stopped: %v; want the logs instance refreshing alone", got)
	}
	// The one that took over keeps the rollups current.
	s := chtest.OpenStore(t, addr)
	day := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	ld := plog.NewLogs()
	lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.SetTimestamp(pcommon.NewTimestampFromTime(day))
	otelconv.PutToolCall(lr.Attributes(), &schema.ToolCall{SessionID: "roll-2", CallID: "c1", Tool: "Read", Timestamp: day, Source: schema.HarnessPi})
	if err := le.ConsumeLogs(ctx, ld); err != nil {
		t.Fatal(err)
	}
	q := "SELECT toUInt64(count()) FROM " + s.Database() + ".tool_call_rollup_days WHERE day = 20260302"
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var n uint64
		if err := s.Conn().QueryRow(ctx, q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the day written after the takeover got no snapshot")
		}
	}
	if err := le.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if got := refreshing(); len(got) != 0 {
		t.Errorf("after every instance stopped: %v; want no refresher", got)
	}
}
