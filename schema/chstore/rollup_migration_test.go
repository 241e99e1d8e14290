package chstore_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/schema"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
	"github.com/ctxaudit/ctxaudit/schema/migrations"
)

// TestRollupAnalysedMigration upgrades a database at version 7 whose day
// has a fresh snapshot, taken as 0004–0007 took them: without
// truncated_analysed (which then reads 0) and with truncated_followed
// counting a call no analysis judged. After 0008 — interrupted once, then
// run by the migrator — that snapshot must not be fresh by the rule the
// dashboards apply (so they read the day from tool_calls FINAL), the next
// refresh takes the day again, and the new snapshot wins over the old one.
func TestRollupAnalysedMigration(t *testing.T) {
	ctx := context.Background()
	s := chtest.OpenStore(t, chtest.Address(t))
	all, run := atVersion(t, s, 7, "rollup_analysed")
	db := migrations.QuoteIdent(s.Database())

	at := time.Date(2026, 1, 19, 12, 0, 0, 0, time.UTC)
	judged := fullCall("judged", at)
	judged.Analysis = schema.Analysis{Done: true, Records: 2}
	asRead := fullCall("as-read", at.Add(time.Minute)) // followed_up 1, not analysed
	writeCallsAt(t, s, 7, []schema.ToolCall{judged, asRead})

	// The snapshot of 0004–0007: tagged with the plain block number, and
	// counting both calls as followed up.
	var partition string
	var block int64
	if err := s.Conn().QueryRow(ctx, "SELECT partition, max(max_block_number) FROM system.parts WHERE database = ? AND table = 'tool_calls' AND active GROUP BY partition",
		s.Database()).Scan(&partition, &block); err != nil {
		t.Fatal(err)
	}
	day, err := strconv.ParseUint(partition, 10, 32)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Conn().Exec(ctx, "INSERT INTO "+db+".tool_call_rollup (day, scope, period, period_start, period_end, day_start, day_end, source, tool, model, project, base_block, calls, truncated_calls, truncated_followed) "+
		"SELECT toUInt32(?), 0, 86400, toDateTime(toDate(ts)), toDateTime(toDate(ts) + 1) - 1, toDateTime(toDate(ts)), toDateTime(toDate(ts) + 1) - 1, source, tool, model, project, toUInt64(?), 2, 2, 2 "+
		"FROM "+db+".tool_calls FINAL LIMIT 1", day, block); err != nil {
		t.Fatal(err)
	}
	if err := s.Conn().Exec(ctx, "INSERT INTO "+db+".tool_call_rollup_days (day, base_block, refreshed_at) SELECT toUInt32(?), toUInt64(?), now()", day, block); err != nil {
		t.Fatal(err)
	}
	// fresh counts the days whose snapshot the dashboards take for current
	// when they compare base_block with the block number plus base.
	fresh := func(base uint64) uint64 {
		t.Helper()
		return count(t, s, "SELECT count() FROM "+db+".tool_call_rollup_days WHERE (day, base_block) IN "+
			"(SELECT toUInt32(partition), toUInt64(max(max_block_number)) + "+strconv.FormatUint(base, 10)+
			" FROM system.parts WHERE database = ? AND table = 'tool_calls' AND active GROUP BY partition)", s.Database())
	}
	if n := fresh(0); n != 1 {
		t.Fatalf("the version-7 snapshot is not fresh to the version-7 dashboards (%d days)", n)
	}

	resumeAfter(t, s, run, all[7])
	if n := fresh(chstore.RollupBlockBase); n != 0 {
		t.Fatalf("after 0008 the old snapshot, without truncated_analysed, is fresh to the dashboards (%d days)", n)
	}

	days, err := s.RefreshRollups(ctx)
	if err != nil {
		t.Fatalf("roll up after 0008: %v", err)
	}
	if len(days) != 1 || uint64(days[0].Day) != day {
		t.Fatalf("refresh after 0008 took %v, want day %d again", days, day)
	}
	if n := fresh(chstore.RollupBlockBase); n != 1 {
		t.Fatalf("after the refresh %d days are fresh, want 1", n)
	}
	// Read as the derived rows are, with FINAL: the new snapshot replaces
	// the old one, which has the same key and a smaller base_block.
	var calls, analysed, followed uint64
	var bases []uint64
	rows, err := s.Conn().Query(ctx, "SELECT calls, truncated_analysed, truncated_followed, base_block FROM "+db+".tool_call_rollup FINAL WHERE scope = 0 AND period = 86400")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c, a, f, b uint64
		if err := rows.Scan(&c, &a, &f, &b); err != nil {
			t.Fatal(err)
		}
		calls, analysed, followed = calls+c, analysed+a, followed+f
		bases = append(bases, b)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if want := []uint64{uint64(block) + chstore.RollupBlockBase}; !slices.Equal(bases, want) || calls != 2 || analysed != 1 || followed != 1 {
		t.Fatalf("day rows after the refresh: base_block %v, %d calls, %d analysed, %d followed up; want %v, 2, 1, 1", bases, calls, analysed, followed, want)
	}
}
