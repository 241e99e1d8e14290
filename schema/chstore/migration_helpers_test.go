package chstore_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/ctxaudit/ctxaudit/schema"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
	"github.com/ctxaudit/ctxaudit/schema/migrations"
)

// ifExists matches the IF [NOT] EXISTS ClickHouse 18.16 does not parse
// after ADD COLUMN and MODIFY COLUMN.
var ifExists = regexp.MustCompile(`(?i)(ADD COLUMN|MODIFY COLUMN) IF (NOT )?EXISTS`)

// atVersion brings s's empty database to schema version n by running the
// migrations up to it, unrecorded, and returns them all with a function
// that runs one more the same way: what an interrupted migrator leaves
// (its statements ran, its version was not recorded), as the migrator runs
// statements on the server (the plain ALTER forms on 18.16; "already
// exists" is done). It fails the test unless migration n+1 is named next.
func atVersion(t *testing.T, s *chstore.Store, n int, next string) ([]migrations.Migration, func(migrations.Migration)) {
	t.Helper()
	ctx := context.Background()
	all, err := migrations.All()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) <= n || all[n].Name != next {
		t.Fatalf("migration %04d is missing or not %s", n+1, next)
	}
	v, err := s.RenderingVersion()
	if err != nil {
		t.Fatal(err)
	}
	conn := s.Conn()
	if err := conn.Exec(ctx, "CREATE DATABASE IF NOT EXISTS "+migrations.QuoteIdent(s.Database())); err != nil {
		t.Fatal(err)
	}
	run := func(m migrations.Migration) {
		t.Helper()
		stmts, err := m.StatementsFor(s.Database(), v)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range stmts {
			if !v.Modern() {
				st = ifExists.ReplaceAllString(st, "$1")
			}
			if err := conn.Exec(ctx, st); err != nil && !strings.Contains(err.Error(), "already exists") {
				t.Fatalf("%04d_%s: %v", m.Version, m.Name, err)
			}
		}
	}
	for _, m := range all[:n] {
		run(m)
	}
	return all, run
}

// resumeAfter leaves migration m as an interrupted migrate leaves it (its
// statements run, its version not recorded) and migrates: the repeated run
// must complete it and bring the database to the latest version.
func resumeAfter(t *testing.T, s *chstore.Store, run func(migrations.Migration), m migrations.Migration) {
	t.Helper()
	run(m)
	res, err := s.Migrate(context.Background())
	if err != nil {
		t.Fatalf("migrate after an interrupted %04d: %v", m.Version, err)
	}
	if res.Current != migrations.Latest() {
		t.Fatalf("schema at %d after migrate, want %d", res.Current, migrations.Latest())
	}
}

// toolCallColumnsAdded lists, by the migration that added them, the
// tool_calls columns 0001 did not create.
var toolCallColumnsAdded = map[int][]string{12: {"followed_up_exact"}}

// writeCallsAt writes calls as a writer of schema version n did: without the
// tool_calls columns later migrations added.
func writeCallsAt(t *testing.T, s *chstore.Store, n int, calls []schema.ToolCall) {
	t.Helper()
	var later []string
	for v, cols := range toolCallColumnsAdded {
		if v > n {
			later = append(later, cols...)
		}
	}
	if err := s.WriteToolCallsWithout(context.Background(), calls, later...); err != nil {
		t.Fatalf("write calls at version %d: %v", n, err)
	}
}
