// Package harnesslab runs the real agent harnesses (Claude Code, Codex, pi)
// against scripted model servers on loopback, in scenarios where the lab
// wrote every file and chose every command, so it knows each tool's true
// original output. Each run is recorded (the transcript plus a truth file)
// and the same checker judges ctxaudit's verdicts on a fresh run (`make lab`)
// and on the recorded runs (`make test`, no npm needed).
package harnesslab

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
)

// Precision words of a size in a truth file; they match the record's
// original.precision.
const (
	Exact       = "exact"
	Approximate = "approximate"
	LowerBound  = "lower_bound"
)

// Size is the truth about one original size: the true value the lab knows,
// and what ctxaudit can honestly know from the transcript. Precision is the
// precision the record must carry (Exact, Approximate, LowerBound), or ""
// when the transcript does not tell the size at all (the record must then be
// null). Tolerance bounds an approximate figure (a label's rounding).
type Size struct {
	True      uint64  `json:"true"`
	Precision string  `json:"precision,omitempty"`
	Tolerance float64 `json:"tolerance,omitempty"`
}

// Range is a shown range in the record's convention (lines 1-based
// inclusive, other units 0-based end-exclusive).
type Range struct {
	Start uint64 `json:"start"`
	End   uint64 `json:"end"`
	Unit  string `json:"unit"`
}

// CallTruth is what ctxaudit must record for one tool call.
type CallTruth struct {
	Tool string `json:"tool"`
	// Did says in words what the harness did with the output (for the table).
	Did       string `json:"did"`
	Truncated bool   `json:"truncated"`
	Kind      string `json:"truncation_kind"`
	Strategy  string `json:"strategy"`
	// PartialByRequest: the call asked for part of its target and got it.
	PartialByRequest bool `json:"partial_by_request,omitempty"`
	// Original maps a unit (bytes, chars, lines) to its truth. A unit that
	// is absent is not judged.
	Original map[string]Size `json:"original,omitempty"`
	// Shown and Total, when set, must be recorded exactly.
	Shown *Range  `json:"shown,omitempty"`
	Total *uint64 `json:"total,omitempty"`
	// ShownTailIsEnd, when set, must match the record.
	ShownTailIsEnd *bool `json:"shown_tail_is_end,omitempty"`
	// Disclosure is where, why, how to continue.
	Disclosure  [3]bool `json:"disclosure"`
	Understated bool    `json:"marker_understated"`
	// RefetchedSource, when set, must match the record: the call continues
	// an earlier one by fetching its source again.
	RefetchedSource *bool `json:"refetched_source,omitempty"`
	// Coverage, when set, is the session coverage the call must reach.
	Coverage *float64 `json:"session_coverage,omitempty"`
}

// AnswerTruth is the risk an answer must be given.
type AnswerTruth struct {
	Risk string `json:"risk"`
}

// Truth is the truth file of one recorded run.
type Truth struct {
	Harness  string        `json:"harness"`
	Version  string        `json:"version"`
	Scenario string        `json:"scenario"`
	Case     string        `json:"case"`
	Calls    []CallTruth   `json:"calls"`
	Answers  []AnswerTruth `json:"answers"`
	// Compactions, when set, is how many compactions the session record
	// must count.
	Compactions *int `json:"compactions,omitempty"`
	// KnownDiscrepancy names a verdict ctxaudit is known to get wrong on
	// this run, with the field and why; the check then expects exactly
	// that mismatch, so a fix shows up as a failure to update the note.
	KnownDiscrepancy []string `json:"known_discrepancy,omitempty"`
}

// TruthFile is the name of the truth file inside a recorded run folder.
const TruthFile = "truth.json"

// ReadTruth reads dir/truth.json.
func ReadTruth(dir string) (Truth, error) {
	var t Truth
	b, err := os.ReadFile(filepath.Join(dir, TruthFile))
	if err != nil {
		return t, fmt.Errorf("truth: %w", err)
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return t, fmt.Errorf("truth %s: %w", filepath.Join(dir, TruthFile), err)
	}
	return t, nil
}

// WriteTruth writes dir/truth.json.
func WriteTruth(dir string, t Truth) error {
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, TruthFile), append(b, '\n'), 0o644)
}

// sizeOK judges a recorded size against its truth. rec is nil when the
// record says unknown; recPrec is the record's precision.
func sizeOK(unit string, t Size, rec *uint64, recPrec string) string {
	if t.Precision == "" {
		if rec != nil {
			return fmt.Sprintf("original.%s: recorded %d (%s), but the transcript does not tell it (true %d)", unit, *rec, recPrec, t.True)
		}
		return ""
	}
	if rec == nil {
		return fmt.Sprintf("original.%s: recorded null, want %s %d", unit, t.Precision, t.True)
	}
	if recPrec != t.Precision {
		return fmt.Sprintf("original.%s: recorded %d as %s, want %s (true %d)", unit, *rec, recPrec, t.Precision, t.True)
	}
	switch t.Precision {
	case Exact:
		if *rec != t.True {
			return fmt.Sprintf("original.%s: recorded exactly %d, true %d", unit, *rec, t.True)
		}
	case Approximate:
		if math.Abs(float64(*rec)-float64(t.True)) > t.Tolerance {
			return fmt.Sprintf("original.%s: recorded about %d, true %d is outside ±%g", unit, *rec, t.True, t.Tolerance)
		}
	case LowerBound:
		if *rec > t.True || *rec == 0 {
			return fmt.Sprintf("original.%s: recorded at least %d, true %d", unit, *rec, t.True)
		}
	}
	return ""
}
