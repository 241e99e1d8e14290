package analysis

import "github.com/ctxaudit/ctxaudit/schema"

// view is the part of a target a call asked for (or that a command pipeline
// selects), before anything was delivered. The part actually delivered comes
// from the call's forensics; the view fills in what they leave unknown.
type view struct {
	// whole: the entire target (cat, a Read without offset or limit).
	whole bool
	// known: sp (or fromEnd) says where the part lies, in unit.
	known bool
	unit  schema.Unit
	sp    span
	// fromEnd > 0 is "the last fromEnd units" (tail -n N), placed once the
	// target's total is known.
	fromEnd uint64
	// page is the window the call asked for, explicitly or by the tool's
	// default (Read limit 2000, fetch max_length 5000). A complete page
	// shorter than its window shows the target ended there.
	page uint64
	// relative: the call's own Shown range counts from the start of this
	// view (a shell command printing lines 2001–4000 numbers them from 1),
	// rather than in the target's own positions (Read, fetch).
	relative bool
}

var wholeView = view{whole: true}

// rangeOp is what a head/tail/sed stage keeps of its input.
type rangeOp struct {
	kind opKind
	unit schema.Unit
	// n is the head/tail count; a, b the 1-based first and last line kept
	// (b = openEnd for "to the end").
	n, a, b uint64
}

type opKind uint8

const (
	opAll     opKind = iota // keeps everything (cat, nl, sort)
	opUnknown               // keeps something, we cannot say what
	opHead                  // first n units
	opTail                  // last n units
	opLines                 // units a..b, 1-based inclusive
)

// apply narrows v by op, as when "cat f | head -n 100" or "sed -n 'a,bp' f"
// select part of what reaches them.
func (op rangeOp) apply(v view) view {
	switch op.kind {
	case opAll:
		return v
	case opUnknown:
		return view{relative: true}
	}
	if !v.whole && (!v.known || v.unit != op.unit || v.fromEnd > 0) {
		return view{relative: true}
	}
	lo, hi := uint64(0), uint64(openEnd)
	if !v.whole {
		lo, hi = v.sp.lo, v.sp.hi
	}
	out := view{known: true, unit: op.unit, relative: true}
	switch op.kind {
	case opHead:
		out.sp = span{lo, min(hi, satAdd(lo, op.n))}
	case opTail:
		if hi == openEnd {
			if lo != 0 {
				return view{relative: true}
			}
			out.fromEnd = op.n
			return out
		}
		out.sp = span{max(lo, hi-min(hi, op.n)), hi}
	case opLines:
		a := max(op.a, 1) - 1
		out.sp = span{min(hi, satAdd(lo, a)), min(hi, satAdd(lo, op.b))}
	}
	return out
}

// satAdd adds without wrapping past openEnd.
func satAdd(a, b uint64) uint64 {
	if a > openEnd-b {
		return openEnd
	}
	return a + b
}
