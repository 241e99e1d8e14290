package forensics

import (
	"github.com/ctxaudit/ctxaudit/schema"
)

// rank orders the sources of an original size from most to least exact. When
// several sources know a size, the better one wins field by field.
type rank uint8

const (
	// rankSavedFile: the spilled full output was read and measured.
	rankSavedFile rank = iota
	// rankVerbatim: the source carried the complete output text itself.
	rankVerbatim
	// rankOTel: an instrumented harness reported the figure as an attribute.
	rankOTel
	// rankMetadata: structured harness metadata (toolUseResult, details.truncation).
	rankMetadata
	// rankSDK: structured metadata an SDK or tool server attached to the result.
	rankSDK
	// rankMarker: parsed or derived from the notice text the model saw.
	rankMarker
)

var rankSource = [...]schema.OriginalSource{
	rankSavedFile: schema.SourceSavedFile,
	rankVerbatim:  schema.SourceHarnessMetadata,
	rankOTel:      schema.SourceOTelAttribute,
	rankMetadata:  schema.SourceHarnessMetadata,
	rankSDK:       schema.SourceSDK,
	rankMarker:    schema.SourceMarker,
}

// candidate is one source's knowledge of the original size. Tokens is set
// only when the source itself gives a token count; otherwise tokens are
// estimated from the final byte count. precision qualifies every known
// field of sizes.
type candidate struct {
	rank      rank
	sizes     schema.Sizes
	precision schema.Precision
}

// originals collects candidates in any order and resolves them by rank.
type originals struct {
	list []candidate
}

// add records exact sizes from source r.
func (o *originals) add(r rank, sz schema.Sizes) { o.addPrecise(r, sz, schema.PrecisionExact) }

// addApprox records sizes read from a rounded label ("444.3KB").
func (o *originals) addApprox(r rank, sz schema.Sizes) {
	o.addPrecise(r, sz, schema.PrecisionApproximate)
}

// addAtLeast records sizes the output is known to reach or exceed: what a
// harness counted after it had already stopped reading at a cap.
func (o *originals) addAtLeast(r rank, sz schema.Sizes) {
	o.addPrecise(r, sz, schema.PrecisionLowerBound)
}

func (o *originals) addPrecise(r rank, sz schema.Sizes, p schema.Precision) {
	if sz.Bytes.Known || sz.Chars.Known || sz.Lines.Known || sz.Tokens.Known {
		o.list = append(o.list, candidate{rank: r, sizes: sz, precision: p})
	}
}

// addText measures a complete original text.
func (o *originals) addText(r rank, text string) {
	sz := Measure(text)
	sz.Tokens = schema.Unknown // an estimate, derived again after resolution
	o.add(r, sz)
}

// best returns the best-ranked known value of one size field and its rank.
func (o *originals) best(field func(schema.Sizes) schema.Count, below rank) (schema.Count, rank, bool) {
	c, ok := o.bestOf(field, below)
	return field(c.sizes), c.rank, ok
}

// bestOf returns the candidate that gives the best value of one field: the
// best-ranked, and within a rank the more precise (a rule that knows more
// than a label adds the exact figure alongside it).
func (o *originals) bestOf(field func(schema.Sizes) schema.Count, below rank) (candidate, bool) {
	var out candidate
	found := false
	for _, c := range o.list {
		if !field(c.sizes).Known || c.rank >= below {
			continue
		}
		if !found || c.rank < out.rank || c.rank == out.rank && out.precision.Weaker(c.precision) {
			out, found = c, true
		}
	}
	return out, found
}

// resolve merges the candidates ranked better than below into one Original.
// Its Source is that of the best-ranked candidate that contributed a size.
func (o *originals) resolve(below rank) schema.Original {
	var out schema.Original
	out.Source = schema.SourceUnknown
	bestRank := rank(255)
	// The merged figure is only as precise as its least precise field.
	precision := schema.PrecisionNone
	take := func(field func(schema.Sizes) schema.Count) schema.Count {
		c, ok := o.bestOf(field, below)
		if !ok {
			return schema.Unknown
		}
		if c.rank < bestRank {
			bestRank = c.rank
		}
		if precision == schema.PrecisionNone || c.precision.Weaker(precision) {
			precision = c.precision
		}
		return field(c.sizes)
	}
	out.Bytes = take(bytesOf)
	out.Chars = take(charsOf)
	out.Lines = take(linesOf)
	out.Tokens = take(tokensOf)
	if !out.Tokens.Known && out.Bytes.Known {
		out.Tokens = schema.Known(estimateTokens(out.Bytes.N))
	}
	if int(bestRank) < len(rankSource) {
		out.Source = rankSource[bestRank]
		out.Precision = precision
	}
	return out
}

// known reports whether any candidate ranked better than below knows a size.
func (o *originals) known(below rank) bool {
	for _, c := range o.list {
		if c.rank < below {
			return true
		}
	}
	return false
}

func bytesOf(s schema.Sizes) schema.Count  { return s.Bytes }
func charsOf(s schema.Sizes) schema.Count  { return s.Chars }
func linesOf(s schema.Sizes) schema.Count  { return s.Lines }
func tokensOf(s schema.Sizes) schema.Count { return s.Tokens }
