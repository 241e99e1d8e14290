package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/ctxaudit/ctxaudit/collector/distribution"
	"go.opentelemetry.io/collector/otelcol"
)

// collectorCommand runs the OpenTelemetry Collector distribution. Its flags
// are the standard collector's (--config, --set, --feature-gates, and the
// validate / components / print-config subcommands), so they are passed
// through untouched rather than parsed here.
func (a *app) collectorCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "collector --config FILE",
		Short: "Run the ctxaudit OpenTelemetry Collector (all standard collector flags and subcommands)",
		Long: `collector runs an OpenTelemetry Collector with ctxaudit's components built in: the
agenttranscripts receiver, the ctxaudit processor and the ctxaudit_clickhouse exporter,
plus otlp, batch, memory_limiter, health_check, file_storage, bearertokenauth, zpages,
pprof and debug. Configure it with the standard collector YAML; see
examples/collector.yaml.

  ctxaudit collector --config examples/collector.yaml
  ctxaudit collector validate --config examples/collector.yaml
  ctxaudit collector components`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			col := otelcol.NewCommand(distribution.Settings(Version))
			col.SetArgs(args)
			col.SetOut(cmd.OutOrStdout())
			col.SetErr(cmd.ErrOrStderr())
			col.SilenceUsage = true
			col.SilenceErrors = true // Run prints the error once
			// The collector handles SIGINT and SIGTERM itself and shuts its
			// pipelines down gracefully (flushing the processor, closing the
			// persistent queue). A context cancelled by the same signal would
			// hand that shutdown a dead context and cut it short.
			if err := col.ExecuteContext(context.WithoutCancel(cmd.Context())); err != nil {
				return collectorError{err}
			}
			return nil
		},
	}
}

// collectorError is a failure reported by the collector itself (a bad
// config is reported this way too): exit 1, as otelcol does.
type collectorError struct{ error }

func (e collectorError) Unwrap() error { return e.error }
