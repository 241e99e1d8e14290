package forensics

import (
	"github.com/ctxaudit/ctxaudit/schema"
)

// finding is what one rule established about a result. Rules fill the
// verdict fields; finalize adds the sizes and decides what no rule did.
type finding struct {
	schema.Forensics
	matched bool
	// complete: the rule established that nothing was cut (an empty-output
	// stub, "No more content available", an original token count the body
	// reaches), so the original is the context.
	complete bool
	// claim is the original size the notice states or implies (e.g. kept
	// chars plus "[N characters truncated]"), in claimUnit. A better-sourced
	// original above it makes the marker understated.
	claim     schema.Count
	claimUnit schema.Unit
	// claimAtLeast: the harness counted its notice after it had already
	// stopped reading at a cap, so the claim is only a lower bound on the
	// original, and the notice is understated whenever the cap was hit.
	claimAtLeast bool
	// savedIsPrefix: the saved file the notice names holds only the first
	// part of the output, so measuring it gives a lower bound.
	savedIsPrefix bool
	// headKept and tailKept2 are the sizes, in Shown.Unit, of the head and
	// tail a head+tail cut kept around its notice; finalize places them as
	// Shown and ShownTail once the total is known.
	headKept, tailKept2 schema.Count
	// totalIsOriginal: Total is the whole original in Shown.Unit, so
	// finalize fills it from the best source (a saved file beats a size
	// label).
	totalIsOriginal bool
	// confirmedBy names the source that established completeness (e.g.
	// toolUseResult.file for a Read page), credited as the original's source.
	confirmedBy schema.OriginalSource
	// tailKept is the size of a kept tail in Shown.Unit; once Total is known
	// the shown range is placed at its end.
	tailKept schema.Count
}

// cut records an explicit truncation: a notice in the context says so.
func (fd *finding) cut(strategy schema.Strategy, reason, marker string) {
	fd.Truncated = true
	fd.Kind = schema.KindExplicit
	fd.Strategy = strategy
	fd.Reason = reason
	fd.Marker = marker
}

// silentCut records a truncation that only metadata reveals.
func (fd *finding) silentCut(strategy schema.Strategy, reason string) {
	fd.Truncated = true
	fd.Kind = schema.KindSilent
	fd.Strategy = strategy
	fd.Reason = reason
}

// byRequest records a partial view the call asked for (docs/design.md §4.3): not
// truncated, but Shown and Total stay for coverage.
func (fd *finding) byRequest() {
	fd.Truncated = false
	fd.Kind = schema.KindNone
	fd.Strategy = schema.StrategyNone
	fd.Reason = ""
	fd.PartialByRequest = true
	fd.complete = true
}

// show sets the shown range and total; unknown parts stay unknown.
func (fd *finding) show(start, end schema.Count, unit schema.Unit, total schema.Count) {
	fd.Shown = schema.Range{Start: start, End: end, Unit: unit}
	fd.Total = total
}

// claims records the original size the notice implies.
func (fd *finding) claims(unit schema.Unit, n schema.Count) {
	if n.Known {
		fd.claim, fd.claimUnit = n, unit
	}
}

// keepsAround records the head and tail a head+tail cut kept around its
// notice, text[lo:hi], measured in unit. The pieces are measured as the
// claims are (kept text plus the dropped count), so the head, the dropped
// part and the tail add up to the claimed original.
func (fd *finding) keepsAround(text string, lo, hi int, unit schema.Unit) {
	if lo < 0 || hi > len(text) || lo > hi {
		return
	}
	fd.headKept, fd.tailKept2 = measureIn(text[:lo], unit), measureIn(text[hi:], unit)
}

// measureIn is the size of text in unit, for the units a cut is counted in.
func measureIn(text string, unit schema.Unit) schema.Count {
	switch unit {
	case schema.UnitChars:
		return schema.KnownInt(countRunes(text))
	case schema.UnitLines:
		return schema.KnownInt(countLines(text))
	case schema.UnitBytes:
		return schema.KnownInt(len(text))
	}
	return schema.Unknown
}

// disclose sets the three disclosure booleans.
func (fd *finding) disclose(where, why, next bool) {
	fd.Disclosure = schema.Disclosure{Range: where, Reason: why, Next: next}
}

// finalize turns the finding into the verdict: sizes, and for results no
// rule recognised, the size comparison, the shape check or "complete".
func (s *scan) finalize(fd *finding) schema.Forensics {
	if fd.claim.Known {
		if fd.claimAtLeast {
			s.orig.addAtLeast(rankMarker, schema.SizesIn(fd.claimUnit, fd.claim))
		} else {
			s.orig.add(rankMarker, schema.SizesIn(fd.claimUnit, fd.claim))
		}
	}
	out := fd.Forensics
	out.Context = s.context
	if out.Strategy == "" {
		out.Strategy = schema.StrategyNone
	}
	exact := s.orig.resolve(rankMarker) // every source but the notice itself

	switch {
	case fd.matched && fd.complete:
		out.Original = s.completeOriginal(fd.confirmedBy)
	case fd.matched:
		out.Original = s.orig.resolve(rankMarker + 1)
		if out.Kind == "" {
			out.Kind = schema.KindUnknown
		}
	case s.cutBySize(exact):
		out.Original = exact
		out.Truncated = true
		out.Kind = schema.KindSilent
		out.Strategy = s.guessStrategy()
		out.Detector = "generic.size_mismatch"
	case s.suspect(&out):
		out.Original = schema.Original{Source: schema.SourceUnknown}
	case s.in.NonText == NonTextMedia:
		// An image or a document no rule judged: nothing shows it was cut,
		// and nothing shows it was not (a harness may have resized it).
		out.Kind = schema.KindUnknown
		out.Strategy = schema.StrategyNone
		out.Original = s.orig.resolve(rankMarker + 1)
		if out.Detector == "" {
			out.Detector = "generic.media_content"
		}
	default:
		out.Kind = schema.KindNone
		out.Strategy = schema.StrategyNone
		out.Original = s.completeOriginal("")
		if out.Detector == "" {
			out.Detector = "generic.complete"
		}
	}
	if s.in.NonText == NonTextMedia && out.Original.TokensEstimated() {
		// bytes/4 estimates the tokens of text; an image's bytes say
		// nothing of what it costs the model.
		out.Original.Tokens = schema.Unknown
	}
	if fd.totalIsOriginal {
		fillTotal(&out, fd.tailKept)
	}
	if fd.claim.Known {
		real := exact.Sizes.In(fd.claimUnit)
		// A claim counted after a cap understates unless an exact source
		// shows the output really ended there.
		out.MarkerUnderstated = exceeds(real, fd.claim, 16, 2) ||
			fd.claimAtLeast && !(real.Known && exact.Precision == schema.PrecisionExact)
	}
	if out.Strategy == schema.StrategyHeadTail {
		placeHeadTail(&out, fd)
	}
	return out
}

