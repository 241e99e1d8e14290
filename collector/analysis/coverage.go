package analysis

import (
	"github.com/ctxaudit/ctxaudit/schema"
)

// seen is what one call contributed to one target's coverage.
type seen struct {
	// delivered: something of the target entered the context (false for a
	// refused or cleared output, and for accesses that do not read).
	delivered bool
	whole     bool
	// positioned: sp (in unit) is where the delivered part lies.
	positioned bool
	unit       int
	sp         span
	// tail, when hasTail, is the kept tail of a head+tail cut (sp is the
	// head), in the same unit.
	tail    span
	hasTail bool
	// fromEnd > 0: the last fromEnd units, placed once the total is known.
	fromEnd uint64
	// amount > 0: how much was shown when nothing says where (a head+tail
	// cut), in unit; it never counts as the whole.
	amount uint64
}

// seenBy works out what call c delivered of the target of access a. The
// call's forensics win where they say something; the view it asked for
// fills in the rest, but only for output that was not cut.
func seenBy(c *schema.ToolCall, a access, truncated bool) seen {
	if a.Mode != AccessRead || c.Strategy == schema.StrategyRefused || c.Strategy == schema.StrategyCleared {
		return seen{}
	}
	if c.IsError && a.Kind != TargetCommand {
		// A failed read, fetch or tool call got none of its target (its
		// text is the error): it covers nothing and continues nothing. A
		// command that exited non-zero still printed its own output.
		return seen{}
	}
	s := seen{delivered: true}
	// Whether the output was cut is unknown (an image, a digest of a page
	// of unknown length, a span without its text): it delivered something,
	// but neither the whole target nor the part its view asked for can be
	// credited to it, and it recovers no earlier cut.
	unknownExtent := !truncated && c.Kind == schema.KindUnknown
	if !truncated && !unknownExtent && !c.PartialByRequest && a.view.whole {
		s.whole = true
		return s
	}
	if a.Self {
		if sp, ok := shownSpan(c.Shown); ok {
			if u, ok := unitIndex(c.Shown.Unit); ok {
				switch v := a.view; {
				case v.whole || !v.relative:
					s.positioned, s.unit, s.sp = true, u, sp
					if tsp, ok := shownSpan(c.ShownTail); ok && c.ShownTail.Unit == c.Shown.Unit {
						s.tail, s.hasTail = tsp, true
					}
					return s
				case v.known && v.fromEnd == 0 && v.unit == c.Shown.Unit:
					// A shell view numbers its output from 1: shift into the target.
					lo := satAdd(v.sp.lo, sp.lo)
					hi := min(satAdd(v.sp.lo, sp.hi), v.sp.hi)
					s.positioned, s.unit, s.sp = true, u, span{lo, max(lo, hi)}
					return s
				}
			}
		}
	}
	if truncated {
		// Where nothing says which part was shown, how much was shown still
		// bounds the coverage — but not for a summary, whose size says
		// nothing about how much of the original went into it.
		if a.Self && !a.view.relative && c.Strategy != schema.StrategySummary {
			if u, ok := unitIndex(c.Shown.Unit); ok {
				if n := c.Context.In(c.Shown.Unit); n.Known {
					s.unit, s.amount = u, n.N
				}
			}
		}
		return s
	}
	if unknownExtent {
		return s
	}
	// Complete, but asked for part: the view says which part. (A view of
	// the whole that came back partial by request says nothing more.)
	if v := a.view; v.known {
		if u, ok := unitIndex(v.unit); ok {
			s.unit = u
			if v.fromEnd > 0 {
				s.fromEnd = v.fromEnd
			} else {
				s.positioned, s.sp = true, v.sp
			}
		}
	}
	return s
}

// targetState is everything seen of one target (a file, URL, search result
// list or command output) within one agent thread, so far.
type targetState struct {
	whole bool
	// unplaced: something was delivered that nothing places (a cut view
	// whose forensics give no range or size), so "nothing seen" is unknown.
	unplaced bool
	// units holds what is known per unit, only for the units that occur
	// (usually one or two), to keep a long session's many targets small.
	units []unitState

	// groups are the truncated calls of this target, grouped by what they
	// saw, waiting to be followed up.
	groups   []*truncGroup
	groupIdx map[groupKey]*truncGroup
	indexed  bool // registered under its parent directories

	// pieces counts the calls that delivered something of the target;
	// refetched says one of them fetched the source again to continue, so
	// the pieces may come from different versions of it.
	pieces    int
	refetched bool
}

// mixedVersions: what was seen was put together from more than one fetch
// of a source that may have changed in between.
func (t *targetState) mixedVersions() bool { return t.refetched && t.pieces > 1 }

// unitState is what is known of a target in one unit.
type unitState struct {
	unit    int
	seen    intervalSet
	fromEnd uint64 // the longest "last N" view
	amount  uint64 // the largest unplaced amount shown by a cut view
	// total is the latest size reported for the whole target;
	// totalAtLeast says it is a lower bound (the output hit a cap before it
	// was measured), so a share of it is an upper bound on the share seen.
	total        schema.Count
	totalAtLeast bool
	// end is where a complete page that stopped short of its window showed
	// the target to end, for targets whose total no one reports (MCP fetch).
	end schema.Count
}

// in returns the state of unit u, adding it if absent.
func (t *targetState) in(u int) *unitState {
	for i := range t.units {
		if t.units[i].unit == u {
			return &t.units[i]
		}
	}
	t.units = append(t.units, unitState{unit: u})
	return &t.units[len(t.units)-1]
}

