package cli

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/ctxaudit/ctxaudit/collector/ingest"
)

// progressEvery is how often the progress line is redrawn at most.
const progressEvery = 250 * time.Millisecond

// progress draws one self-overwriting line on a terminal while ingest
// runs: files, MB and calls done, the rate and an ETA from the bytes left.
type progress struct {
	w          io.Writer
	totalFiles int
	totalBytes int64
	now        func() time.Time
	start      time.Time
	last       time.Time
	drawn      bool
}

func newProgress(w io.Writer, totalFiles int, totalBytes int64, now func() time.Time) *progress {
	t := now()
	return &progress{w: w, totalFiles: totalFiles, totalBytes: totalBytes, now: now, start: t, last: t}
}

// update redraws the line, at most every progressEvery.
func (p *progress) update(pr ingest.Progress) {
	t := p.now()
	if p.drawn && t.Sub(p.last) < progressEvery {
		return
	}
	p.last = t
	p.drawn = true
	fmt.Fprintf(p.w, "\r\033[K%s", p.line(pr, t.Sub(p.start)))
}

// line is "12/340 files · 153.2/1,024.0 MB · 42,311 calls · 35.1 MB/s ·
// ETA 25s"; the rate and ETA wait until there is something to go on.
func (p *progress) line(pr ingest.Progress, elapsed time.Duration) string {
	mb := func(n int64) string { return fmt.Sprintf("%.1f", float64(n)/(1<<20)) }
	parts := []string{
		fmt.Sprintf("%d/%d files", pr.Files, p.totalFiles),
		mb(pr.Bytes) + "/" + mb(p.totalBytes) + " MB",
		plural(pr.Calls, "call"),
	}
	if s := elapsed.Seconds(); s >= 0.5 && pr.Bytes > 0 {
		rate := float64(pr.Bytes) / s
		parts = append(parts, fmt.Sprintf("%.1f MB/s, %.0f calls/s", rate/(1<<20), float64(pr.Calls)/s))
		if left := p.totalBytes - pr.Bytes; left > 0 {
			parts = append(parts, "ETA "+time.Duration(float64(left)/rate*float64(time.Second)).Round(time.Second).String())
		}
	}
	return "ingest: " + strings.Join(parts, " · ")
}

// finish clears the line so the summary starts on a clean one.
func (p *progress) finish() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// isTerminal says whether w is a terminal: progress is only drawn there.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// transcriptTotals counts the files and bytes ingest will read from paths,
// as it walks them: files as given, *.jsonl below folders, tool-results
// sidecars left out. It only sizes the progress line, so errors are left
// for ingest to report.
func transcriptTotals(paths []string) (files int, bytes int64) {
	for _, root := range paths {
		st, err := os.Stat(root)
		if err != nil {
			continue
		}
		if !st.IsDir() {
			files, bytes = files+1, bytes+st.Size()
			continue
		}
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() {
				if d.Name() == "tool-results" {
					return filepath.SkipDir
				}
				return nil
			}
			if strings.HasSuffix(d.Name(), ".jsonl") && d.Type().IsRegular() {
				if info, err := d.Info(); err == nil {
					files, bytes = files+1, bytes+info.Size()
				}
			}
			return nil
		})
	}
	return files, bytes
}
