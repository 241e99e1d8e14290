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

// disclose sets the three disclosure booleans.
func (fd *finding) disclose(where, why, next bool) {
	fd.Disclosure = schema.Disclosure{Range: where, Reason: why, Next: next}
}

// finalize turns the finding into the verdict: sizes, and for results no
// rule recognised, the size comparison, the shape check or "complete".
func (s *scan) finalize(fd *finding) schema.Forensics {
	if fd.claim.Known {
		s.orig.add(rankMarker, sizesIn(fd.claimUnit, fd.claim))
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
	default:
		out.Kind = schema.KindNone
		out.Strategy = schema.StrategyNone
		out.Original = s.completeOriginal("")
		if out.Detector == "" {
			out.Detector = "generic.complete"
		}
	}
	if fd.totalIsOriginal {
		fillTotal(&out, fd.tailKept)
	}
	if fd.claim.Known {
		real := sizeIn(exact.Sizes, fd.claimUnit)
		out.MarkerUnderstated = exceeds(real, fd.claim, 16, 2)
	}
	return out
}

// completeOriginal is the original of a result nothing was cut from: the
// context itself (docs/design.md §4.2), credited to the best source that confirms it.
func (s *scan) completeOriginal(confirmedBy schema.OriginalSource) schema.Original {
	resolved := s.orig.resolve(rankMarker + 1)
	if !s.contextKnown {
		return resolved
	}
	o := schema.Original{Sizes: s.context, Source: schema.SourceEstimate}
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
		a, b := sizeIn(o.Sizes, u), sizeIn(s.body, u)
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
	t := sizeIn(out.Original.Sizes, out.Shown.Unit)
	if !t.Known {
		return
	}
	out.Total = t
	if tailKept.Known {
		out.Shown.Start = subCount(t, tailKept).Or(schema.Known(0))
		out.Shown.End = t
	}
}
