package forensics

// Claude Code Grep and Glob: pagination, elided long lines, file limits.

import (
	"strings"

	"github.com/ctxaudit/ctxaudit/schema"
)

// ccGrepPagination: C12/C13, Grep results cut by head_limit. The default
// limit (250) is a cap; a head_limit the call chose is a page by request.
// Claude Code states no total, so Total stays unknown.
func ccGrepPagination(s *scan, fd *finding) bool {
	info, unit, shownN := "", schema.UnitLines, schema.Unknown
	var marker string
	if strings.HasPrefix(s.text, "Found ") {
		if m := ccGrepFilesRe.FindStringSubmatchIndex(head(s.text, 256)); m != nil && m[4] >= 0 {
			info, unit, shownN = group(s.text, m, 2), schema.UnitFiles, atoi(group(s.text, m, 1))
			marker = strings.TrimSpace(s.text[m[0]:m[1]])
		}
	}
	if info == "" && strings.HasSuffix(strings.TrimSpace(s.text), "]") {
		t := tail(s.text, 512)
		if m := ccGrepPageRe.FindStringSubmatchIndex(t); m != nil {
			info = group(t, m, 1)
			marker = strings.TrimSpace(t[m[0]:m[1]])
			shownN = schema.KnownInt(countLines(s.text[:len(s.text)-len(t)+m[0]]))
		}
	}
	cc := s.claudeResult()
	if info == "" && !cc.AppliedLimit.Known {
		return false
	}
	limit, offset := cc.AppliedLimit, cc.AppliedOffset
	if m := ccLimitRe.FindStringSubmatch(info); m != nil && !limit.Known {
		limit = atoi(m[1])
	}
	if m := ccOffsetRe.FindStringSubmatch(info); m != nil && !offset.Known {
		offset = atoi(m[1])
	}
	offset = offset.Or(schema.Known(0))
	if cc.NumLines.Known && unit == schema.UnitLines {
		shownN = cc.NumLines
	}
	fd.show(offset, addCounts(offset, shownN.Or(limit)), unit, schema.Unknown)
	fd.Marker = marker
	fd.NextHint = marker
	fd.disclose(false, info != "", info != "")
	requested := s.req.HeadLimit.Known || s.req.Offset.N > 0 ||
		(len(s.in.Arguments) == 0 && limit.Known && limit.N != ccGrepDefaultHeadLimit)
	if requested {
		if ccHasOmittedLines(s) {
			return false // the page was asked for; its elided lines decide
		}
		fd.byRequest()
		return true
	}
	if marker == "" {
		fd.silentCut(schema.StrategyPaginated, "pagination")
		return true
	}
	fd.cut(schema.StrategyPaginated, "pagination", marker)
	return true
}

func ccHasOmittedLines(s *scan) bool {
	return s.has(anchorOmitted) && strings.Contains(s.text, "[Omitted long matching line]")
}

// ccOmittedLongLines: C14, ripgrep's --max-columns 500 replaced whole lines.
// The kept output surrounds each gap, the way head_tail keeps around one.
func ccOmittedLongLines(s *scan, fd *finding) bool {
	const lit = "[Omitted long matching line]"
	n := strings.Count(s.text, lit)
	if n == 0 {
		return false
	}
	fd.cut(schema.StrategyHeadTail, "cap_bytes", lit)
	fd.PartialByRequest = false
	fd.disclose(true, true, false)
	return true
}

// ccGlobTruncated: C15, Glob over 100 files.
func ccGlobTruncated(s *scan, fd *finding) bool {
	if !strings.HasSuffix(strings.TrimSpace(s.text), "pattern.)") {
		return false
	}
	t := tail(s.text, 256)
	m := ccGlobTruncRe.FindStringSubmatchIndex(t)
	if m == nil {
		return false
	}
	fd.cut(schema.StrategyHead, "cap_items", strings.TrimSpace(t[m[0]:m[1]]))
	fd.NextHint = group(t, m, 1)
	fd.disclose(false, false, true)
	ccGlobShown(s, fd, s.text[:len(s.text)-len(t)+m[0]])
	return true
}

// ccGlobShown records the files listed: numFiles, or the listed lines.
func ccGlobShown(s *scan, fd *finding, listing string) {
	n := s.claudeResult().NumFiles
	if !n.Known {
		n = schema.KnownInt(countLines(listing))
	}
	fd.show(schema.Known(0), n, schema.UnitFiles, schema.Unknown)
}

// ccGlobMetadata: toolUseResult.truncated without the notice in the text.
func ccGlobMetadata(s *scan, fd *finding) bool {
	cc := s.claudeResult()
	if !cc.Truncated || s.in.Tool != "Glob" {
		return false
	}
	fd.silentCut(schema.StrategyHead, "cap_items")
	ccGlobShown(s, fd, s.text)
	return true
}
