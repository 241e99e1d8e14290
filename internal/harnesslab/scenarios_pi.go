package harnesslab

import (
	"path/filepath"
	"strings"

	"github.com/ctxaudit/ctxaudit/internal/harnesslab/model"
)

func piCall(name string, in map[string]any) []model.ToolCall {
	return []model.ToolCall{{Name: name, Input: in}}
}

var (
	piLong  = Lines("long", 3000, 30) // 3,000 lines, 93,000 bytes: over 2,000 lines and 50 KB
	piWide  = Lines("wide", 1200, 60) // 1,200 lines, 73,200 bytes: over 50 KB, under 2,000 lines
	piSmall = Lines("small", 50, 40)
)

func piManyFiles(n int) map[string]string {
	files := map[string]string{}
	for i := 1; i <= n; i++ {
		files[filepath.Join("many", fmtName(i))] = "needle here\n"
	}
	return files
}

// PiScenarios are the cases run on pi.
func PiScenarios() []Scenario {
	return []Scenario{
		{
			Name: "bash-small", Case: "bash, output under the caps",
			Setup: writeFiles(map[string]string{"small.txt": piSmall}),
			Script: func(e Env) model.Script {
				return steps(absentAnswer, piCall("bash", map[string]any{"command": "cat small.txt"}))
			},
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				return []CallTruth{{Tool: "bash", Did: "whole output", Kind: "none", Strategy: "none"}}, []AnswerTruth{{Risk: "none"}}
			},
		},
		{
			Name: "bash-over-lines", Case: "bash, 3,000 lines (over 2,000 lines and 50 KB)",
			Setup: writeFiles(map[string]string{"long.txt": piLong}),
			Script: func(e Env) model.Script {
				return steps(absentAnswer, piCall("bash", map[string]any{"command": "cat long.txt"}))
			},
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				m := measure(piLong)
				return []CallTruth{{Tool: "bash", Did: "last 50 KB (lines 1350–3001 in pi's numbering); full output saved to a temp file",
					Truncated: true, Kind: "explicit", Strategy: "tail",
					Original:   map[string]Size{"bytes": exact(m.bytes), "lines": exact(m.lines)},
					Disclosure: [3]bool{true, true, true}}}, []AnswerTruth{{Risk: "high"}}
			},
		},
		{
			Name: "read-image", Case: "read, a 64×48 PNG",
			Setup: writeFiles(map[string]string{"shot.png": PNG(64, 48)}),
			Script: func(e Env) model.Script {
				return steps(plainAnswer, piCall("read", map[string]any{"path": filepath.Join(e.Work, "shot.png")}))
			},
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				// The lab's model takes no images: pi writes the caption, a note
				// that the image will be omitted, and the image block, then
				// sends a placeholder instead of the image. The model answers
				// about a picture it never saw.
				return []CallTruth{{Tool: "read", Did: "image left out (the model takes no images); the caption says so",
					Truncated: true, Kind: "explicit", Strategy: "refused", Disclosure: [3]bool{true, true, false}}}, []AnswerTruth{{Risk: "medium"}}
			},
		},
		{
			Name: "read-small", Case: "read, small file",
			Setup: writeFiles(map[string]string{"small.txt": piSmall}),
			Script: func(e Env) model.Script {
				return steps(plainAnswer, piCall("read", map[string]any{"path": filepath.Join(e.Work, "small.txt")}))
			},
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				return []CallTruth{{Tool: "read", Did: "whole file", Kind: "none", Strategy: "none"}}, []AnswerTruth{{Risk: "none"}}
			},
		},
		{
			Name: "read-over-lines", Case: "read, 3,000-line file (over 2,000 lines)",
			Setup: writeFiles(map[string]string{"long.txt": piLong}),
			Script: func(e Env) model.Script {
				return steps(absentAnswer, piCall("read", map[string]any{"path": filepath.Join(e.Work, "long.txt")}))
			},
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				m := measure(piLong)
				return []CallTruth{{Tool: "read", Did: "first 50 KB (lines 1–1651), notice with total and offset to continue",
					Truncated: true, Kind: "explicit", Strategy: "paginated",
					Original: map[string]Size{"bytes": exact(m.bytes), "lines": untold(m.lines)},
					Shown:    &Range{Start: 1, End: piKeptLines(piLong), Unit: "lines"}, Total: ptr(m.lines + 1),
					Disclosure: [3]bool{true, true, true}}}, []AnswerTruth{{Risk: "high"}}
			},
		},
		{
			Name: "read-over-bytes", Case: "read, 1,200-line 73 KB file (over 50 KB)",
			Setup: writeFiles(map[string]string{"wide.txt": piWide}),
			Script: func(e Env) model.Script {
				return steps(absentAnswer, piCall("read", map[string]any{"path": filepath.Join(e.Work, "wide.txt")}))
			},
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				m := measure(piWide)
				return []CallTruth{{Tool: "read", Did: "first 50 KB (lines 1–839), notice with total and offset to continue",
					Truncated: true, Kind: "explicit", Strategy: "paginated",
					Original: map[string]Size{"bytes": exact(m.bytes), "lines": untold(m.lines)},
					Shown:    &Range{Start: 1, End: piKeptLines(piWide), Unit: "lines"}, Total: ptr(m.lines + 1),
					Disclosure: [3]bool{true, true, true}}}, []AnswerTruth{{Risk: "high"}}
			},
		},
		{
			Name: "read-partial", Case: "read with offset and limit (partial by request)",
			Setup: writeFiles(map[string]string{"long.txt": piLong}),
			Script: func(e Env) model.Script {
				return steps(plainAnswer, piCall("read", map[string]any{"path": filepath.Join(e.Work, "long.txt"), "offset": 100, "limit": 50}))
			},
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				// The notice tells how many lines follow and the offset to continue.
				return []CallTruth{{Tool: "read", Did: "lines 100–149 as asked, notice: 2852 more lines, offset=150",
					Kind: "none", Strategy: "none", PartialByRequest: true, Disclosure: [3]bool{true, false, true},
					Shown: &Range{Start: 100, End: 149, Unit: "lines"}}}, []AnswerTruth{{Risk: "none"}}
			},
		},
		{
			Name: "read-paging", Case: "read paged to the end (offset=2001 after the notice)",
			Setup: writeFiles(map[string]string{"long.txt": piLong}),
			Script: func(e Env) model.Script {
				p := filepath.Join(e.Work, "long.txt")
				return steps(plainAnswer, piCall("read", map[string]any{"path": p}), piCall("read", map[string]any{"path": p, "offset": piKeptLines(piLong) + 1}))
			},
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				m := measure(piLong)
				return []CallTruth{
					{Tool: "read", Did: "first 50 KB (lines 1–1651), notice with offset=1652",
						Truncated: true, Kind: "explicit", Strategy: "paginated",
						Original: map[string]Size{"bytes": exact(m.bytes), "lines": untold(m.lines)},
						Shown:    &Range{Start: 1, End: piKeptLines(piLong), Unit: "lines"}, Total: ptr(m.lines + 1),
						Disclosure: [3]bool{true, true, true}, Coverage: ptr(1.0)},
					{Tool: "read", Did: "the rest from offset=1652, to the end", Kind: "none", Strategy: "none", PartialByRequest: true,
						Shown: &Range{Start: piKeptLines(piLong) + 1, End: m.lines + 1, Unit: "lines"}},
				}, []AnswerTruth{{Risk: "low"}}
			},
		},
		{
			Name: "ls-over-limit", Case: "ls, 1,200 entries (over the 500-entry limit)",
			Setup: writeFiles(piManyFiles(1200)),
			Script: func(e Env) model.Script {
				return steps(absentAnswer, piCall("ls", map[string]any{"path": filepath.Join(e.Work, "many")}))
			},
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				// The notice says the limit was hit and how to get more, not of what total.
				return []CallTruth{{Tool: "ls", Did: "first 500 entries, notice: limit reached, use limit=1000",
					Truncated: true, Kind: "explicit", Strategy: "head",
					Disclosure: [3]bool{false, true, true}}}, []AnswerTruth{{Risk: "high"}}
			},
		},
	}
}

