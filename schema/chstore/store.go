// Package chstore is ctxaudit's ClickHouse access: it opens a connection from
// a clickhouse:// address, applies the embedded migrations, writes batches of
// schema records with an explicit column list, drops expired partitions, and
// runs the read queries the CLI needs. The collector exporter and `ctxaudit
// ingest` both write through it.
package chstore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/ctxaudit/ctxaudit/collector/redact"
	"github.com/ctxaudit/ctxaudit/schema/migrations"
)

// DefaultDatabase is used when the address names none.
const DefaultDatabase = "ctxaudit"

// DefaultAddress is the local development server (`make clickhouse`).
const DefaultAddress = "clickhouse://default@127.0.0.1:9000/" + DefaultDatabase

// ErrBadAddress marks an address that cannot be parsed (a usage error).
var ErrBadAddress = errors.New("invalid ClickHouse address")

// Store is a connection to ClickHouse bound to one ctxaudit database.
type Store struct {
	conn     driver.Conn
	database string
	addr     string
	redactor *redact.Redactor
	// clock versions this Store's writes (see version.go).
	clock *versionClock
	// outputsStored: tool_outputs was seen holding a text (see
	// anyStoredOutputs).
	outputsStored atomic.Bool
	// omit: per table, the columns an INSERT may leave out when a batch
	// holds only zeros there (see sparse.go).
	omit omittable
}

// Options tune Open. The zero value is sensible.
type Options struct {
	// DialTimeout bounds connection set-up (default 5s).
	DialTimeout time.Duration
	// Database overrides the database named in the address.
	Database string
	// Redactor removes secrets from every text column written (default:
	// the built-in rules). Writing unredacted text is not an option.
	Redactor *redact.Redactor
}

// ParseAddress validates a clickhouse:// address and returns the driver
// options and the ctxaudit database it names (default "ctxaudit").
func ParseAddress(addr string) (*clickhouse.Options, string, error) {
	u, err := url.Parse(addr)
	if err != nil || u.Host == "" || (u.Scheme != "clickhouse" && u.Scheme != "tcp") {
		reason := "expected clickhouse://user:password@host:9000/database"
		if err != nil {
			reason = err.Error()
		}
		return nil, "", fmt.Errorf("%w %q: %s", ErrBadAddress, redactAddress(addr), reason)
	}
	opts, err := clickhouse.ParseDSN(addr)
	if err != nil {
		return nil, "", fmt.Errorf("%w %q: %v", ErrBadAddress, redactAddress(addr), err)
	}
	db := opts.Auth.Database
	if db == "" {
		db = DefaultDatabase
	}
	if err := migrations.ValidDatabaseName(db); err != nil {
		return nil, "", fmt.Errorf("%w %q: %v", ErrBadAddress, redactAddress(addr), err)
	}
	// Connect to the server's default database: ours may not exist yet, and
	// every statement names it explicitly anyway.
	opts.Auth.Database = ""
	return opts, db, nil
}

// Open connects and pings. It does not create or migrate anything.
func Open(ctx context.Context, addr string, o Options) (*Store, error) {
	opts, db, err := ParseAddress(addr)
	if err != nil {
		return nil, err
	}
	if o.Database != "" {
		if err := migrations.ValidDatabaseName(o.Database); err != nil {
			return nil, err
		}
		db = o.Database
	}
	opts.DialTimeout = o.DialTimeout
	if opts.DialTimeout == 0 {
		opts.DialTimeout = 5 * time.Second
	}
	conn, err := clickhouse.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("connect to ClickHouse at %s: %w", strings.Join(opts.Addr, ","), err)
	}
	if err := conn.Ping(ctx); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("connect to ClickHouse at %s: %w", strings.Join(opts.Addr, ","), err)
	}
	red := o.Redactor
	if red == nil {
		red = redact.Default()
	}
	return &Store{conn: conn, database: db, addr: strings.Join(opts.Addr, ","), redactor: red, clock: &versionClock{}}, nil
}

// Database is the ctxaudit database this store reads and writes.
func (s *Store) Database() string { return s.database }

// Addr is the host:port the store is connected to.
func (s *Store) Addr() string { return s.addr }

// Conn exposes the driver connection for queries this package does not wrap.
func (s *Store) Conn() driver.Conn { return s.conn }

// Close releases the connection.
func (s *Store) Close() error { return s.conn.Close() }

// ServerVersion returns the server's version string, e.g. "18.16.1".
func (s *Store) ServerVersion() (string, error) {
	v, err := s.conn.ServerVersion()
	if err != nil {
		return "", fmt.Errorf("server version: %w", err)
	}
	return fmt.Sprintf("%d.%d.%d", v.Version.Major, v.Version.Minor, v.Version.Patch), nil
}

// New binds an open connection to database db (Open does this for an
// address). The connection is closed by Close.
func New(conn driver.Conn, db string) (*Store, error) {
	if err := migrations.ValidDatabaseName(db); err != nil {
		return nil, err
	}
	return &Store{conn: conn, database: db, redactor: redact.Default(), clock: &versionClock{}}, nil
}

