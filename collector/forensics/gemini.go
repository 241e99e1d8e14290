package forensics

import (
	"regexp"
	"strings"

	"github.com/ctxaudit/ctxaudit/schema"
)

// Gemini CLI (transcript-formats.md §6): tool output over 40,000 chars keeps
// the first 20 % and last 80 % and saves the rest; numbers are
// toLocaleString'd (commas). read_file pages by lines.
var geminiCaps = []capFact{
	{unit: schema.UnitChars, n: 40000, reason: "cap_chars"},
}

var (
	gemToolHdrRe  = regexp.MustCompile(`\AOutput too large\. Showing first ([\d,]+) and last ([\d,]+) characters\. For full output see: ([^\n]+)\n`)
	gemOmittedRe  = regexp.MustCompile(`\n\n\.\.\. \[([\d,]+) characters omitted\] \.\.\.\n\n`)
	gemReadRe     = regexp.MustCompile(`IMPORTANT: The file content has been truncated\.\nStatus: Showing lines (\d+)-(\d+) of (\d+) total lines\.(?:\n(Action: [^\n]*))?`)
	gemMaskedRe   = regexp.MustCompile(`\n\nOutput too large\. Full output available at: ([^\n]+)\n</tool_output_masked>\s*\z`)
	gemLinesOmRe  = regexp.MustCompile(`\.\.\. \[(\d+) lines omitted\] \.\.\.`)
	gemOmittedUpR = regexp.MustCompile(`\[\.\.\. OMITTED (\d+) chars \.\.\.\]`)
)

var geminiRules = []rule{
	{name: "gemini_cli.output_too_large", match: gemToolOutput},
	{name: "gemini_cli.read_file_truncated", anchor: anchorTruncated, match: gemReadFile},
	{name: "gemini_cli.output_masked", match: gemMasked},
	{name: "gemini_cli.omitted_chars", anchor: anchorOMITTED, match: gemOmittedUpper},
}

func gemToolOutput(s *scan, fd *finding) bool {
	if !strings.HasPrefix(s.text, "Output too large. Showing first ") {
		return false
	}
	m := gemToolHdrRe.FindStringSubmatchIndex(head(s.text, 4096))
	if m == nil {
		return false
	}
	fd.cut(schema.StrategyHeadTail, "cap_chars", strings.TrimSpace(s.text[m[0]:m[1]]))
	fd.SavedRef = group(s.text, m, 3)
	fd.NextHint = "For full output see: " + fd.SavedRef
	fd.disclose(true, true, true)
	fd.Shown.Unit = schema.UnitChars
	headN, tailN := atoi(group(s.text, m, 1)), atoi(group(s.text, m, 2))
	if om := s.find(s.text, anchorOmitted, " characters omitted] ...", gemOmittedRe, 32, 4); om != nil {
		fd.claims(schema.UnitChars, addCounts(addCounts(headN, tailN), atoi(group(s.text, om, 1))))
		fd.headKept, fd.tailKept2 = headN, tailN // the header states both
	}
	fd.totalIsOriginal = true
	return true
}

func gemReadFile(s *scan, fd *finding) bool {
	m := s.find(s.text, anchorTruncated, "IMPORTANT: The file content has been truncated.", gemReadRe, 0, 512)
	if m == nil {
		return false
	}
	start, end, total := atoi(group(s.text, m, 1)), atoi(group(s.text, m, 2)), atoi(group(s.text, m, 3))
	fd.Marker = s.text[m[0]:m[1]]
	fd.NextHint = group(s.text, m, 4)
	fd.disclose(true, false, fd.NextHint != "")
	fd.show(start, end, schema.UnitLines, total)
	if (s.req.StartLine.Known || s.req.EndLine.Known || s.req.Offset.Known || s.req.Limit.Known) && gemGotAsked(s, start, end) {
		fd.byRequest()
		return true
	}
	fd.cut(schema.StrategyPaginated, "cap_lines", fd.Marker)
	fd.claims(schema.UnitLines, total)
	return true
}

// gemGotAsked: the lines shown cover what start_line/end_line (or
// offset/limit) asked for.
func gemGotAsked(s *scan, start, end schema.Count) bool {
	if !start.Known || !end.Known || end.N < start.N {
		return false
	}
	got := end.N - start.N + 1
	switch {
	case s.req.EndLine.Known && s.req.StartLine.Known && s.req.EndLine.N >= s.req.StartLine.N:
		return got >= s.req.EndLine.N-s.req.StartLine.N+1
	case s.req.Limit.Known:
		return got >= s.req.Limit.N
	}
	return false
}

func gemMasked(s *scan, fd *finding) bool {
	if !strings.HasPrefix(s.text, "<tool_output_masked>") {
		return false
	}
	t := tail(s.text, 4096)
	m := gemMaskedRe.FindStringSubmatchIndex(t)
	if m == nil {
		return false
	}
	fd.cut(schema.StrategyHeadTail, "too_large", strings.TrimSpace(t[m[0]:m[1]]))
	fd.SavedRef = group(t, m, 1)
	fd.NextHint = "Full output available at: " + fd.SavedRef
	fd.disclose(false, true, true)
	if lm := gemLinesOmRe.FindStringSubmatchIndex(s.text); lm != nil {
		fd.disclose(true, true, true)
		fd.Shown.Unit = schema.UnitLines
		// The preview sits between the tags; the marker adds no lines of its own.
		inner := strings.TrimSuffix(strings.TrimPrefix(s.text[:len(s.text)-len(t)+m[0]], "<tool_output_masked>\n"), "\n")
		fd.claims(schema.UnitLines, addCounts(schema.KnownInt(countLines(inner)-1), atoi(group(s.text, lm, 1))))
		fd.totalIsOriginal = true
	}
	return true
}

func gemOmittedUpper(s *scan, fd *finding) bool {
	m := s.find(s.text, anchorOMITTED, "[... OMITTED ", gemOmittedUpR, 0, 48)
	if m == nil {
		return false
	}
	fd.cut(schema.StrategyHeadTail, "cap_chars", s.text[m[0]:m[1]])
	fd.disclose(true, false, false)
	fd.Shown.Unit = schema.UnitChars
	fd.claims(schema.UnitChars, addCounts(keptChars(s.text, m[0], m[1]), atoi(group(s.text, m, 1))))
	fd.keepsAround(s.text, m[0], m[1], schema.UnitChars)
	fd.totalIsOriginal = true
	return true
}
