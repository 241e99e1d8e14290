package chstore_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/schema"
	"github.com/ctxaudit/ctxaudit/schema/migrations"
)

// TestSizePrecisionMigrationResumes upgrades a version-1 database holding a
// row written before sizes carried a precision, from the state a run
// interrupted inside 0002 leaves (some columns added, version 2 not
// recorded): the repeated run completes it on this server, and the old row
// reads back with no precision rather than a made-up "exact".
func TestSizePrecisionMigrationResumes(t *testing.T) {
	ctx := context.Background()
	s := chtest.OpenStore(t, chtest.Address(t))
	db := s.Database()
	all, err := migrations.All()
	if err != nil {
		t.Fatal(err)
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if err := s.Conn().Exec(ctx, q, args...); err != nil {
			t.Fatalf("%.120s: %v", q, err)
		}
	}
	exec("CREATE DATABASE IF NOT EXISTS " + migrations.QuoteIdent(db))
	exec("CREATE TABLE IF NOT EXISTS " + migrations.QuoteIdent(db) + ".schema_migrations (version UInt32, name String, checksum String, applied_at DateTime) ENGINE = MergeTree() ORDER BY version")
	v1, err := all[0].Statements(db)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range v1 {
		exec(q)
	}
	insert := func(q string, row ...any) {
		t.Helper()
		batch, err := s.Conn().PrepareBatch(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if err := batch.Append(row...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if err := batch.Send(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	insert("INSERT INTO "+migrations.QuoteIdent(db)+".schema_migrations (version, name, checksum, applied_at)",
		all[0].Version, all[0].Name, all[0].Checksum, time.Now().UTC().Truncate(time.Second))
	ts := time.Date(2026, 1, 19, 21, 18, 2, 0, time.UTC)
	// A row as a version-1 writer wrote it: no precision column existed.
	one := uint64(454963)
	insert("INSERT INTO "+migrations.QuoteIdent(db)+".tool_calls (session_id, call_id, ts, original_bytes, original_source, truncation_kind, strategy, version)",
		"old-session", "toolu_old", ts, &one, "marker", "explicit", "refused", uint64(1))

	var v2 migrations.Migration
	for _, m := range all {
		if m.Name == "size_precision" {
			v2 = m
		}
	}
	stmts, err := v2.Statements(db)
	if err != nil || len(stmts) < 3 {
		t.Fatalf("0002 statements: %d, %v", len(stmts), err)
	}
	// The interrupted run: the first two columns are there already.
	for _, q := range stmts[:2] {
		exec(strings.Replace(q, " IF NOT EXISTS", "", 1))
	}

	res, err := s.Migrate(ctx)
	if err != nil {
		t.Fatalf("resumed migrate: %v", err)
	}
	if res.Current != migrations.Latest() || len(res.Applied) != len(all)-1 {
		t.Fatalf("resumed migrate applied %d, current %d; want %d applied up to %d", len(res.Applied), res.Current, len(all)-1, migrations.Latest())
	}
	for _, col := range []string{"original_precision", "shown_tail_start", "shown_tail_end", "shown_tail_unit", "shown_tail_is_end",
		"refetched_source", "coverage_upper_bound", "coverage_mixed_versions"} {
		if n := count(t, s, "SELECT count() FROM system.columns WHERE database = ? AND table = 'tool_calls' AND name = ?", db, col); n != 1 {
			t.Errorf("column tool_calls.%s: found %d, want 1", col, n)
		}
	}
	got, err := s.ToolCalls(ctx, "old-session")
	if err != nil || len(got) != 1 {
		t.Fatalf("read the old row: %d rows, %v", len(got), err)
	}
	o := got[0]
	want := schema.Original{Sizes: schema.Sizes{Bytes: schema.Known(454963)}, Source: schema.SourceMarker, Precision: schema.PrecisionNone}
	if !reflect.DeepEqual(o.Original, want) {
		t.Errorf("old row original = %+v, want %+v (precision not recorded, so none)", o.Original, want)
	}
	if o.ShownTail != (schema.Range{}) || o.ShownTailIsEnd || o.RefetchedSource || o.CoverageUpperBound || o.CoverageMixedVersions {
		t.Errorf("old row new fields = tail %+v is_end %v refetched %v upper %v mixed %v; want all absent",
			o.ShownTail, o.ShownTailIsEnd, o.RefetchedSource, o.CoverageUpperBound, o.CoverageMixedVersions)
	}
}

// TestPrecisionRoundTrip writes each precision and reads it back, and
// checks the stored Enum8 names, which dashboards filter on.
func TestPrecisionRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := chtest.NewStore(t)
	ts := time.Date(2026, 2, 1, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		precision schema.Precision
		stored    string
	}{
		{schema.PrecisionNone, "unknown"},
		{schema.PrecisionExact, "exact"},
		{schema.PrecisionApproximate, "approximate"},
		{schema.PrecisionLowerBound, "lower_bound"},
	}
	var calls []schema.ToolCall
	for i, c := range cases {
		call := fullCall("toolu_p"+string(rune('0'+i)), ts.Add(time.Duration(i)*time.Second))
		call.SessionID = "precision-session"
		call.Original.Precision = c.precision
		calls = append(calls, call)
	}
	if err := s.WriteToolCalls(ctx, calls); err != nil {
		t.Fatal(err)
	}
	got, err := s.ToolCalls(ctx, "precision-session")
	if err != nil || len(got) != len(cases) {
		t.Fatalf("read: %d rows, %v", len(got), err)
	}
	for i, c := range cases {
		if got[i].Original.Precision != c.precision {
			t.Errorf("call %d precision = %q, want %q", i, got[i].Original.Precision, c.precision)
		}
		if n := count(t, s, "SELECT count() FROM "+s.Database()+".tool_calls WHERE call_id = ? AND toString(original_precision) = ?", calls[i].CallID, c.stored); n != 1 {
			t.Errorf("call %d: stored original_precision is not %q", i, c.stored)
		}
	}
}
