package chstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/schema"
	"github.com/ctxaudit/ctxaudit/schema/migrations"
)

// TestFollowUpUnknownMigration upgrades a database at version 10 that holds
// calls followed up and not: they read the same after 0011, and a call whose
// follow-up is not known can then be written and read back as not known
// (NULL), not as not followed up. 0011 interrupted after its statement but
// before it was recorded runs again as the migrator runs it on 18.16.
func TestFollowUpUnknownMigration(t *testing.T) {
	ctx := context.Background()
	s := chtest.OpenStore(t, chtest.Address(t))
	all, run := atVersion(t, s, 10, "follow_up_unknown")
	ts := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	// The calls as version 10 stored them, followed_up a plain UInt8 (the
	// writer now writes it Nullable), analysed over 2 records.
	for i, followed := range []int{1, 0} {
		if err := s.Conn().Exec(ctx, "INSERT INTO "+migrations.QuoteIdent(s.Database())+".tool_calls (session_id, call_id, ts, tool, truncated, followed_up, version) SELECT ?, ?, toDateTime(?), 'Read', 1, toUInt8(?), toUInt64(?)",
			"follow-upgrade", []string{"toolu_followed", "toolu_not"}[i], ts.Unix()+int64(i), followed, uint64(1)<<63|uint64(2)<<46|1); err != nil {
			t.Fatalf("write a call at version 10: %v", err)
		}
	}

	resumeAfter(t, s, run, all[10])

	unknown := fullCall("toolu_unknown", ts.Add(5*time.Second))
	unknown.SessionID, unknown.FollowedUp, unknown.FollowUpUnknown = "follow-upgrade", false, true
	if err := s.WriteToolCalls(ctx, []schema.ToolCall{unknown}); err != nil {
		t.Fatalf("write a call whose follow-up is not known: %v", err)
	}
	calls, err := s.ToolCalls(ctx, "follow-upgrade")
	if err != nil {
		t.Fatal(err)
	}
	type state struct{ followed, unknown bool }
	got := map[string]state{}
	for _, c := range calls {
		got[c.CallID] = state{c.FollowedUp, c.FollowUpUnknown}
	}
	want := map[string]state{"toolu_followed": {true, false}, "toolu_not": {false, false}, "toolu_unknown": {false, true}}
	if len(got) != len(want) {
		t.Fatalf("read back %v, want %v", got, want)
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s read back followed up %v, not known %v; want %v, %v", id, got[id].followed, got[id].unknown, w.followed, w.unknown)
		}
	}
	var typ string
	if err := s.Conn().QueryRow(ctx, "SELECT type FROM system.columns WHERE database = ? AND table = 'tool_calls' AND name = 'followed_up'", s.Database()).Scan(&typ); err != nil {
		t.Fatal(err)
	}
	if typ != "Nullable(UInt8)" {
		t.Errorf("followed_up is %s after migrate, want Nullable(UInt8)", typ)
	}
}

// TestFollowUpExactMigration upgrades a database at version 11 holding an
// analysed cut call not followed up: after 0012 it reads as not marked
// exact, as does a row a writer of an older release writes afterwards
// without the column, while the Store's own writes keep the mark. 0012
// interrupted after its statement runs again as on 18.16.
func TestFollowUpExactMigration(t *testing.T) {
	ctx := context.Background()
	s := chtest.OpenStore(t, chtest.Address(t))
	all, run := atVersion(t, s, 11, "follow_up_exact")
	ts := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	// An older writer's column list: no followed_up_exact.
	oldWrite := func(id string, at time.Time) {
		t.Helper()
		if err := s.Conn().Exec(ctx, "INSERT INTO "+migrations.QuoteIdent(s.Database())+".tool_calls (session_id, call_id, ts, tool, truncated, followed_up, version) SELECT ?, ?, toDateTime(?), 'Read', 1, CAST(0 AS Nullable(UInt8)), toUInt64(?)",
			"exact-upgrade", id, at.Unix(), uint64(1)<<63|uint64(2)<<46|1); err != nil {
			t.Fatalf("write %s as an older release does: %v", id, err)
		}
	}
	oldWrite("toolu_before", ts)

	resumeAfter(t, s, run, all[11])

	oldWrite("toolu_old_writer", ts.Add(time.Second))
	marked := fullCall("toolu_marked", ts.Add(2*time.Second))
	marked.SessionID, marked.FollowedUp, marked.FollowUpExact = "exact-upgrade", false, true
	unmarked := fullCall("toolu_unmarked", ts.Add(3*time.Second))
	unmarked.SessionID, unmarked.FollowedUp, unmarked.FollowUpExact = "exact-upgrade", false, false
	if err := s.WriteToolCalls(ctx, []schema.ToolCall{marked, unmarked}); err != nil {
		t.Fatalf("write calls: %v", err)
	}
	calls, err := s.ToolCalls(ctx, "exact-upgrade")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, c := range calls {
		if c.FollowedUp || c.FollowUpUnknown {
			t.Errorf("%s read back followed up %v, not known %v; want known 0", c.CallID, c.FollowedUp, c.FollowUpUnknown)
		}
		got[c.CallID] = c.FollowUpExact
	}
	want := map[string]bool{"toolu_before": false, "toolu_old_writer": false, "toolu_marked": true, "toolu_unmarked": false}
	if len(got) != len(want) {
		t.Fatalf("read back %v, want %v", got, want)
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s read back exact %v, want %v", id, got[id], w)
		}
	}
}
