package forensics

import (
	"regexp"
	"strings"

	"github.com/ctxaudit/ctxaudit/schema"
)

// scan is the per-call working state shared by the rules: the text, its
// sizes, the parsed request and the lazily decoded metadata. It lives for
// one Detect call; nothing in it is shared between calls (a state is reused
// for a later call only once reset: see detection).
type scan struct {
	in *Input
	// text is what the model saw; bodyText is text without a harness wrapper
	// that is not tool output (Codex's Exit code/Wall time/Output: header).
	text, bodyText string
	// context and body are their sizes; contextKnown is false when the source
	// did not record the text and no attribute gave its size.
	context, body schema.Sizes
	contextKnown  bool
	req           request
	orig          originals
	// origText is the complete original when a source carried it verbatim.
	origText *string

	anchorsDone anchor
	anchorHits  [anchorCount][]int
	codex       codexWrapper
	// cc and pi are the harnesses' result metadata, decoded on first use
	// (ccDone, piDone) into the scan itself: the scan is pooled, so a
	// decoded call allocates nothing of its own.
	cc     ccResult
	ccDone bool
	pi     piDetails
	piDone bool
}

// reset empties s for in (nil: for no call, releasing what the last one
// referred to). The anchor hits and the original-size candidates keep
// their arrays, which the next call fills again (they hold no pointer
// into a call's text).
func (s *scan) reset(in *Input) {
	hits, candidates := s.anchorHits, s.orig.list
	*s = scan{in: in}
	for i := range hits {
		s.anchorHits[i] = hits[i][:0]
	}
	s.orig.list = candidates[:0]
}

// start sets s up for one call on in.
func (s *scan) start(in *Input) *scan {
	s.reset(in)
	s.text, s.req = in.Context, parseRequest(in.Arguments)
	if s.text == "" {
		s.text = resultAttribute(in.Attributes)
	}
	// With blocks besides text the rules still read the text (a notice is
	// text), but its sizes are not what entered the context: it is not
	// measured, and nothing is compared to it.
	switch {
	case in.NonText != NonTextNone:
		s.contextKnown = false
	case s.text != "" || !in.ContextUnavailable:
		s.contextKnown = true
		s.context = Measure(s.text)
	default:
		s.context = contextAttributes(in.Attributes)
		s.contextKnown = s.context.Bytes.Known || s.context.Chars.Known
	}
	s.bodyText, s.body = s.text, s.context
	if in.Harness == schema.HarnessCodex || in.Harness == schema.HarnessGeneric || in.Harness == "" {
		if w, ok := parseCodexWrapper(s.text); ok {
			s.codex = w
			s.bodyText = w.body
			if in.NonText == NonTextNone {
				s.body = bodySizes(s.text, w.body, s.context)
			}
		}
	}
	if in.OriginalText != nil {
		if verbatimCapped(in) {
			// The copy the harness kept stops at its cap: at least this much.
			sz := Measure(*in.OriginalText)
			sz.Tokens = schema.Unknown
			s.orig.addAtLeast(rankVerbatim, sz)
		} else {
			s.origText = in.OriginalText
			s.orig.addText(rankVerbatim, *in.OriginalText)
		}
	}
	collectAttributeOriginals(s)
	collectMetadataOriginals(s)
	return s
}

// verbatimCapped reports whether the verbatim original a source carried is
// as large as the copy its harness keeps can be, and so perhaps cut at that
// cap: Codex's exec_command_end output at 1 MiB or more.
func verbatimCapped(in *Input) bool {
	return in.Harness == schema.HarnessCodex && len(*in.OriginalText) >= codexExecOutputMaxBytes
}

// bodySizes measures body, reusing the context's sizes when body is a
// suffix of text after a header ending in a newline: then only the header
// needs counting, not the whole output a second time.
func bodySizes(text, body string, context schema.Sizes) schema.Sizes {
	n := len(text) - len(body)
	if n <= 0 || text[n:] != body || text[n-1] != '\n' || !context.Bytes.Known {
		return Measure(body)
	}
	hdr := text[:n]
	sz := schema.Sizes{
		Bytes: schema.Known(uint64(len(body))),
		Chars: subCount(context.Chars, schema.KnownInt(countRunes(hdr))),
		Lines: subCount(context.Lines, schema.KnownInt(strings.Count(hdr, "\n"))),
	}
	sz.Tokens = schema.Known(estimateTokens(sz.Bytes.N))
	return sz
}

// readSaved measures the saved full output a notice named, when the caller
// can read it: the exact original (this is how a <persisted-output> preview
// gets its original in bytes, not the UTF-16 estimate of its size label) —
// unless the file is only the output's first part: then a lower bound, or
// nothing where the harness gave the whole output's exact size.
func (s *scan) readSaved(fd *finding) {
	if fd.SavedRef == "" || s.in.ReadSaved == nil {
		return
	}
	b, err := s.in.ReadSaved(fd.SavedRef)
	if err != nil || b == nil {
		return
	}
	if s.ccSavedShort(len(b)) {
		// Claude Code 2.1.88 truncates a Bash output over 64 MiB before it
		// saves it, after it took persistedOutputSize, and says nothing of
		// it: the file is the output's first part. persistedOutputSize is
		// the exact size; the part measures nothing better.
		fd.savedIsPrefix = true
		return
	}
	text := string(b)
	if fd.savedIsPrefix {
		sz := Measure(text)
		sz.Tokens = schema.Unknown
		s.orig.addAtLeast(rankSavedFile, sz)
		return // not the original: no verbatim text to compare against
	}
	s.origText = &text
	s.orig.addText(rankSavedFile, text)
}

