package forensics_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/collector/ingest"
	"github.com/ctxaudit/ctxaudit/collector/transcript/transcripttest"
	"github.com/ctxaudit/ctxaudit/schema"
)

// nopWriter discards every row, so the big test measures ingest itself. On
// its first call, when the session's rows are all in memory, it records the
// live heap: what the rows cost, as opposed to the GC's headroom.
type nopWriter struct {
	calls    int
	liveHeap uint64
}

func (*nopWriter) WriteSessions(context.Context, []schema.Session) error { return nil }
func (w *nopWriter) WriteToolCalls(_ context.Context, c []schema.ToolCall) error {
	if w.calls == 0 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		w.liveHeap = ms.HeapAlloc
	}
	w.calls += len(c)
	return nil
}
func (*nopWriter) WriteAnswers(context.Context, []schema.Answer) error         { return nil }
func (*nopWriter) WriteToolOutputs(context.Context, []schema.ToolOutput) error { return nil }

// TestBigTranscript ingests a ~1 GB synthetic Claude Code session (the real
// 2.1.6 fixture repeated, ids renumbered so every tool_use and message stays
// unique) with a no-op Writer, and reports throughput and peak RSS. Memory
// must stay flat: lines are streamed, texts dropped once measured, so the
// peak is bounded by the longest line and the session's rows, not the file.
//
// It writes 1 GB to a temp dir and takes a few seconds, so it runs only with
// CTXAUDIT_BIG=1 (CTXAUDIT_BIG_MB sets another size):
//
//	CTXAUDIT_BIG=1 go test -run TestBigTranscript -v ./collector/forensics/
func TestBigTranscript(t *testing.T) {
	if os.Getenv("CTXAUDIT_BIG") != "1" {
		t.Skip("set CTXAUDIT_BIG=1 to ingest a synthetic 1 GB transcript")
	}
	size := int64(1 << 30)
	if mb, err := strconv.Atoi(os.Getenv("CTXAUDIT_BIG_MB")); err == nil && mb > 0 {
		size = int64(mb) << 20
	}
	const session = "637ef6e7-e740-4503-8ff8-5780d7c0918f"
	src, err := os.ReadFile(filepath.Join(transcripttest.FixturesDir(t), "claude-code",
		"session-2.1.6-637ef6e7", session+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(src), []byte("\n"))

	// The file is named after the session, as Claude Code names it.
	path := filepath.Join(t.TempDir(), session+".jsonl")
	start := time.Now()
	written, reps := writeRepeated(t, path, lines, size)
	t.Logf("generated %.0f MB (%d copies of the %d-line fixture) in %v",
		float64(written)/(1<<20), reps, len(lines), time.Since(start).Round(time.Millisecond))

	runtime.GC()
	resetPeakRSS()
	before := procStatus(t, "VmHWM")
	start = time.Now()
	w := &nopWriter{}
	sum, err := ingest.Run(context.Background(), []string{path}, ingest.Options{}, w)
	if err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	peak := procStatus(t, "VmHWM")
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)

	t.Logf("ingest.Run: %d lines, %d tool calls (%d written), %d truncated, skipped lines %v",
		sum.Lines, sum.ToolCalls, w.calls, sum.Truncated, sum.SkippedLines)
	t.Logf("throughput: %.0f MB/s (%.1f s for %.0f MB, GOMAXPROCS=%d)",
		float64(sum.Bytes)/(1<<20)/elapsed.Seconds(), elapsed.Seconds(), float64(sum.Bytes)/(1<<20), runtime.GOMAXPROCS(0))
	t.Logf("peak RSS (VmHWM): %d MB during the run (%d MB before it); live heap with the session's rows: %d MB "+
		"(%d B per call); HeapSys %d MB; allocated %d MB in all",
		peak>>10, before>>10, w.liveHeap>>20, w.liveHeap/uint64(max(w.calls, 1)), ms.HeapSys>>20, ms.TotalAlloc>>20)
	if want := 19 * reps; sum.ToolCalls != want {
		t.Errorf("tool calls = %d, want %d", sum.ToolCalls, want)
	}
	// The texts are never held: a run that kept them would need more than
	// the file. ingest keeps one session's rows until the session ends (to
	// sort and analyse them), so the peak grows with the calls of the
	// largest session, ~2 KB live per call plus GC headroom: a quarter of
	// this file, which is one session of 34k calls. Half is the ceiling.
	if peakBytes := peak << 10; peakBytes > written/2 {
		t.Errorf("peak RSS %d MB is over half the %d MB file", peak>>10, written>>20)
	}
}

// writeRepeated writes copies of the fixture lines until size bytes, with
// the tool_use and message ids of copy n renamed "toolu_rN_…" and "msg_rN_…".
func writeRepeated(t *testing.T, path string, lines [][]byte, size int64) (written int64, reps int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	var buf []byte
	for written < size {
		tool, msg := []byte(fmt.Sprintf(`"toolu_r%d_`, reps)), []byte(fmt.Sprintf(`"msg_r%d_`, reps))
		for _, l := range lines {
			buf = append(buf[:0], l...)
			buf = bytes.ReplaceAll(buf, []byte(`"toolu_`), tool)
			buf = bytes.ReplaceAll(buf, []byte(`"msg_`), msg)
			buf = append(buf, '\n')
			n, err := bw.Write(buf)
			if err != nil {
				t.Fatal(err)
			}
			written += int64(n)
		}
		reps++
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return written, reps
}

// resetPeakRSS resets VmHWM to the current RSS (Linux 4.0+), so the peak
// read afterwards is the run's, not the generator's. Failing is harmless:
// the generator streams and its peak is small.
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// procStatus reads a "kB" field of /proc/self/status.
func procStatus(t *testing.T, field string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("%s: %v", l, err)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}
