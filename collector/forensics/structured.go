package forensics

import (
	"encoding/json"
	"strings"

	"github.com/ctxaudit/ctxaudit/collector/internal/jsonscan"
	"github.com/ctxaudit/ctxaudit/schema"
)

// The generic structured shape lets any harness or tool server report
// exactly instead of leaving us to parse prose: a JSON object (the result
// itself, or a "truncation"/"_meta"/"meta"/"metadata"/"pagination" member)
// with any of
//
//	truncated | is_complete | complete            bool
//	original_size_bytes, returned_size_bytes      integers
//	total, shown: [start, end] | range: {start_line, end_line} | unit
//	truncation_reason | reason, strategy
//	next_page | next_cursor | cursor | continue_options | next_offset
//	ref | saved_ref | full_output_path
//
// In the model-visible result it is an explicit notice; in Input.Metadata the
// model never saw it, so a cut it reports is silent.
type structured struct {
	found                        bool
	truncated, truncatedKnown    bool
	originalBytes, returnedBytes schema.Count
	total, start, end            schema.Count
	unit                         schema.Unit
	reason                       string
	strategy                     schema.Strategy
	next, ref                    string
	// marker holds the raw report members (structuredKeys) that were
	// present, each from the last object that had it; markerText renders them.
	marker [numStructuredKeys][]byte
}

// reportKeys are the members read from each candidate object, in the order
// of the rk constants. The first numStructuredKeys are structuredKeys: the
// members whose presence makes an object a report. From rkNested on they are
// the members that may hold the report instead of the top level (read from
// the top level only).
var reportKeys = [...]string{
	"truncated", "is_complete", "complete", "original_size_bytes", "returned_size_bytes",
	"truncation_reason", "shown", "continue_options", "next_page", "next_cursor",
	"total", "range", "unit", "reason", "strategy", "next_offset", "cursor", "next",
	"saved_ref", "ref", "full_output_path", "full_output_ref",
	"truncation", "_meta", "meta", "metadata", "pagination",
}

const (
	rkTruncated = iota
	rkIsComplete
	rkComplete
	rkOriginalSize
	rkReturnedSize
	rkTruncationReason
	rkShown
	rkContinueOptions
	rkNextPage
	rkNextCursor
	rkTotal
	rkRange
	rkUnit
	rkReason
	rkStrategy
	rkNextOffset
	rkCursor
	rkNext
	rkSavedRef
	rkRef
	rkFullOutputPath
	rkFullOutputRef
	rkNested // the first of the nested report keys, to the end

	numStructuredKeys = rkTotal // the report keys end here
)

// structuredKeys are the members whose presence makes an object a report.
var structuredKeys = reportKeys[:numStructuredKeys]

// reportFields are one object's members, indexed by the rk constants.
type reportFields = [len(reportKeys)][]byte

func parseStructured(o object) structured {
	var st structured
	if o == nil {
		return st
	}
	// The top level, then the nested reports in the order of reportKeys.
	var objs [1 + len(reportKeys) - rkNested]reportFields
	o.fields(reportKeys[:], objs[0][:])
	n := 1
	for _, v := range objs[0][rkNested:] {
		if m := member(v); m != nil {
			m.fields(reportKeys[:rkNested], objs[n][:])
			n++
		}
	}
	for i := range objs[:n] {
		for k, v := range objs[i][:numStructuredKeys] {
			if v != nil {
				st.found = true
				st.marker[k] = v
			}
		}
	}
	if !st.found {
		return st
	}
	for i := range objs[:n] {
		st.read(&objs[i])
	}
	return st
}

var rangeKeys = [...]string{"start_line", "end_line", "start", "end"}

// read fills the fields one object provides; earlier objects win.
func (st *structured) read(v *reportFields) {
	if b, ok := boolIn(v[rkTruncated]); ok && !st.truncatedKnown {
		st.truncated, st.truncatedKnown = b, true
	}
	for _, k := range [...]int{rkIsComplete, rkComplete} {
		if b, ok := boolIn(v[k]); ok && !st.truncatedKnown {
			st.truncated, st.truncatedKnown = !b, true
		}
	}
	st.originalBytes = st.originalBytes.Or(countIn(v[rkOriginalSize]))
	st.returnedBytes = st.returnedBytes.Or(countIn(v[rkReturnedSize]))
	st.total = st.total.Or(countIn(v[rkTotal]))
	if a, b, ok := pairIn(v[rkShown]); ok && !st.start.Known {
		st.start, st.end = countIn(a), countIn(b)
	}
	if r := member(v[rkRange]); r != nil && !st.start.Known {
		var rv [len(rangeKeys)][]byte
		r.fields(rangeKeys[:], rv[:])
		st.start, st.end = countIn(rv[0]), countIn(rv[1])
		if st.start.Known || st.end.Known {
			st.unit = schema.UnitLines
		} else {
			st.start, st.end = countIn(rv[2]), countIn(rv[3])
		}
	}
	if u := schema.Unit(stringOr(v[rkUnit])); u != "" && st.unit == "" && u.Valid() {
		st.unit = u
	}
	for _, k := range [...]int{rkTruncationReason, rkReason} {
		if st.reason == "" {
			if r := stringOr(v[k]); r != "" {
				st.reason = normaliseReason(r)
			}
		}
	}
	if sv := schema.Strategy(stringOr(v[rkStrategy])); sv.Valid() && st.strategy == "" {
		st.strategy = sv
	}
	for _, k := range [...]int{rkNextPage, rkNextCursor, rkContinueOptions, rkNextOffset, rkCursor, rkNext} {
		if st.next == "" {
			st.next = textIn(v[k])
		}
	}
	for _, k := range [...]int{rkSavedRef, rkRef, rkFullOutputPath, rkFullOutputRef} {
		if st.ref == "" {
			st.ref = stringOr(v[k])
		}
	}
}