func (t *targetState) add(s seen) {
	switch {
	case s.whole:
		t.whole = true
	case s.positioned:
		us := t.in(s.unit)
		us.seen = us.seen.add(s.sp)
		if s.hasTail {
			us.seen = us.seen.add(s.tail)
		}
	case s.fromEnd > 0:
		us := t.in(s.unit)
		us.fromEnd = max(us.fromEnd, s.fromEnd)
	case s.amount > 0:
		us := t.in(s.unit)
		us.amount = max(us.amount, s.amount)
	case s.delivered:
		t.unplaced = true
	}
}

// learnSize records what call c says about the size of the target of its
// self access a: its Total in the shown unit, its original sizes when it
// asked for the whole target, and the end shown by a short complete page.
func (t *targetState) learnSize(c *schema.ToolCall, a access, s seen, truncated bool) {
	if !a.Self {
		return
	}
	targetRelative := a.view.whole || !a.view.relative
	atLeast := c.Original.Precision == schema.PrecisionLowerBound
	if u, ok := unitIndex(c.Shown.Unit); ok && c.Total.Known && targetRelative {
		t.in(u).learnTotal(c.Total, atLeast)
	}
	// A call that asked for the whole target reports the whole's size as its
	// original; a partial view by request reports only its part's.
	if a.view.whole && !a.view.relative && !c.PartialByRequest {
		for _, u := range [...]schema.Unit{schema.UnitBytes, schema.UnitChars, schema.UnitLines, schema.UnitTokens} {
			if n := c.Original.Sizes.In(u); n.Known {
				i, _ := unitIndex(u)
				t.in(i).learnTotal(n, atLeast)
			}
		}
	}
	if !truncated && s.positioned && a.view.page > 0 && s.sp.hi-s.sp.lo < a.view.page && s.sp.hi != openEnd {
		if us := t.in(s.unit); !us.end.Known || us.end.N < s.sp.hi {
			us.end = schema.Known(s.sp.hi)
		}
	}
}

// learnTotal takes a reported size of the whole target: the latest exact
// one wins, and a lower bound only raises a lower bound or fills a gap —
// it never replaces a size someone measured.
func (us *unitState) learnTotal(n schema.Count, atLeast bool) {
	switch {
	case !atLeast:
		us.total, us.totalAtLeast = n, false
	case !us.total.Known || us.totalAtLeast && n.N > us.total.N:
		us.total, us.totalAtLeast = n, true
	}
}

// totalSize is the best size known of the whole target, and whether it is
// only a lower bound. A page that ended short of its window shows where the
// target ends, which settles a lower bound it reaches.
func (us *unitState) totalSize() (n uint64, ok, atLeast bool) {
	switch {
	case us.total.Known && us.totalAtLeast && us.end.Known && us.end.N >= us.total.N:
		return us.end.N, true, false
	case us.total.Known:
		return us.total.N, true, us.totalAtLeast
	case us.end.Known:
		return us.end.N, true, false
	}
	return 0, false, false
}

// coverage is the share of the target seen so far: the union of the ranges
// seen over the total, in the unit the ranges were seen in (the best such
// unit, when there are several). It is unknown when no unit has both, unless
// the whole was seen (1) or provably nothing was (0: e.g. a refused output
// whose size is known).
func (t *targetState) coverage() schema.Ratio {
	r, _ := t.coverageBound()
	return r
}

// coverageBound is coverage, and whether it is only an upper bound: a share
// of a lower-bound total. Such a share is never 1 — having seen as much as
// the output is known to hold says nothing of the rest — so it is unknown
// instead.
func (t *targetState) coverageBound() (schema.Ratio, bool) {
	if t.whole {
		return schema.KnownRatio(1), false
	}
	best, found, seenAny, totalAny, upper := 0.0, false, false, false, false
	for i := range t.units {
		us := &t.units[i]
		seen := len(us.seen) > 0 || us.fromEnd > 0 || us.amount > 0
		seenAny = seenAny || seen
		total, ok, atLeast := us.totalSize()
		if !ok {
			continue
		}
		totalAny = true
		if total == 0 && !atLeast {
			return schema.KnownRatio(1), false // an empty original: nothing to miss
		}
		if !seen {
			continue
		}
		set := us.seen
		if n := us.fromEnd; n > 0 {
			set = append(intervalSet(nil), set...).add(span{total - min(n, total), total})
		}
		got := set.lengthWithin(total)
		if us.amount > 0 {
			got = max(got, min(us.amount, total-1)) // a cut view never saw everything
		}
		r := float64(got) / float64(max(total, 1))
		if atLeast && r >= 1 {
			continue // at least all of the known part: the share is not known
		}
		if !found || r > best {
			best, upper = r, atLeast
		}
		found = true
	}
	switch {
	case found:
		return schema.KnownRatio(min(best, 1)), upper
	case totalAny && !seenAny && !t.unplaced:
		return schema.KnownRatio(0), false
	}
	return schema.Ratio{}, false
}

// within reports whether what s saw lies inside what prev saw — used to tell
// a continuation (it reads more) from a repeat.
func (s seen) within(prev seen) bool {
	switch {
	case s.whole:
		return prev.whole
	case s.positioned:
		if prev.whole {
			return true
		}
		if !prev.positioned || prev.unit != s.unit {
			return false
		}
		was := intervalSet{}.add(prev.sp)
		if prev.hasTail {
			was = was.add(prev.tail)
		}
		return was.contains(s.sp) && (!s.hasTail || was.contains(s.tail))
	case s.fromEnd > 0:
		return prev.whole || prev.fromEnd >= s.fromEnd && prev.unit == s.unit
	}
	return false
}
