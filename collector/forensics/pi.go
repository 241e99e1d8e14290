package forensics

import (
	"regexp"
	"strings"

	"github.com/ctxaudit/ctxaudit/schema"
)

// pi facts (transcript-formats.md §3, badlogic/pi-mono truncate.ts): read,
// bash, grep, find and ls cut at 2000 lines or 50 KiB, whichever comes first;
// read keeps the head, bash the tail. Sizes in notices use formatSize (B, KB,
// MB with one decimal, base 1024). Older builds end notices without the final
// period, so the regexps accept both.
const (
	piMaxLines = 2000
	piMaxBytes = 50 * 1024
)

var piCaps = []capFact{
	{tools: []string{"read", "bash", "grep", "find", "ls"}, unit: schema.UnitLines, n: piMaxLines, reason: "cap_lines"},
	{tools: []string{"read", "bash", "grep", "find", "ls"}, unit: schema.UnitBytes, n: piMaxBytes, reason: "cap_bytes"},
}

var (
	piReadLinesRe    = regexp.MustCompile(`\n\n\[Showing lines (\d+)-(\d+) of (\d+)(?: \((\d+(?:\.\d+)?(?:B|KB|MB)) limit\))?\. (Use offset=(\d+) to continue)\.?\]\s*\z`)
	piReadMoreRe     = regexp.MustCompile(`\n\n\[(\d+) more lines in file\. (Use offset=(\d+) to continue)\.?\]\s*\z`)
	piReadFirstRe    = regexp.MustCompile(`\A\[Line (\d+) is (\d+(?:\.\d+)?(?:B|KB|MB)), exceeds (\d+(?:\.\d+)?(?:B|KB|MB)) limit\. (Use bash: [^\n]*?)\]`)
	piBashLinesRe    = regexp.MustCompile(`\n\n\[Showing lines (\d+)-(\d+) of (\d+)(?: \((\d+(?:\.\d+)?(?:B|KB|MB)) limit\))?\. Full output: ([^\]\n]+)\]`)
	piBashLastLineRe = regexp.MustCompile(`\n\n\[Showing last (\d+(?:\.\d+)?(?:B|KB|MB)) of line (\d+) \(line is (\d+(?:\.\d+)?(?:B|KB|MB))\)\. Full output: ([^\]\n]+)\]`)
	piNoticesRe      = regexp.MustCompile(`\n\n\[([^\]\n]*(?:limit reached|lines truncated to)[^\]\n]*)\]\s*\z`)
	piLimitCountRe   = regexp.MustCompile(`\A(\d+) (?:matches|results|entries) limit reached`)
	piBashExecRe     = regexp.MustCompile(`\n\n\[Output truncated\. Full output: ([^\]\n]+)\]`)
	piMoreCharsRe    = regexp.MustCompile(`\n\n\[\.\.\. (\d+) more characters truncated(?:; rerun with narrower args if needed)?\]`)
)

var piRules = []rule{
	{name: "pi.read_image", match: piReadImage},
	{name: "pi.read_lines", match: piReadLines},
	{name: "pi.read_more_lines", match: piReadMore},
	{name: "pi.read_first_line", match: piReadFirstLine},
	{name: "pi.bash_lines", match: piBashLines},
	{name: "pi.bash_last_line", match: piBashLastLine},
	{name: "pi.limit_notices", match: piNotices},
	{name: "pi.output_truncated", anchor: anchorTruncated, match: piBashExec},
	{name: "pi.more_characters", anchor: anchorTruncated, match: piMoreChars},
	{name: "pi.details_truncation", match: piDetailsRule},
	{name: "pi.read_offset_to_end", match: piReadOffsetToEnd},
}

// piReadLines: read cut by its caps; the notice tells all three.
func piReadLines(s *scan, fd *finding) bool {
	t := tail(s.text, 512)
	if !strings.Contains(t, "[Showing lines ") {
		return false
	}
	m := piReadLinesRe.FindStringSubmatchIndex(t)
	if m == nil {
		return false
	}
	limit := group(t, m, 4)
	reason := "cap_lines"
	if limit != "" {
		reason = "cap_bytes"
	}
	total := atoi(group(t, m, 3))
	fd.cut(schema.StrategyPaginated, reason, strings.TrimSpace(t[m[0]:m[1]]))
	fd.NextHint = group(t, m, 5)
	fd.disclose(true, limit != "", true)
	fd.show(atoi(group(t, m, 1)), atoi(group(t, m, 2)), schema.UnitLines, total)
	// pi's "of N" counts a final newline as one more (empty) line, and a head
	// cut does not show whether the file ends in one: the original has N or
	// N-1 lines, so no line count is claimed (see piLinesEndingAt).
	return true
}

