package analysis

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/ctxaudit/ctxaudit/schema"
)

// An absence claim asserts that something does not exist, is not there or
// was not found (docs/design.md §5.3): exactly the kind of answer an incomplete input
// makes wrong. docs/analysis.md gives the rules and their measured precision
// and recall on the labeled corpus in testdata/answers.
//
// Detection works on clauses, in English and Chinese (traditional and
// simplified):
//
//  1. normalize: fenced code blocks, block quotes, inline code and short
//     quotations are masked (what an answer quotes — an error message, a
//     search string — is not what it claims; an inline identifier stays a
//     word, so "there is no `tokensAfter`" is still a claim), ASCII is
//     lower-cased and typographic apostrophes straightened, keeping a map back
//     to the text as written;
//  2. split into sentences and those into clauses; questions are skipped;
//  3. in each clause look for a trigger (absence.rules.go): an existential
//     negation ("there is no", "沒有任何"), a negated finding ("couldn't find",
//     "並未發現", "查無"), a quantifier ("none of", "no … were found", "not a
//     single", "無任何"), a negated presence predicate ("is not defined",
//     "doesn't export", "未定義"), or a missing/lacks predicate; each rule
//     carries its own exclusions (idioms such as "no need", the agent's own
//     actions such as "I didn't change", imperatives, conditionals);
//  4. look in the clause's sentence for a scope phrase naming the part the
//     claim is about ("in the first 2,000 lines", "the preview", "讀到的部分",
//     "前 100 行"); a claim with one is scoped, without one unscoped.
//
// The answer's judgement is its strongest claim: unscoped over scoped over
// none.

// AbsenceMatch is one absence claim.
type AbsenceMatch struct {
	// Absence is AbsenceScoped or AbsenceUnscoped.
	Absence schema.Absence
	// Phrase is the trigger, normalized: "there is no", "couldn't find", "沒有".
	Phrase string
	// Clause is the clause holding it, as the answer wrote it.
	Clause string
	// Sentence is the sentence holding it, as written.
	Sentence string
	// Scope is the scope phrase of a scoped claim, as written.
	Scope string
	// Range is the numeric part of the scope, when it names one.
	Range ScopeRange
}

// ScopeRange is a range a scope phrase names: "the first 2,000 lines" is
// lines 1–2000 (First set), "lines 100–200" is 100–200. Lines count from 1
// and End is inclusive, as people and harnesses number lines; other units
// are counts of the first N (chars 0–N, End exclusive). FromEnd: the last
// End units ("the last 500 lines"), whose place only the output's end fixes.
type ScopeRange struct {
	Known      bool
	Start, End uint64
	Unit       schema.Unit
	FromEnd    bool
}

// JudgeAbsence returns the answer's strongest absence claim: its first
// unscoped claim, else its first scoped one. ok is false when it claims
// nothing is missing.
func JudgeAbsence(text string) (m AbsenceMatch, ok bool) {
	if len(text) > maxClaimInput {
		text = text[:maxClaimInput]
		for len(text) > 0 && !utf8.RuneStart(text[len(text)-1]) {
			text = text[:len(text)-1]
		}
		if r, size := utf8.DecodeLastRuneInString(text); r == utf8.RuneError && size == 1 {
			text = text[:len(text)-1]
		}
	}
	text = strings.ToValidUTF8(text, " ")
	n := normalize(text)
	var scoped AbsenceMatch
	haveScoped := false
	norms := normLists(n.s)
	for _, sent := range n.sentences() {
		if isQuestion(n.s[sent.lo:sent.hi]) || within(norms, sent.lo) {
			continue
		}
		for _, cl := range clauses(n.s, sent) {
			tr, found := findTrigger(n.s, cl, sent)
			if !found {
				continue
			}
			got := AbsenceMatch{
				Absence:  schema.AbsenceUnscoped,
				Phrase:   strings.ToLower(n.orig(tr)),
				Clause:   n.orig(cl),
				Sentence: n.orig(sent),
			}
			if sc, ok := findScope(n.s, sent, tr); ok {
				got.Absence, got.Scope, got.Range = schema.AbsenceScoped, n.orig(sc.span), sc.rng
			}
			if got.Absence == schema.AbsenceUnscoped {
				return got, true
			}
			if !haveScoped {
				scoped, haveScoped = got, true
			}
		}
	}
	return scoped, haveScoped
}

