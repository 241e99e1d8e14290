package forensics

import (
	"github.com/ctxaudit/ctxaudit/schema"
)

// suspect marks a result whose original is unknown but whose shape is that of
// a cut: exactly at a known cap of its harness and tool, or, for harnesses we
// know nothing about, exactly at a round size and ending mid-line. docs/design.md §4.4
// asks for "suspected" here, never "none".
func (s *scan) suspect(out *schema.Forensics) bool {
	if !s.contextKnown || len(s.bodyText) == 0 || s.req.asksForPart() {
		return false
	}
	mark := func(unit schema.Unit, n uint64, reason, detector string) bool {
		out.Truncated = true
		out.Kind = schema.KindSuspected
		out.Strategy = schema.StrategyHead
		out.Reason = reason
		out.Detector = detector
		start := schema.Known(0)
		if unit == schema.UnitLines {
			start = schema.Known(1)
		}
		out.Shown = schema.Range{Start: start, End: schema.Known(n), Unit: unit}
		return true
	}
	if caps, ok := harnessCaps[s.in.Harness]; ok {
		for _, c := range caps {
			if !c.appliesTo(s.in.Tool, s.in.HarnessVersion) {
				continue
			}
			if size := s.body.In(c.unit); size.Known && size.N == c.n {
				return mark(c.unit, c.n, c.reason, string(s.in.Harness)+".at_cap")
			}
		}
		return false
	}
	if s.bodyText[len(s.bodyText)-1] == '\n' {
		return false
	}
	for _, n := range roundCaps {
		switch n {
		case s.body.Bytes.N:
			return mark(schema.UnitBytes, n, "cap_bytes", "generic.round_cap")
		case s.body.Chars.N:
			return mark(schema.UnitChars, n, "cap_chars", "generic.round_cap")
		}
	}
	return false
}
