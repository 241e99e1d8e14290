// Package chtest gives integration tests a real ClickHouse server.
//
// A test package calls chtest.Main from TestMain. If CTXAUDIT_TEST_CLICKHOUSE
// names a server (clickhouse://user:pass@host:port), tests use it; otherwise
// the first test that needs a server starts clickhouse-server from PATH in a
// temp dir on free loopback ports, and Main stops it (removing the dir) when
// the package's tests end. Each test then asks for a fresh database with
// NewStore, so tests never see each other's rows. Without a server,
// integration tests are skipped — except in CI (CI=true), where a missing
// server fails them loudly.
package chtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/internal/chserver"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

// EnvAddress names an existing server to test against.
const EnvAddress = "CTXAUDIT_TEST_CLICKHOUSE"

// The harness is per test binary: TestMain runs once per package, before any
// test. The server is started by the first test that asks for it, not by
// TestMain: a test binary that needs none (a fuzz worker, a -run that picks
// only unit tests) starts none. harness is the package's one instance.
var harness struct {
	main     bool // Main (or Run) was called
	external bool // EnvAddress names the server

	start   sync.Once
	srv     *chserver.Server
	addr    string // clickhouse://user@host:port (no database)
	unavail error
}

// Main runs the tests, with the server of EnvAddress or one started when a
// test first needs it, and stops a server it started.
// Use it as: func TestMain(m *testing.M) { chtest.Main(m) }
func Main(m *testing.M) {
	os.Exit(Run(m))
}

// Run is Main without the exit: it returns the tests' exit code, so that a
// TestMain can release other resources first.
func Run(m *testing.M) int { return run(m) }

func run(m *testing.M) int {
	harness.main = true
	if addr := os.Getenv(EnvAddress); addr != "" {
		u, err := url.Parse(addr)
		if err != nil {
			fmt.Fprintf(os.Stderr, "chtest: %s=%q: %v\n", EnvAddress, addr, err)
			return 2
		}
		u.Path = ""
		harness.external, harness.addr = true, u.String()
		return m.Run()
	}
	code := m.Run()
	if harness.srv != nil {
		if err := harness.srv.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "chtest: stop server: %v\n", err)
		}
	}
	return code
}

// server is the server's address (no database), starting it the first
// time; every later call waits for that start and gets its result.
func server() (string, error) {
	if harness.external {
		return harness.addr, nil
	}
	harness.start.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		srv, err := chserver.Start(ctx, chserver.Options{})
		if err != nil {
			harness.unavail = err
			return
		}
		harness.srv = srv
		harness.addr = fmt.Sprintf("clickhouse://default@127.0.0.1:%d", srv.TCPPort)
	})
	return harness.addr, harness.unavail
}

func inCI() bool {
	v := strings.ToLower(os.Getenv("CI"))
	return v == "true" || v == "1"
}

// Address returns the server address with a fresh, unique database name (not
// created), and registers a cleanup that drops that database.
func Address(t testing.TB) string {
	t.Helper()
	if !harness.main {
		t.Fatal("chtest: call chtest.Main(m) from TestMain before using the harness")
	}
	base, err := server()
	if err != nil {
		if inCI() {
			t.Fatalf("chtest: CI=true but no ClickHouse server could be started: %v", err)
		}
		t.Skipf("no ClickHouse server: %v (set %s or install clickhouse-server)", err, EnvAddress)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	db := "ctxaudit_test_" + hex.EncodeToString(b[:])
	addr := base + "/" + db
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s, err := chstore.Open(ctx, addr, chstore.Options{})
		if err != nil {
			t.Logf("chtest: drop %s: %v", db, err)
			return
		}
		defer s.Close()
		if err := s.Conn().Exec(ctx, "DROP DATABASE IF EXISTS "+db); err != nil {
			t.Logf("chtest: drop %s: %v", db, err)
		}
	})
	return addr
}

// NewStore opens a store on a fresh database and migrates it.
func NewStore(t testing.TB) *chstore.Store {
	t.Helper()
	_, s := NewDatabase(t)
	return s
}

// NewDatabase is NewStore with the database's address, for a test that
// also hands it to a command or a collector.
func NewDatabase(t testing.TB) (string, *chstore.Store) {
	t.Helper()
	addr := Address(t)
	s := OpenStore(t, addr)
	if _, err := s.Migrate(context.Background()); err != nil {
		t.Fatalf("chtest: migrate: %v", err)
	}
	return addr, s
}

// OpenStore opens a store on addr and closes it at cleanup.
func OpenStore(t testing.TB, addr string) *chstore.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := chstore.Open(ctx, addr, chstore.Options{})
	if err != nil {
		t.Fatalf("chtest: open %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// StartServer starts a server of its own for one test, configured by opts
// (a time zone of its own, say), and stops it at cleanup. Like Address, it
// skips the test where no server can be started, and fails it in CI.
func StartServer(t testing.TB, opts chserver.Options) *chserver.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	srv, err := chserver.Start(ctx, opts)
	if err != nil {
		if inCI() || !errors.Is(err, chserver.ErrNoBinary) {
			t.Fatalf("chtest: start a ClickHouse server: %v", err)
		}
		t.Skipf("no ClickHouse server: %v (install clickhouse-server)", err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Logf("chtest: stop server: %v", err)
		}
	})
	return srv
}
