package forensics

import (
	"encoding/json"
	"strings"

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
	marker                       map[string]any
}

// structuredKeys are the members whose presence makes an object a report.
var structuredKeys = []string{
	"truncated", "is_complete", "complete", "original_size_bytes", "returned_size_bytes",
	"truncation_reason", "shown", "continue_options", "next_page", "next_cursor",
}

// nestedReportKeys are members that may hold the report instead of the top level.
var nestedReportKeys = []string{"truncation", "_meta", "meta", "metadata", "pagination"}

func parseStructured(m map[string]any) structured {
	var st structured
	if m == nil {
		return st
	}
	objs := []map[string]any{m}
	for _, k := range nestedReportKeys {
		if o := objectOf(m[k]); o != nil {
			objs = append(objs, o)
		}
	}
	st.marker = map[string]any{}
	for _, o := range objs {
		for _, k := range structuredKeys {
			if v, ok := o[k]; ok {
				st.found = true
				st.marker[k] = v
			}
		}
	}
	if !st.found {
		return st
	}
	for _, o := range objs {
		st.read(o)
	}
	return st
}

// read fills the fields one object provides; earlier objects win.
func (st *structured) read(o map[string]any) {
	if b, ok := boolOf(o["truncated"]); ok && !st.truncatedKnown {
		st.truncated, st.truncatedKnown = b, true
	}
	for _, k := range [...]string{"is_complete", "complete"} {
		if b, ok := boolOf(o[k]); ok && !st.truncatedKnown {
			st.truncated, st.truncatedKnown = !b, true
		}
	}
	st.originalBytes = st.originalBytes.Or(numberOf(o["original_size_bytes"]))
	st.returnedBytes = st.returnedBytes.Or(numberOf(o["returned_size_bytes"]))
	st.total = st.total.Or(numberOf(o["total"]))
	if arr, ok := o["shown"].([]any); ok && len(arr) == 2 && !st.start.Known {
		st.start, st.end = numberOf(arr[0]), numberOf(arr[1])
	}
	if r := objectOf(o["range"]); r != nil && !st.start.Known {
		st.start, st.end = numberOf(r["start_line"]), numberOf(r["end_line"])
		if st.start.Known || st.end.Known {
			st.unit = schema.UnitLines
		} else {
			st.start, st.end = numberOf(r["start"]), numberOf(r["end"])
		}
	}
	if u := schema.Unit(stringOf(o["unit"])); u != "" && st.unit == "" && validUnit(u) {
		st.unit = u
	}
	for _, k := range [...]string{"truncation_reason", "reason"} {
		if r := stringOf(o[k]); r != "" && st.reason == "" {
			st.reason = normaliseReason(r)
		}
	}
	if sv := schema.Strategy(stringOf(o["strategy"])); validStrategy(sv) && st.strategy == "" {
		st.strategy = sv
	}
	for _, k := range [...]string{"next_page", "next_cursor", "continue_options", "next_offset", "cursor", "next"} {
		if t := textOf(o[k]); t != "" && st.next == "" {
			st.next = t
		}
	}
	for _, k := range [...]string{"saved_ref", "ref", "full_output_path", "full_output_ref"} {
		if t := stringOf(o[k]); t != "" && st.ref == "" {
			st.ref = t
		}
	}
}

// cut reports whether the object says something was left out.
func (st structured) cut() bool {
	if st.truncatedKnown {
		return st.truncated
	}
	return st.next != "" || exceeds(st.originalBytes, st.returnedBytes, 0, 0)
}

func (st structured) markerText() string {
	b, err := json.Marshal(st.marker)
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
	st := parseStructured(decodeObject([]byte(s.text)))
	if !st.found {
		return false
	}
	s.orig.add(rankSDK, schema.Sizes{Bytes: st.originalBytes})
	applyStructured(s, fd, st, true)
	return true
}

// structuredMetadata reads the report from Input.Metadata (not model-visible).
func structuredMetadata(s *scan, fd *finding) bool {
	st := parseStructured(decodeObject(s.in.Metadata))
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

// normaliseReason maps a free-text reason onto the machine words of DESIGN §4.
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
	"pagination", "summarised", "too_large", "timeout", "cleared",
}

func validStrategy(v schema.Strategy) bool {
	for _, x := range schema.Strategies {
		if x == v {
			return true
		}
	}
	return false
}

func validUnit(u schema.Unit) bool {
	switch u {
	case schema.UnitBytes, schema.UnitChars, schema.UnitLines, schema.UnitTokens,
		schema.UnitItems, schema.UnitMatches, schema.UnitFiles:
		return true
	}
	return false
}

func validKind(k schema.TruncationKind) bool {
	for _, x := range schema.TruncationKinds {
		if x == k {
			return true
		}
	}
	return false
}

// collectMetadataOriginals gathers the harness and SDK metadata originals.
func collectMetadataOriginals(s *scan) {
	collectClaudeOriginals(s)
	collectPiOriginals(s)
	if len(s.in.Metadata) > 0 {
		st := parseStructured(decodeObject(s.in.Metadata))
		s.orig.add(rankSDK, schema.Sizes{Bytes: st.originalBytes})
	}
}
