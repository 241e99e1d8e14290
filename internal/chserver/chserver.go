// Package chserver starts a throwaway ClickHouse server from the
// `clickhouse-server` binary on PATH, in a directory of its own, listening on
// free loopback ports. It backs both the integration-test harness
// (internal/chtest) and `make clickhouse` (`ctxaudit dev clickhouse`), so the
// server the tests use and the one a developer pokes at are configured alike.
//
// The generated configuration is deliberately minimal so that it is accepted
// by every server version from Debian's 18.16 to current releases.
package chserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/template"
	"time"
)

// BinaryName is the server executable looked up on PATH.
const BinaryName = "clickhouse-server"

// ErrNoBinary is returned when clickhouse-server is not on PATH.
var ErrNoBinary = errors.New("clickhouse-server not found on PATH (install it with: apt-get install -y clickhouse-server clickhouse-client)")

// Options configure a server. The zero value picks free ports and a temp dir.
type Options struct {
	// Dir holds data, logs and config. Empty means a new temp dir that Stop removes.
	Dir string
	// TCPPort and HTTPPort; 0 picks a free loopback port.
	TCPPort  int
	HTTPPort int
	// StartTimeout bounds the wait for the server to answer (default 60s).
	StartTimeout time.Duration
	// Stdout/Stderr receive the server's console output (default discarded).
	Stdout, Stderr io.Writer
	// Detach leaves the server running after this process exits (the local
	// dev server); otherwise it is killed when this process dies.
	Detach bool
	// Timezone is the server's time zone, the one its day partitions are
	// computed in (default UTC).
	Timezone string
}

// Server is a running ClickHouse server.
type Server struct {
	Dir      string
	TCPPort  int
	HTTPPort int

	cmd      *exec.Cmd
	ownsDir  bool
	timezone string
	done     chan error
}

// DSN returns the clickhouse:// address of the default user, for db.
func (s *Server) DSN(db string) string {
	return fmt.Sprintf("clickhouse://default@127.0.0.1:%d/%s", s.TCPPort, db)
}

// Start writes a configuration into opts.Dir (or a temp dir), starts
// clickhouse-server and waits until it answers HTTP pings.
func Start(ctx context.Context, opts Options) (*Server, error) {
	bin, err := exec.LookPath(BinaryName)
	if err != nil {
		// Debian installs the server into /usr/sbin, which a non-root PATH may lack.
		if _, serr := os.Stat("/usr/sbin/" + BinaryName); serr == nil {
			bin = "/usr/sbin/" + BinaryName
		} else {
			return nil, ErrNoBinary
		}
	}
	s := &Server{Dir: opts.Dir, TCPPort: opts.TCPPort, HTTPPort: opts.HTTPPort, done: make(chan error, 1), timezone: opts.Timezone}
	if s.timezone == "" {
		s.timezone = "UTC"
	}
	if s.Dir == "" {
		if s.Dir, err = os.MkdirTemp("", "ctxaudit-clickhouse-*"); err != nil {
			return nil, fmt.Errorf("create server dir: %w", err)
		}
		s.ownsDir = true
	}
	if s.Dir, err = filepath.Abs(s.Dir); err != nil {
		return nil, fmt.Errorf("server dir: %w", err)
	}
	if s.TCPPort == 0 {
		if s.TCPPort, err = freePort(); err != nil {
			return nil, err
		}
	}
	if s.HTTPPort == 0 {
		if s.HTTPPort, err = freePort(); err != nil {
			return nil, err
		}
	}
	cfg, err := s.writeConfig()
	if err != nil {
		s.cleanup()
		return nil, err
	}

	// The server must outlive ctx's deadline for a dev server, so it is not
	// started with CommandContext; Stop ends it.
	s.cmd = exec.Command(bin, "--config-file="+cfg)
	s.cmd.Dir = s.Dir
	if opts.Stdout != nil {
		s.cmd.Stdout = opts.Stdout
	}
	if opts.Stderr != nil {
		s.cmd.Stderr = opts.Stderr
	}
	// Own process group, so a Ctrl-C in a terminal reaches us first and we stop it cleanly.
	// Pdeathsig: if the test binary or CLI dies, the server dies with it
	// instead of lingering on its ports.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if opts.Detach {
		s.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}
	if err := s.cmd.Start(); err != nil {
		s.cleanup()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() { s.done <- s.cmd.Wait() }()

	timeout := opts.StartTimeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	if err := s.waitReady(ctx, timeout); err != nil {
		_ = s.Stop()
		return nil, err
	}
	return s, nil
}

