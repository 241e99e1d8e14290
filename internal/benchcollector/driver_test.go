package benchcollector

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"math"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMedianRound: the report's round is the one with the median collector
// CPU over its floor's, the lower middle one for an even count.
func TestMedianRound(t *testing.T) {
	round := func(def, floor float64) Round {
		return Round{Default: Pipeline{CollectorPer: def}, Floor: Pipeline{CollectorPer: floor}}
	}
	for _, tc := range []struct {
		name   string
		rounds []Round
		want   int
	}{
		{"one", []Round{round(5, 1)}, 0},
		{"odd", []Round{round(6, 2), round(4, 1), round(5, 1)}, 1},               // ratios 3, 4, 5
		{"even", []Round{round(8, 2), round(3, 1), round(6, 1), round(5, 2)}, 1}, // 4, 3, 6, 2.5: lower middle 3
		{"no floor", []Round{round(5, 0), round(5, 1), round(9, 1)}, 1},          // 0 sorts first
	} {
		if got := medianRound(tc.rounds, Round.CPURatio); got != tc.want {
			t.Errorf("%s: median round %d, want %d", tc.name, got, tc.want)
		}
		// The compare build's median is its own: the same figures as its
		// CPU ratios give the same round, whatever the first build ran at.
		compared := make([]Round, len(tc.rounds))
		for i, r := range tc.rounds {
			c := r.Default
			compared[i] = Round{Default: Pipeline{CollectorPer: float64(10 - i)}, Floor: r.Floor, Compare: &c}
		}
		if got := medianRound(compared, Round.CompareCPURatio); got != tc.want {
			t.Errorf("%s: compare's median round %d, want %d", tc.name, got, tc.want)
		}
	}
}

// A collector that exits before it is healthy (a configuration it refuses)
// ends the run with the reason, and measure returns: the stop that follows
// waits for an exit that was already seen.
func TestCollectorExitingAtStartEndsTheRun(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "collector")
	script := "#!/bin/sh\necho 'failed to build pipelines' >&2\nexit 1\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	o := Options{Binary: bin, WorkDir: dir, Timeout: time.Minute, Log: io.Discard}
	done := make(chan error, 1)
	go func() {
		_, err := o.measure(context.Background(), "default", bin, "collector.yaml", "run", nil, "", "", runSettings{})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "collector exited: exit status 1") {
			t.Errorf("measure: %v; want the collector's exit", err)
		}
	case <-time.After(2 * time.Minute): // a bound on a hang, not a timing
		t.Fatal("measure did not return after the collector exited")
	}
}

// The share of the machine busy between two readings: busy time over all
// time, all cores summed; nothing when no time passed; wholly busy when
// iowait went back between the readings (busy grew by more than the total).
func TestBusyShare(t *testing.T) {
	for _, c := range []struct {
		a, b machineCPU
		want float64
	}{
		{machineCPU{busy: 10, total: 40}, machineCPU{busy: 28, total: 60}, 0.9},
		{machineCPU{busy: 10, total: 40}, machineCPU{busy: 10, total: 50}, 0},
		{machineCPU{busy: 10, total: 40}, machineCPU{busy: 10, total: 40}, 0},
		{machineCPU{busy: 10, total: 40}, machineCPU{busy: 20.5, total: 50}, 1},
	} {
		if got := c.a.busyShare(c.b); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%+v then %+v: %.3f busy, want %.3f", c.a, c.b, got, c.want)
		}
	}
}

// pidListening finds this test's own listener, and only a listener.
func TestPIDListening(t *testing.T) {
	pr, err := newProc()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	pid, err := pr.pidListening(port)
	if err != nil || pid != os.Getpid() {
		t.Errorf("port %d: pid %d, %v; want this process, %d", port, pid, err, os.Getpid())
	}
	l.Close()
	if pid, err := pr.pidListening(port); err == nil {
		t.Errorf("port %d closed: pid %d, want an error", port, pid)
	}
}

// A build that is not there, or not executable, is refused before anything
// runs, naming it: -bin, and -compare when given.
func TestRunRefusesABuildItCannotRun(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "ctxaudit")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	notExec := filepath.Join(dir, "not-executable")
	if err := os.WriteFile(notExec, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	for _, tc := range []struct {
		bin, compare, want string
		why                error
	}{
		{missing, "", missing, fs.ErrNotExist},
		{bin, missing, missing, fs.ErrNotExist},
		{bin, notExec, notExec, fs.ErrPermission},
		{bin, dir, dir, syscall.EISDIR},
	} {
		// No ClickHouse address: a run that got past the check would fail
		// on it instead.
		_, err := Run(context.Background(), Options{Binary: tc.bin, Compare: tc.compare, Spans: 1, WorkDir: dir})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, tc.why) {
			t.Errorf("bin %s, compare %q: %v; want an error naming %s, %v", tc.bin, tc.compare, err, tc.want, tc.why)
		}
	}
}
