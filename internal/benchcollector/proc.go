package benchcollector

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/procfs"
)

// proc reads the kernel's process and machine figures (/proc) through
// procfs, the Prometheus node exporter's parser.
type proc struct{ fs procfs.FS }

func newProc() (proc, error) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return proc{}, fmt.Errorf("procfs: %w", err)
	}
	return proc{fs}, nil
}

// cpuSeconds returns the user plus system CPU time pid has used.
func (pr proc) cpuSeconds(pid int) (float64, error) {
	p, err := pr.fs.Proc(pid)
	if err != nil {
		return 0, fmt.Errorf("cpu of pid %d: %w", pid, err)
	}
	st, err := p.Stat()
	if err != nil {
		return 0, fmt.Errorf("cpu of pid %d: %w", pid, err)
	}
	return st.CPUTime(), nil
}

// status is pid's /proc/<pid>/status: VmHWM (peak resident set since it
// started), VmRSS (all resident memory) and RssAnon (the heap, stacks and
// other anonymous memory, without the binary and mapped files such as the
// storage files), in bytes.
func (pr proc) status(pid int) (procfs.ProcStatus, error) {
	p, err := pr.fs.Proc(pid)
	if err != nil {
		return procfs.ProcStatus{}, fmt.Errorf("status of pid %d: %w", pid, err)
	}
	st, err := p.NewStatus()
	if err != nil {
		return procfs.ProcStatus{}, fmt.Errorf("status of pid %d: %w", pid, err)
	}
	return st, nil
}

// peakRSSBytes returns VmHWM of pid.
func (pr proc) peakRSSBytes(pid int) (int64, error) {
	st, err := pr.status(pid)
	if err != nil {
		return 0, err
	}
	if st.VmHWM == 0 {
		return 0, fmt.Errorf("peak RSS of pid %d: no VmHWM in /proc/%d/status", pid, pid)
	}
	return int64(st.VmHWM), nil
}

// machineCPU is the machine's CPU time so far, all cores summed, busy and
// in all; busy is everything but idle and waiting for I/O.
type machineCPU struct{ busy, total float64 }

func (pr proc) machineCPU() (machineCPU, error) {
	st, err := pr.fs.Stat()
	if err != nil {
		return machineCPU{}, fmt.Errorf("machine cpu: %w", err)
	}
	c := st.CPUTotal
	total := c.User + c.Nice + c.System + c.Idle + c.Iowait + c.IRQ + c.SoftIRQ + c.Steal
	return machineCPU{busy: total - c.Idle - c.Iowait, total: total}, nil
}

// busyShare is the share of the machine's CPU time between m and later
// that was busy (0 to 1); 0 when no time passed. The kernel's iowait
// counter can go backwards (proc(5)), which makes the busy time grow by
// more than the total: a wholly busy machine reads as a little over 1, and
// is 1.
func (m machineCPU) busyShare(later machineCPU) float64 {
	if later.total <= m.total {
		return 0
	}
	return min(max((later.busy-m.busy)/(later.total-m.total), 0), 1)
}

// pidListening finds the process that listens on port (any address) over
// TCP: the socket's inode from /proc/net/tcp{,6}, then the process holding
// that inode among the processes' file descriptors. It reads only what the
// current user may read, so it finds a server run by another user only
// when running as root. (procfs parses /proc/net/tcp too, but deprecates
// that for netlink's sock_diag; the file is all this needs.)
func (pr proc) pidListening(port int) (int, error) {
	inodes := map[string]bool{}
	hexPort := fmt.Sprintf(":%04X", port)
	for _, name := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(name)
		if err != nil {
			continue // no IPv6, say
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			// local_address, st 0A = LISTEN, inode is field 10.
			if len(f) > 9 && strings.HasSuffix(f[1], hexPort) && f[3] == "0A" {
				inodes["socket:["+f[9]+"]"] = true
			}
		}
	}
	if len(inodes) == 0 {
		return 0, fmt.Errorf("no process listens on TCP port %d", port)
	}
	procs, err := pr.fs.AllProcs()
	if err != nil {
		return 0, fmt.Errorf("listing processes: %w", err)
	}
	for _, p := range procs {
		targets, err := p.FileDescriptorTargets()
		if err != nil {
			continue // another user's, or gone
		}
		for _, t := range targets {
			if inodes[t] {
				return p.PID, nil
			}
		}
	}
	return 0, fmt.Errorf("the process listening on TCP port %d is not readable in /proc", port)
}

// peakAnon samples RssAnon of pid every interval until stop is closed and
// returns the highest value seen (VmHWM has no anonymous-only peak).
func (pr proc) peakAnon(pid int, interval time.Duration, stop <-chan struct{}) <-chan int64 {
	out := make(chan int64, 1)
	go func() {
		var peak int64
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			if st, err := pr.status(pid); err == nil {
				peak = max(peak, int64(st.RssAnon))
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