// PID is the server's process id.
func (s *Server) PID() int {
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Answering reports whether a ClickHouse HTTP interface answers /ping on port.
func Answering(port int) bool {
	return ping(net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
}

// Wait blocks until the server exits.
func (s *Server) Wait() error { return <-s.done }

// Stop terminates the server, waits for it, and removes its directory if Start created it.
func (s *Server) Stop() error {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(20 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
		}
		s.cmd = nil
	}
	return s.cleanup()
}

func (s *Server) cleanup() error {
	if !s.ownsDir {
		return nil
	}
	if err := os.RemoveAll(s.Dir); err != nil {
		return fmt.Errorf("remove server dir: %w", err)
	}
	return nil
}

func (s *Server) waitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(s.HTTPPort))
	for {
		select {
		case err := <-s.done:
			s.done <- err // keep it for Stop
			return fmt.Errorf("clickhouse-server exited during start-up (%v); see %s", err, filepath.Join(s.Dir, "log", "clickhouse-server.err.log"))
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if ping(addr) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("clickhouse-server did not answer on %s within %s; see %s", addr, timeout, filepath.Join(s.Dir, "log"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ping asks the HTTP interface's /ping, which answers "Ok." once the server accepts queries.
func ping(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 500*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte("GET /ping HTTP/1.0\r\n\r\n")); err != nil {
		return false
	}
	var buf bytes.Buffer
	b := make([]byte, 512)
	for {
		n, err := c.Read(b)
		buf.Write(b[:n])
		if err != nil {
			break
		}
	}
	return strings.Contains(buf.String(), "Ok.")
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) writeConfig() (string, error) {
	for _, d := range []string{"data", "tmp", "user_files", "log", "format_schemas"} {
		if err := os.MkdirAll(filepath.Join(s.Dir, d), 0o755); err != nil {
			return "", fmt.Errorf("create %s: %w", d, err)
		}
	}
	interserver, err := freePort()
	if err != nil {
		return "", err
	}
	data := map[string]any{"Dir": s.Dir, "TCP": s.TCPPort, "HTTP": s.HTTPPort, "Interserver": interserver, "Timezone": s.timezone}
	files := map[string]*template.Template{"config.xml": configTemplate, "users.xml": usersTemplate}
	for name, tmpl := range files {
		var b bytes.Buffer
		if err := tmpl.Execute(&b, data); err != nil {
			return "", fmt.Errorf("render %s: %w", name, err)
		}
		if err := os.WriteFile(filepath.Join(s.Dir, name), b.Bytes(), 0o644); err != nil {
			return "", fmt.Errorf("write %s: %w", name, err)
		}
	}
	return filepath.Join(s.Dir, "config.xml"), nil
}

// The root element is <yandex>, which every version accepts (newer ones also take <clickhouse>).
var configTemplate = template.Must(template.New("config").Parse(`<?xml version="1.0"?>
<yandex>
    <logger>
        <level>warning</level>
        <log>{{.Dir}}/log/clickhouse-server.log</log>
        <errorlog>{{.Dir}}/log/clickhouse-server.err.log</errorlog>
        <size>100M</size>
        <count>2</count>
    </logger>
    <listen_host>127.0.0.1</listen_host>
    <tcp_port>{{.TCP}}</tcp_port>
    <http_port>{{.HTTP}}</http_port>
    <interserver_http_port>{{.Interserver}}</interserver_http_port>
    <max_connections>256</max_connections>
    <keep_alive_timeout>3</keep_alive_timeout>
    <max_concurrent_queries>100</max_concurrent_queries>
    <uncompressed_cache_size>1073741824</uncompressed_cache_size>
    <mark_cache_size>536870912</mark_cache_size>
    <path>{{.Dir}}/data/</path>
    <tmp_path>{{.Dir}}/tmp/</tmp_path>
    <user_files_path>{{.Dir}}/user_files/</user_files_path>
    <format_schema_path>{{.Dir}}/format_schemas/</format_schema_path>
    <users_config>users.xml</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <timezone>{{.Timezone}}</timezone>
    <mlock_executable>false</mlock_executable>
    <builtin_dictionaries_reload_interval>3600</builtin_dictionaries_reload_interval>
    <max_session_timeout>3600</max_session_timeout>
    <default_session_timeout>60</default_session_timeout>
</yandex>
`))

var usersTemplate = template.Must(template.New("users").Parse(`<?xml version="1.0"?>
<yandex>
    <profiles>
        <default>
            <max_memory_usage>10000000000</max_memory_usage>
            <use_uncompressed_cache>0</use_uncompressed_cache>
            <load_balancing>random</load_balancing>
        </default>
    </profiles>
    <users>
        <default>
            <password></password>
            <networks>
                <ip>::1</ip>
                <ip>127.0.0.1</ip>
            </networks>
            <profile>default</profile>
            <quota>default</quota>
        </default>
    </users>
    <quotas>
        <default>
            <interval>
                <duration>3600</duration>
                <queries>0</queries>
                <errors>0</errors>
                <result_rows>0</result_rows>
                <read_rows>0</read_rows>
                <execution_time>0</execution_time>
            </interval>
        </default>
    </quotas>
</yandex>
`))
