// Package cli is the ctxaudit command line: one binary whose subcommands are
// the collector, one-shot ingestion, schema management and the postmortem
// tools. Configuration follows DESIGN §8: flags override CTXAUDIT_*
// environment variables, which override ctxaudit.yaml.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/ctxaudit/ctxaudit/collector/redact"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

// Exit codes (DESIGN §8).
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
)

// UsageError marks bad usage or bad input: the command exits 2.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// usagef returns a UsageError with a formatted message.
func usagef(format string, args ...any) error {
	return UsageError{fmt.Errorf(format, args...)}
}

// app is one invocation's state: its configuration and output streams.
// Nothing here is global, so tests run commands side by side.
type app struct {
	v              *viper.Viper
	stdout, stderr io.Writer
}

// Run executes ctxaudit with args (without the program name) and returns the exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	a := &app{v: viper.New(), stdout: stdout, stderr: stderr}
	root := a.rootCommand()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	fmt.Fprintf(stderr, "ctxaudit: %v\n", err)
	var ue UsageError
	if errors.As(err, &ue) || errors.Is(err, chstore.ErrBadAddress) || isFlagError(err) {
		return ExitUsage
	}
	return ExitFailure
}

// isFlagError recognizes cobra's own argument and flag errors, which are usage errors.
func isFlagError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown flag", "unknown shorthand flag", "unknown command", "flag needs an argument", "invalid argument", "accepts ", "requires at least", "required flag"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "ctxaudit",
		Short: "Audit what AI agents' tool calls actually put into the model's context",
		Long: `ctxaudit records, for every agent tool call, the original output size versus what
entered the model's context, whether and how visibly it was truncated, and whether
the model went back for the rest. It stores this in ClickHouse, draws it in Grafana,
and traces wrong answers back to the incomplete inputs they were built on.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return a.loadConfig(cmd)
		},
	}
	pf := root.PersistentFlags()
	pf.String("config", "", "config file (default: ./ctxaudit.yaml, then ~/.config/ctxaudit/ctxaudit.yaml, /etc/ctxaudit/ctxaudit.yaml)")
	pf.String("clickhouse", chstore.DefaultAddress, "ClickHouse address, clickhouse://user:pass@host:9000/database (env CTXAUDIT_CLICKHOUSE)")
	root.AddCommand(
		a.versionCommand(),
		a.migrateCommand(),
		a.pruneCommand(),
		a.devCommand(),
		a.ingestCommand(),
		a.collectorCommand(),
		a.sessionsCommand(), a.postmortemCommand(),
	)
	return root
}

// loadConfig wires flags > env > file for this invocation.
func (a *app) loadConfig(cmd *cobra.Command) error {
	if err := a.readConfig(cmd); err != nil {
		return err
	}
	// Config files spell keys with underscores (store_content), flags with
	// dashes (--store-content); both name the same setting. Registered after
	// reading, so viper moves the file's value to the flag's key.
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if alias := strings.ReplaceAll(f.Name, "-", "_"); alias != f.Name {
			a.v.RegisterAlias(alias, f.Name)
		}
	})
	return nil
}

func (a *app) readConfig(cmd *cobra.Command) error {
	v := a.v
	v.SetEnvPrefix("CTXAUDIT")
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_", ".", "_"))
	v.AutomaticEnv()
	var bindErr error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if err := v.BindPFlag(f.Name, f); err != nil && bindErr == nil {
			bindErr = err
		}
	})
	if bindErr != nil {
		return bindErr
	}
	if file := v.GetString("config"); file != "" {
		v.SetConfigFile(file)
		if err := v.ReadInConfig(); err != nil {
			return usagef("read config %s: %w", file, err)
		}
		return nil
	}
	// Look for ctxaudit.yaml by full name: viper's name-based search would also
	// match a file called just "ctxaudit" — such as the binary itself.
	candidates := []string{"ctxaudit.yaml"}
	if home, err := os.UserHomeDir(); err == nil {
		candidates = append(candidates, filepath.Join(home, ".config", "ctxaudit", "ctxaudit.yaml"))
	}
	candidates = append(candidates, "/etc/ctxaudit/ctxaudit.yaml")
	for _, c := range candidates {
		if info, err := os.Stat(c); err == nil && !info.IsDir() {
			v.SetConfigFile(c)
			if err := v.ReadInConfig(); err != nil {
				return usagef("read config %s: %w", c, err)
			}
			break
		}
	}
	return nil
}

// openStore connects to the configured ClickHouse.
func (a *app) openStore(ctx context.Context) (*chstore.Store, error) {
	red, err := a.redactor()
	if err != nil {
		return nil, err
	}
	return chstore.Open(ctx, a.v.GetString("clickhouse"), chstore.Options{Redactor: red})
}

// redactor is the built-in secret rules plus redact_patterns from the
// config file, a list of {name, regex, keywords}.
func (a *app) redactor() (*redact.Redactor, error) {
	var patterns []redact.Pattern
	if err := a.v.UnmarshalKey("redact_patterns", &patterns); err != nil {
		return nil, usagef("redact_patterns: %w", err)
	}
	red, err := redact.New(patterns)
	if err != nil {
		return nil, usagef("redact_patterns: %w", err)
	}
	return red, nil
}
