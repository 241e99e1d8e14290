package forensics

// Claude Code notices that cut the output in place: Bash and error caps,
// MCP token limits, WebFetch and attachments.

import (
	"strings"

	"github.com/ctxaudit/ctxaudit/schema"
)

// ccMCPTruncated: C4, MCP output cut to its token limit (head kept).
func ccMCPTruncated(s *scan, fd *finding) bool {
	m := s.find(s.text, anchorTRUNCATED, "[OUTPUT TRUNCATED - exceeded ", ccMCPTruncRe, 2, 512)
	if m == nil {
		return false
	}
	fd.cut(schema.StrategyHead, "cap_tokens", strings.TrimSpace(s.text[m[0]:m[1]]))
	fd.NextHint = group(s.text, m, 2)
	fd.disclose(false, true, true)
	fd.show(schema.Known(0), schema.KnownInt(countRunes(s.text[:m[0]])), schema.UnitChars, schema.Unknown)
	fd.totalIsOriginal = true
	return true
}

// ccBashLines: C5, Bash output over BASH_MAX_OUTPUT_LENGTH: the head is kept
// and the notice counts the lines of the remainder. formatOutput counts them
// as the newlines after the cut plus one: the line the cut fell in, whose
// start the head shows, is in N already. So the output has the head's
// newlines plus N lines (its trailing blank lines trimmed before the cut),
// and whatever follows the notice (stderr, joined by a newline).
func ccBashLines(s *scan, fd *finding) bool {
	m := s.find(s.text, anchorTruncated, " lines truncated] ...", ccBashLinesRe, 32, 0)
	if m == nil {
		return false
	}
	removed := atoi(group(s.text, m, 1))
	fd.cut(schema.StrategyHead, "cap_chars", strings.TrimSpace(s.text[m[0]:m[1]]))
	fd.disclose(true, false, false)
	kept := schema.KnownInt(strings.Count(s.text[:m[0]], "\n") + countLines(strings.TrimPrefix(s.text[m[1]:], "\n")))
	fd.show(schema.Known(1), schema.KnownInt(countLines(s.text[:m[0]])), schema.UnitLines, schema.Unknown)
	fd.claims(schema.UnitLines, addCounts(kept, removed))
	fd.totalIsOriginal = true
	return true
}

// ccCharsTruncated: C6, head and tail kept around "[N characters truncated]"
// (tool errors over 10,000 chars; older Bash). The notice is understated
// when a known original shows more was dropped (the Bash failure path never
// received most of the output).
func ccCharsTruncated(s *scan, fd *finding) bool {
	m := s.find(s.text, anchorTruncated, " characters truncated] ...", ccCharsTruncRe, 32, 0)
	if m == nil {
		return false
	}
	removed := atoi(group(s.text, m, 1))
	fd.cut(schema.StrategyHeadTail, "cap_chars", s.text[m[0]:m[1]])
	fd.disclose(true, false, false)
	fd.Shown.Unit = schema.UnitChars
	claim := addCounts(keptChars(s.text, m[0], m[1]), removed)
	fd.claims(schema.UnitChars, claim)
	fd.keepsAround(s.text, m[0], m[1], schema.UnitChars)
	fd.totalIsOriginal = true
	if ccBashAtCap(s.in.Tool, claim) {
		// The notice counts only what Bash received before its cap: the
		// command printed at least this much, the tail is not its end.
		fd.claimAtLeast = true
	}
	return true
}

// ccBashAtCap reports whether a Bash failure notice's claim sits at the
// output cap, the sign that it counts the capped text rather than the output.
func ccBashAtCap(tool string, claim schema.Count) bool {
	return (tool == "Bash" || tool == "PowerShell") && claim.Known &&
		claim.N >= ccBashMaxChars && claim.N <= ccBashMaxChars+ccBashCapSlack
}

// ccWebFetchMarker: C17, the page markdown cut before the secondary model;
// only model-visible if a harness passes the markdown through.
func ccWebFetchMarker(s *scan, fd *finding) bool {
	m := s.find(s.text, anchorTruncated, "[Content truncated due to length...]", ccWebFetchRe, 2, 0)
	if m == nil {
		return false
	}
	fd.cut(schema.StrategyHead, "cap_chars", strings.TrimSpace(s.text[m[0]:m[1]]))
	fd.disclose(false, true, false)
	fd.show(schema.Known(0), schema.KnownInt(countRunes(s.text[:m[0]])), schema.UnitChars, schema.Unknown)
	fd.totalIsOriginal = true
	return true
}

