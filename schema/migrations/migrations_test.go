package migrations

import (
	"regexp"
	"strings"
	"testing"
)

func TestEmbeddedMigrationsAreOrderedAndRender(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) == 0 {
		t.Fatal("no embedded migrations")
	}
	for i, m := range all {
		if i > 0 && m.Version <= all[i-1].Version {
			t.Errorf("migration %d has version %d after %d; versions must increase", i, m.Version, all[i-1].Version)
		}
		stmts, err := m.Statements("audit_db")
		if err != nil {
			t.Fatal(err)
		}
		if len(stmts) == 0 {
			t.Errorf("migration %04d_%s renders no statements", m.Version, m.Name)
		}
		for _, s := range stmts {
			if !strings.Contains(s, "`audit_db`.") {
				t.Errorf("migration %04d statement does not name the configured database: %.80s", m.Version, s)
			}
			if !strings.Contains(s, "IF NOT EXISTS") && !strings.Contains(s, "IF EXISTS") && !AddsOneColumn(s) {
				t.Errorf("migration %04d statement is not idempotent (no IF [NOT] EXISTS): %.80s", m.Version, s)
			}
		}
	}
	if Latest() != all[len(all)-1].Version {
		t.Errorf("Latest() = %d, want %d", Latest(), all[len(all)-1].Version)
	}
}

// forbidden lists what ClickHouse 18.16 lacks (docs/design.md §7.4); DDL must run there too.
var forbidden = regexp.MustCompile(`(?i)\b(DateTime64|Map\(|LowCardinality|CODEC|TTL|INDEX|JSONExtract|toStartOfInterval|Object\(|JSON\b)`)

func TestDDLAvoidsFeaturesMissingFrom18_16(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range all {
		stmts, _ := m.Statements("ctxaudit")
		for _, s := range stmts {
			if loc := forbidden.FindString(s); loc != "" {
				t.Errorf("migration %04d_%s uses %q, which ClickHouse 18.16 does not support", m.Version, m.Name, loc)
			}
		}
	}
}

func TestAddsOneColumn(t *testing.T) {
	for stmt, want := range map[string]bool{
		"ALTER TABLE `db`.answers ADD COLUMN absence Enum8('a' = 0, 'b,c' = 1) DEFAULT 'a' AFTER x": true,
		"alter table db.t add column c String":                                                      true,
		"ALTER TABLE db.t ADD COLUMN c String, DROP COLUMN d":                                       false,
		"ALTER TABLE db.t ADD COLUMN c String, ADD COLUMN d String":                                 false,
		"ALTER TABLE db.t DROP COLUMN c":                                                            false,
		"CREATE TABLE db.t (a String)":                                                              false,
	} {
		if got := AddsOneColumn(stmt); got != want {
			t.Errorf("AddsOneColumn(%q) = %v, want %v", stmt, got, want)
		}
	}
}

func TestSplitStatements(t *testing.T) {
	got := splitStatements("-- header;\nCREATE A\n(x);\n\n-- note\nCREATE B;\n")
	want := []string{"CREATE A\n(x)", "CREATE B"}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("statement %d = %q, want %q", i, got[i], want[i])
		}
	}
}

func TestValidDatabaseName(t *testing.T) {
	for _, ok := range []string{"ctxaudit", "audit_2", "_x"} {
		if err := ValidDatabaseName(ok); err != nil {
			t.Errorf("%q rejected: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "2x", "a-b", "a.b", "a`b", "a b"} {
		if err := ValidDatabaseName(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
