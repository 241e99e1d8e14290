package forensics

import (
	"encoding/json"
	"strings"

	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/ctxaudit/ctxaudit/schema"
)

// OTel attribute keys of the ctxaudit.* namespace (docs/design.md §6.3): what an
// instrumented harness reports so the collector need not guess. Values may be
// strings, int64, float64 or bool, as OTel carries them; numbers given as
// decimal strings are accepted too.
const (
	AttrOriginalBytes  = "ctxaudit.output.original.bytes"
	AttrOriginalChars  = "ctxaudit.output.original.chars"
	AttrOriginalLines  = "ctxaudit.output.original.lines"
	AttrOriginalTokens = "ctxaudit.output.original.tokens"
	// AttrOriginalPrecision takes a schema.Precision value (exact,
	// approximate, lower_bound) for the original.* figures; without it they
	// are exact.
	AttrOriginalPrecision = "ctxaudit.output.original.precision"
	AttrContextBytes      = "ctxaudit.output.context.bytes"
	AttrContextChars      = "ctxaudit.output.context.chars"
	AttrContextLines      = "ctxaudit.output.context.lines"
	AttrContextTokens     = "ctxaudit.output.context.tokens"
	AttrTruncated         = "ctxaudit.output.truncated"
	// AttrTruncationKind takes a schema.TruncationKind value (none, explicit, …).
	AttrTruncationKind = "ctxaudit.output.truncation.kind"
	// AttrStrategy takes a schema.Strategy value (head, tail, …).
	AttrStrategy   = "ctxaudit.output.strategy"
	AttrShownStart = "ctxaudit.output.shown.start"
	AttrShownEnd   = "ctxaudit.output.shown.end"
	// AttrShownUnit takes a schema.Unit value (bytes, chars, lines, …).
	AttrShownUnit = "ctxaudit.output.shown.unit"
	AttrTotal     = "ctxaudit.output.total"
	// AttrShownTailStart and AttrShownTailEnd are the kept tail of a
	// head+tail cut (shown.* is then the head), in shown.unit.
	AttrShownTailStart = "ctxaudit.output.shown_tail.start"
	AttrShownTailEnd   = "ctxaudit.output.shown_tail.end"
	// AttrShownTailIsEnd says the kept tail ends where the original ends.
	AttrShownTailIsEnd = "ctxaudit.output.shown_tail.is_end"
	// AttrRefetchedSource says the call fetched its source again to continue
	// an earlier one, rather than reading a saved copy.
	AttrRefetchedSource = "ctxaudit.output.refetched_source"
	// AttrReason takes a reason machine word (cap_bytes, pagination, …).
	AttrReason   = "ctxaudit.output.reason"
	AttrNext     = "ctxaudit.output.next"
	AttrSavedRef = "ctxaudit.output.saved_ref"
	AttrMarker   = "ctxaudit.output.marker"

	// AttrClaudeCodeToolResultSize is the claude_code.tool_result log
	// attribute: the size of what entered the model's context (for a spilled
	// Bash output, the 2 KB preview), never the original (docs/design.md
	// §6.2). Detection therefore never takes it for an original size; the
	// context size of an event without text comes from it (otelconv).
	AttrClaudeCodeToolResultSize = "tool_result_size_bytes"
	// AttrGenAIToolCallResult is the opt-in GenAI result attribute: the text
	// (or structure) the tool returned, used as the context when the source
	// recorded nothing else.
	AttrGenAIToolCallResult = string(semconv.GenAIToolCallResultKey)
)