// pi's "of N" totals count a final newline as one more (empty) line, so a
// head cut's line count is N or N-1: it is untold, and shown ranges and
// totals are in pi's numbering (N).

// piKeptLines is how many whole lines of text pi's head cut keeps: at most
// 2,000 lines and 50 KB (51,200 bytes), counting each line's newline but
// the last.
func piKeptLines(text string) uint64 {
	const maxLines, maxBytes = 2000, 50 * 1024
	n, total := uint64(0), 0
	for _, line := range strings.SplitAfter(text, "\n") {
		if line == "" || n == maxLines {
			break
		}
		if n > 0 {
			total++ // the newline before this line
		}
		l := len(strings.TrimSuffix(line, "\n"))
		if total+l > maxBytes {
			break
		}
		total += l
		n++
	}
	return n
}

var piHugeLine = strings.Repeat("y", 60*1024) + "\n"

// piMoreScenarios are pi's failure and single-long-line cases.
func piMoreScenarios() []Scenario {
	return []Scenario{
		{
			Name: "bash-fail-over-lines", Case: "bash failure (exit 2), 3,000 lines",
			Setup: writeFiles(map[string]string{"long.txt": piLong}),
			Script: func(e Env) model.Script {
				return steps(absentAnswer, piCall("bash", map[string]any{"command": "cat long.txt; exit 2"}))
			},
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				m := measure(piLong)
				// On failure pi keeps no truncation details: the bytes are untold.
				return []CallTruth{{Tool: "bash", Did: "last 50 KB and the exit code; full output saved to a temp file; no details",
					Truncated: true, Kind: "explicit", Strategy: "tail",
					Original:   map[string]Size{"bytes": untold(m.bytes), "lines": exact(m.lines)},
					Disclosure: [3]bool{true, true, true}}}, []AnswerTruth{{Risk: "high"}}
			},
		},
		{
			Name: "read-first-line-over-bytes", Case: "read, a single 60 KB line (over 50 KB)",
			Setup: writeFiles(map[string]string{"line.txt": piHugeLine}),
			Script: func(e Env) model.Script {
				return steps(absentAnswer, piCall("read", map[string]any{"path": filepath.Join(e.Work, "line.txt")}))
			},
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				return []CallTruth{{Tool: "read", Did: "nothing shown; notice gives the line's size, the cap and a bash command to read it",
					Truncated: true, Kind: "explicit", Strategy: "refused",
					Disclosure: [3]bool{true, true, true}}}, []AnswerTruth{{Risk: "high"}}
			},
		},
	}
}

