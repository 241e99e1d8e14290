// Package chdbtest gives tests a second ClickHouse engine: chDB, the
// in-process build of a current ClickHouse (26.7), loaded from the shared
// library that the npm package @chdb/lib-linux-x64-gnu ships. It is for tests
// only; the ctxaudit binary never links it (TestProductDoesNotLinkChDB).
//
// chDB is an embedded engine, not a server, so clickhouse-go cannot reach
// it; Conn adapts it to the driver's Conn interface instead, so that the
// very code under test (chstore's queries and writers) runs on it unchanged:
// query parameters are bound into the text the way the driver binds them,
// results come back as JSON and are scanned into the same Go types, and a
// batch insert becomes INSERT … FORMAT JSONEachRow with the values encoded
// as the driver encodes them for the column's type.
//
// The library is installed by scripts/install-chdb.sh (`make deps`, which
// `make test` and .ci/run use) into Dir, and the binding is compiled only
// with -tags chdb (chdb-go loads the library when the test binary starts
// and cannot start without it). Without the tag or the library the
// cross-engine tests are skipped — except in CI (CI=true), where that fails.
//
// One chDB session serves a whole test binary (it is a process-wide
// engine); every test gets its own database in it.
package chdbtest

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Package is the npm package (and version) that ships libchdb.so.
const Package = "@chdb/lib-linux-x64-gnu@26.7.3-stable.1"

// Environment.
const (
	// EnvLib is where chdb-go looks for the library first.
	EnvLib = "CHDB_LIB_PATH"
	// EnvDir overrides the folder the npm package is installed into.
	EnvDir = "CTXAUDIT_CHDB_DIR"
)

// Dir is the folder the npm package is installed into: EnvDir, else
// /var/cache/ctxaudit/chdb (shared by every checkout on the machine, so CI
// downloads the 540 MB package once).
func Dir() string {
	if d := os.Getenv(EnvDir); d != "" {
		return d
	}
	return "/var/cache/ctxaudit/chdb"
}

// LibPath is the library chdb-go loads: EnvLib, else the one in Dir.
func LibPath() string {
	if p := os.Getenv(EnvLib); p != "" {
		return p
	}
	return filepath.Join(Dir(), "node_modules", "@chdb", "lib-linux-x64-gnu", "libchdb.so")
}

// querier is one chDB session: it runs a statement and returns its output
// in the given format.
type querier interface {
	Query(sql, format string) ([]byte, error)
	Close()
}

// opener opens the process-wide session in dir; set by the file built with
// -tags chdb.
var opener func(dir string) (querier, error)

// Engine is the process-wide chDB session. It is safe for concurrent use:
// statements run one at a time.
type Engine struct {
	mu      sync.Mutex
	q       querier
	dir     string
	version string
	current string // the session's current database
}

var shared struct {
	once sync.Once
	eng  *Engine
	err  error
}

func inCI() bool {
	v := strings.ToLower(os.Getenv("CI"))
	return v == "true" || v == "1"
}

// errNoBinding says the binding was not compiled in.
var errNoBinding = errors.New("the chDB binding is built only with -tags chdb (make test sets it)")

func open() (*Engine, error) {
	if opener == nil {
		return nil, errNoBinding
	}
	if _, err := os.Stat(LibPath()); err != nil {
		return nil, fmt.Errorf("chDB library %s: %w (run scripts/install-chdb.sh or make deps)", LibPath(), err)
	}
	dir, err := os.MkdirTemp("", "ctxaudit-chdb-")
	if err != nil {
		return nil, err
	}
	q, err := opener(dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("open chDB session in %s: %w", dir, err)
	}
	e := &Engine{q: q, dir: dir, current: "default"}
	// Integers as JSON numbers, so that they scan exactly into Go
	// integers; NaN and infinities as "nan", "inf" (JSON has neither).
	for _, set := range []string{"SET output_format_json_quote_64bit_integers = 0", "SET output_format_json_quote_denormals = 1"} {
		if _, err := e.query(set, "TSV"); err != nil {
			e.close()
			return nil, err
		}
	}
	out, err := e.query("SELECT version()", "TSV")
	if err != nil {
		e.close()
		return nil, err
	}
	e.version = strings.TrimSpace(string(out))
	return e, nil
}

// Open returns the shared engine, opening it on first use. Without chDB
// the test is skipped, or fails in CI.
func Open(t testing.TB) *Engine {
	t.Helper()
	shared.once.Do(func() { shared.eng, shared.err = open() })
	if shared.err != nil {
		if inCI() {
			t.Fatalf("chdbtest: CI=true but chDB is unavailable: %v", shared.err)
		}
		t.Skipf("chDB unavailable: %v", shared.err)
	}
	return shared.eng
}

// Close ends the shared session and removes its folder; call it after the
// package's tests, e.g. os.Exit(chdbtest.Done(chtest.Run(m))).
func Close() {
	if shared.eng != nil {
		shared.eng.close()
	}
}

// Done closes the shared session and passes code through.
func Done(code int) int {
	Close()
	return code
}

func (e *Engine) close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.q != nil {
		e.q.Close()
		e.q = nil
	}
	_ = os.RemoveAll(e.dir)
}

// Version is the engine's version(), e.g. "26.7.2.1".
func (e *Engine) Version() string { return e.version }

func (e *Engine) query(sql, format string) ([]byte, error) { return e.queryIn("", sql, format) }

// queryIn runs sql with db as the current database when db is set: the
// session's USE and the statement run under one lock, so that concurrent
// tests with different databases do not interleave.
func (e *Engine) queryIn(db, sql, format string) ([]byte, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.q == nil {
		return nil, errors.New("chDB session is closed")
	}
	use := db
	if use == "" {
		use = "default"
	}
	if use != e.current {
		if _, err := e.q.Query("USE "+use, "TSV"); err != nil {
			return nil, fmt.Errorf("chDB: USE %s: %w", use, err)
		}
		e.current = use
	}
	out, err := e.q.Query(sql, format)
	if err != nil {
		return nil, fmt.Errorf("chDB: %w\nin: %s", err, abbreviate(sql))
	}
	return out, nil
}

// Query runs sql and returns its output in format (e.g. "TSV", "JSONEachRow").
func (e *Engine) Query(sql, format string) ([]byte, error) { return e.query(sql, format) }

// Exec runs a statement that returns nothing of interest.
func (e *Engine) Exec(sql string) error {
	_, err := e.query(sql, "TSV")
	return err
}

// NewDatabase creates a fresh database and drops it when the test ends.
func (e *Engine) NewDatabase(t testing.TB) string {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	db := "ctxaudit_test_" + hex.EncodeToString(b[:])
	if err := e.Exec("CREATE DATABASE " + db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := e.queryIn("default", "DROP DATABASE IF EXISTS "+db, "TSV"); err != nil {
			t.Logf("chdbtest: drop %s: %v", db, err)
		}
	})
	return db
}

func abbreviate(s string) string {
	if len(s) > 400 {
		return s[:400] + "…"
	}
	return s
}
