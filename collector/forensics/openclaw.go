package forensics

import (
	"regexp"
	"strings"

	"github.com/ctxaudit/ctxaudit/schema"
)

// OpenClaw (transcript-formats.md §9), built on pi: live results over 16,000
// chars keep head and tail under a header that states the original size in
// chars and UTF-8 bytes and a reference to the full output.
var openClawCaps = []capFact{
	{unit: schema.UnitChars, n: 16000, reason: "cap_chars"},
}

var (
	oclSizeRe    = regexp.MustCompile(`Original size: (\d+) chars, (\d+) UTF-8 bytes`)
	oclRefRe     = regexp.MustCompile(`Full output reference: ([^\n]+)`)
	oclMiddleRe  = regexp.MustCompile(`--- middle omitted: (\d+) chars ---`)
	oclWarnMidRe = regexp.MustCompile(`\n\n⚠️ \[\.\.\. middle content omitted — showing head and tail \.\.\.\]\n\n`)
)

var openClawRules = []rule{
	{name: "openclaw.oversized_header", anchor: anchorTruncated, match: oclHeader},
	{name: "openclaw.middle_omitted", anchor: anchorOmitted, match: oclMiddle},
}

func oclHeader(s *scan, fd *finding) bool {
	const lit = "OpenClaw truncated an oversized tool result before adding it to live session context."
	i := strings.Index(s.text, lit)
	if i < 0 {
		return false
	}
	block := s.text[i:min(len(s.text), i+4096)]
	if end := strings.Index(block, "\n\n"); end >= 0 {
		block = block[:end]
	}
	fd.cut(schema.StrategyHeadTail, "cap_chars", block)
	sm := oclSizeRe.FindStringSubmatch(block)
	if sm != nil {
		s.orig.add(rankMarker, schema.Sizes{Chars: atoi(sm[1]), Bytes: atoi(sm[2])})
	}
	if rm := oclRefRe.FindStringSubmatch(block); rm != nil {
		fd.SavedRef = strings.TrimSpace(rm[1])
		fd.NextHint = "Full output reference: " + fd.SavedRef
	}
	fd.disclose(sm != nil, strings.Contains(block, "budget"), fd.SavedRef != "")
	fd.Shown.Unit = schema.UnitChars
	fd.totalIsOriginal = true
	return true
}

func oclMiddle(s *scan, fd *finding) bool {
	if m := s.find(s.text, anchorOmitted, "--- middle omitted: ", oclMiddleRe, 0, 32); m != nil {
		fd.cut(schema.StrategyHeadTail, "cap_chars", s.text[m[0]:m[1]])
		fd.disclose(true, false, false)
		fd.Shown.Unit = schema.UnitChars
		fd.totalIsOriginal = true
		return true
	}
	if m := s.find(s.text, anchorOmitted, "middle content omitted", oclWarnMidRe, 16, 48); m != nil {
		fd.cut(schema.StrategyHeadTail, "cap_chars", strings.TrimSpace(s.text[m[0]:m[1]]))
		fd.disclose(false, false, false)
		fd.Shown.Unit = schema.UnitChars
		return true
	}
	return false
}
