// Package migrations holds ctxaudit's versioned ClickHouse DDL, embedded in
// the binary, and applies it in order, recording each applied version in
// <db>.schema_migrations.
//
// A migration file is sql/NNNN_name.sql: statements separated by a line that
// ends in ';', rendered with text/template where {{ident .Database}} is the
// backtick-quoted database name, written in the SQL ClickHouse 18.16
// understands and rendered for the server's version (render.go). Every statement must be idempotent (IF NOT
// EXISTS / IF EXISTS) so that a run interrupted half-way can simply be
// repeated.
package migrations

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/template"
	"time"
)

//go:embed sql/*.sql
var files embed.FS

// Migration is one embedded DDL file.
type Migration struct {
	Version  uint32
	Name     string
	Checksum string // SHA-256 of the template text, hex
	text     string
}

// Statements renders the migration for database db as written (the 18.16
// rendering) and splits it into statements.
func (m Migration) Statements(db string) ([]string, error) {
	return m.StatementsFor(db, Classic)
}

// StatementsFor renders the migration for database db on a server of
// version v and splits it into statements.
func (m Migration) StatementsFor(db string, v ServerVersion) ([]string, error) {
	tmpl, err := template.New(m.Name).Funcs(template.FuncMap{"ident": QuoteIdent}).Parse(m.text)
	if err != nil {
		return nil, fmt.Errorf("migration %04d %s: %w", m.Version, m.Name, err)
	}
	var b bytes.Buffer
	if err := tmpl.Execute(&b, struct{ Database string }{db}); err != nil {
		return nil, fmt.Errorf("migration %04d %s: %w", m.Version, m.Name, err)
	}
	stmts := splitStatements(b.String())
	for i, s := range stmts {
		r, err := render(s, v)
		if err != nil {
			return nil, fmt.Errorf("migration %04d %s statement %d: render for ClickHouse %s: %w", m.Version, m.Name, i+1, v, err)
		}
		stmts[i] = r
	}
	return stmts, nil
}

