package chstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/schema"
	"github.com/ctxaudit/ctxaudit/schema/migrations"
)

// TestStrategyResizedMigration upgrades a database at version 5 that holds
// calls: their strategies read the same after 0006 (the Enum8 keeps every
// value's number), a resized call can then be written and read back, and
// the rollups count it. 0006 interrupted after its statements but before it
// was recorded runs again as the migrator runs it on 18.16 (MODIFY COLUMN to
// the type the column has, ADD COLUMN finding its column).
func TestStrategyResizedMigration(t *testing.T) {
	ctx := context.Background()
	s := chtest.OpenStore(t, chtest.Address(t))
	all, run := atVersion(t, s, 5, "strategy_resized")
	conn := s.Conn()

	ts := time.Date(2026, 1, 19, 21, 18, 2, 0, time.UTC)
	old := fullCall("toolu_old", ts)
	old.SessionID = "resize-upgrade"
	old.Strategy = schema.StrategyPaginated
	writeCallsAt(t, s, 5, []schema.ToolCall{old})

	resumeAfter(t, s, run, all[5])

	img := fullCall("toolu_img", ts.Add(time.Second))
	img.SessionID = old.SessionID
	img.Forensics = schema.Forensics{
		Original:  schema.Original{Sizes: schema.Sizes{Bytes: schema.Known(23234)}, Source: schema.SourceHarnessMetadata},
		Truncated: true, Kind: schema.KindSilent, Strategy: schema.StrategyResized, Reason: "too_large",
		Detector: "claude_code.read_image_resized",
	}
	if err := s.WriteToolCalls(ctx, []schema.ToolCall{img}); err != nil {
		t.Fatalf("write a resized call: %v", err)
	}
	got, err := s.ToolCalls(ctx, old.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	strategies := map[string]schema.Strategy{}
	for _, c := range got {
		strategies[c.CallID] = c.Strategy
	}
	if len(got) != 2 || strategies["toolu_old"] != schema.StrategyPaginated || strategies["toolu_img"] != schema.StrategyResized {
		t.Fatalf("read back %v, want the old call paginated and the new one resized", strategies)
	}

	if _, err := s.RefreshRollups(ctx); err != nil {
		t.Fatalf("roll up after 0006: %v", err)
	}
	var paginated, resized uint64
	q := "SELECT sum(strategy_paginated), sum(strategy_resized) FROM " + migrations.QuoteIdent(s.Database()) + ".tool_call_rollup FINAL WHERE scope = 0 AND period = 86400"
	if err := conn.QueryRow(ctx, q).Scan(&paginated, &resized); err != nil {
		t.Fatal(err)
	}
	if paginated != 1 || resized != 1 {
		t.Fatalf("the day's rollup counts %d paginated and %d resized, want 1 and 1", paginated, resized)
	}
}
