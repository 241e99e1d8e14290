package cli

import (
	"context"
	"net/url"
	"os/exec"
	"strings"
	"testing"

	"github.com/ctxaudit/ctxaudit/internal/chdbtest"
	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
	"github.com/ctxaudit/ctxaudit/schema/migrations"
)

// printedText runs `migrate --print` with args and returns its output.
func printedText(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := run(t, append([]string{"migrate", "--print"}, args...)...)
	if code != ExitOK {
		t.Fatalf("migrate --print %v: exit %d: %s", args, code, errOut)
	}
	if !strings.HasSuffix(strings.TrimSpace(out), ";") && !strings.Contains(out, "every migration is applied") {
		t.Errorf("output does not end in a statement:\n%s", out)
	}
	return out
}

// printed runs `migrate --print` with args and returns its statements.
func printed(t *testing.T, args ...string) []string {
	t.Helper()
	return statements(printedText(t, args...))
}

// statements splits printed SQL into its blocks, each ending in ';', and
// drops the comment lines.
func statements(out string) []string {
	var stmts []string
	for _, block := range strings.Split(out, ";\n") {
		var lines []string
		for _, l := range strings.Split(block, "\n") {
			if !strings.HasPrefix(strings.TrimSpace(l), "--") {
				lines = append(lines, l)
			}
		}
		if s := strings.TrimSpace(strings.Join(lines, "\n")); s != "" {
			stmts = append(stmts, s)
		}
	}
	return stmts
}

func columnTypes(t *testing.T, s *chstore.Store) map[string]string {
	t.Helper()
	rows, err := s.Conn().Query(context.Background(), "SELECT concat(table, '.', name), type FROM system.columns WHERE database = ?", s.Database())
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var col, typ string
		if err := rows.Scan(&col, &typ); err != nil {
			t.Fatal(err)
		}
		out[col] = typ
	}
	return out
}

// The modern rendering, printed without a server, runs on chDB 26.7, creates
// the modern column types, and leaves a database migrate sees as current.
func TestPrintedModernDDLRunsOnChDB(t *testing.T) {
	ctx := context.Background()
	e := chdbtest.Open(t)
	db := e.NewDatabase(t)
	stmts := printed(t, "--server-version", "26.7", "--retention", "30d", "--clickhouse", "clickhouse://default@127.0.0.1:1/"+db)
	for i, q := range stmts {
		if err := e.Exec(q); err != nil {
			t.Fatalf("statement %d: %v", i+1, err)
		}
	}
	s := e.OpenStore(t, db)
	types := columnTypes(t, s)
	for col, want := range map[string]string{
		"tool_calls.ts": "DateTime64(3)", "tool_calls.tool": "LowCardinality(String)", "answers.model": "LowCardinality(String)",
		"tool_calls.marker": "String", "tool_calls.ts_ns": "UInt32", "sessions.started_at": "DateTime",
	} {
		if types[col] != want {
			t.Errorf("%s is %q, want %q", col, types[col], want)
		}
	}
	if err := s.CheckSchema(ctx); err != nil {
		t.Errorf("after the printed DDL: %v", err)
	}
	res, err := s.Migrate(ctx)
	if err != nil || len(res.Applied) != 0 {
		t.Errorf("migrate after the printed DDL applied %v (%v); want nothing", res.Applied, err)
	}
	for table, ttl := range map[string]string{
		"tool_calls":       "TTL toDateTime(toDate(ts) + 1) + toIntervalDay(30)",
		"tool_call_rollup": "TTL toDateTime(makeDate(intDiv(day, 10000), intDiv(day, 100) % 100, day % 100) + 1) + toIntervalDay(30)",
	} {
		out, err := e.Query("SELECT engine_full FROM system.tables WHERE database = '"+db+"' AND name = '"+table+"'", "TSV")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(out), ttl) || !strings.Contains(string(out), "ttl_only_drop_parts = 1") {
			t.Errorf("retention TTL of %s not set: %s", table, out)
		}
	}
}

// The 18.16 rendering, printed without a server, runs on the 18.16 server
// as a DBA would run it (clickhouse-client --multiquery) and creates exactly
// what migrate creates there.
func TestPrinted1816DDLRunsOn1816(t *testing.T) {
	ctx := context.Background()
	addr := chtest.Address(t)
	s := chtest.OpenStore(t, addr)
	client, err := exec.LookPath("clickhouse-client")
	if err != nil {
		t.Fatalf("clickhouse-client (installed with clickhouse-server by make deps): %v", err)
	}
	u, err := url.Parse(addr)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, client, "--host", u.Hostname(), "--port", u.Port(), "--multiquery")
	cmd.Stdin = strings.NewReader(printedText(t, "--server-version", "18.16", "--clickhouse", addr))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("clickhouse-client --multiquery < printed DDL: %v\n%s", err, out)
	}
	if err := s.CheckSchema(ctx); err != nil {
		t.Errorf("after the printed DDL: %v", err)
	}
	ref := chtest.NewStore(t) // what migrate itself creates
	got, want := columnTypes(t, s), columnTypes(t, ref)
	if len(got) == 0 || len(got) != len(want) {
		t.Fatalf("printed DDL made %d columns, migrate %d", len(got), len(want))
	}
	for col, typ := range want {
		if got[col] != typ {
			t.Errorf("%s: printed DDL made %q, migrate %q", col, got[col], typ)
		}
	}
	if got["tool_calls.ts"] != "DateTime" || got["tool_calls.tool"] != "String" {
		t.Errorf("18.16 rendering has ts %q, tool %q", got["tool_calls.ts"], got["tool_calls.tool"])
	}
	// Connected, on a migrated database: only the idempotent bootstrap is left.
	left := printed(t, "--clickhouse", addr)
	if len(left) != 2 || !strings.HasPrefix(left[0], "CREATE DATABASE IF NOT EXISTS") {
		t.Errorf("plan for a migrated database: %q", left)
	}
}

// A database created on 18.16 keeps working after the server is upgraded:
// its tables keep the 18.16 types, migrate on the new version applies
// nothing again (the checksums are of the files, not of a rendering), and
// reads and writes work on it.
func TestUpgradedServerKeepsThe1816Schema(t *testing.T) {
	ctx := context.Background()
	e := chdbtest.Open(t)
	db := e.NewDatabase(t)
	for i, q := range printed(t, "--server-version", "18.16", "--clickhouse", "clickhouse://default@127.0.0.1:1/"+db) {
		if err := e.Exec(q); err != nil {
			t.Fatalf("18.16 statement %d on chDB: %v", i+1, err)
		}
	}
	s := e.OpenStore(t, db)
	res, err := s.Migrate(ctx)
	if err != nil {
		t.Fatalf("migrate on the upgraded server: %v", err)
	}
	if len(res.Applied) != 0 || res.Current != migrations.Latest() {
		t.Errorf("migrate on the upgraded server applied %v, current %d", res.Applied, res.Current)
	}
	if typ := columnTypes(t, s)["tool_calls.ts"]; typ != "DateTime" {
		t.Errorf("tool_calls.ts became %q", typ)
	}
}

func TestPrintUsage(t *testing.T) {
	for _, args := range [][]string{
		{"migrate", "--print", "--server-version", "latest"},
		{"migrate", "--server-version", "26.7"},
	} {
		if code, _, errOut := run(t, args...); code != ExitUsage {
			t.Errorf("%v: exit %d (%s), want usage", args, code, errOut)
		}
	}
}
