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
// and the notice counts the lines of the remainder.
func ccBashLines(s *scan, fd *finding) bool {
	m := s.find(s.text, anchorTruncated, " lines truncated] ...", ccBashLinesRe, 32, 0)
	if m == nil {
		return false
	}
	removed := atoi(group(s.text, m, 1))
	fd.cut(schema.StrategyHead, "cap_chars", strings.TrimSpace(s.text[m[0]:m[1]]))
	fd.disclose(true, false, false)
	kept := keptLines(s.text, m[0], m[1])
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
func ccWebFetchNote(s *scan, fd *finding) bool {
	t := tail(s.text, 1024)
	if !strings.Contains(t, "[WebFetch note: ") {
		return false
	}
	m := ccWebFetchNoteRe.FindStringSubmatchIndex(t)
	if m == nil {
		return false
	}
	total, from, to := atoi(group(t, m, 1)), atoi(group(t, m, 2)), atoi(group(t, m, 3))
	fd.cut(schema.StrategySummary, "summarised", strings.TrimSpace(t[m[0]:m[1]]))
	fd.NextHint = group(t, m, 5)
	fd.disclose(true, true, true)
	fd.show(from, to, schema.UnitChars, total)
	s.orig.add(rankMarker, schema.Sizes{Chars: total})
	return true
}

// ccWebFetch: the silent case. The main model gets a second model's digest of
// at most the first 100,000 chars of the page and no notice; the byte count
// of the fetched page is only in toolUseResult. Releases with WebFetch notes
// say when they cut, so there an answer without a note covers the page (or,
// with an offset, the rest of it) — whose size in chars is then not known:
// toolUseResult.bytes counts the fetched HTML, not the page text.
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
		return true
	}
	switch {
	case !cc.Bytes.Known:
		fd.Kind = schema.KindUnknown
		fd.Detector = "claude_code.webfetch_unknown"
	case cc.Bytes.N > ccWebFetchMaxChars:
		fd.silentCut(schema.StrategySummary, "summarised")
		fd.show(schema.Known(0), schema.Known(ccWebFetchMaxChars), schema.UnitChars, cc.Bytes)
	default:
		// The digest covers the whole page: nothing was cut, though the
		// model read a summary, not the page.
		fd.Kind = schema.KindNone
		fd.show(schema.Known(0), cc.Bytes, schema.UnitChars, cc.Bytes)
	}
	return true
}
