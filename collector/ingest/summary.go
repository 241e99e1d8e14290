package ingest

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/ctxaudit/ctxaudit/collector/transcript"
	"github.com/ctxaudit/ctxaudit/schema"
)

// Summary is what an ingest run read and wrote.
type Summary struct {
	Files    int                       `json:"files"`
	Lines    int64                     `json:"lines"`
	Bytes    int64                     `json:"bytes"`
	Formats  map[transcript.Format]int `json:"formats"`
	Sessions int                       `json:"sessions"`
	Turns    int                       `json:"turns"`

	ToolCalls       int                           `json:"tool_calls"`
	Truncated       int                           `json:"truncated"`
	TruncatedByKind map[schema.TruncationKind]int `json:"truncated_by_kind"`
	Answers         int                           `json:"answers"`
	AnswersByRisk   map[schema.Risk]int           `json:"answers_by_risk"`
	// AnswersRetracted counts answers an earlier write stored for messages
	// these files show to call a tool, taken back by this run (see
	// AnswerReader); they are not in Answers.
	AnswersRetracted int `json:"answers_retracted"`
	Compactions      int `json:"compactions"`

	// SkippedLines counts unusable lines (and calls) by reason; Skipped
	// lists them with file:line, up to Options.MaxSkipDetails.
	SkippedLines    map[string]int `json:"skipped_lines"`
	Skipped         []SkippedLine  `json:"skipped"`
	SkippedOmitted  int            `json:"skipped_omitted"`
	SkippedFiles    []SkippedFile  `json:"skipped_files"`
	ToolOutputsKept int            `json:"tool_outputs"`

	// SavedRefused counts saved-output references that were not read, by
	// reason (RefuseSymlink, …); SavedRefusals lists them with file:line,
	// up to Options.MaxSkipDetails.
	SavedRefused  map[string]int `json:"saved_refused"`
	SavedRefusals []SavedRefusal `json:"saved_refusals"`
}

// SavedRefusal is one saved output a notice pointed to that was not read.
type SavedRefusal struct {
	File   string `json:"file"`
	Line   int64  `json:"line"`
	Ref    string `json:"ref"`
	Reason string `json:"reason"`
	Detail string `json:"detail,omitempty"`
}

func (s SavedRefusal) String() string {
	out := fmt.Sprintf("%s:%d: %s: %s", s.File, s.Line, s.Reason, s.Ref)
	if s.Detail != "" {
		out += " (" + s.Detail + ")"
	}
	return out
}

// SkippedLine is one unusable line.
type SkippedLine struct {
	File   string `json:"file"`
	Line   int64  `json:"line"`
	Reason string `json:"reason"`
	Detail string `json:"detail,omitempty"`
}

func (s SkippedLine) String() string {
	// Line 0 is the whole file (a sub-agent's metadata file).
	out := fmt.Sprintf("%s: %s", s.File, s.Reason)
	if s.Line > 0 {
		out = fmt.Sprintf("%s:%d: %s", s.File, s.Line, s.Reason)
	}
	if s.Detail != "" {
		out += ": " + s.Detail
	}
	return out
}

// SkippedFile is a file found while walking a folder that was not ingested.
type SkippedFile struct {
	File   string `json:"file"`
	Reason string `json:"reason"`
}

func newSummary() Summary {
	return Summary{
		Formats:         map[transcript.Format]int{},
		TruncatedByKind: map[schema.TruncationKind]int{},
		AnswersByRisk:   map[schema.Risk]int{},
		SkippedLines:    map[string]int{},
		SavedRefused:    map[string]int{},
	}
}

// SkippedTotal is the number of skipped lines of every reason.
func (s Summary) SkippedTotal() int { return countAll(s.SkippedLines) }

func countAll(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// WriteText renders the summary for people.
func (s Summary) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "files:        %d (%s, %s)%s\n", s.Files, plural(s.Lines, "line"), humanBytes(s.Bytes), formatCounts(s.Formats))
	fmt.Fprintf(&b, "sessions:     %d (%s)\n", s.Sessions, plural(int64(s.Turns), "turn"))
	fmt.Fprintf(&b, "tool calls:   %d\n", s.ToolCalls)
	fmt.Fprintf(&b, "truncated:    %d%s\n", s.Truncated, kindCounts(s.TruncatedByKind))
	fmt.Fprintf(&b, "answers:      %d%s\n", s.Answers, riskCounts(s.AnswersByRisk))
	if s.AnswersRetracted > 0 {
		fmt.Fprintf(&b, "taken back:   %s stored earlier (their messages went on to call a tool)\n", plural(int64(s.AnswersRetracted), "answer"))
	}
	fmt.Fprintf(&b, "compactions:  %d\n", s.Compactions)
	if s.ToolOutputsKept > 0 {
		fmt.Fprintf(&b, "tool outputs: %d stored\n", s.ToolOutputsKept)
	}
	fmt.Fprintf(&b, "skipped:      %s%s\n", plural(int64(s.SkippedTotal()), "line"), reasonCounts(s.SkippedLines))
	for _, sk := range s.Skipped {
		fmt.Fprintf(&b, "  %s\n", sk)
	}
	if s.SkippedOmitted > 0 {
		fmt.Fprintf(&b, "  … and %d more\n", s.SkippedOmitted)
	}
	for _, f := range s.SkippedFiles {
		fmt.Fprintf(&b, "skipped file: %s: %s\n", f.File, f.Reason)
	}
	if n := countAll(s.SavedRefused); n > 0 {
		fmt.Fprintf(&b, "refused:      %d saved outputs not read%s\n", n, reasonCounts(s.SavedRefused))
		for _, r := range s.SavedRefusals {
			fmt.Fprintf(&b, "  %s\n", r)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func formatCounts(m map[transcript.Format]int) string {
	var parts []string
	for _, f := range transcript.Formats {
		if n := m[f]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", f, n))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " [" + strings.Join(parts, ", ") + "]"
}

func kindCounts(m map[schema.TruncationKind]int) string {
	var parts []string
	for _, k := range schema.TruncationKinds {
		if n := m[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, n))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func riskCounts(m map[schema.Risk]int) string {
	var parts []string
	for i := len(schema.Risks) - 1; i >= 0; i-- {
		if n := m[schema.Risks[i]]; n > 0 {
			parts = append(parts, fmt.Sprintf("risk %s %d", schema.Risks[i], n))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func reasonCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// plural is "1 line", "2 lines".
func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