// ccAttachTruncated: C22, an @-mentioned file cut to its first lines.
func ccAttachTruncated(s *scan, fd *finding) bool {
	m := s.find(s.text, anchorTruncated, "was too large and has been truncated to the first", ccAttachTruncRe, 4096, 64)
	if m == nil {
		return false
	}
	fd.cut(schema.StrategyHead, "cap_lines", s.text[m[0]:m[1]])
	fd.disclose(true, true, false)
	fd.show(schema.Known(1), atoi(group(s.text, m, 2)), schema.UnitLines, schema.Unknown)
	return true
}

// ccWebFetchNote: 2.1.328's answer over part of a page, with a note that
// tells where (chars A to B of T), that the rest was not read, and how to
// read on (the same url with offset). The answer is a digest of that part.
// A stored copy's retrieval time, noted beside it, is the version read.
func ccWebFetchNote(s *scan, fd *finding) bool {
	if !strings.Contains(s.text, "[WebFetch note: ") && !strings.HasPrefix(s.text, "Nothing left to read from offset ") {
		return false
	}
	if m := ccWebFetchPastEndRe.FindStringSubmatch(head(s.text, 256)); m != nil {
		// Nothing remains past the offset: complete, and the total is told.
		fd.Kind = schema.KindNone
		fd.PartialByRequest = true
		fd.show(atoi(m[2]), atoi(m[2]), schema.UnitChars, atoi(m[2]))
		s.orig.add(rankMarker, schema.Sizes{Chars: atoi(m[2])})
		fd.Strategy = schema.StrategyNone
		ccStoredCopy(s, fd)
		return true
	}
	t := tail(s.text, 2048)
	if m := ccWebFetchNoteRe.FindStringSubmatchIndex(t); m != nil {
		total, from, to := atoi(group(t, m, 1)), atoi(group(t, m, 2)), atoi(group(t, m, 3))
		fd.cut(schema.StrategySummary, "summarised", t[m[0]:m[1]])
		fd.NextHint = group(t, m, 5)
		fd.disclose(true, true, fd.NextHint != "")
		fd.show(from, to, schema.UnitChars, total)
		s.orig.add(rankMarker, schema.Sizes{Chars: total})
		ccStoredCopy(s, fd)
		return true
	}
	if m := ccWebFetchRangeRe.FindStringSubmatchIndex(t); m != nil {
		from, to, total := atoi(group(t, m, 1)), atoi(group(t, m, 2)), atoi(group(t, m, 3))
		fd.cut(schema.StrategySummary, "summarised", t[m[0]:m[1]])
		fd.NextHint = group(t, m, 4)
		fd.disclose(true, false, true)
		fd.show(from, to, schema.UnitChars, total)
		s.orig.add(rankMarker, schema.Sizes{Chars: total})
		ccStoredCopy(s, fd)
		return true
	}
	return false
}

