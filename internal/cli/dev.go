package cli

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxaudit/ctxaudit/internal/chserver"
)

func (a *app) devCommand() *cobra.Command {
	dev := &cobra.Command{
		Use:   "dev",
		Short: "Developer tools: a local ClickHouse server",
	}
	ch := &cobra.Command{
		Use:   "clickhouse",
		Short: "Run a local ClickHouse server from clickhouse-server on PATH (what `make clickhouse` starts)",
		Long: `clickhouse runs clickhouse-server with a generated configuration whose data, logs and
config live in --dir, listening on 127.0.0.1 only. The test harness uses the same code
with a temp dir and free ports. With --detach it returns once the server answers and
leaves it running (pid in <dir>/server.pid); --stop ends a detached server.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := filepath.Abs(a.v.GetString("dir"))
			if err != nil {
				return err
			}
			pidFile := filepath.Join(dir, "server.pid")
			if a.v.GetBool("stop") {
				return stopDetached(cmd, pidFile)
			}
			port, httpPort := a.v.GetInt("port"), a.v.GetInt("http-port")
			w := cmd.OutOrStdout()
			if httpPort != 0 && chserver.Answering(httpPort) {
				fmt.Fprintf(w, "ClickHouse already answering on 127.0.0.1:%d (http %d)\n", port, httpPort)
				return nil
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("create %s: %w", dir, err)
			}
			tz := a.v.GetString("timezone")
			if _, err := time.LoadLocation(tz); err != nil || tz == "" {
				// Checked here: a server given a zone it does not know fails
				// to start with a message only its log holds.
				return usagef("--timezone %q: not a time zone name (e.g. UTC, Europe/Berlin)", tz)
			}
			detach := a.v.GetBool("detach")
			opts := chserver.Options{Dir: dir, TCPPort: port, HTTPPort: httpPort, Detach: detach, Timezone: tz}
			if !detach {
				opts.Stdout, opts.Stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			}
			srv, err := chserver.Start(cmd.Context(), opts)
			if err != nil {
				return err
			}
			if a.v.GetBool("print-address") {
				// For scripts: only the address, e.g. CTXAUDIT_TEST_CLICKHOUSE=$(ctxaudit dev clickhouse --detach --print-address …)
				fmt.Fprintf(w, "clickhouse://default@127.0.0.1:%d\n", srv.TCPPort)
			} else {
				fmt.Fprintf(w, "ClickHouse listening on 127.0.0.1:%d (native) and :%d (http), time zone %s; data in %s\n", srv.TCPPort, srv.HTTPPort, tz, dir)
				fmt.Fprintf(w, "  export CTXAUDIT_CLICKHOUSE=%s\n", srv.DSN("ctxaudit"))
			}
			if detach {
				if err := os.WriteFile(pidFile, []byte(strconv.Itoa(srv.PID())+"\n"), 0o644); err != nil {
					return fmt.Errorf("write %s: %w", pidFile, err)
				}
				return nil
			}
			sig := make(chan os.Signal, 1)
			signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
			defer signal.Stop(sig)
			select {
			case <-sig:
				fmt.Fprintln(w, "stopping ClickHouse")
				return srv.Stop()
			case <-cmd.Context().Done():
				return srv.Stop()
			}
		},
	}
	f := ch.Flags()
	f.String("dir", ".ctxaudit/clickhouse", "directory for the server's data, logs and config")
	f.Int("port", 9000, "native protocol port (0: a free port)")
	f.Int("http-port", 8123, "HTTP port (0: a free port)")
	f.Bool("print-address", false, "print only the server's clickhouse:// address (for scripts)")
	f.Bool("detach", false, "start in the background and return once it answers")
	f.Bool("stop", false, "stop a server started with --detach in --dir")
	f.String("timezone", "UTC", "the server's time zone, which its days (partitions, retention) follow")
	dev.AddCommand(ch)
	return dev
}

func stopDetached(cmd *cobra.Command, pidFile string) error {
	b, err := os.ReadFile(pidFile)
	if errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(cmd.OutOrStdout(), "no detached server (%s not found)\n", pidFile)
		return nil
	}
	if err != nil {
		return err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return fmt.Errorf("%s: %w", pidFile, err)
	}
	p, err := os.FindProcess(pid)
	if err == nil {
		err = p.Signal(syscall.SIGTERM)
	}
	if err != nil && !errors.Is(err, os.ErrProcessDone) {
		fmt.Fprintf(cmd.OutOrStdout(), "server %d not running: %v\n", pid, err)
	}
	for i := 0; i < 100 && p.Signal(syscall.Signal(0)) == nil; i++ {
		time.Sleep(100 * time.Millisecond)
	}
	_ = os.Remove(pidFile)
	fmt.Fprintf(cmd.OutOrStdout(), "stopped ClickHouse (pid %d)\n", pid)
	return nil
}
