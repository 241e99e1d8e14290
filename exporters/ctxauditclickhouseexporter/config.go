package ctxauditclickhouseexporter

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/ctxaudit/ctxaudit/collector/redact"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
	"github.com/ctxaudit/ctxaudit/schema/migrations"
)

// Config is the ctxaudit_clickhouse exporter's configuration.
type Config struct {
	exporterhelper.TimeoutConfig `mapstructure:",squash"`
	QueueConfig                  configoptional.Optional[exporterhelper.QueueBatchConfig] `mapstructure:"sending_queue"`
	BackOffConfig                configretry.BackOffConfig                                `mapstructure:"retry_on_failure"`

	// Endpoint is the native address, clickhouse://user:pass@host:9000/database.
	Endpoint string `mapstructure:"endpoint"`
	// Database overrides the database named in Endpoint.
	Database string `mapstructure:"database"`
	// CreateSchema applies ctxaudit's migrations at start (and on the first
	// write if ClickHouse was unreachable at start). When false the schema
	// must already be at this binary's version.
	CreateSchema bool `mapstructure:"create_schema"`
	// DialTimeout bounds connecting to ClickHouse.
	DialTimeout time.Duration `mapstructure:"dial_timeout"`
	// Redact adds patterns to the built-in secret rules applied to every
	// text column written.
	Redact redact.Config `mapstructure:"redact"`
	// RollupInterval is how often the dashboards' rollups are refreshed for
	// the days written since their last snapshot (docs/design.md §7.7); 0
	// turns it off (the panels then read those days from tool_calls: exact,
	// only slower).
	RollupInterval time.Duration `mapstructure:"rollup_interval"`

	// prevent unkeyed literals
	_ struct{}
}

// Validate names the bad key.
func (c *Config) Validate() error {
	var errs []error
	if c.Endpoint == "" {
		errs = append(errs, errors.New("endpoint: required, e.g. clickhouse://default@127.0.0.1:9000/ctxaudit"))
	} else if _, _, err := chstore.ParseAddress(c.Endpoint); err != nil {
		errs = append(errs, fmt.Errorf("endpoint: %w", err))
	}
	if c.Database != "" {
		if err := migrations.ValidDatabaseName(c.Database); err != nil {
			errs = append(errs, fmt.Errorf("database: %w", err))
		}
	}
	if c.DialTimeout < 0 {
		errs = append(errs, errors.New("dial_timeout: must not be negative"))
	}
	if c.RollupInterval < 0 {
		errs = append(errs, errors.New("rollup_interval: must not be negative (0 turns refreshing off)"))
	}
	if err := c.Redact.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("redact: %w", err))
	}
	return errors.Join(errs...)
}
