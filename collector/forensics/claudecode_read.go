package forensics

// Claude Code Read: refusals, partial pages, the default-limit cut.

import (
	"strings"

	"github.com/ctxaudit/ctxaudit/schema"
)

// ccReadRefused: C7/C8/C9, a whole Read refused for its token count or size.
func ccReadRefused(s *scan, fd *finding) bool {
	t := strings.TrimPrefix(s.text, "<tool_use_error>")
	if !strings.HasPrefix(t, "File content (") && !strings.HasPrefix(t, "Notebook content (") {
		return false
	}
	t = head(t, 1024)
	if m := ccReadTokensRe.FindStringSubmatchIndex(t); m != nil {
		fd.cut(schema.StrategyRefused, "cap_tokens", strings.TrimSuffix(t[m[0]:m[1]], "</tool_use_error>"))
		fd.NextHint = strings.TrimSuffix(group(t, m, 3), "</tool_use_error>")
		fd.disclose(true, true, fd.NextHint != "")
		tokens := atoi(group(t, m, 1))
		fd.show(schema.Known(0), schema.Known(0), schema.UnitTokens, tokens)
		fd.claims(schema.UnitTokens, tokens)
		return true
	}
	if m := ccReadSizeRe.FindStringSubmatchIndex(t); m != nil {
		fd.cut(schema.StrategyRefused, "cap_bytes", strings.TrimSuffix(t[m[0]:m[1]], "</tool_use_error>"))
		fd.NextHint = strings.TrimSuffix(group(t, m, 3), "</tool_use_error>")
		fd.disclose(true, true, fd.NextHint != "")
		label := group(t, m, 1)
		size := parseSizeLabel(label)
		fd.show(schema.Known(0), schema.Known(0), schema.UnitBytes, size)
		if strings.HasSuffix(label, " bytes") {
			s.orig.add(rankMarker, schema.Sizes{Bytes: size})
		} else {
			// "444.3KB" is 454,963 bytes give or take 51: a label, not a count.
			s.orig.addApprox(rankMarker, schema.Sizes{Bytes: size})
		}
		return true
	}
	return false
}

// ccPartialView: the Read notice of current builds, which tells all three.
func ccPartialView(s *scan, fd *finding) bool {
	m := s.find(s.text, anchorTruncated, "[Truncated: PARTIAL view", ccPartialViewRe, 0, 4096)
	if m == nil {
		return false
	}
	start, end, total := atoi(group(s.text, m, 2)), atoi(group(s.text, m, 3)), atoi(group(s.text, m, 4))
	fd.cut(schema.StrategyPaginated, "cap_tokens", s.text[m[0]:m[1]])
	fd.NextHint = group(s.text, m, 7)
	fd.SavedRef = ""
	fd.disclose(true, true, true)
	fd.show(start, end, schema.UnitLines, total)
	s.orig.add(rankMarker, schema.Sizes{Lines: total, Tokens: atoi(group(s.text, m, 5))})
	return true
}

// ccReadFile: partial Reads from toolUseResult.file. The call asked for
// limit lines from its offset, or for the rest of the file when it gave no
// limit. Getting that is complete, or a partial view by request when it is
// not the whole file; getting fewer (the default 2000-line limit on a longer
// file) is a silent cut: these builds add no notice.
func ccReadFile(s *scan, fd *finding) bool {
	f := s.claudeResult().File
	if !f.NumLines.Known || !f.TotalLines.Known {
		return false
	}
	start := f.StartLine
	if !start.Known || start.N == 0 {
		start = schema.Known(1)
	}
	got, total := f.NumLines.N, f.TotalLines.N
	end := start.N
	if got > 0 {
		end = start.N + got - 1
	}
	fd.show(start, schema.Known(end), schema.UnitLines, f.TotalLines)
	remaining := uint64(0)
	if total >= start.N {
		remaining = total - start.N + 1
	}
	asked := remaining
	if s.req.Limit.Known && s.req.Limit.N > 0 {
		asked = min(s.req.Limit.N, remaining)
	}
	switch {
	case got < asked:
		fd.silentCut(schema.StrategyHead, "cap_lines")
		s.orig.add(rankMetadata, schema.Sizes{Lines: schema.Known(asked)})
	case start.N > 1 || got < total:
		fd.byRequest()
	default:
		fd.Kind = schema.KindNone
		fd.complete = true
	}
	fd.confirmedBy = schema.SourceHarnessMetadata
	return true
}

// ccReadShape: a Read result without toolUseResult (sub-agent lines of
// 2.1.20+) that shows exactly the default 2000 lines from line 1 has the
// shape of the default-limit cut.
func ccReadShape(s *scan, fd *finding) bool {
	if s.in.Tool != "Read" || len(s.in.ToolUseResult) > 0 || s.req.Limit.Known || s.req.Offset.N > 1 {
		return false
	}
	ms := ccReadLineRe.FindAllStringSubmatchIndex(head(s.text, 64), 1)
	if len(ms) == 0 || group(s.text, ms[0], 1) != "1" {
		return false
	}
	// Find the last numbered line cheaply: scan backwards line by line.
	last := schema.Unknown
	rest := s.text
	for tries := 0; tries < 64 && len(rest) > 0; tries++ {
		i := strings.LastIndexByte(strings.TrimRight(rest, "\n"), '\n')
		line := rest[i+1:]
		if m := ccReadLineRe.FindStringSubmatch(line); m != nil {
			last = atoi(m[1])
			break
		}
		if i < 0 {
			break
		}
		rest = rest[:i]
	}
	if !last.Known || last.N != ccReadDefaultLines {
		return false
	}
	fd.Truncated = true
	fd.Kind = schema.KindSuspected
	fd.Strategy = schema.StrategyHead
	fd.Reason = "cap_lines"
	fd.show(schema.Known(1), last, schema.UnitLines, schema.Unknown)
	return true
}

// ccNotebookOutputs: a Read of a notebook with a cell's outputs left out in
// place, told why and how to get them, not how much they were. The cells
// around it are kept: kept the start when the last notice ends the result,
// both ends otherwise. The outputs' size is not in the transcript (the
// toolUseResult carries the same notice), so the original stays unknown.
func ccNotebookOutputs(s *scan, fd *finding) bool {
	if s.in.Tool != "Read" || !strings.Contains(s.text, "Outputs are too large to include.") {
		return false
	}
	all := ccNotebookOutputsRe.FindAllStringSubmatchIndex(s.text, -1)
	if all == nil {
		return false
	}
	first, last := all[0], all[len(all)-1]
	strategy := schema.StrategyHeadTail
	if strings.TrimSpace(s.text[last[1]:]) == "" {
		strategy = schema.StrategyHead
	}
	fd.cut(strategy, "too_large", s.text[first[0]:first[1]])
	fd.NextHint = s.text[first[2]:first[3]]
	fd.disclose(false, true, true)
	return true
}
