package analysis

import (
	"math"
	"sort"

	"github.com/ctxaudit/ctxaudit/schema"
)

// openEnd marks a span that runs to the end of its target ("tail -n +2001",
// "sed -n '10,$p'"); it is clipped to the target's total when one is known.
const openEnd = math.MaxUint64

// span is a half-open range [lo, hi) of 0-based positions in one unit. Line
// ranges, which the harnesses number from 1 inclusive, are converted on entry
// so that every unit is compared the same way.
type span struct{ lo, hi uint64 }

func (s span) empty() bool { return s.hi <= s.lo }

// shownSpan converts a forensics Range to a span. schema.Range numbers lines
// from 1 with an inclusive end and every other unit from 0 with an exclusive
// end; a line range starting at 0 can only be the 0-based form, which has the
// same half-open meaning, so both read correctly.
func shownSpan(r schema.Range) (span, bool) {
	if r.Unit == schema.UnitNone || !r.Start.Known || !r.End.Known {
		return span{}, false
	}
	lo, hi := r.Start.N, r.End.N
	if r.Unit == schema.UnitLines && lo > 0 {
		lo--
	}
	if hi < lo {
		return span{}, false
	}
	return span{lo, hi}, true
}

// intervalSet is a sorted list of disjoint, non-touching spans: the union of
// everything seen of one target in one unit.
type intervalSet []span

// add returns the set with x merged in.
func (s intervalSet) add(x span) intervalSet {
	if x.empty() {
		return s
	}
	// First span that ends at or after x starts: everything before it is
	// strictly left of x and untouched.
	i := sort.Search(len(s), func(i int) bool { return s[i].hi >= x.lo })
	j := i
	for j < len(s) && s[j].lo <= x.hi {
		x.lo = min(x.lo, s[j].lo)
		x.hi = max(x.hi, s[j].hi)
		j++
	}
	if i == j {
		s = append(s, span{})
		copy(s[i+1:], s[i:])
		s[i] = x
		return s
	}
	s[i] = x
	return append(s[:i+1], s[j:]...)
}

// contains reports whether x lies inside one span of the set.
func (s intervalSet) contains(x span) bool {
	if x.empty() {
		return true
	}
	i := sort.Search(len(s), func(i int) bool { return s[i].hi > x.lo })
	return i < len(s) && s[i].lo <= x.lo && s[i].hi >= x.hi
}

// lengthWithin is the total length of the set inside [0, total).
func (s intervalSet) lengthWithin(total uint64) uint64 {
	var n uint64
	for _, x := range s {
		if x.lo >= total {
			break
		}
		n += min(x.hi, total) - x.lo
	}
	return n
}

// units are the units coverage is tracked in; unitIndex gives a unit's
// small-integer id.
var units = [...]schema.Unit{
	schema.UnitBytes, schema.UnitChars, schema.UnitLines, schema.UnitTokens,
	schema.UnitItems, schema.UnitMatches, schema.UnitFiles,
}

func unitIndex(u schema.Unit) (int, bool) {
	for i, x := range units {
		if x == u {
			return i, true
		}
	}
	return 0, false
}
