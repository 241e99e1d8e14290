package forensics

import (
	"regexp"
	"strings"

	"github.com/ctxaudit/ctxaudit/schema"
)

// OpenHands (transcript-formats.md §8): observations keep head and tail
// halves; str_replace_editor clips at 16,000 chars with a <NOTE>. Neither
// notice carries counts.
var openHandsCaps = []capFact{
	{unit: schema.UnitChars, n: 16000, reason: "cap_chars"},
}

var (
	ohObsRe     = regexp.MustCompile(`\n\[\.\.\. Observation truncated due to length \.\.\.\]\n`)
	ohClippedRe = regexp.MustCompile(`<response clipped><NOTE>([^\n]*?)</NOTE>`)
)

var openHandsRules = []rule{
	{name: "openhands.observation_truncated", anchor: anchorTruncated, match: ohObservation},
	{name: "openhands.response_clipped", anchor: anchorClipped, match: ohClipped},
}

func ohObservation(s *scan, fd *finding) bool {
	m := s.find(s.text, anchorTruncated, "[... Observation truncated due to length ...]", ohObsRe, 1, 1)
	if m == nil {
		return false
	}
	fd.cut(schema.StrategyHeadTail, "cap_chars", strings.TrimSpace(s.text[m[0]:m[1]]))
	fd.disclose(false, true, false)
	fd.Shown.Unit = schema.UnitChars
	return true
}

func ohClipped(s *scan, fd *finding) bool {
	m := s.find(s.text, anchorClipped, "<response clipped><NOTE>", ohClippedRe, 0, 1024)
	if m == nil {
		return false
	}
	note := group(s.text, m, 1)
	fd.cut(schema.StrategyHead, "cap_chars", s.text[m[0]:m[1]])
	next := strings.Contains(note, "grep") || strings.Contains(note, "ls -la") || strings.Contains(note, "retry")
	if next {
		fd.NextHint = note
	}
	fd.disclose(false, strings.Contains(note, "limit") || strings.Contains(note, "save on context"), next)
	fd.show(schema.Known(0), schema.KnownInt(countRunes(s.text[:m[0]])), schema.UnitChars, schema.Unknown)
	return true
}
