package cli

import (
	"context"
	"fmt"
	"strings"

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
			// pipelines down gracefully (flushing the processor, closing its
			// storage). A context cancelled by the same signal would
			// hand that shutdown a dead context and cut it short.
			if err := col.ExecuteContext(context.WithoutCancel(cmd.Context())); err != nil {
				if isCollectorConfigError(col, args, err) {
					return UsageError{fmt.Errorf("collector config %s: %s", strings.Join(configSources(args), ", "), oneLine(err))}
				}
				return collectorError{err}
			}
			return nil
		},
	}
}

// collectorError is a failure of the running collector (a component that
// cannot start, a port in use, a failed shutdown): exit 1.
type collectorError struct{ error }

func (e collectorError) Unwrap() error { return e.error }

// isCollectorConfigError tells a bad configuration, found before anything
// starts, from a runtime failure. otelcol has no error types for it, only
// the wrapping messages of its start-up steps: "failed to get config" (the
// file cannot be read, resolved or unmarshalled: an unknown key, a value of
// the wrong type) and "invalid configuration" (a component's Validate).
// Everything validate and print-config report is about the configuration,
// since they start nothing; a missing --config is usage too.
func isCollectorConfigError(col *cobra.Command, args []string, err error) bool {
	msg := err.Error()
	for _, p := range []string{"failed to get config:", "invalid configuration:", "at least one config flag must be provided"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	if strings.HasPrefix(msg, "failed to initialize factories:") {
		return false
	}
	sub, _, findErr := col.Find(args)
	return findErr == nil && sub != col && (sub.Name() == "validate" || sub.Name() == "print-config")
}

// configSources returns the --config values of a collector command line as
// given (files or provider URIs such as env:VAR), for naming them in errors.
func configSources(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--config" || a == "-config":
			if i+1 < len(args) {
				out = append(out, args[i+1])
				i++
			}
		case strings.HasPrefix(a, "--config="):
			out = append(out, strings.TrimPrefix(a, "--config="))
		case strings.HasPrefix(a, "-config="):
			out = append(out, strings.TrimPrefix(a, "-config="))
		}
	}
	if len(out) == 0 {
		return []string{"(none given)"}
	}
	return out
}

// oneLine folds the collector's multi-line error (it lists each decoding
// failure on its own line, after a line ending in a colon) into the one line
// ctxaudit prints.
func oneLine(err error) string {
	var b strings.Builder
	for _, line := range strings.Split(err.Error(), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if b.Len() > 0 {
			if strings.HasSuffix(b.String(), ":") {
				b.WriteByte(' ')
			} else {
				b.WriteString("; ")
			}
		}
		b.WriteString(line)
	}
	return b.String()
}