// FindAbsenceClaim returns the answer's strongest absence claim (see JudgeAbsence).
func FindAbsenceClaim(text string) (AbsenceMatch, bool) { return JudgeAbsence(text) }

// AbsenceClaim reports whether text claims, scoped or not, that something
// is missing.
func AbsenceClaim(text string) bool {
	_, ok := JudgeAbsence(text)
	return ok
}

// AbsenceOf is the Absence value for text: none, scoped or unscoped.
func AbsenceOf(text string) schema.Absence {
	if m, ok := JudgeAbsence(text); ok {
		return m.Absence
	}
	return schema.AbsenceNone
}

// maxClaimInput bounds the text examined; an answer's claim is in its first
// few thousand words.
const maxClaimInput = 64 << 10

// span is a byte range [lo, hi) of the normalized text.
type tspan struct{ lo, hi int }

// normText is the normalized text and, for each of its bytes, the offset in
// the original of the rune it came from (plus len(original) at the end).
type normText struct {
	s    string
	at   []int
	text string
}

// orig returns the original text of normalized span sp, trimmed and on one line.
func (n *normText) orig(sp tspan) string {
	s := n.text[n.at[sp.lo]:n.at[sp.hi]]
	return strings.Join(strings.Fields(s), " ")
}

// normalize masks code and quotations, lower-cases ASCII, straightens
// apostrophes and drops markdown emphasis, recording where each byte came from.
func normalize(text string) *normText {
	var b strings.Builder
	b.Grow(len(text))
	at := make([]int, 0, len(text)+1)
	emit := func(c byte, from int) {
		b.WriteByte(c)
		at = append(at, from)
	}
	// mask writes fill for every byte of text[i:j] (each mapped to its rune start).
	mask := func(i, j int, fill byte) {
		start := i
		for k := i; k < j; k++ {
			if utf8.RuneStart(text[k]) {
				start = k
			}
			c := fill
			if fill != '\n' && text[k] == '\n' {
				c = '\n'
			}
			emit(c, start)
		}
	}
	lineStart := true
	for i := 0; i < len(text); {
		if lineStart {
			if j := blockQuoteEnd(text, i); j > i {
				mask(i, j, '\n')
				i = j
				continue
			}
		}
		if strings.HasPrefix(text[i:], "```") || strings.HasPrefix(text[i:], "~~~") {
			fence := text[i : i+3]
			end := strings.Index(text[i+3:], fence)
			j := len(text)
			if end >= 0 {
				j = i + 3 + end + 3
			}
			mask(i, j, '\n')
			i = j
			lineStart = false
			continue
		}
		if q, open, closing := quotedSpan(text[i:]); q > 0 {
			fill := byte('q')
			if text[i] == '`' {
				fill = 'x' // an identifier: stays a word
			}
			emit(' ', i)
			mask(i+open, i+q-closing, fill)
			emit(' ', i+q-closing)
			i += q
			lineStart = false
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == '’' || r == '‘' || r == 'ʼ':
			emit('\'', i)
		case r == '*':
			emit(' ', i)
		case r == '\t' || r == '\f' || r == '\v' || r == '\r':
			// White space other than a line break reads as a space: the
			// rules' cues and idioms are written with spaces.
			emit(' ', i)
		case r >= 'A' && r <= 'Z':
			emit(byte(r)+('a'-'A'), i)
		case r < utf8.RuneSelf:
			emit(byte(r), i)
		default:
			for k := 0; k < size; k++ {
				emit(text[i+k], i)
			}
		}
		lineStart = r == '\n'
		i += size
	}
	at = append(at, len(text))
	return &normText{s: b.String(), at: at, text: text}
}

// blockQuoteEnd: a markdown block-quote line ("> output") at i is quoted
// material; it returns the end of that line, or i.
func blockQuoteEnd(text string, i int) int {
	j := i
	for j < len(text) && (text[j] == ' ' || text[j] == '\t') {
		j++
	}
	if j >= len(text) || text[j] != '>' {
		return i
	}
	if k := strings.IndexByte(text[j:], '\n'); k >= 0 {
		return j + k
	}
	return len(text)
}

