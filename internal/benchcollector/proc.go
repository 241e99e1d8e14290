package benchcollector

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat. It
// is 100 on every Linux architecture Go supports (the kernel's ABI, not
// CONFIG_HZ).
const clockTicks = 100

// cpuSeconds returns utime+stime of pid, in seconds, from /proc/<pid>/stat.
func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("cpu of pid %d: %w", pid, err)
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// fields are counted after its closing parenthesis.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("cpu of pid %d: unexpected /proc/%d/stat", pid, pid)
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("cpu of pid %d: short /proc/%d/stat", pid, pid)
	}
	ut, err1 := strconv.ParseUint(f[11], 10, 64)
	st, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("cpu of pid %d: bad utime/stime in /proc/%d/stat", pid, pid)
	}
	return float64(ut+st) / clockTicks, nil
}

// peakRSSBytes returns VmHWM of pid (the peak resident set since it started).
func peakRSSBytes(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("peak RSS of pid %d: %w", pid, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("peak RSS of pid %d: %q: %w", pid, line, err)
			}
			return kb << 10, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("peak RSS of pid %d: %w", pid, err)
	}
	return 0, fmt.Errorf("peak RSS of pid %d: no VmHWM in /proc/%d/status", pid, pid)
}

// pidListening finds the process that listens on 127.0.0.1:port (or any
// address) over TCP: the socket's inode from /proc/net/tcp{,6}, then the
// process holding that inode among /proc/*/fd. It reads only what the
// current user may read, so it finds a server run by another user only
// when running as root.
func pidListening(port int) (int, error) {
	inodes := map[string]bool{}
	hexPort := fmt.Sprintf(":%04X", port)
	for _, name := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(name)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			// local_address, state 0A = LISTEN, inode is field 10.
			if len(f) > 9 && strings.HasSuffix(f[1], hexPort) && f[3] == "0A" {
				inodes["socket:["+f[9]+"]"] = true
			}
		}
	}
	if len(inodes) == 0 {
		return 0, fmt.Errorf("no process listens on TCP port %d", port)
	}
	procs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		return 0, err
	}
	for _, p := range procs {
		fds, err := os.ReadDir(filepath.Join(p, "fd"))
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if l, err := os.Readlink(filepath.Join(p, "fd", fd.Name())); err == nil && inodes[l] {
				return strconv.Atoi(filepath.Base(p))
			}
		}
	}
	return 0, fmt.Errorf("the process listening on TCP port %d is not readable in /proc", port)
}

// rssBytes returns VmRSS (all resident memory) and RssAnon (the heap, stacks
// and other anonymous memory, without the binary and mapped files such as
// the storage files) of pid, from /proc/<pid>/status.
func rssBytes(pid int) (rss, anon int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("RSS of pid %d: %w", pid, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		for _, f := range []struct {
			prefix string
			into   *int64
		}{{"VmRSS:", &rss}, {"RssAnon:", &anon}} {
			if v, ok := strings.CutPrefix(line, f.prefix); ok {
				kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				if err != nil {
					return 0, 0, fmt.Errorf("RSS of pid %d: %q: %w", pid, line, err)
				}
				*f.into = kb << 10
			}
		}
	}
	return rss, anon, nil
}

// peakAnon samples RssAnon of pid every interval until stop is closed and
// returns the highest value seen (VmHWM has no anonymous-only peak).
func peakAnon(pid int, interval time.Duration, stop <-chan struct{}) <-chan int64 {
	out := make(chan int64, 1)
	go func() {
		var peak int64
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			if _, anon, err := rssBytes(pid); err == nil {
				peak = max(peak, anon)
			}
			select {
			case <-stop:
				out <- peak
				return
			case <-t.C:
			}
		}
	}()
	return out
}

// memoryLimitMiB reads the limit the collector's memory_limiter logged at
// start ("Memory limiter configured" … "limit_mib": N); 0 if it logged none.
func memoryLimitMiB(log string) int64 {
	b, err := os.ReadFile(log)
	if err != nil {
		return 0
	}
	m := limitMiBRe.FindSubmatch(b)
	if m == nil {
		return 0
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return n
}

var limitMiBRe = regexp.MustCompile(`Memory limiter configured.*?"limit_mib": (\d+)`)