// placeHeadTail sets Shown to the kept head and ShownTail to the kept tail
// of a head+tail cut. The tail ends where the original ends only when the
// notice can be trusted: an understated notice, or one counted after a cap,
// kept the tail of what the harness received, which ends at the claim.
func placeHeadTail(out *schema.Forensics, fd *finding) {
	unit := out.Shown.Unit
	if !fd.headKept.Known || !fd.tailKept2.Known || unit == schema.UnitNone {
		return
	}
	end := out.Total
	if !end.Known {
		end = out.Original.Sizes.In(unit)
	}
	trusted := !out.MarkerUnderstated && out.Original.Precision != schema.PrecisionLowerBound
	out.ShownTailIsEnd = trusted && end.Known
	if !out.ShownTailIsEnd {
		end = schema.Unknown
		if fd.claimUnit == unit && (fd.claimAtLeast || out.MarkerUnderstated) {
			end = fd.claim
		}
	}
	first := uint64(0)
	if unit == schema.UnitLines {
		first = 1 // lines are 1-based and End-inclusive
	}
	if !out.Shown.Start.Known && !out.Shown.End.Known {
		// [0, head) in offsets, [1, head] in lines: the same End.
		out.Shown.Start, out.Shown.End = schema.Known(first), fd.headKept
	}
	// A tail that cannot be placed is left out whole: a range is recorded
	// only with its positions (and so reads back the same from OTLP).
	out.ShownTail = schema.Range{}
	if start := subCount(end, fd.tailKept2); start.Known {
		out.ShownTail = schema.Range{Start: addCounts(start, schema.Known(first)), End: end, Unit: unit}
	} else {
		out.ShownTailIsEnd = false
	}
}

// completeOriginal is the original of a result nothing was cut from: the
// context itself (docs/design.md §4.2), credited to the best source that confirms it.
func (s *scan) completeOriginal(confirmedBy schema.OriginalSource) schema.Original {
	resolved := s.orig.resolve(rankMarker + 1)
	if !s.contextKnown {
		return resolved
	}
	// The context is measured, so the sizes are exact whoever confirms them.
	o := schema.Original{Sizes: s.context, Source: schema.SourceEstimate, Precision: schema.PrecisionExact}
	switch {
	case resolved.Source != schema.SourceUnknown:
		o.Source = resolved.Source
	case confirmedBy != "":
		o.Source = confirmedBy
	}
	// A token count a source gives (a real tokenizer's) beats the estimate.
	if t, _, ok := s.orig.best(tokensOf, rankMarker+1); ok {
		o.Tokens = t
	}
	return o
}

// cutBySize reports a silent cut: a non-notice source knows an original
// larger than what the context holds, compared in the finest shared unit.
func (s *scan) cutBySize(o schema.Original) bool {
	if !s.contextKnown {
		return false
	}
	for _, u := range [...]schema.Unit{schema.UnitBytes, schema.UnitChars, schema.UnitLines} {
		a, b := o.Sizes.In(u), s.body.In(u)
		if a.Known && b.Known {
			if u == schema.UnitLines {
				return exceeds(a, b, 1, 1)
			}
			return exceeds(a, b, 64, 1)
		}
	}
	if o.Tokens.Known && o.Source != schema.SourceEstimate {
		return exceeds(o.Tokens, s.body.Tokens, 16, 2)
	}
	return false
}

// guessStrategy tells head from tail when the verbatim original is at hand.
func (s *scan) guessStrategy() schema.Strategy {
	if s.origText == nil || len(s.bodyText) == 0 {
		return schema.StrategyHead
	}
	full := *s.origText
	probe := min(len(s.bodyText), 256)
	head := len(full) >= probe && full[:probe] == s.bodyText[:probe]
	tail := len(full) >= probe && full[len(full)-probe:] == s.bodyText[len(s.bodyText)-probe:]
	switch {
	case head && tail:
		return schema.StrategyHeadTail
	case tail:
		return schema.StrategyTail
	}
	return schema.StrategyHead
}

// fillTotal sets Total from the original in the shown unit and places a
// kept tail at the end of it.
func fillTotal(out *schema.Forensics, tailKept schema.Count) {
	t := out.Original.Sizes.In(out.Shown.Unit)
	if !t.Known {
		return
	}
	out.Total = t
	if tailKept.Known {
		out.Shown.Start = subCount(t, tailKept).Or(schema.Known(0))
		out.Shown.End = t
	}
}
