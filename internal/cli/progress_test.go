package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/collector/ingest"
	"github.com/ctxaudit/ctxaudit/collector/transcript/transcripttest"
)

// The progress line counts files, MB and calls, and gives a rate and an
// ETA once there is something to go on; it is redrawn at most every
// progressEvery and cleared at the end.
func TestProgressLine(t *testing.T) {
	var out bytes.Buffer
	clock := time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	p := newProgress(&out, 4, 40<<20, now)

	p.update(ingest.Progress{Files: 1, Bytes: 1 << 20, Calls: 10})
	if got := out.String(); got != "\r\033[Kingest: 1/4 files · 1.0/40.0 MB · 10 calls" {
		t.Fatalf("first line %q", got)
	}
	out.Reset()
	clock = clock.Add(100 * time.Millisecond)
	p.update(ingest.Progress{Files: 2, Bytes: 2 << 20, Calls: 20})
	if out.Len() != 0 {
		t.Fatalf("redrawn within %s: %q", progressEvery, out.String())
	}
	clock = clock.Add(9900 * time.Millisecond) // 10 s in: 10 MB done, 30 MB left at 1 MB/s
	p.update(ingest.Progress{Files: 2, Bytes: 10 << 20, Calls: 1000})
	if got := out.String(); got != "\r\033[Kingest: 2/4 files · 10.0/40.0 MB · 1000 calls · 1.0 MB/s, 100 calls/s · ETA 30s" {
		t.Fatalf("line %q", got)
	}
	out.Reset()
	p.finish()
	if out.String() != "\r\033[K" {
		t.Fatalf("finish wrote %q", out.String())
	}
}

// Not on a terminal (a pipe, a file, a test's buffer) ingest draws no
// progress, and the totals are those ingest reads.
func TestNoProgressOffTerminal(t *testing.T) {
	examples := transcripttest.ExamplesDir(t)
	code, out, errOut := run(t, "ingest", "--dry-run", examples)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(out+errOut, "\r") || strings.Contains(errOut, "ingest: ") {
		t.Errorf("progress drawn off a terminal:\nstdout %q\nstderr %q", out, errOut)
	}
	files, _ := transcriptTotals([]string{examples})
	if !strings.Contains(out, "files:        7 ") || files != 7 {
		t.Errorf("totals count %d files; ingest read:\n%s", files, out)
	}
}