// maxQuoted is the longest quoted span masked; a longer one is more likely
// an unbalanced quote than a quotation.
const maxQuoted = 300

// quotedSpan returns the length of a short one-line quoted span at the start
// of s (`…`, "…", “…”, 「…」, 『…』) and of its two quote marks, or 0.
func quotedSpan(s string) (n, open, closing int) {
	for _, q := range [...][2]string{{"`", "`"}, {`"`, `"`}, {"“", "”"}, {"「", "」"}, {"『", "』"}} {
		if !strings.HasPrefix(s, q[0]) {
			continue
		}
		body := s[len(q[0]):]
		end := strings.Index(body, q[1])
		if end <= 0 || end > maxQuoted || strings.Contains(body[:end], "\n") {
			return 0, 0, 0
		}
		return len(q[0]) + end + len(q[1]), len(q[0]), len(q[1])
	}
	return 0, 0, 0
}

// sentences splits the normalized text at sentence ends, keeping each end
// with its sentence so that questions can be recognised. A '.' ends a
// sentence only before white space or the end, so "config.go" stays whole.
func (n *normText) sentences() []tspan {
	s := n.s
	var out []tspan
	start := 0
	flush := func(end int) {
		if strings.TrimSpace(s[start:end]) != "" {
			lo, hi := start, end
			for lo < hi && isSpace(s[lo]) {
				lo++
			}
			for hi > lo && isSpace(s[hi-1]) {
				hi--
			}
			out = append(out, tspan{lo, hi})
		}
		start = end
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		next := i + size
		switch r {
		case '\n', '!', '?', '。', '！', '？':
			flush(next)
		case '.':
			if next >= len(s) || s[next] == ' ' || s[next] == '\n' || s[next] == '\t' {
				flush(next)
			}
		}
		i = next
	}
	flush(len(s))
	return out
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// isQuestion: a sentence ending in a question mark, or in Chinese 嗎/吗/呢.
func isQuestion(s string) bool {
	s = strings.TrimRight(s, " \t\r\n)")
	return strings.HasSuffix(s, "?") || strings.HasSuffix(s, "？") ||
		strings.HasSuffix(s, "嗎") || strings.HasSuffix(s, "吗") || strings.HasSuffix(s, "呢")
}

// normHeading is a line introducing rules or requirements ("Critical rules I
// must follow:", "Requirements:", "規則："): the list under it states norms
// ("No backward compatibility code"), not findings.
var normHeading = regexp.MustCompile(`(?:\b(?:rules?|must|should|guidelines?|requirements?|constraints?|conventions?|principles?|policy|policies|checklist|check\s+list|criteria|definition\s+of\s+done|don'ts|do's|dos\s+and\s+don'ts)\b|規則|规则|規範|规范|原則|原则|守則|守则|必須|必须|要求|約束|约束|約定|约定|清單|清单|檢查項|检查项|標準|标准)[^\n]*[:：]\s*$`)

// listItem: a markdown list line: "- …", "• …", "1. …", "2) …".
var listItem = regexp.MustCompile(`^\s*(?:[-•+]|\d+[.)])\s`)

// normLists returns the spans of list items that follow a norm heading,
// up to the first line that is neither a list item nor blank.
func normLists(s string) []tspan {
	var out []tspan
	inList := false
	for lo := 0; lo < len(s); {
		hi := strings.IndexByte(s[lo:], '\n')
		if hi < 0 {
			hi = len(s)
		} else {
			hi += lo
		}
		line := s[lo:hi]
		switch {
		case normHeading.MatchString(line):
			inList = true
		case inList && listItem.MatchString(line):
			out = append(out, tspan{lo, hi})
		case strings.TrimSpace(line) != "":
			inList = false
		}
		lo = hi + 1
	}
	return out
}

func within(spans []tspan, at int) bool {
	for _, sp := range spans {
		if at >= sp.lo && at < sp.hi {
			return true
		}
	}
	return false
}
