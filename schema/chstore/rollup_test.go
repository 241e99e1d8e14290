package chstore_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/schema"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

// A snapshot is taken of every day partition that has none, of no day that
// is unchanged since, and again of a day written to since; its figures are
// those of tool_calls FINAL, so a re-written call counts once, at its newest
// values.
func TestRefreshRollups(t *testing.T) {
	ctx := context.Background()
	s := chtest.NewStore(t)
	day1 := time.Date(2026, 11, 20, 10, 30, 0, 0, time.UTC)
	day2 := time.Date(2026, 11, 21, 23, 59, 59, 0, time.UTC)
	silent := fullCall("c1", day1)
	if err := s.WriteToolCalls(ctx, []schema.ToolCall{silent, fullCall("c2", day1.Add(2*time.Hour)), fullCall("c3", day2)}); err != nil {
		t.Fatal(err)
	}
	days := refresh(t, s)
	if want := []uint32{20261120, 20261121}; !slices.Equal(days, want) {
		t.Fatalf("first refresh took %v, want %v", days, want)
	}
	if days := refresh(t, s); len(days) != 0 {
		t.Fatalf("refresh with nothing written took %v", days)
	}
	checkRollup(t, s)

	// c1 re-written as explicit: day 1 only is taken again.
	explicit := silent
	explicit.Kind = schema.KindExplicit
	time.Sleep(2 * time.Millisecond)
	if err := s.WriteToolCalls(ctx, []schema.ToolCall{explicit}); err != nil {
		t.Fatal(err)
	}
	if days := refresh(t, s); !slices.Equal(days, []uint32{20261120}) {
		t.Fatalf("refresh after re-writing a day-1 call took %v, want only that day", days)
	}
	checkRollup(t, s)
	if n := count(t, s, "SELECT sum(silent_calls) FROM "+s.Database()+".tool_call_rollup FINAL WHERE scope = 0 AND period = 86400 AND day = 20261120 AND base_block = "+
		"(SELECT max(base_block) FROM "+s.Database()+".tool_call_rollup_days WHERE day = 20261120)"); n != 1 {
		t.Fatalf("day 1 rollup counts %d silent calls after c1 became explicit, want 1 (c2)", n)
	}
}