var fileName = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.sql$`)

// All returns the embedded migrations in version order.
func All() ([]Migration, error) {
	entries, err := fs.ReadDir(files, "sql")
	if err != nil {
		return nil, fmt.Errorf("read embedded migrations: %w", err)
	}
	var out []Migration
	for _, e := range entries {
		m := fileName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("embedded migration %q: name must look like 0001_name.sql", e.Name())
		}
		v, _ := strconv.ParseUint(m[1], 10, 32)
		text, err := files.ReadFile(path.Join("sql", e.Name()))
		if err != nil {
			return nil, fmt.Errorf("read embedded migration %s: %w", e.Name(), err)
		}
		sum := sha256.Sum256(text)
		out = append(out, Migration{Version: uint32(v), Name: m[2], Checksum: hex.EncodeToString(sum[:]), text: string(text)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i := 1; i < len(out); i++ {
		if out[i].Version == out[i-1].Version {
			return nil, fmt.Errorf("two embedded migrations have version %04d", out[i].Version)
		}
	}
	return out, nil
}

// Latest is the highest embedded version: the schema this binary speaks.
func Latest() uint32 {
	all, err := All()
	if err != nil || len(all) == 0 {
		return 0
	}
	return all[len(all)-1].Version
}

// splitStatements cuts on lines ending in ';' and drops comment-only chunks.
func splitStatements(sql string) []string {
	var out []string
	var cur strings.Builder
	flush := func() {
		s := strings.TrimSpace(cur.String())
		cur.Reset()
		if s == "" || onlyComments(s) {
			return
		}
		out = append(out, s)
	}
	for _, line := range strings.Split(sql, "\n") {
		trimmed := strings.TrimRight(line, " \t\r")
		if strings.HasPrefix(strings.TrimSpace(trimmed), "--") {
			continue
		}
		if strings.HasSuffix(trimmed, ";") {
			cur.WriteString(strings.TrimSuffix(trimmed, ";"))
			flush()
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
	}
	flush()
	return out
}

func onlyComments(s string) bool {
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "--") {
			return false
		}
	}
	return true
}

var identRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ValidDatabaseName reports whether name is a plain identifier. Database
// names are configuration, so they are restricted rather than escaped.
func ValidDatabaseName(name string) error {
	if !identRe.MatchString(name) {
		return fmt.Errorf("invalid database name %q: use letters, digits and underscores, not starting with a digit", name)
	}
	return nil
}

// QuoteIdent backtick-quotes an identifier (callers validate it first).
func QuoteIdent(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }

// Execer is the part of a ClickHouse connection migrations need.
type Execer interface {
	Exec(ctx context.Context, query string, args ...any) error
	// AppliedVersions returns version → checksum of the rows in schema_migrations.
	AppliedVersions(ctx context.Context, db string) (map[uint32]string, error)
	RecordVersion(ctx context.Context, db string, m Migration, at time.Time) error
}

// ErrDatabaseNewer is returned when the database was migrated by a newer ctxaudit.
var ErrDatabaseNewer = errors.New("database schema is newer than this ctxaudit binary")

// Result says what Apply did.
type Result struct {
	Database string
	Applied  []Migration // newly applied, in order
	Current  uint32      // schema version after the run
}

// Bootstrap is what Apply runs before reading the applied versions: the
// database and the migrations table (the same on every server version).
func Bootstrap(db string) []string {
	q := QuoteIdent(db)
	return []string{
		"CREATE DATABASE IF NOT EXISTS " + q,
		"CREATE TABLE IF NOT EXISTS " + q + ".schema_migrations (version UInt32, name String, checksum String, applied_at DateTime) ENGINE = MergeTree() ORDER BY version",
	}
}

// Apply creates the database and the migrations table if needed, refuses a
// database newer than the binary, and applies pending migrations in order,
// rendered for a server of version v.
func Apply(ctx context.Context, x Execer, db string, v ServerVersion) (Result, error) {
	res := Result{Database: db}
	if err := ValidDatabaseName(db); err != nil {
		return res, err
	}
	all, err := All()
	if err != nil {
		return res, err
	}
	for _, stmt := range Bootstrap(db) {
		if err := x.Exec(ctx, stmt); err != nil {
			return res, fmt.Errorf("bootstrap %s: %w", db, err)
		}
	}
	applied, err := x.AppliedVersions(ctx, db)
	if err != nil {
		return res, fmt.Errorf("read %s.schema_migrations: %w", db, err)
	}
	latest := all[len(all)-1].Version
	for v := range applied {
		if v > res.Current {
			res.Current = v
		}
	}
	if res.Current > latest {
		return res, fmt.Errorf("%w: database %s is at version %d, this binary knows up to %d; upgrade ctxaudit", ErrDatabaseNewer, db, res.Current, latest)
	}
	for _, m := range all {
		if sum, ok := applied[m.Version]; ok {
			if sum != m.Checksum {
				return res, fmt.Errorf("migration %04d_%s was changed after it was applied to %s (checksum %s, now %s): add a new migration instead of editing an applied one", m.Version, m.Name, db, short(sum), short(m.Checksum))
			}
			continue
		}
		stmts, err := m.StatementsFor(db, v)
		if err != nil {
			return res, err
		}
		for i, stmt := range stmts {
			// An ADD COLUMN that finds its column is the trace of an earlier,
			// interrupted run: that statement is done.
			sql, column := alterFor(stmt, v)
			if err := x.Exec(ctx, sql); err != nil {
				if columnExists(err, column) {
					continue
				}
				return res, fmt.Errorf("migration %04d_%s statement %d: %w", m.Version, m.Name, i+1, err)
			}
		}
		if err := x.RecordVersion(ctx, db, m, time.Now()); err != nil {
			return res, fmt.Errorf("record migration %04d_%s: %w", m.Version, m.Name, err)
		}
		res.Applied = append(res.Applied, m)
		res.Current = m.Version
	}
	return res, nil
}

// addColumnRe matches a statement that adds one column idempotently.
var addColumnRe = regexp.MustCompile("(?is)^(ALTER\\s+TABLE\\s+\\S+\\s+ADD\\s+COLUMN)\\s+IF\\s+NOT\\s+EXISTS\\s+(`[^`]+`|[A-Za-z_][A-Za-z0-9_]*)(\\s.*)$")

