package chdbtest

import (
	"context"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/ctxaudit/ctxaudit/internal/chtest"
)

func TestMain(m *testing.M) { os.Exit(Done(chtest.Run(m))) }

func TestEngineIsTheCurrentRelease(t *testing.T) {
	e := Open(t)
	if !strings.HasPrefix(e.Version(), "26.7.") {
		t.Fatalf("chDB version %q, want 26.7.x (the package %s)", e.Version(), Package)
	}
}

func TestBindQuotesAsTheDriverDoes(t *testing.T) {
	got, err := Bind("SELECT '?', `a?`, ? -- ?\n, ?, ?, ?, ? \\?",
		`it's \ here`, uint32(7), int64(-3), clickhouse.GroupSet{Value: []any{"a", uint32(1)}}, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	want := "SELECT '?', `a?`, 'it\\'s \\\\ here' -- ?\n, 7, -3, ('a', 1), cast(0.5, 'Float64') ?"
	if got != want {
		t.Errorf("Bind =\n%s\nwant\n%s", got, want)
	}
	if _, err := Bind("SELECT ?, ?", 1); err == nil {
		t.Error("too few arguments accepted")
	}
	if _, err := Bind("SELECT ?", struct{}{}); err == nil {
		t.Error("an unsupported argument type was accepted")
	}
}

// The adapter round-trips every type the audit tables use, with the
// driver's time encoding: seconds for DateTime, truncation for DateTime64.
func TestConnRoundTrip(t *testing.T) {
	e := Open(t)
	db := e.NewDatabase(t)
	ctx := context.Background()
	c := e.Conn()
	if err := c.Exec(ctx, "CREATE TABLE "+db+".t (s LowCardinality(String), e Enum8('a' = 1, 'b' = 2), ts DateTime, ms DateTime64(3), n Nullable(UInt64), f Nullable(Float64), a Array(Array(String)), u UInt8) ENGINE = MergeTree ORDER BY s"); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 987654321, time.UTC)
	b, err := c.PrepareBatch(ctx, "INSERT INTO `"+db+"`.`t` (s, e, ts, ms, n, f, a, u)")
	if err != nil {
		t.Fatal(err)
	}
	n := uint64(42)
	if err := b.Append("x'\"\\y", "b", at, at, &n, (*float64)(nil), [][]string{{"p", "q"}, {}}, uint8(1)); err != nil {
		t.Fatal(err)
	}
	if err := b.Send(); err != nil {
		t.Fatal(err)
	}
	var (
		s, en  string
		ts, ms time.Time
		np     *uint64
		fp     *float64
		a      [][]string
		u      uint8
		inf    float64
	)
	if err := c.QueryRow(ctx, "SELECT s, e, ts, ms, n, f, a, u, 1/0 FROM "+db+".t WHERE s = ?", "x'\"\\y").Scan(&s, &en, &ts, &ms, &np, &fp, &a, &u, &inf); err != nil {
		t.Fatal(err)
	}
	if s != "x'\"\\y" || en != "b" || np == nil || *np != 42 || fp != nil || len(a) != 2 || a[0][1] != "q" || u != 1 || !math.IsInf(inf, 1) {
		t.Errorf("read back %q %q %v %v %v %d %v", s, en, np, fp, a, u, inf)
	}
	// Bare table names resolve in the connection's database, as in Grafana's.
	var rows uint64
	if err := e.ConnIn(db).QueryRow(ctx, "SELECT count() FROM t").Scan(&rows); err != nil || rows != 1 {
		t.Errorf("count() FROM t in %s: %d, %v", db, rows, err)
	}
	if err := c.QueryRow(ctx, "SELECT count() FROM t").Scan(&rows); err == nil {
		t.Error("a bare table name resolved outside the connection's database")
	}
	if !ts.Equal(at.Truncate(time.Second)) || !ms.Equal(at.Truncate(time.Millisecond)) {
		t.Errorf("times read back as %s and %s, want %s and %s", ts, ms, at.Truncate(time.Second), at.Truncate(time.Millisecond))
	}
}

// The product binary must not depend on chDB: it is a test engine only.
func TestProductDoesNotLinkChDB(t *testing.T) {
	for _, tags := range []string{"", "chdb"} {
		out, err := exec.Command("go", "list", "-tags", tags, "-deps", "github.com/ctxaudit/ctxaudit/cmd/ctxaudit").CombinedOutput()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			if strings.Contains(dep, "chdb") {
				t.Errorf("cmd/ctxaudit (tags %q) depends on %s", tags, dep)
			}
		}
	}
}