// piSearchScenarios are pi's searches over their result limits. (find runs
// fd with flags Debian's fd 8 lacks, so it is not among them.)
func piSearchScenarios() []Scenario {
	return []Scenario{
		{
			Name: "find-small", Case: "find, 20 matching files (under the 1,000-result limit)",
			Setup: writeFiles(piManyFiles(20)),
			Script: func(e Env) model.Script {
				return steps(absentAnswer, piCall("find", map[string]any{"pattern": "*.txt", "path": filepath.Join(e.Work, "many")}))
			},
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				return []CallTruth{{Tool: "find", Did: "every match", Kind: "none", Strategy: "none"}}, []AnswerTruth{{Risk: "none"}}
			},
		},
		{
			Name: "find-over-limit", Case: "find, 1,200 matching files (over the 1,000-result limit)",
			Setup: writeFiles(piManyFiles(1200)),
			Script: func(e Env) model.Script {
				return steps(absentAnswer, piCall("find", map[string]any{"pattern": "*.txt", "path": filepath.Join(e.Work, "many")}))
			},
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				// The notice says the limit was hit and how to get more, not of what total.
				return []CallTruth{{Tool: "find", Did: "first 1,000 results, notice: limit reached, use limit=2000 or refine",
					Truncated: true, Kind: "explicit", Strategy: "head",
					Disclosure: [3]bool{false, true, true}}}, []AnswerTruth{{Risk: "high"}}
			},
		},
		{
			// pi compacts at the end of the agent loop once the last answer's
			// usage passes the context window less its 16,384-token reserve
			// (here 190,000 of 200,000); the summary request gets the side text.
			Name: "compaction-after-answer", Case: "bash, then an answer whose usage nears the context window: pi compacts",
			Compactions: ptr(1),
			Setup:       writeFiles(map[string]string{"small.txt": piSmall}),
			Script: func(e Env) model.Script {
				s := steps(absentAnswer, piCall("bash", map[string]any{"command": "cat small.txt"}))
				s.Steps[len(s.Steps)-1].InputTokens = 190000
				return s
			},
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				return []CallTruth{{Tool: "bash", Did: "whole output", Kind: "none", Strategy: "none"}}, []AnswerTruth{{Risk: "none"}}
			},
		},
		{
			Name: "grep-over-limit", Case: "grep, 300 matching lines (over the 100-match limit)",
			Setup: writeFiles(map[string]string{"matches.txt": Lines("needle", 300, 30)}),
			Script: func(e Env) model.Script {
				return steps(absentAnswer, piCall("grep", map[string]any{"pattern": "needle", "path": e.Work}))
			},
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				// The notice says the limit was hit and how to get more, not of what total.
				return []CallTruth{{Tool: "grep", Did: "first 100 matches, notice: limit reached, use limit=200 or refine", Truncated: true, Kind: "explicit", Strategy: "head",
					Disclosure: [3]bool{false, true, true}}}, []AnswerTruth{{Risk: "high"}}
			},
		},
	}
}
