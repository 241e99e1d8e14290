// Package cli is the ctxaudit command line: one binary whose subcommands are
// the collector, one-shot ingestion, schema management and the postmortem
// tools. Configuration follows docs/design.md §8.2: flags override CTXAUDIT_*
// environment variables, which override ctxaudit.yaml.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/ctxaudit/ctxaudit/collector/redact"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

// Exit codes (docs/design.md §8.3).
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
	// file is the config file read, or empty; fileKeys are the keys it sets.
	file     string
	fileKeys map[string]bool
	cmd      *cobra.Command // the command running, for where a setting came from
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
	a.cmd = cmd
	if err := a.readConfig(cmd); err != nil {
		return err
	}
	if err := a.checkFileKeys(cmd.Root()); err != nil {
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
		return a.readFile(file)
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
			return a.readFile(c)
		}
	}
	return nil
}

// readFile reads the config file into the settings, and separately notes
// which keys the file itself sets, to check them and to name the file when
// one of its values is wrong.
func (a *app) readFile(file string) error {
	a.v.SetConfigFile(file)
	if err := a.v.ReadInConfig(); err != nil {
		return usagef("read config %s: %w", file, err)
	}
	only := viper.New()
	only.SetConfigFile(file)
	if err := only.ReadInConfig(); err != nil {
		return usagef("read config %s: %w", file, err)
	}
	a.file = file
	a.fileKeys = map[string]bool{}
	for _, k := range only.AllKeys() {
		a.fileKeys[k] = true
	}
	return nil
}

// checkFileKeys refuses keys of the config file that no command has: a
// misspelt key (clickhuose:) would otherwise be ignored and the default
// used without a word.
func (a *app) checkFileKeys(root *cobra.Command) error {
	if len(a.fileKeys) == 0 {
		return nil
	}
	known := map[string]bool{}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		for _, fs := range []*pflag.FlagSet{c.LocalFlags(), c.PersistentFlags()} {
			fs.VisitAll(func(f *pflag.Flag) {
				known[f.Name] = true
				known[strings.ReplaceAll(f.Name, "-", "_")] = true
			})
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	delete(known, "config")
	// Settings that only the config file can carry (no flag spells them).
	known["redact_patterns"] = true
	delete(known, "help")
	var unknown []string
	for k := range a.fileKeys {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	var names []string
	for k := range known {
		if !strings.Contains(k, "-") {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	return usagef("config %s: unknown key %s (the keys are the flags' names with underscores: %s)",
		a.file, strings.Join(quoteAll(unknown), ", "), strings.Join(names, ", "))
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// origin names where a setting's value came from, for error messages:
// "--store-content", "CTXAUDIT_STORE_CONTENT", "store_content in FILE", or
// the flag when the value is its default.
func (a *app) origin(name string) string {
	flag := "--" + name
	if a.cmd != nil && a.cmd.Flags().Changed(name) {
		return flag
	}
	env := "CTXAUDIT_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
	if v, ok := os.LookupEnv(env); ok && v != "" {
		return env
	}
	key := strings.ReplaceAll(name, "-", "_")
	if a.fileKeys[key] || a.fileKeys[name] {
		return key + " in " + a.file
	}
	return flag
}

// openStore connects to the configured ClickHouse.
func (a *app) openStore(ctx context.Context) (*chstore.Store, error) {
	red, err := a.redactor()
	if err != nil {
		return nil, err
	}
	addr := a.v.GetString("clickhouse")
	s, err := chstore.Open(ctx, addr, chstore.Options{Redactor: red})
	if err != nil && !errors.Is(err, chstore.ErrBadAddress) {
		if hint := httpPortHint(ctx, addr); hint != "" {
			return nil, fmt.Errorf("%w\n%s", err, hint)
		}
	}
	return s, err
}

// httpPortHint explains a failed connection to an address that answers
// HTTP: ClickHouse's HTTP port (8123) instead of its native one (9000),
// which otherwise shows as a bare timeout.
func httpPortHint(ctx context.Context, addr string) string {
	opts, _, err := chstore.ParseAddress(addr)
	if err != nil || len(opts.Addr) == 0 {
		return ""
	}
	host := opts.Addr[0]
	d := net.Dialer{Timeout: time.Second}
	conn, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return ""
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.WriteString(conn, "GET /ping HTTP/1.0\r\n\r\n"); err != nil {
		return ""
	}
	buf := make([]byte, 5)
	if _, err := io.ReadFull(conn, buf); err != nil || string(buf) != "HTTP/" {
		return ""
	}
	return fmt.Sprintf("  %s answers HTTP: that is ClickHouse's HTTP port (8123 by default); ctxaudit speaks the native protocol, on tcp_port (9000 by default): clickhouse://user@host:9000/database", host)
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