// piReadMore: read with the call's own limit; the rest is a page away.
func piReadMore(s *scan, fd *finding) bool {
	t := tail(s.text, 256)
	if !strings.Contains(t, " more lines in file. ") {
		return false
	}
	m := piReadMoreRe.FindStringSubmatchIndex(t)
	if m == nil {
		return false
	}
	remaining, next := atoi(group(t, m, 1)), atoi(group(t, m, 3))
	if !next.Known || next.N == 0 {
		return false
	}
	end := schema.Known(next.N - 1)
	start := s.req.Offset
	if !start.Known || start.N == 0 {
		start = schema.Known(1)
	}
	fd.Marker = strings.TrimSpace(t[m[0]:m[1]])
	fd.NextHint = group(t, m, 2)
	fd.disclose(true, false, true)
	fd.show(start, end, schema.UnitLines, addCounts(end, remaining))
	got := end.N - min(end.N, start.N-1)
	if s.req.Limit.Known && got < s.req.Limit.N {
		fd.cut(schema.StrategyPaginated, "cap_lines", fd.Marker)
		return true
	}
	fd.byRequest()
	fd.confirmedBy = schema.SourceMarker
	return true
}

// piReadFirstLine: the first line alone is over the byte cap; nothing shown.
func piReadFirstLine(s *scan, fd *finding) bool {
	if !strings.HasPrefix(s.text, "[Line ") {
		return false
	}
	m := piReadFirstRe.FindStringSubmatchIndex(head(s.text, 2048))
	if m == nil {
		return false
	}
	fd.cut(schema.StrategyRefused, "cap_bytes", s.text[m[0]:m[1]])
	fd.NextHint = group(s.text, m, 4)
	fd.disclose(true, true, true)
	return true
}

// piBashLines: bash keeps the tail and saves the full output.
func piBashLines(s *scan, fd *finding) bool {
	t := tail(s.text, 4096)
	if !strings.Contains(t, "[Showing lines ") {
		return false
	}
	m := piBashLinesRe.FindStringSubmatchIndex(t)
	if m == nil {
		return false
	}
	limit := group(t, m, 4)
	reason := "cap_lines"
	if limit != "" {
		reason = "cap_bytes"
	}
	total := atoi(group(t, m, 3))
	fd.cut(schema.StrategyTail, reason, strings.TrimSpace(t[m[0]:m[1]]))
	fd.SavedRef = group(t, m, 5)
	fd.NextHint = "Full output: " + fd.SavedRef
	fd.disclose(true, limit != "", true)
	fd.show(atoi(group(t, m, 1)), atoi(group(t, m, 2)), schema.UnitLines, total)
	fd.claims(schema.UnitLines, piLinesEndingAt(total, t[:m[0]]))
	return true
}

// piLinesEndingAt converts pi's line count n of a text whose end is kept
// (the tail of a bash cut, kept up to the notice) to DESIGN's count. pi
// counts text.split("\n").length, so a text ending in a newline has one line
// fewer than pi says (lines 1350–3001 of 3001 for 3,000 lines, checked by the
// harness lab against pi 0.73.1). The shown range and total stay in pi's
// numbering, which its offsets use.
func piLinesEndingAt(n schema.Count, kept string) schema.Count {
	if n.Known && n.N > 0 && strings.HasSuffix(kept, "\n") {
		return schema.Known(n.N - 1)
	}
	return n
}

// piBashLastLine: a single last line over the byte cap; its tail is shown.
func piBashLastLine(s *scan, fd *finding) bool {
	t := tail(s.text, 4096)
	if !strings.Contains(t, "[Showing last ") {
		return false
	}
	m := piBashLastLineRe.FindStringSubmatchIndex(t)
	if m == nil {
		return false
	}
	fd.cut(schema.StrategyTail, "cap_bytes", strings.TrimSpace(t[m[0]:m[1]]))
	fd.SavedRef = group(t, m, 4)
	fd.NextHint = "Full output: " + fd.SavedRef
	fd.disclose(true, true, true)
	shown := parseSizeLabel(group(t, m, 1))
	fd.Shown.Unit = schema.UnitBytes
	fd.tailKept = shown
	fd.totalIsOriginal = true
	return true
}