// alterFor is stmt as a server of version v runs it: servers with the
// modern rendering take ADD COLUMN IF NOT EXISTS and MODIFY COLUMN IF EXISTS
// as written; older ones get the plain forms (portableAlter) and the column
// an ADD COLUMN may find already there.
func alterFor(stmt string, v ServerVersion) (sql, column string) {
	if v.Modern() {
		return stmt, ""
	}
	return portableAlter(stmt)
}

// modifyColumnRe matches a statement that changes one column's type
// idempotently.
var modifyColumnRe = regexp.MustCompile(`(?is)^(ALTER\s+TABLE\s+\S+\s+MODIFY\s+COLUMN)\s+IF\s+EXISTS\s+(.*)$`)

// portableAlter rewrites "ALTER TABLE t ADD COLUMN IF NOT EXISTS c …",
// which ClickHouse 18.16 cannot parse, into the plain ADD COLUMN every
// version accepts, and returns the column name so that the caller can take
// "already exists" as done. "MODIFY COLUMN IF EXISTS c T", which 18.16
// cannot parse either, becomes the plain MODIFY COLUMN: the migrations only
// modify columns an earlier one created, and modifying a column to the type
// it has is a no-op, so the plain form can be repeated as it is. Any other
// statement is returned unchanged with an empty column name.
func portableAlter(stmt string) (sql, column string) {
	if m := modifyColumnRe.FindStringSubmatch(stmt); m != nil {
		return m[1] + " " + m[2], ""
	}
	m := addColumnRe.FindStringSubmatch(stmt)
	if m == nil {
		return stmt, ""
	}
	return m[1] + " " + m[2] + m[3], strings.Trim(m[2], "`")
}

// columnExists reports whether err is the server refusing to add column
// because it is already there (18.16: "Cannot add column c: column with
// this name already exists"; current versions quote the name).
func columnExists(err error, column string) bool {
	if err == nil || column == "" {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "column with this name already exists") &&
		(strings.Contains(msg, "Cannot add column "+column+":") || strings.Contains(msg, "Cannot add column `"+column+"`:"))
}

// Step is one statement of a migration plan.
type Step struct {
	Migration Migration // zero for the bootstrap statements
	SQL       string
}

// Plan lists the statements Apply would run on a server of version v for a
// database whose schema_migrations holds applied (nil for a new database):
// the bootstrap, then every pending migration's statements in order. It
// refuses what Apply refuses (a newer or an edited database).
func Plan(db string, v ServerVersion, applied map[uint32]string) ([]Step, error) {
	if err := ValidDatabaseName(db); err != nil {
		return nil, err
	}
	all, err := All()
	if err != nil {
		return nil, err
	}
	var out []Step
	for _, s := range Bootstrap(db) {
		out = append(out, Step{SQL: s})
	}
	latest := all[len(all)-1].Version
	for av := range applied {
		if av > latest {
			return nil, fmt.Errorf("%w: database %s is at version %d, this binary knows up to %d; upgrade ctxaudit", ErrDatabaseNewer, db, av, latest)
		}
	}
	for _, m := range all {
		if sum, ok := applied[m.Version]; ok {
			if sum != m.Checksum {
				return nil, fmt.Errorf("migration %04d_%s was changed after it was applied to %s (checksum %s, now %s)", m.Version, m.Name, db, short(sum), short(m.Checksum))
			}
			continue
		}
		stmts, err := m.StatementsFor(db, v)
		if err != nil {
			return nil, err
		}
		for _, s := range stmts {
			sql, _ := alterFor(s, v)
			out = append(out, Step{Migration: m, SQL: sql})
		}
	}
	return out, nil
}

func short(sum string) string {
	if len(sum) > 12 {
		return sum[:12]
	}
	return sum
}