// RenderingVersion is the server's version as the migrations see it: which
// rendering of the schema it gets.
func (s *Store) RenderingVersion() (migrations.ServerVersion, error) {
	v, err := s.ServerVersion()
	if err != nil {
		return migrations.ServerVersion{}, err
	}
	return migrations.ParseServerVersion(v)
}

// Migrate applies pending migrations to the store's database, rendered for
// the connected server's version.
func (s *Store) Migrate(ctx context.Context) (migrations.Result, error) {
	v, err := s.RenderingVersion()
	if err != nil {
		return migrations.Result{Database: s.database}, err
	}
	// The rollups' backfill is not done here: it can take minutes on a big
	// database, and a writer opening its store must not wait for it (nor
	// fail with it). `ctxaudit migrate`, ingest and the exporter's refresher
	// call RefreshRollups.
	return migrations.Apply(ctx, execer{s}, s.database, v)
}

// AppliedMigrations returns version → checksum of the migrations applied to
// the store's database (empty when it has none yet).
func (s *Store) AppliedMigrations(ctx context.Context) (map[uint32]string, error) {
	return execer{s}.AppliedVersions(ctx, s.database)
}

// SetRetention gives the audit tables a TTL of retention on servers that
// have TTL (see migrations.RetentionStatements); it reports whether it did.
func (s *Store) SetRetention(ctx context.Context, retention time.Duration) (bool, error) {
	v, err := s.RenderingVersion()
	if err != nil {
		return false, err
	}
	stmts := migrations.RetentionStatements(s.database, v, retention)
	for _, q := range stmts {
		if err := s.conn.Exec(ctx, q); err != nil {
			return false, fmt.Errorf("set retention on %s: %w", s.database, err)
		}
	}
	return len(stmts) > 0, nil
}

// SchemaVersion returns the highest applied migration, 0 for an empty database.
func (s *Store) SchemaVersion(ctx context.Context) (uint32, error) {
	applied, err := execer{s}.AppliedVersions(ctx, s.database)
	if err != nil {
		return 0, err
	}
	var v uint32
	for k := range applied {
		v = max(v, k)
	}
	return v, nil
}

// CheckSchema verifies the database is migrated to exactly the version this
// binary speaks, so that writers fail early with an actionable message.
func (s *Store) CheckSchema(ctx context.Context) error {
	v, err := s.SchemaVersion(ctx)
	if err != nil {
		return fmt.Errorf("read schema version of %s (run `ctxaudit migrate`): %w", s.database, err)
	}
	latest := migrations.Latest()
	switch {
	case v > latest:
		return fmt.Errorf("%w: database %s is at version %d, this binary knows up to %d", migrations.ErrDatabaseNewer, s.database, v, latest)
	case v < latest:
		return fmt.Errorf("database %s is at schema version %d, this binary needs %d: run `ctxaudit migrate`", s.database, v, latest)
	}
	return nil
}

func (s *Store) table(name string) string {
	return migrations.QuoteIdent(s.database) + "." + migrations.QuoteIdent(name)
}

// execer adapts Store to migrations.Execer.
type execer struct{ s *Store }

func (e execer) Exec(ctx context.Context, query string, args ...any) error {
	return e.s.conn.Exec(ctx, query, args...)
}

func (e execer) AppliedVersions(ctx context.Context, db string) (map[uint32]string, error) {
	exists, err := e.s.tableExists(ctx, db, "schema_migrations")
	if err != nil {
		return nil, err
	}
	out := map[uint32]string{}
	if !exists {
		return out, nil
	}
	rows, err := e.s.conn.Query(ctx, "SELECT version, checksum FROM "+migrations.QuoteIdent(db)+".schema_migrations")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var v uint32
		var sum string
		if err := rows.Scan(&v, &sum); err != nil {
			return nil, err
		}
		out[v] = sum
	}
	return out, rows.Err()
}

func (e execer) RecordVersion(ctx context.Context, db string, m migrations.Migration, at time.Time) error {
	batch, err := e.s.conn.PrepareBatch(ctx, "INSERT INTO "+migrations.QuoteIdent(db)+".schema_migrations (version, name, checksum, applied_at)")
	if err != nil {
		return err
	}
	if err := batch.Append(m.Version, m.Name, m.Checksum, at.UTC().Truncate(time.Second)); err != nil {
		_ = batch.Abort()
		return err
	}
	return batch.Send()
}

func (s *Store) tableExists(ctx context.Context, db, table string) (bool, error) {
	var n uint64
	err := s.conn.QueryRow(ctx, "SELECT count() FROM system.tables WHERE database = ? AND name = ?", db, table).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("look up %s.%s: %w", db, table, err)
	}
	return n > 0, nil
}

// redactAddress hides a password in an address before it reaches an error message.
func redactAddress(addr string) string {
	u, err := url.Parse(addr)
	if err != nil || u.User == nil {
		return addr
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}
