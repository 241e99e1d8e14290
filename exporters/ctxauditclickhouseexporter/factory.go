// Package ctxauditclickhouseexporter is the ctxaudit_clickhouse exporter: it writes
// ctxaudit's audit tables (tool_calls, answers, sessions) from the GenAI spans
// and Claude Code log records that the agenttranscripts receiver and the
// ctxaudit processor produce, through the same writer `ctxaudit ingest` uses.
//
// Timeout, retry with backoff and the sending queue (persistent when
// sending_queue.storage names a file_storage extension) come from
// exporterhelper. Writes are idempotent (stable ids, ReplacingMergeTree), so a
// retried or replayed batch never double-counts.
package ctxauditclickhouseexporter

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/ctxaudit/ctxaudit/exporters/ctxauditclickhouseexporter/internal/metadata"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

// NewFactory returns the exporter factory. Its instances of one component
// id share a rollup refresher (rollupLeaders).
func NewFactory() exporter.Factory {
	rollups := newRollupLeaders()
	return exporter.NewFactory(metadata.Type, createDefaultConfig,
		exporter.WithTraces(func(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Traces, error) {
			return createTraces(ctx, set, cfg, rollups)
		}, metadata.TracesStability),
		exporter.WithLogs(func(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Logs, error) {
			return createLogs(ctx, set, cfg, rollups)
		}, metadata.LogsStability),
	)
}

func createDefaultConfig() component.Config {
	return &Config{
		TimeoutConfig: exporterhelper.NewDefaultTimeoutConfig(),
		QueueConfig:   configoptional.Some(exporterhelper.NewDefaultQueueConfig()),
		BackOffConfig: configretry.NewDefaultBackOffConfig(),
		Endpoint:      chstore.DefaultAddress,
		CreateSchema:  true,
		DialTimeout:   5 * time.Second,
		// Refreshing re-snapshots each day written since the last one, from
		// tool_calls FINAL: a few seconds of ClickHouse time per day of
		// ~300k calls, so not much more often than this.
		RollupInterval: 5 * time.Minute,
	}
}

func createTraces(ctx context.Context, set exporter.Settings, cfg component.Config, rollups *rollupLeaders) (exporter.Traces, error) {
	c := cfg.(*Config)
	e, err := newExporter(c, set, rollups)
	if err != nil {
		return nil, err
	}
	return exporterhelper.NewTraces(ctx, set, cfg, e.pushTraces, e.options(c)...)
}

func createLogs(ctx context.Context, set exporter.Settings, cfg component.Config, rollups *rollupLeaders) (exporter.Logs, error) {
	c := cfg.(*Config)
	e, err := newExporter(c, set, rollups)
	if err != nil {
		return nil, err
	}
	return exporterhelper.NewLogs(ctx, set, cfg, e.pushLogs, e.options(c)...)
}

func (e *chExporter) options(c *Config) []exporterhelper.Option {
	return []exporterhelper.Option{
		exporterhelper.WithStart(e.start),
		exporterhelper.WithShutdown(e.shutdown),
		exporterhelper.WithTimeout(c.TimeoutConfig),
		exporterhelper.WithQueue(c.QueueConfig),
		exporterhelper.WithRetry(c.BackOffConfig),
		exporterhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
	}
}
