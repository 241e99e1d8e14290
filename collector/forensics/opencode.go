package forensics

import (
	"regexp"
	"strings"

	"github.com/ctxaudit/ctxaudit/schema"
)

// OpenCode (transcript-formats.md §7): 2000 lines / 50 KiB; head mode puts
// the notice after the preview, tail mode before it, with a hint naming the
// saved file.
var openCodeCaps = []capFact{
	{unit: schema.UnitLines, n: 2000, reason: "cap_lines"},
	{unit: schema.UnitBytes, n: 50 * 1024, reason: "cap_bytes"},
}

var (
	ocTruncRe  = regexp.MustCompile(`\.\.\.(\d+) (lines|bytes) truncated\.\.\.`)
	ocSavedRe  = regexp.MustCompile(`The tool call succeeded but the output was truncated\. Full output saved to: ([^\n]+)(?:\n(Use [^\n]*))?`)
	ocStreamRe = regexp.MustCompile(`\AThe command output was (\d+) bytes and was truncated \(inline limit: (\d+) bytes\)\.\nFull output saved to: ([^\n]+)`)
)

var openCodeRules = []rule{
	{name: "opencode.stream_truncated", match: ocStream},
	{name: "opencode.truncated", anchor: anchorTruncated, match: ocTruncated},
}

func ocStream(s *scan, fd *finding) bool {
	if !strings.HasPrefix(s.text, "The command output was ") {
		return false
	}
	m := ocStreamRe.FindStringSubmatchIndex(head(s.text, 4096))
	if m == nil {
		return false
	}
	fd.cut(schema.StrategyHead, "cap_bytes", s.text[m[0]:m[1]])
	fd.SavedRef = group(s.text, m, 3)
	fd.NextHint = "Full output saved to: " + fd.SavedRef
	fd.disclose(true, true, true)
	total := atoi(group(s.text, m, 1))
	fd.show(schema.Known(0), atoi(group(s.text, m, 2)), schema.UnitBytes, total)
	fd.claims(schema.UnitBytes, total)
	return true
}

func ocTruncated(s *scan, fd *finding) bool {
	m := s.find(s.text, anchorTruncated, " truncated...", ocTruncRe, 32, 0)
	if m == nil {
		return false
	}
	removed, unitWord := atoi(group(s.text, m, 1)), group(s.text, m, 2)
	strategy := schema.StrategyHead
	if strings.TrimSpace(s.text[:m[0]]) == "" {
		strategy = schema.StrategyTail
	}
	unit, reason := schema.UnitLines, "cap_lines"
	if unitWord == "bytes" {
		unit, reason = schema.UnitBytes, "cap_bytes"
	}
	fd.cut(strategy, reason, s.text[m[0]:m[1]])
	hint := s.find(s.text, anchorTruncated, "The tool call succeeded but the output was truncated.", ocSavedRe, 0, 4096)
	if hint != nil {
		fd.SavedRef = group(s.text, hint, 1)
		fd.NextHint = strings.TrimSpace(s.text[hint[0]:hint[1]])
	}
	fd.disclose(true, false, hint != nil)
	// The kept preview is the text minus the notice and the hint.
	spans := [][2]int{{m[0], m[1]}}
	if hint != nil {
		spans = append(spans, [2]int{hint[0], hint[1]})
	}
	preview := strings.TrimSpace(cutSpans(s.text, spans))
	fd.Shown.Unit = unit
	keptN := schema.KnownInt(len(preview))
	if unit == schema.UnitLines {
		keptN = schema.KnownInt(countLines(preview))
	}
	if strategy == schema.StrategyTail {
		fd.tailKept = keptN
	} else {
		fd.show(schema.Known(0), keptN, unit, schema.Unknown)
		if unit == schema.UnitLines {
			fd.Shown.Start = schema.Known(1)
		}
	}
	fd.claims(unit, addCounts(keptN, removed))
	fd.totalIsOriginal = true
	return true
}

// cutSpans returns s without the given non-overlapping [lo,hi) spans.
func cutSpans(s string, spans [][2]int) string {
	if len(spans) == 2 && spans[0][0] > spans[1][0] {
		spans[0], spans[1] = spans[1], spans[0]
	}
	var b strings.Builder
	prev := 0
	for _, sp := range spans {
		if sp[0] < prev || sp[1] > len(s) || sp[0] > sp[1] {
			continue
		}
		b.WriteString(s[prev:sp[0]])
		prev = sp[1]
	}
	b.WriteString(s[prev:])
	return b.String()
}