// resultAttribute renders gen_ai.tool.call.result as text: strings verbatim,
// structured values as JSON (the semconv allows either).
func resultAttribute(attrs map[string]any) string {
	v, ok := attrs[AttrGenAIToolCallResult]
	if !ok || v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// contextAttributes are the context sizes an instrumented harness reported,
// for sources that did not record the text itself.
func contextAttributes(attrs map[string]any) schema.Sizes {
	sz := schema.Sizes{
		Bytes:  numberOf(attrs[AttrContextBytes]),
		Chars:  numberOf(attrs[AttrContextChars]),
		Lines:  numberOf(attrs[AttrContextLines]),
		Tokens: numberOf(attrs[AttrContextTokens]),
	}
	if !sz.Tokens.Known && sz.Bytes.Known {
		sz.Tokens = schema.Known(estimateTokens(sz.Bytes.N))
	}
	return sz
}

// collectAttributeOriginals adds the original sizes the attributes report.
func collectAttributeOriginals(s *scan) {
	a := s.in.Attributes
	if len(a) == 0 {
		return
	}
	precision := schema.PrecisionExact
	if p := schema.Precision(stringOf(a[AttrOriginalPrecision])); p.Valid() {
		precision = p
	}
	s.orig.addPrecise(rankOTel, schema.Sizes{
		Bytes:  numberOf(a[AttrOriginalBytes]),
		Chars:  numberOf(a[AttrOriginalChars]),
		Lines:  numberOf(a[AttrOriginalLines]),
		Tokens: numberOf(a[AttrOriginalTokens]),
	}, precision)
}

// applyAttributes lays the verdict an instrumented harness reported over the
// inferred one: the harness knows what it did. Disclosure stays inferred,
// because it is about what the model saw, which attributes do not carry.
func applyAttributes(s *scan, out *schema.Forensics) {
	a := s.in.Attributes
	if len(a) == 0 {
		return
	}
	reported := false
	if t, ok := boolOf(a[AttrTruncated]); ok {
		reported = true
		if t != out.Truncated {
			out.Truncated = t
			out.PartialByRequest = false
			if t {
				out.Kind = schema.KindSilent
				if out.Marker != "" {
					out.Kind = schema.KindExplicit
				}
			} else {
				out.Kind = schema.KindNone
				out.Strategy = schema.StrategyNone
				out.Reason = ""
			}
		}
	}
	if k := schema.TruncationKind(stringOf(a[AttrTruncationKind])); k.Valid() {
		out.Kind, reported = k, true
		if k == schema.KindNone {
			out.Truncated = false
		} else if k == schema.KindExplicit || k == schema.KindSilent || k == schema.KindSuspected {
			out.Truncated = true
		}
	}
	if st := schema.Strategy(stringOf(a[AttrStrategy])); st.Valid() {
		out.Strategy, reported = st, true
	}
	if start, end := numberOf(a[AttrShownStart]), numberOf(a[AttrShownEnd]); start.Known || end.Known {
		out.Shown.Start, out.Shown.End, reported = start, end, true
	}
	if u := schema.Unit(stringOf(a[AttrShownUnit])); u.Valid() {
		out.Shown.Unit = u
	}
	if t := numberOf(a[AttrTotal]); t.Known {
		out.Total, reported = t, true
	}
	if start, end := numberOf(a[AttrShownTailStart]), numberOf(a[AttrShownTailEnd]); start.Known || end.Known {
		out.ShownTail, reported = schema.Range{Start: start, End: end, Unit: out.Shown.Unit}, true
		out.ShownTailIsEnd = false
	}
	if e, ok := boolOf(a[AttrShownTailIsEnd]); ok {
		out.ShownTailIsEnd, reported = e && out.ShownTail.End.Known, true
	}
	if r, ok := boolOf(a[AttrRefetchedSource]); ok {
		out.RefetchedSource = r
	}
	if r := stringOf(a[AttrReason]); r != "" {
		out.Reason, reported = normaliseReason(r), true
	}
	if n := stringOf(a[AttrNext]); n != "" {
		out.NextHint = n
	}
	if r := stringOf(a[AttrSavedRef]); r != "" {
		out.SavedRef = r
	}
	if m := stringOf(a[AttrMarker]); m != "" {
		out.Marker = m
		if strings.Contains(s.text, m) && out.Kind == schema.KindSilent {
			out.Kind = schema.KindExplicit
		}
	}
	if !reported {
		return
	}
	if out.Truncated && s.orig.known(rankOTel+1) {
		out.Original = s.orig.resolve(rankMarker + 1)
	}
	out.Detector = "otel.ctxaudit_attributes"
}