// piNotices: grep/find/ls limits, joined by ". " in one bracket.
func piNotices(s *scan, fd *finding) bool {
	t := tail(s.text, 1024)
	if !strings.Contains(t, "limit reached") && !strings.Contains(t, "lines truncated to") {
		return false
	}
	m := piNoticesRe.FindStringSubmatchIndex(t)
	if m == nil {
		return false
	}
	notice := group(t, m, 1)
	reason := "cap_chars"
	switch {
	case strings.Contains(notice, "matches limit reached"), strings.Contains(notice, "results limit reached"),
		strings.Contains(notice, "entries limit reached"):
		reason = "cap_items"
	case strings.Contains(notice, "B limit reached"):
		reason = "cap_bytes"
	}
	fd.cut(schema.StrategyHead, reason, strings.TrimSpace(t[m[0]:m[1]]))
	fd.NextHint = notice
	fd.disclose(false, true, strings.Contains(notice, "Use "))
	if lm := piLimitCountRe.FindStringSubmatch(notice); lm != nil {
		n := atoi(lm[1])
		fd.show(schema.Known(0), n, schema.UnitItems, schema.Unknown)
		onlyLimit := !strings.Contains(notice, "B limit reached") && !strings.Contains(notice, "lines truncated to")
		if onlyLimit && s.req.Limit.Known && n.Known && s.req.Limit.N == n.N {
			fd.byRequest()
		}
	}
	return true
}

// piBashExec: a user "!" command rendered into context, tail kept.
func piBashExec(s *scan, fd *finding) bool {
	m := s.find(s.text, anchorTruncated, "[Output truncated. Full output: ", piBashExecRe, 2, 1024)
	if m == nil {
		return false
	}
	fd.cut(schema.StrategyTail, "", strings.TrimSpace(s.text[m[0]:m[1]]))
	fd.SavedRef = group(s.text, m, 1)
	fd.NextHint = "Full output: " + fd.SavedRef
	fd.disclose(false, false, true)
	fd.Shown.Unit = schema.UnitChars
	fd.tailKept = keptChars(s.text, m[0], m[1])
	fd.totalIsOriginal = true
	return true
}

// piMoreChars: compaction serialisation (also OpenClaw's suffix), head kept.
func piMoreChars(s *scan, fd *finding) bool {
	m := s.find(s.text, anchorTruncated, " more characters truncated", piMoreCharsRe, 32, 48)
	if m == nil {
		return false
	}
	removed := atoi(group(s.text, m, 1))
	fd.cut(schema.StrategyHead, "cap_chars", strings.TrimSpace(s.text[m[0]:m[1]]))
	next := strings.Contains(s.text[m[0]:m[1]], "rerun with narrower args")
	fd.disclose(true, false, next)
	if next {
		fd.NextHint = "rerun with narrower args if needed"
	}
	kept := keptChars(s.text, m[0], m[1])
	fd.show(schema.Known(0), kept, schema.UnitChars, schema.Unknown)
	fd.claims(schema.UnitChars, addCounts(kept, removed))
	fd.totalIsOriginal = true
	return true
}

// piDetails is details.truncation (TruncationResult) plus bash's
// fullOutputPath and the limits grep, find and ls report.
type piDetails struct {
	present                  bool
	truncated                bool
	truncatedBy              string
	totalLines, totalBytes   schema.Count
	outputLines, outputBytes schema.Count
	fullOutputPath           string
	// limited: grep's matchLimitReached or linesTruncated, find's
	// resultLimitReached or ls's entryLimitReached — the output was cut
	// before details.truncation measured it.
	limited bool
}

func (s *scan) piDetails() *piDetails {
	d := &s.pi
	if s.piDone {
		return d
	}
	s.piDone = true
	o := objectIn(s.in.Details)
	if o == nil {
		return d
	}
	var v [len(piDetailsKeys)][]byte
	o.fields(piDetailsKeys[:], v[:])
	d.fullOutputPath = stringOr(v[0])
	for _, f := range v[2:] {
		d.limited = d.limited || piFlag(f)
	}
	t := member(v[1])
	if t == nil {
		return d
	}
	d.present = true
	var tv [len(piTruncationKeys)][]byte
	t.fields(piTruncationKeys[:], tv[:])
	d.truncated, _ = boolIn(tv[0])
	d.truncatedBy = stringOr(tv[1])
	d.totalLines, d.totalBytes = countIn(tv[2]), countIn(tv[3])
	d.outputLines, d.outputBytes = countIn(tv[4]), countIn(tv[5])
	return d
}

var (
	piDetailsKeys    = [...]string{"fullOutputPath", "truncation", "matchLimitReached", "linesTruncated", "resultLimitReached", "entryLimitReached"}
	piTruncationKeys = [...]string{"truncated", "truncatedBy", "totalLines", "totalBytes", "outputLines", "outputBytes"}
)

