package faultsuite

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/internal/chtest"
)

// Memory settings of the flood test and the margin the collector's peak
// anonymous RSS may exceed limit_mib by: the Go runtime's own memory and
// stacks, which memory_limiter's heap measure does not see.
const (
	floodLimitMiB  = 200
	floodSpikeMiB  = 50
	floodMarginMiB = 150
)

// rss returns the process's current and peak resident set in KiB, and the
// current anonymous and file-backed parts.
func rss(pid int) (cur, peak, anon, file int) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, 0, 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
		switch k {
		case "VmRSS":
			cur = n
		case "VmHWM":
			peak = n
		case "RssAnon":
			anon = n
		case "RssFile":
			file = n
		}
	}
	return cur, peak, anon, file
}

// TestFloodWithClickHouseDown: OTLP clients flood the collector while
// ClickHouse is unreachable. The collector stays within its memory limit
// (plus a stated margin) and refuses what it cannot hold with retryable
// errors; what it accepted survives a kill -9 under the flood and is stored
// once ClickHouse is back.
func TestFloodWithClickHouseDown(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc to measure the collector's memory")
	}
	addr := chtest.Address(t)
	s := chtest.OpenStore(t, addr)
	d := newDurable(t)
	mem := filepath.Join(t.TempDir(), "memory.yaml")
	if err := os.WriteFile(mem, []byte(fmt.Sprintf(`
processors:
  memory_limiter: {check_interval: 100ms, limit_mib: %d, spike_limit_mib: %d, limit_percentage: 0, spike_limit_percentage: 0}
exporters:
  ctxaudit_clickhouse:
    sending_queue: {sizer: requests, queue_size: 20}
`, floodLimitMiB, floodSpikeMiB)), 0o644); err != nil {
		t.Fatal(err)
	}
	d.extra = []string{mem}
	// The Go runtime's soft limit at limit_mib, the highest docs/collector.md
	// allows (it recommends limit_mib - spike_limit_mib): the runtime collects
	// garbage before the heap overshoots between memory_limiter's checks,
	// which refuse data from limit_mib - spike_limit_mib on.
	d.env = []string{fmt.Sprintf("GOMEMLIMIT=%dMiB", floodLimitMiB)}
	c := d.start(t, deadAddress(t, s.Database()))
	pid := c.cmd.Process.Pid

	var acked sync.Map
	var nAcked, nRefused, nOther atomic.Int64
	var lastErr atomic.Value
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	const senders, perRequest = 8, 500
	for w := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			snd := newOTLPSender(t, d.otlpHTTP)
			for r := 0; ctx.Err() == nil; r++ {
				batch := ids(fmt.Sprintf("flood%d", w), r*perRequest, perRequest)
				err := snd.send(ctx, fmt.Sprintf("flood-%d-%d", w, r/20), batch)
				switch {
				case err == nil:
					for _, id := range batch {
						acked.Store(id, true)
					}
					nAcked.Add(perRequest)
				case ctx.Err() != nil:
				case strings.Contains(err.Error(), "retry-able"):
					nRefused.Add(1)
					time.Sleep(10 * time.Millisecond)
				default:
					nOther.Add(1)
					lastErr.Store(err.Error())
				}
			}
		}()
	}
	peak, peakAnon, peakFile := 0, 0, 0
	for ctx.Err() == nil {
		_, p, a, f := rss(pid)
		peak, peakAnon, peakFile = max(peak, p), max(peakAnon, a), max(peakFile, f)
		time.Sleep(100 * time.Millisecond)
	}
	wg.Wait()
	_, p, _, _ := rss(pid)
	peak = max(peak, p) / 1024
	t.Logf("peak anonymous %d MiB, peak file-backed %d MiB (sampled every 100ms)", peakAnon/1024, peakFile/1024)
	t.Logf("flood, ClickHouse down: %d spans acked, %d requests refused (retryable), %d other errors; peak RSS %d MiB (limit_mib %d)",
		nAcked.Load(), nRefused.Load(), nOther.Load(), peak, floodLimitMiB)
	if nOther.Load() > 0 {
		t.Errorf("%d requests failed with a non-retryable error, e.g. %v", nOther.Load(), lastErr.Load())
	}
	if nRefused.Load() == 0 {
		t.Error("no request was refused: the flood did not reach a limit")
	}
	// The limit holds for the memory the process allocates (anonymous RSS).
	// File-backed pages come on top — the executable's and those of the
	// mapped storage files (queue, checkpoints, held sessions), page cache
	// the kernel can reclaim — and cannot exceed those files' size.
	if anon := peakAnon / 1024; anon > floodLimitMiB+floodMarginMiB {
		t.Errorf("peak anonymous RSS %d MiB exceeds limit_mib %d + %d MiB margin (peak RSS %d MiB)", anon, floodLimitMiB, floodMarginMiB, peak)
	}
	if mapped := (fileSize(t, binary) + dirSize(t, d.state)) / (1 << 20); int64(peakFile/1024) > mapped+1 {
		t.Errorf("peak file-backed RSS %d MiB exceeds the executable and storage files (%d MiB): something other than a mapped file grew", peakFile/1024, mapped)
	}
	// Killed under the flood: what was acked is in the queue file.
	c.kill()

	want := map[string]bool{}
	acked.Range(func(k, _ any) bool { want[k.(string)] = true; return true })
	c = d.start(t, addr)
	waitFor(t, "every acked span stored", 3*time.Minute, func() (bool, string) {
		m := missing(want, storedCalls(t, s, "flood-"))
		return len(m) == 0, fmt.Sprintf("%d of %d acked spans missing", len(m), len(want))
	})
	c.stop()
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// dirSize is the size of the regular files below dir.
func dirSize(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		fi, err := e.Info()
		if err != nil {
			return err
		}
		if fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
