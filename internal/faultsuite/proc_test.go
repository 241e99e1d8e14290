package faultsuite

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/internal/chtest"
)

// binary is the ctxaudit executable built once for the package's tests.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "faultsuite-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "ctxaudit")
	build := exec.Command("go", "build", "-o", binary, "github.com/ctxaudit/ctxaudit/cmd/ctxaudit")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "faultsuite: build ctxaudit: %v\n", err)
		os.Exit(1)
	}
	code := chtest.Run(m)
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// runCLI runs a ctxaudit command to completion with a private HOME.
func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// collector is a `ctxaudit collector` process.
type collector struct {
	t      *testing.T
	cmd    *exec.Cmd
	log    string
	health int
	exited chan struct{} // closed when the process has ended
	err    error         // its exit status, once exited is closed
}

// startCollector starts the collector with config (which must enable
// health_check on healthPort) and waits until it reports healthy.
func startCollector(t *testing.T, config string, healthPort int) *collector {
	t.Helper()
	path := filepath.Join(t.TempDir(), "collector.yaml")
	if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	return runCollector(t, []string{"--config", path}, nil, healthPort)
}

// runCollector starts `ctxaudit collector ARGS…` with extra environment and
// waits until health_check on healthPort answers 200.
func runCollector(t *testing.T, args, env []string, healthPort int) *collector {
	t.Helper()
	dir := t.TempDir()
	c := &collector{t: t, log: filepath.Join(dir, "collector.log"), health: healthPort, exited: make(chan struct{})}
	logf, err := os.Create(c.log)
	if err != nil {
		t.Fatal(err)
	}
	c.cmd = exec.Command(binary, append([]string{"collector"}, args...)...)
	c.cmd.Env = append(append(os.Environ(), "HOME="+t.TempDir()), env...)
	c.cmd.Stdout, c.cmd.Stderr = logf, logf
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		c.err = c.cmd.Wait()
		logf.Close()
		close(c.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-c.exited:
		default:
			c.kill()
		}
		if t.Failed() {
			b, _ := os.ReadFile(c.log)
			t.Logf("collector log (last 4 KiB):\n%s", tail(string(b), 4096))
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-c.exited:
			b, _ := os.ReadFile(c.log)
			t.Fatalf("collector exited during start: %v\n%s", c.err, tail(string(b), 4096))
		default:
		}
		if resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", healthPort)); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return c
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("collector not healthy after 60s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop ends the collector gracefully (SIGTERM) and waits for it.
func (c *collector) stop() {
	c.t.Helper()
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
		if c.err != nil {
			c.t.Errorf("collector stopped with %v", c.err)
		}
	case <-time.After(60 * time.Second):
		c.t.Error("collector did not stop within 60s of SIGTERM")
		c.kill()
	}
}

// kill ends the collector with SIGKILL: no shutdown code runs.
func (c *collector) kill() {
	_ = c.cmd.Process.Kill()
	select {
	case <-c.exited:
	case <-time.After(30 * time.Second):
		c.t.Error("collector did not die within 30s of SIGKILL")
	}
}

// logText is what the collector has logged so far.
func (c *collector) logText() string {
	b, _ := os.ReadFile(c.log)
	return string(b)
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// waitFor polls cond until it holds or the time is up.
func waitFor(t *testing.T, what string, limit time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(limit)
	var last string
	for time.Now().Before(deadline) {
		ok, state := cond()
		if ok {
			return
		}
		last = state
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s; last: %s", what, last)
}
