package ctxauditclickhouseexporter

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/ctxaudit/ctxaudit/collector/otelconv"
	"github.com/ctxaudit/ctxaudit/exporters/ctxauditclickhouseexporter/internal/metadata"
	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/schema"
	"github.com/ctxaudit/ctxaudit/schema/migrations"
)

// exportOnce sends one tool-call span through the factory's exporter (with
// exporterhelper's retry sender, without a queue, so the send's error comes
// back to the caller) and returns how many log lines announced a retry, and
// the error. The backoff is configured so that a retryable error is tried
// again exactly once: the second interval would pass max_elapsed_time.
func exportOnce(t *testing.T, cfg *Config) (retries int, err error) {
	t.Helper()
	cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
	cfg.BackOffConfig.Enabled = true
	cfg.BackOffConfig.InitialInterval = time.Millisecond
	cfg.BackOffConfig.RandomizationFactor = 0
	cfg.BackOffConfig.Multiplier = 1e6 // the second interval (1000s, capped at 1h) passes max_elapsed_time
	cfg.BackOffConfig.MaxInterval = time.Hour
	cfg.BackOffConfig.MaxElapsedTime = time.Minute
	cfg.DialTimeout = 5 * time.Second

	core, logs := observer.New(zap.InfoLevel)
	set := exportertest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	ctx := context.Background()
	te, err := NewFactory().CreateTraces(ctx, set, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := te.Start(ctx, componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := te.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	}()
	td := ptrace.NewTraces()
	c := schema.ToolCall{SessionID: "s", CallID: "c", Tool: "Read", Timestamp: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	otelconv.AppendToolCall(td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans(), &c)
	err = te.ConsumeTraces(ctx, td)
	return logs.FilterMessageSnippet("Will retry").Len(), err
}

// A database migrated by a newer ctxaudit cannot be written by this one:
// the exporter says so with a permanent error and exporterhelper does not
// retry it.
func TestDatabaseNewerIsNotRetried(t *testing.T) {
	addr := chtest.Address(t)
	s := chtest.OpenStore(t, addr)
	ctx := context.Background()
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	batch, err := s.Conn().PrepareBatch(ctx, "INSERT INTO "+s.Database()+".schema_migrations (version, name, checksum, applied_at)")
	if err != nil {
		t.Fatal(err)
	}
	if err := batch.Append(migrations.Latest()+1, "from_a_newer_ctxaudit", "x", time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := batch.Send(); err != nil {
		t.Fatal(err)
	}

	for _, createSchema := range []bool{true, false} { // Migrate and CheckSchema both refuse
		cfg := createDefaultConfig().(*Config)
		cfg.Endpoint = addr
		cfg.CreateSchema = createSchema
		retries, err := exportOnce(t, cfg)
		if !errors.Is(err, migrations.ErrDatabaseNewer) || !consumererror.IsPermanent(err) {
			t.Fatalf("create_schema=%v: err = %v; want a permanent ErrDatabaseNewer", createSchema, err)
		}
		if retries != 0 || !strings.Contains(err.Error(), "not retryable") {
			t.Fatalf("create_schema=%v: %d retries, err = %v; want none", createSchema, retries, err)
		}
	}
}

// Credentials ClickHouse refuses are not retried either.
func TestRefusedCredentialsAreNotRetried(t *testing.T) {
	u, err := url.Parse(chtest.Address(t))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User("ctxaudit_no_such_user")
	cfg := createDefaultConfig().(*Config)
	cfg.Endpoint = u.String()
	retries, err := exportOnce(t, cfg)
	if !consumererror.IsPermanent(err) || retries != 0 {
		t.Fatalf("unknown user: err = %v after %d retries; want a permanent error, no retry", err, retries)
	}
}

// The control: a database without ctxaudit's schema and create_schema off is
// fixed by `ctxaudit migrate` while the collector runs, so it is retried.
func TestMissingSchemaIsRetried(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Endpoint = chtest.Address(t) // a database that does not exist
	cfg.CreateSchema = false
	retries, err := exportOnce(t, cfg)
	if err == nil || consumererror.IsPermanent(err) {
		t.Fatalf("err = %v; want a retryable error", err)
	}
	if retries != 1 || !strings.Contains(err.Error(), "no more retries left") {
		t.Fatalf("%d retries, err = %v; want one retry, then max_elapsed_time", retries, err)
	}
}
