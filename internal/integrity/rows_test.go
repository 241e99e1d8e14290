package integrity

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

// table is one audit table and the columns of its stable id.
type table struct {
	name string
	key  string // a ClickHouse expression naming one record
}

var tables = []table{
	{"tool_calls", "concat(session_id, '/', call_id)"},
	{"answers", "concat(session_id, '/', message_id)"},
	{"sessions", "session_id"},
	{"tool_outputs", "sha256"},
}

// row is one stored record, column name -> value as text ("NULL" for NULL).
type row map[string]string

// knowledge is a pseudo-column: the knowledge rank of a row's version.
const knowledge = "(knowledge)"

// columns lists a table's columns in order, and the knowledge rank.
func columns(t *testing.T, s *chstore.Store, tbl string) []string {
	t.Helper()
	rows, err := s.Conn().Query(context.Background(),
		"SELECT name FROM system.columns WHERE database = ? AND table = ?", s.Database(), tbl)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return append(out, knowledge)
}

// read runs a query whose first column is the id and the rest are the
// table's columns, as text.
func read(t *testing.T, s *chstore.Store, cols []string, from string) map[string][]row {
	t.Helper()
	exprs := make([]string, len(cols))
	for i, c := range cols {
		exprs[i] = fmt.Sprintf("ifNull(toString(%s), 'NULL')", c)
		if c == knowledge {
			// What the row knows: the version without its write clock
			// (see schema/chstore/version.go), the same on every path.
			exprs[i] = "toString(bitShiftRight(version, 41))"
		}
	}
	// from starts "SELECT <id expression> FROM": the columns follow the id.
	head, rest, _ := strings.Cut(from, " FROM ")
	q := strings.Replace(head, "SELECT ", "SELECT toString(", 1) + "), " + strings.Join(exprs, ", ") + " FROM " + rest
	rows, err := s.Conn().Query(context.Background(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	out := map[string][]row{}
	vals := make([]string, len(cols)+1)
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		r := row{}
		for i, c := range cols {
			r[c] = vals[i+1]
		}
		out[vals[0]] = append(out[vals[0]], r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// stored returns every table's records as the CLI reads them (the highest
// version of each id), after checking that FINAL, argMax(…, version) and
// LIMIT 1 BY keep exactly that row of every id and that no two rows of one
// id share a version. Nothing may be writing: the three reads are separate
// queries.
func stored(t *testing.T, s *chstore.Store) map[string]map[string]row {
	t.Helper()
	out, problems := readStored(t, s)
	for _, p := range problems {
		t.Error(p)
	}
	return out
}

// readStored is stored, returning what the checks found instead of
// reporting it: while a collector still writes, a row can land between the
// LIMIT 1 BY read and the FINAL one, and the reads disagree for a moment.
func readStored(t *testing.T, s *chstore.Store) (map[string]map[string]row, []string) {
	t.Helper()
	var problems []string
	errorf := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	out := map[string]map[string]row{}
	for _, tb := range tables {
		cols := columns(t, s, tb.name)
		fq := func(q string) string {
			q = strings.ReplaceAll(q, "{K}", tb.key)
			return strings.ReplaceAll(q, "{T}", s.Database()+"."+tb.name)
		}
		limit := read(t, s, cols, fq("SELECT {K} FROM {T} ORDER BY {K}, version DESC LIMIT 1 BY {K}"))
		final := read(t, s, cols, fq("SELECT {K} FROM {T} FINAL"))
		argMax := read(t, s, []string{"v"}, fq("SELECT id FROM (SELECT {K} AS id, argMax(version, version) AS v FROM {T} GROUP BY id)"))
		dups := scalar(t, s, fq("SELECT count() FROM (SELECT {K} AS id, version, count() AS n FROM {T} GROUP BY id, version HAVING n > 1)"))
		if dups != "0" {
			errorf("%s: %s ids have two rows of one version", tb.name, dups)
		}
		recs := map[string]row{}
		for k, rs := range limit {
			r := rs[0]
			if f := final[k]; len(f) != 1 || !equalRows(f[0], r) {
				errorf("%s %s: FINAL keeps %d rows %v, LIMIT 1 BY keeps %v", tb.name, k, len(f), f, r)
			}
			if a := argMax[k]; len(a) != 1 || a[0]["v"] != r["version"] {
				errorf("%s %s: argMax keeps version %v, LIMIT 1 BY %s", tb.name, k, a, r["version"])
			}
			recs[k] = r
		}
		if len(final) != len(limit) {
			errorf("%s: FINAL has %d ids, LIMIT 1 BY %d", tb.name, len(final), len(limit))
		}
		out[tb.name] = recs
	}
	return out, problems
}

func equalRows(a, b row) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// compareStored fails for every record one side has and the other lacks,
// and for every column (but those in skip) whose values differ.
func compareStored(t *testing.T, what string, want, got map[string]map[string]row, skip ...string) {
	t.Helper()
	for _, tb := range tables {
		if diffs := diffStored(want, got, skip...)[tb.name]; len(diffs) > 0 {
			if len(diffs) > 40 {
				diffs = append(diffs[:40], fmt.Sprintf("  … %d more", len(diffs)-40))
			}
			t.Errorf("%s: %s differs in %d places:\n%s", what, tb.name, len(diffs), strings.Join(diffs, "\n"))
		}
	}
}

// diffStored lists, per table, the records one side has and the other
// lacks and the columns (but those in skip) whose values differ, sorted.
func diffStored(want, got map[string]map[string]row, skip ...string) map[string][]string {
	skipped := map[string]bool{"version": true}
	for _, s := range skip {
		skipped[s] = true
	}
	out := map[string][]string{}
	for _, tb := range tables {
		w, g := want[tb.name], got[tb.name]
		if skipped[tb.name] {
			continue
		}
		var diffs []string
		for k, wr := range w {
			gr, ok := g[k]
			if !ok {
				diffs = append(diffs, fmt.Sprintf("  %s: missing", k))
				continue
			}
			for c, wv := range wr {
				if skipped[c] || skipped[tb.name+"."+c] {
					continue
				}
				if gv := gr[c]; gv != wv {
					diffs = append(diffs, fmt.Sprintf("  %s %s: %q, want %q", k, c, clip(gv), clip(wv)))
				}
			}
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				diffs = append(diffs, fmt.Sprintf("  %s: not expected", k))
			}
		}
		if len(diffs) > 0 {
			sort.Strings(diffs)
			out[tb.name] = diffs
		}
	}
	return out
}

// waitStored waits until s holds exactly want (as compareStored compares),
// or 60 s have passed; the comparison that follows names what differs.
// Counting records is not enough where a record is written more than once
// (a session analysed again as it grows): the count is reached with the
// earlier row while the later one is still on its way.
func waitStored(t *testing.T, s *chstore.Store, want map[string]map[string]row) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		// Checked once the writer has stopped (stored), not while it writes.
		if got, _ := readStored(t, s); len(diffStored(want, got)) == 0 {
			return
		}
	}
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}