func refresh(t *testing.T, s *chstore.Store) []uint32 {
	t.Helper()
	days, err := s.RefreshRollups(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []uint32
	for _, d := range days {
		out = append(out, d.Day)
	}
	return out
}

// checkRollup compares each kind of rollup row of the newest snapshots with
// tool_calls FINAL.
func checkRollup(t *testing.T, s *chstore.Store) {
	t.Helper()
	db := s.Database()
	newest := "(day, base_block) IN (SELECT day, max(base_block) FROM " + db + ".tool_call_rollup_days GROUP BY day)"
	want := count(t, s, "SELECT count() FROM "+db+".tool_calls FINAL")
	wantSilent := count(t, s, "SELECT countIf(truncation_kind = 'silent') FROM "+db+".tool_calls FINAL")
	wantAnalysed := count(t, s, "SELECT countIf(truncated = 1 AND version >= 9223372036854775808 AND isNotNull(followed_up)) FROM "+db+".tool_calls FINAL")
	wantFollowed := count(t, s, "SELECT countIf(truncated = 1 AND ifNull(followed_up, 0) = 1 AND version >= 9223372036854775808) FROM "+db+".tool_calls FINAL")
	for _, rows := range []string{"scope = 0 AND period = 3600", "scope = 0 AND period = 86400", "scope = 1 AND period = 3600"} {
		q := " FROM " + db + ".tool_call_rollup FINAL WHERE " + rows + " AND " + newest
		if got := count(t, s, "SELECT sum(calls)"+q); got != want {
			t.Errorf("%s: %d calls, tool_calls FINAL has %d", rows, got, want)
		}
		if got := count(t, s, "SELECT sum(silent_calls)"+q); got != wantSilent {
			t.Errorf("%s: %d silent calls, tool_calls FINAL has %d", rows, got, wantSilent)
		}
		if got := count(t, s, "SELECT sum(truncated_analysed)"+q); got != wantAnalysed {
			t.Errorf("%s: %d analysed truncated calls, tool_calls FINAL has %d", rows, got, wantAnalysed)
		}
		if got := count(t, s, "SELECT sum(truncated_followed)"+q); got != wantFollowed {
			t.Errorf("%s: %d analysed truncated calls followed up, tool_calls FINAL has %d", rows, got, wantFollowed)
		}
	}
}

// A truncated call the collector wrote as it read it is not known to have
// been followed up or not, even when its row says followed_up 1 (as a span
// may, without the analysis that judged it): the rollup counts it in no
// follow-up figure and places it in no bucket of coverage by the end of the
// session. Once the analysis writes it, it counts — in the follow-up
// figures only while its follow-up is known.
func TestRollupFollowUpCountsAnalysedCallsOnly(t *testing.T) {
	ctx := context.Background()
	s := chtest.NewStore(t)
	at := time.Date(2026, 11, 20, 10, 30, 0, 0, time.UTC)
	judged := fullCall("judged", at)
	judged.Analysis = schema.Analysis{Done: true, Records: 2}
	asRead := fullCall("as-read", at.Add(time.Minute)) // followed_up 1, coverage 0.641, not analysed
	if err := s.WriteToolCalls(ctx, []schema.ToolCall{judged, asRead}); err != nil {
		t.Fatal(err)
	}
	db := s.Database()
	day := func() (truncated, analysed, followed, byEnd uint64) {
		t.Helper()
		if _, err := s.RefreshRollups(ctx); err != nil {
			t.Fatal(err)
		}
		q := " FROM " + db + ".tool_call_rollup FINAL WHERE scope = 0 AND period = 86400 AND (day, base_block) IN (SELECT day, max(base_block) FROM " + db + ".tool_call_rollup_days GROUP BY day)"
		return count(t, s, "SELECT sum(truncated_calls)"+q), count(t, s, "SELECT sum(truncated_analysed)"+q),
			count(t, s, "SELECT sum(truncated_followed)"+q), count(t, s, "SELECT toUInt64(arraySum(sumForEach(coverage_by_end)))"+q)
	}
	if tr, an, fo, be := day(); tr != 2 || an != 1 || fo != 1 || be != 1 {
		t.Fatalf("rollup counts %d truncated, %d analysed, %d followed up, %d covered by the end; want 2, 1, 1, 1 (the call as read in none but the first)", tr, an, fo, be)
	}

	asRead.Analysis = schema.Analysis{Done: true, Records: 2}
	asRead.FollowedUp = false
	time.Sleep(2 * time.Millisecond)
	if err := s.WriteToolCalls(ctx, []schema.ToolCall{asRead}); err != nil {
		t.Fatal(err)
	}
	if tr, an, fo, be := day(); tr != 2 || an != 2 || fo != 1 || be != 2 {
		t.Fatalf("after the analysis judged it not followed up: %d truncated, %d analysed, %d followed up, %d covered by the end; want 2, 2, 1, 2", tr, an, fo, be)
	}

	// A later analysis finds its follow-up not known (an unordered call
	// arrived): it leaves the follow-up rate's denominator, and its
	// coverage by the end still counts.
	asRead.Analysis = schema.Analysis{Done: true, Records: 3}
	asRead.FollowUpUnknown = true
	time.Sleep(2 * time.Millisecond)
	if err := s.WriteToolCalls(ctx, []schema.ToolCall{asRead}); err != nil {
		t.Fatal(err)
	}
	if tr, an, fo, be := day(); tr != 2 || an != 1 || fo != 1 || be != 2 {
		t.Fatalf("after the analysis found its follow-up not known: %d truncated, %d analysed, %d followed up, %d covered by the end; want 2, 1, 1, 2", tr, an, fo, be)
	}
}