// pairIn returns the elements of a raw array that has exactly two.
func pairIn(v []byte) (a, b []byte, ok bool) {
	if len(v) == 0 || v[0] != '[' {
		return nil, nil, false
	}
	it := jsonscan.Array(v)
	n := 0
	for it.Next() {
		switch n {
		case 0:
			a = it.Value()
		case 1:
			b = it.Value()
		}
		n++
	}
	return a, b, n == 2
}

// cut reports whether the object says something was left out.
func (st structured) cut() bool {
	if st.truncatedKnown {
		return st.truncated
	}
	return st.next != "" || exceeds(st.originalBytes, st.returnedBytes, 0, 0)
}

// markerText renders the report members as the notice, compact JSON with
// sorted keys (decoded and re-encoded only here: a cut result is rare).
func (st *structured) markerText() string {
	m := map[string]any{}
	for k, v := range st.marker {
		if v != nil {
			m[structuredKeys[k]] = valueIn(v)
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return ""
	}
	return string(b)
}

var structuredRules = []rule{
	{name: "generic.structured_result", match: structuredResult},
	{name: "sdk.metadata", match: structuredMetadata},
}

// structuredResult reads the report from the model-visible JSON result.
func structuredResult(s *scan, fd *finding) bool {
	if !strings.HasPrefix(strings.TrimSpace(head(s.text, 64)), "{") || !structuredPrefilter(s.text) {
		return false
	}
	st := parseStructured(objectIn([]byte(s.text)))
	if !st.found {
		return false
	}
	s.orig.add(rankSDK, schema.Sizes{Bytes: st.originalBytes})
	applyStructured(s, fd, st, true)
	return true
}

// structuredMetadata reads the report from Input.Metadata (not model-visible).
func structuredMetadata(s *scan, fd *finding) bool {
	st := parseStructured(objectIn(s.in.Metadata))
	if !st.found {
		return false
	}
	applyStructured(s, fd, st, false)
	return true
}

func applyStructured(s *scan, fd *finding, st structured, visible bool) {
	unit := st.unit
	if unit == "" && (st.start.Known || st.total.Known) {
		unit = schema.UnitItems
	}
	if st.start.Known || st.end.Known || st.total.Known {
		fd.show(st.start, st.end, unit, st.total)
	}
	fd.SavedRef, fd.NextHint = st.ref, st.next
	if !st.cut() {
		fd.Kind = schema.KindNone
		fd.complete = true
		fd.confirmedBy = schema.SourceSDK
		return
	}
	strategy := st.strategy
	if strategy == "" {
		strategy = schema.StrategyHead
		if st.next != "" {
			strategy = schema.StrategyPaginated
		}
	}
	reason := st.reason
	if reason == "" && strategy == schema.StrategyPaginated {
		reason = "pagination"
	}
	if !visible {
		fd.silentCut(strategy, reason)
		return
	}
	if s.req.asksForPart() && !st.truncatedKnown {
		fd.byRequest()
		return
	}
	fd.cut(strategy, reason, st.markerText())
	fd.disclose(st.start.Known || st.total.Known || st.originalBytes.Known, st.reason != "", st.next != "" || st.ref != "")
}

// structuredPrefilter avoids decoding large JSON results that carry no report.
func structuredPrefilter(text string) bool {
	for _, k := range structuredKeys {
		if strings.Contains(text, `"`+k+`"`) {
			return true
		}
	}
	return false
}

// normaliseReason maps a free-text reason onto the machine words of docs/design.md §4.7.
func normaliseReason(r string) string {
	l := strings.ToLower(r)
	for _, w := range reasonWords {
		if l == w {
			return w
		}
	}
	switch {
	case strings.Contains(l, "token"):
		return "cap_tokens"
	case strings.Contains(l, "byte"):
		return "cap_bytes"
	case strings.Contains(l, "line"):
		return "cap_lines"
	case strings.Contains(l, "char"):
		return "cap_chars"
	case strings.Contains(l, "item"), strings.Contains(l, "result"), strings.Contains(l, "match"), strings.Contains(l, "entr"):
		return "cap_items"
	case strings.Contains(l, "page"):
		return "pagination"
	case strings.Contains(l, "summar"):
		return "summarised"
	case strings.Contains(l, "time"):
		return "timeout"
	case strings.Contains(l, "clear"):
		return "cleared"
	}
	return "too_large"
}

// reasonWords are the machine words of Forensics.Reason.
var reasonWords = []string{
	"cap_bytes", "cap_chars", "cap_lines", "cap_tokens", "cap_items",
	"pagination", "summarised", "too_large", "timeout", "cleared", "unsupported_media",
}

// collectMetadataOriginals gathers the harness and SDK metadata originals.
func collectMetadataOriginals(s *scan) {
	collectClaudeOriginals(s)
	collectPiOriginals(s)
	if len(s.in.Metadata) > 0 {
		st := parseStructured(objectIn(s.in.Metadata))
		s.orig.add(rankSDK, schema.Sizes{Bytes: st.originalBytes})
	}
}