// ccSavedShort reports whether a saved file of n bytes is shorter than the
// output Claude Code's toolUseResult.persistedOutputSize says was saved.
func (s *scan) ccSavedShort(n int) bool {
	if s.in.Harness != schema.HarnessClaudeCode || len(s.in.ToolUseResult) == 0 {
		return false
	}
	p := s.claudeResult().PersistedOutputSize
	return p.Known && uint64(n) < p.N
}

// anchor is a bit set of cheap literal pre-checks. A rule that needs a notice
// somewhere inside the text (not at its start or end) names the anchor its
// notice contains. Each anchor's occurrences are collected once per call,
// with one vectorised strings.Index pass, and only if some rule asks for
// it; rules then look for their literal only at those positions. Text
// without notices therefore costs a few passes in total, not one per rule,
// and no regexp ever runs over the whole text.
type anchor uint8

const (
	// anchorTruncated: "truncated", "Truncated".
	anchorTruncated anchor = 1 << iota
	// anchorTRUNCATED: "TRUNCATED".
	anchorTRUNCATED
	// anchorOmitted: "omitted", "Omitted".
	anchorOmitted
	// anchorOMITTED: "OMITTED".
	anchorOMITTED
	// anchorClipped: OpenHands' "<response clipped>".
	anchorClipped
	anchorCount = 5
)

// anchorLiterals[i] is the literal of anchor 1<<i. Rarer leading bytes make
// strings.Index faster: "uncat" hops on 'u', not on the far commoner 't'.
var anchorLiterals = [anchorCount]string{"uncat", "UNCAT", "mitted", "MITTED", "clipped>"}

// maxAnchorHits bounds the positions kept per anchor, so adversarial text
// repeating a literal a million times costs bounded time. Real outputs
// carry a notice literal a handful of times (a Grep page at most a few
// hundred "[Omitted long matching line]").
const maxAnchorHits = 4096

// has reports whether every anchor in want occurs in the text.
func (s *scan) has(want anchor) bool {
	for i := range anchorCount {
		if bit := anchor(1) << i; want&bit != 0 && len(s.hits(bit)) == 0 {
			return false
		}
	}
	return true
}

// hits returns the positions of one anchor's literal in s.text.
func (s *scan) hits(bit anchor) []int {
	i := 0
	for anchor(1)<<i != bit {
		i++
		if i >= anchorCount {
			return nil
		}
	}
	if s.anchorsDone&bit == 0 {
		s.anchorsDone |= bit
		lit := anchorLiterals[i]
		for from := 0; len(s.anchorHits[i]) < maxAnchorHits; {
			j := strings.Index(s.text[from:], lit)
			if j < 0 {
				break
			}
			s.anchorHits[i] = append(s.anchorHits[i], from+j)
			from += j + len(lit)
		}
	}
	return s.anchorHits[i]
}

// find locates the first match of re that contains lit in on, which is
// s.text or a suffix of it (the Codex body). lit must contain the literal of
// anchor bit; re runs only on a window of before/after bytes around each
// occurrence of lit. It returns submatch indices relative to on, or nil.
func (s *scan) find(on string, bit anchor, lit string, re *regexp.Regexp, before, after int) []int {
	off := len(s.text) - len(on)
	if off < 0 || s.text[off:] != on {
		// on is not a suffix (a decoded JSON body): positions do not carry over.
		return locate(on, lit, re, before, after)
	}
	var k int
	for i := range anchorCount {
		if anchor(1)<<i == bit {
			k = strings.Index(lit, anchorLiterals[i])
		}
	}
	if k < 0 {
		return locate(on, lit, re, before, after) // a rule/anchor mismatch: stay correct
	}
	for _, p := range s.hits(bit) {
		i := p - k - off
		if i < 0 || i+len(lit) > len(on) || on[i:i+len(lit)] != lit {
			continue
		}
		lo := max(0, i-before)
		hi := min(len(on), i+len(lit)+after)
		if m := re.FindStringSubmatchIndex(on[lo:hi]); m != nil {
			for j := range m {
				if m[j] >= 0 {
					m[j] += lo
				}
			}
			return m
		}
	}
	return nil
}

// locate finds the first match of re that contains lit by scanning for lit;
// find is the faster form for literals that contain an anchor.
func locate(s, lit string, re *regexp.Regexp, before, after int) []int {
	from := 0
	for tries := 0; tries < maxAnchorHits && from <= len(s); tries++ {
		i := strings.Index(s[from:], lit)
		if i < 0 {
			return nil
		}
		i += from
		lo := max(0, i-before)
		hi := min(len(s), i+len(lit)+after)
		if m := re.FindStringSubmatchIndex(s[lo:hi]); m != nil {
			for k := range m {
				if m[k] >= 0 {
					m[k] += lo
				}
			}
			return m
		}
		from = i + 1
	}
	return nil
}

// group returns submatch n of a locate/FindStringSubmatchIndex result.
func group(s string, m []int, n int) string {
	if 2*n+1 >= len(m) || m[2*n] < 0 {
		return ""
	}
	return s[m[2*n]:m[2*n+1]]
}

// head and tail return at most n bytes from either end of s: prefix- and
// suffix-anchored notices are matched there, so their cost does not grow
// with the output.
func head(s string, n int) string { return s[:min(n, len(s))] }
func tail(s string, n int) string { return s[len(s)-min(n, len(s)):] }

// keptChars measures s without the marker span [lo,hi): the text the
// harness kept around its notice.
func keptChars(s string, lo, hi int) schema.Count {
	if lo < 0 || hi > len(s) || lo > hi {
		return schema.Unknown
	}
	return schema.KnownInt(countRunes(s[:lo]) + countRunes(s[hi:]))
}