// ccWebFetchRaw: 2.1.328's verbatim page text under a header that says how
// long the page text is and what of it follows: all of it (from an
// offset), the first K chars, then perhaps a second model's summary of the
// rest, and what was not read with the offset to read on from. What the
// model got, verbatim or summarised, is the shown range.
func ccWebFetchRaw(s *scan, fd *finding) bool {
	if !strings.HasPrefix(s.text, "Fetched ") {
		return false
	}
	h := head(s.text, 4096)
	if i := strings.IndexByte(h, '\n'); i >= 0 {
		h = h[:i]
	}
	m := ccWebFetchRawRe.FindStringSubmatch(h)
	if m == nil {
		return false
	}
	total, rest := atoi(m[4]), m[5]
	from := schema.Known(0)
	if fm := ccRawFromRe.FindStringSubmatch(rest); fm != nil {
		from = atoi(fm[2])
	}
	s.orig.add(rankMarker, schema.Sizes{Chars: total})
	ccStoredCopy(s, fd)
	fd.Strategy = schema.StrategyNone
	if strings.HasPrefix(rest, "; nothing is left to show from offset ") {
		fd.Kind, fd.PartialByRequest = schema.KindNone, true
		fd.show(total, total, schema.UnitChars, total)
		return true
	}
	first := ccRawFirstRe.FindStringSubmatch(rest)
	if first == nil {
		// The whole page text, or all of it from the offset.
		fd.Kind = schema.KindNone
		fd.PartialByRequest = from.N > 0
		fd.show(from, total, schema.UnitChars, total)
		return true
	}
	verbatimEnd := addCounts(from, atoi(first[1]))
	summarised := strings.Contains(rest, ", then a model-extracted summary of the rest")
	unread := ccRawUnreadRe.FindStringSubmatch(rest)
	next := ccRawNextRe.FindStringSubmatch(rest)
	if next != nil {
		fd.NextHint = next[0]
	}
	marker := strings.TrimPrefix(rest, ", ")
	switch {
	case summarised && unread == nil:
		// The rest was summarised whole: nothing left unread.
		fd.Kind, fd.Strategy = schema.KindNone, schema.StrategySummary
		fd.PartialByRequest = from.N > 0
		fd.show(from, total, schema.UnitChars, total)
		return true
	case summarised:
		fd.cut(schema.StrategySummary, "summarised", marker)
		fd.show(from, subCount(total, atoi(unread[1])), schema.UnitChars, total)
		fd.disclose(true, true, next != nil)
	default:
		// Only the head, verbatim: over the budget, and either no room for
		// a summary or the summary failed.
		fd.cut(schema.StrategyHead, "cap_chars", marker)
		fd.show(from, verbatimEnd, schema.UnitChars, total)
		fd.disclose(true, unread != nil, next != nil)
	}
	return true
}

// ccStoredCopy records when the page was retrieved, if the answer came from
// a stored copy of it: the version of the source that was read.
func ccStoredCopy(s *scan, fd *finding) {
	if !strings.Contains(s.text, "stored copy of the page") {
		return
	}
	if m := ccWebFetchStoredRe.FindStringSubmatch(head(s.text, 512) + "\x00" + tail(s.text, 1024)); m != nil {
		fd.RefVersion = m[1] + "T" + m[2] + "Z"
	}
}

// ccWebFetch: a second model's digest of the page. The main model gets the
// digest of at most the first 100,000 chars of the page's text (its markdown,
// turned from the HTML for an HTML page) and no notice. Releases with WebFetch
// notes say when they cut, so there an answer without a note covers the page
// (or, with an offset, the rest of it). Before them nothing tells: the only
// size is toolUseResult.bytes, the length of the HTTP body, which for an
// HTML page is not the size of the text the cap applies to — a 350,000-byte
// page may convert to 60,000 chars of text. A body over the cap only makes
// a cut possible, so the kind is unknown; the body's bytes are no size of
// the original either (the text the model's digest was made from), so no
// original, shown range or total is taken from them.
func ccWebFetch(s *scan, fd *finding) bool {
	if s.in.Tool != "WebFetch" {
		return false
	}
	cc := s.claudeResult()
	fd.Strategy = schema.StrategySummary
	if ccFacts(s.in.HarnessVersion).webFetchNotes {
		fd.Kind = schema.KindNone
		if s.req.Offset.N > 0 {
			fd.PartialByRequest = true
			fd.show(s.req.Offset, schema.Unknown, schema.UnitChars, schema.Unknown)
		}
		fd.Detector = "claude_code.webfetch_whole"
		ccStoredCopy(s, fd)
		return true
	}
	switch {
	case !cc.Bytes.Known:
		fd.Kind = schema.KindUnknown
		fd.Detector = "claude_code.webfetch_unknown"
	case cc.Bytes.N > ccWebFetchMaxChars:
		// Perhaps cut, perhaps not: the text may be shorter than its HTML.
		fd.Kind = schema.KindUnknown
		fd.Detector = "claude_code.webfetch_large_body"
	default:
		// Nothing shows a cut: a text that is not HTML has no more chars
		// than bytes, and markdown turned from HTML is shorter than the
		// HTML it drops the tags of. The model read a summary, not the
		// page, but a summary of all of it.
		fd.Kind = schema.KindNone
	}
	return true
}
