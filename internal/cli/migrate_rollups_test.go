package cli

import (
	"context"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/schema"
)

// `ctxaudit migrate` is where a database's rollups are backfilled: a day
// written without a snapshot gets one, while opening a store to write (the
// exporter, ingest) does not wait for that work.
func TestMigrateBackfillsRollups(t *testing.T) {
	addr := chtest.Address(t)
	ctx := context.Background()
	s := chtest.OpenStore(t, addr)
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	if err := s.WriteToolCalls(ctx, []schema.ToolCall{
		{SessionID: "mig-1", CallID: "a", Tool: "Read", Timestamp: at, Source: schema.HarnessPi},
		{SessionID: "mig-1", CallID: "b", Tool: "Bash", Timestamp: at.Add(time.Minute), Source: schema.HarnessPi},
	}); err != nil {
		t.Fatal(err)
	}
	snapshots := func() uint64 {
		return queryCount(t, s, "SELECT count() FROM DB.tool_call_rollup_days WHERE day = 20260302")
	}
	if _, err := s.Migrate(ctx); err != nil || snapshots() != 0 {
		t.Fatalf("Store.Migrate took %d snapshots (err %v); the backfill belongs to the migrate command", snapshots(), err)
	}
	if code, out, errOut := run(t, "migrate", "--clickhouse", addr); code != ExitOK {
		t.Fatalf("migrate: exit %d\n%s\n%s", code, out, errOut)
	}
	if snapshots() != 1 {
		t.Fatalf("after migrate the day has %d snapshots, want 1", snapshots())
	}
	rolled := queryCount(t, s, "SELECT toUInt64(sum(calls)) FROM (SELECT calls FROM DB.tool_call_rollup WHERE scope = 1 AND period = 3600 ORDER BY base_block DESC LIMIT 1 BY day, period_start)")
	if rolled != 2 {
		t.Fatalf("the day's rollup counts %d calls, want 2", rolled)
	}
}
