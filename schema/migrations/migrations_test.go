package migrations

import (
	"errors"
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
		// Versions run 1, 2, 3, … without gaps, so a missing file is caught.
		if want := uint32(i + 1); m.Version != want {
			t.Errorf("migration %d (%s) has version %d, want %d: versions run from 1 without gaps", i, m.Name, m.Version, want)
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
			if !strings.Contains(s, "IF NOT EXISTS") && !strings.Contains(s, "IF EXISTS") {
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

func TestPortableAlter(t *testing.T) {
	tests := []struct {
		name, stmt, sql, column string
	}{
		{"plain name", "ALTER TABLE `db`.tool_calls ADD COLUMN IF NOT EXISTS shown_tail_end Nullable(UInt64) AFTER shown_tail_start",
			"ALTER TABLE `db`.tool_calls ADD COLUMN shown_tail_end Nullable(UInt64) AFTER shown_tail_start", "shown_tail_end"},
		{"quoted name, lower case, newline", "alter table `db`.t add column if not exists `p q`\n  UInt8",
			"alter table `db`.t add column `p q`\n  UInt8", "p q"},
		{"create table is left alone", "CREATE TABLE IF NOT EXISTS `db`.t (a UInt8) ENGINE = Log",
			"CREATE TABLE IF NOT EXISTS `db`.t (a UInt8) ENGINE = Log", ""},
		{"add column without IF NOT EXISTS is left alone", "ALTER TABLE `db`.t ADD COLUMN a UInt8",
			"ALTER TABLE `db`.t ADD COLUMN a UInt8", ""},
		{"modify column if exists", "ALTER TABLE `db`.tool_calls MODIFY COLUMN IF EXISTS strategy Enum8('none' = 0, 'resized' = 9)",
			"ALTER TABLE `db`.tool_calls MODIFY COLUMN strategy Enum8('none' = 0, 'resized' = 9)", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sql, column := portableAlter(tt.stmt)
			if sql != tt.sql || column != tt.column {
				t.Errorf("portableAlter = %q, %q; want %q, %q", sql, column, tt.sql, tt.column)
			}
		})
	}
}

func TestColumnExists(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		column string
		want   bool
	}{
		{"18.16 wording", errors.New("code: 44, message: Cannot add column shown_tail_end: column with this name already exists"), "shown_tail_end", true},
		{"current wording", errors.New("code: 44, message: Cannot add column `shown_tail_end`: column with this name already exists. (ILLEGAL_COLUMN)"), "shown_tail_end", true},
		{"another column", errors.New("Cannot add column shown_tail_end: column with this name already exists"), "shown_tail", false},
		{"another error", errors.New("code: 60, message: Table db.tool_calls doesn't exist"), "shown_tail_end", false},
		{"not an add column statement", errors.New("Cannot add column a: column with this name already exists"), "", false},
		{"no error", nil, "a", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := columnExists(tt.err, tt.column); got != tt.want {
				t.Errorf("columnExists = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestAddColumnStatementsAddOne: the runner takes "already exists" as done
// for one column, so a statement must not add two.
func TestAddColumnStatementsAddOne(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	addCol := regexp.MustCompile(`(?i)\bADD\s+COLUMN\b`)
	for _, m := range all {
		stmts, _ := m.Statements("ctxaudit")
		for _, s := range stmts {
			n := len(addCol.FindAllString(s, -1))
			if n > 1 {
				t.Errorf("migration %04d_%s adds %d columns in one statement: %.80s", m.Version, m.Name, n, s)
			}
			if n == 1 {
				if _, column := portableAlter(s); column == "" {
					t.Errorf("migration %04d_%s: ADD COLUMN without IF NOT EXISTS: %.80s", m.Version, m.Name, s)
				}
			}
		}
	}
}
