package schema

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// Valid reports whether a value is one of its type's named values; the empty
// value, which stands for none or unknown, is not — callers say what it
// means where they read one.
//
// The enumerations below are stored in ClickHouse Enum8 columns, which
// refuse any other value — and with it the whole INSERT the row is part of.
// Values come from senders too (a span's ctxaudit.output.truncation.kind),
// so readers check them with Valid, and the store checks every row with
// Validate before writing it. Validate checks the row's times and counts as
// well: a DateTime column holds 1970 to 2106 and a UInt32 column up to
// 2^32 - 1, and the driver wraps a value outside that around without a word
// (a call of 1900 would be stored as one of 2036).

// Valid reports whether k is one of TruncationKinds.
func (k TruncationKind) Valid() bool { return slices.Contains(TruncationKinds, k) }

// Valid reports whether s is one of Strategies.
func (s Strategy) Valid() bool { return slices.Contains(Strategies, s) }

// Valid reports whether s is one of OriginalSources.
func (s OriginalSource) Valid() bool { return slices.Contains(OriginalSources, s) }

// Valid reports whether p is one of Precisions (PrecisionNone is not).
func (p Precision) Valid() bool { return slices.Contains(Precisions, p) }

// Valid reports whether u is one of the named units (UnitNone is not).
func (u Unit) Valid() bool {
	switch u {
	case UnitBytes, UnitChars, UnitLines, UnitTokens, UnitItems, UnitMatches, UnitFiles:
		return true
	}
	return false
}

// Valid reports whether r is one of Risks.
func (r Risk) Valid() bool { return slices.Contains(Risks, r) }

// Valid reports whether a is one of Absences.
func (a Absence) Valid() bool { return slices.Contains(Absences, a) }

// Validate reports the first value of c its tool_calls row cannot hold. An
// empty kind, strategy or source is valid: the store writes it as unknown,
// none and unknown; so is the zero time, stored as 1970-01-01.
func (c *ToolCall) Validate() error {
	switch {
	case !StorableTime(c.Timestamp):
		return invalidTime("timestamp", c.Timestamp)
	case c.Kind != "" && !c.Kind.Valid():
		return invalid("truncation kind", c.Kind)
	case c.Strategy != "" && !c.Strategy.Valid():
		return invalid("strategy", c.Strategy)
	case c.Original.Source != "" && !c.Original.Source.Valid():
		return invalid("original source", c.Original.Source)
	case c.Original.Precision != PrecisionNone && !c.Original.Precision.Valid():
		return invalid("original precision", c.Original.Precision)
	}
	return nil
}

// Validate reports the first value of a its answers row cannot hold. An empty
// risk or absence is valid: the store writes it as none and unknown.
func (a *Answer) Validate() error {
	switch {
	case !StorableTime(a.Timestamp):
		return invalidTime("timestamp", a.Timestamp)
	case a.Risk != "" && !a.Risk.Valid():
		return invalid("risk", a.Risk)
	case a.Absence != "" && !a.Absence.Valid():
		return invalid("absence", a.Absence)
	}
	return nil
}

// Validate reports the first value of s its sessions row cannot hold. An
// empty maximum risk is valid: the store writes it as none.
func (s *Session) Validate() error {
	switch {
	case !StorableTime(s.StartedAt):
		return invalidTime("start", s.StartedAt)
	case !StorableTime(s.EndedAt):
		return invalidTime("end", s.EndedAt)
	case s.MaxRisk != "" && !s.MaxRisk.Valid():
		return invalid("max risk", s.MaxRisk)
	case s.Turns.Known && s.Turns.N > math.MaxUint32:
		return fmt.Errorf("turns %d is more than a UInt32 column holds", s.Turns.N)
	case s.Compactions.Known && s.Compactions.N > math.MaxUint32:
		return fmt.Errorf("compactions %d is more than a UInt32 column holds", s.Compactions.N)
	case s.RiskyAnswersUncertain.Known && s.RiskyAnswersUncertain.N > math.MaxUint32:
		return fmt.Errorf("risky answers on uncertain inputs %d is more than a UInt32 column holds", s.RiskyAnswersUncertain.N)
	}
	for _, n := range []struct {
		what string
		n    int
	}{{"tool calls", s.ToolCalls}, {"truncated calls", s.TruncatedCalls}, {"silent calls", s.SilentCalls},
		{"answers", s.Answers}, {"risky answers", s.RiskyAnswers}} {
		if n.n > math.MaxUint32 {
			return invalidCount(n.what, n.n)
		}
	}
	return nil
}

func invalid[T ~string](what string, v T) error {
	return fmt.Errorf("%s %q is not one ctxaudit knows", what, string(v))
}

// StorableTime reports whether a DateTime column holds t (to the second):
// the zero time, or 1970-01-01 to 2106-02-07 UTC. The modern rendering's
// DateTime64(3) holds more, so this is what both hold.
func StorableTime(t time.Time) bool {
	return t.IsZero() || (t.Unix() >= 0 && t.Unix() <= math.MaxUint32)
}

func invalidTime(what string, t time.Time) error {
	return fmt.Errorf("%s %s is outside what a DateTime column holds (1970 to 2106)", what, t.UTC().Format(time.RFC3339))
}

func invalidCount(what string, n int) error {
	return fmt.Errorf("%s %d is more than a UInt32 column holds", what, n)
}
