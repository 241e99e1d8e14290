package forensics

import (
	"math"
	"strconv"
	"strings"

	"github.com/ctxaudit/ctxaudit/schema"
)

// atoi parses a non-negative decimal that may carry thousands separators
// ("85,713", as JavaScript's toLocaleString writes it). Anything else, and
// anything that overflows, is unknown.
func atoi(s string) schema.Count {
	if s == "" {
		// An optional group that did not match: unknown, without the
		// error value ParseUint would allocate to say so.
		return schema.Unknown
	}
	s = strings.ReplaceAll(s, ",", "")
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return schema.Unknown
	}
	return schema.Known(n)
}

// parseSizeLabel reads a human size label as the harnesses print them and
// returns the amount in base units (1 KB = 1024, as both Claude Code's
// formatFileSize and pi's formatSize compute it). Accepted: "83.7KB",
// "268KB", "1.2 MB", "512 bytes", "512B", "50.0KB". The result is rounded to
// the nearest unit, so it is only as precise as the label (±0.05 of its unit).
func parseSizeLabel(label string) schema.Count {
	s := strings.TrimSpace(label)
	mult := 1.0
	switch {
	case strings.HasSuffix(s, "bytes"):
		s = strings.TrimSuffix(s, "bytes")
	case strings.HasSuffix(s, "GB"):
		s, mult = strings.TrimSuffix(s, "GB"), 1<<30
	case strings.HasSuffix(s, "MB"):
		s, mult = strings.TrimSuffix(s, "MB"), 1<<20
	case strings.HasSuffix(s, "KB"):
		s, mult = strings.TrimSuffix(s, "KB"), 1<<10
	case strings.HasSuffix(s, "B"):
		s = strings.TrimSuffix(s, "B")
	default:
		return schema.Unknown
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimSpace(s), ",", ""), 64)
	if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return schema.Unknown
	}
	x := math.Round(v * mult)
	if x >= math.MaxUint64/2 {
		return schema.Unknown
	}
	return schema.Known(uint64(x))
}

// addCounts returns a+b when both are known.
func addCounts(a, b schema.Count) schema.Count {
	if !a.Known || !b.Known || a.N > math.MaxUint64-b.N {
		return schema.Unknown
	}
	return schema.Known(a.N + b.N)
}

// subCount returns a-b when both are known and a >= b.
func subCount(a, b schema.Count) schema.Count {
	if !a.Known || !b.Known || a.N < b.N {
		return schema.Unknown
	}
	return schema.Known(a.N - b.N)
}

// exceeds reports whether a is known to be larger than b by more than a
// tolerance of slack units plus pct percent of b. Formatting differences
// (a trailing newline, a joined stderr, line-number prefixes) must not read
// as truncation, so comparisons between differently sourced figures use it.
func exceeds(a, b schema.Count, slack, pct uint64) bool {
	if !a.Known || !b.Known {
		return false
	}
	tol := slack + b.N/100*pct
	return a.N > b.N && a.N-b.N > tol
}