// piFlag reports whether a details limit field says the limit was reached:
// pi sets matchLimitReached, resultLimitReached and entryLimitReached to the
// limit and linesTruncated to true, and leaves them out otherwise.
func piFlag(v []byte) bool {
	if b, ok := boolIn(v); ok {
		return b
	}
	n := countIn(v)
	return n.Known && n.N > 0
}

// collectPiOriginals: details.truncation gives the original lines and bytes.
// grep, find and ls measure it after their own limits (pi-mono grep.ts,
// find.ts, ls.ts: the match, result or entry limit first, grep's 500-char
// line cut, then the 50 KB cap), so with one of those reached the tool's
// output was larger and totalBytes is only a lower bound.
func collectPiOriginals(s *scan) {
	if len(s.in.Details) == 0 {
		return
	}
	d := s.piDetails()
	if !d.present {
		return
	}
	sz := schema.Sizes{Lines: piDetailsLines(s, d), Bytes: d.totalBytes}
	if piListingLimited(s, d) {
		s.orig.addAtLeast(rankMetadata, sz)
		return
	}
	s.orig.add(rankMetadata, sz)
}

// piListingLimited reports whether a grep, find or ls output was cut by its
// item limit or grep's line cut before details.truncation counted it: the
// details say so, or the notice the model saw does.
func piListingLimited(s *scan, d *piDetails) bool {
	switch strings.ToLower(s.in.Tool) {
	case "grep", "find", "ls":
	default:
		return false
	}
	if d.limited {
		return true
	}
	t := tail(s.text, 1024)
	m := piNoticesRe.FindStringSubmatchIndex(t)
	if m == nil {
		return false
	}
	notice := group(t, m, 1)
	return strings.Contains(notice, "matches limit reached") || strings.Contains(notice, "results limit reached") ||
		strings.Contains(notice, "entries limit reached") || strings.Contains(notice, "lines truncated to")
}

// piDetailsLines is details.truncation.totalLines in DESIGN's count when it
// can be told: pi counts split("\n") (see piLinesEndingAt), so only a bash
// tail, which keeps the output's end, shows whether to subtract the final
// empty line. A head cut or a result that was not cut gives no line count.
func piDetailsLines(s *scan, d *piDetails) schema.Count {
	if !d.truncated || !strings.EqualFold(s.in.Tool, "bash") {
		return schema.Unknown
	}
	i := strings.LastIndex(s.text, "\n\n[Showing lines ")
	if i < 0 {
		return schema.Unknown
	}
	return piLinesEndingAt(d.totalLines, s.text[:i])
}

// piDetailsRule: details.truncation says cut but no notice was found.
func piDetailsRule(s *scan, fd *finding) bool {
	d := s.piDetails()
	if !d.present {
		return false
	}
	if !d.truncated {
		fd.Kind = schema.KindNone
		fd.complete = true
		fd.confirmedBy = schema.SourceHarnessMetadata
		return true
	}
	reason := "cap_lines"
	if d.truncatedBy == "bytes" {
		reason = "cap_bytes"
	}
	strategy := schema.StrategyHead
	if strings.EqualFold(s.in.Tool, "bash") {
		strategy = schema.StrategyTail
	}
	fd.silentCut(strategy, reason)
	fd.SavedRef = d.fullOutputPath
	if strategy == schema.StrategyTail {
		fd.show(subCount(addCounts(d.totalLines, schema.Known(1)), d.outputLines), d.totalLines, schema.UnitLines, d.totalLines)
	} else {
		fd.show(schema.Known(1), d.outputLines, schema.UnitLines, d.totalLines)
	}
	return true
}

// piReadOffsetToEnd: read from an offset with no limit, and no notice after
// it: pi read from that line to the end of the file (checked against pi
// 0.73.1 by the harness lab). A partial view by request whose end is the
// file's end, in pi's own line numbering (split on "\n", so a file ending in
// a newline ends with an empty line, as pi's "of N" totals count it).
//
// A failed read (isError) is pi's error message, not lines of the file:
// "Offset N is beyond end of file (T lines total)", ENOENT, a permission
// error. It shows no part of the file, so it gives no range and no total.
func piReadOffsetToEnd(s *scan, fd *finding) bool {
	if s.in.Tool != "read" || s.in.IsError || s.req.Limit.Known || !s.req.Offset.Known || s.req.Offset.N < 2 || s.text == "" {
		return false
	}
	end := s.req.Offset.N + uint64(strings.Count(s.text, "\n"))
	fd.byRequest()
	fd.show(s.req.Offset, schema.Known(end), schema.UnitLines, schema.Known(end))
	fd.confirmedBy = schema.SourceEstimate
	return true
}
