package analysis

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// An absence claim asserts that something does not exist or was not found
// (docs/design.md §5.3): exactly the kind of answer an incomplete input makes wrong.
// Detection is phrase-based, in English and Chinese, with cheap guards for
// the common non-claims: questions, conditionals ("if the key is not found"),
// idioms ("there is no need"), and quoted error text ("`No such file`").

// englishPhrase is one English phrasing: a literal keyword the phrase starts
// with (found by a plain string search, so most text never meets a regexp)
// and an anchored pattern checked on a short window from there. prev, when
// set, says which word must come just before ("is not documented" but not
// "I did not documented"); for "n't" keywords the word is the one it ends
// ("doesn" in "doesn't"). All text is lower-cased with straight apostrophes.
type englishPhrase struct {
	lead string
	re   *regexp.Regexp
	prev func(word string) bool
}

var (
	notFoundTail = `(?:\w+\s+)?(?:be\s+|been\s+)?(?:found|exists?|find|locate)\b`
	isMissing    = `(?:\w+\s+)?(?:mentioned|documented|defined|listed|present|included|specified|declared|configured|supported|available)\b`
	doesLack     = `(?:\w+\s+)?(?:mention|contain|include|define|have|support|provide|expose|offer|list|document)\b`
	resultNone   = regexp.MustCompile(`^(?:found|find|returned|returns|shows?|showed|yields?|yielded|gave|gives)\s+(?:no|nothing|zero|0)\b`)
)

var englishPhrases = []englishPhrase{
	{lead: "there", re: regexp.MustCompile(`^there(?:(?:\s+(?:is|are|was|were)|'s|'re)\s+(?:no|not\s+any|nothing)|\s+(?:isn't|aren't|wasn't|weren't))\b`)},
	{lead: "no", re: regexp.MustCompile(`^no\s+(?:such|longer\s+exists?|mention|reference|references|trace|sign|evidence|record|definition|documentation|results?|match|matches|occurrences?|instances?|hits|entries|entry)\b`)},
	{lead: "not", re: regexp.MustCompile(`^not\s+` + notFoundTail)},
	{lead: "not", re: regexp.MustCompile(`^not\s+(?:mentioned|documented|defined|listed|present)\s+(?:in|anywhere)\b`)},
	{lead: "not", re: regexp.MustCompile(`^not\s+` + isMissing), prev: isBe},
	{lead: "not", re: regexp.MustCompile(`^not\s+` + doesLack), prev: isDo},
	{lead: "n't", re: regexp.MustCompile(`^n't\s+` + notFoundTail)},
	{lead: "n't", re: regexp.MustCompile(`^n't\s+` + isMissing), prev: isBe},
	{lead: "n't", re: regexp.MustCompile(`^n't\s+` + doesLack), prev: isDo},
	{lead: "never", re: regexp.MustCompile(`^never\s+(?:been\s+)?found\b`)},
	{lead: "cannot", re: regexp.MustCompile(`^cannot\s+(?:\w+\s+)?(?:find|locate)\b`)},
	{lead: "unable", re: regexp.MustCompile(`^unable\s+to\s+(?:\w+\s+)?(?:find|locate)\b`)},
	{lead: "failed", re: regexp.MustCompile(`^failed\s+to\s+(?:\w+\s+)?(?:find|locate)\b`)},
	{lead: "non", re: regexp.MustCompile(`^non-?existent\b`)},
	{lead: "nothing", re: regexp.MustCompile(`^nothing\s+(?:matches|matched|found|about|related)\b`)},
	{lead: "found", re: resultNone}, {lead: "find", re: resultNone}, {lead: "return", re: resultNone},
	{lead: "show", re: resultNone}, {lead: "yield", re: resultNone}, {lead: "gave", re: resultNone},
	{lead: "give", re: resultNone},
}

// isBe: the word before "not"/"n't" is a form of "to be" ("is", "isn",
// "it's", "they're").
func isBe(w string) bool {
	switch w {
	case "is", "are", "was", "were", "isn", "aren", "wasn", "weren", "be", "been":
		return true
	}
	return strings.HasSuffix(w, "'s") || strings.HasSuffix(w, "'re")
}

// isDo: the word before "not"/"n't" is a form of "to do".
func isDo(w string) bool {
	switch w {
	case "does", "do", "did", "doesn", "don", "didn":
		return true
	}
	return false
}

// auxiliaries start the reported phrase when they precede "not": "was not
// found" reads better than "not found".
func isAuxiliary(w string) bool {
	switch w {
	case "could", "can", "would", "should", "will", "has", "have", "had", "might", "may", "must":
		return true
	}
	return isBe(w) || isDo(w)
}

// englishWindow is how much text after a keyword a phrase may span.
const englishWindow = 96

// idiomsAfter follow an English match and turn it into a non-claim:
// "there is no need", "there is no doubt".
var idiomsAfter = regexp.MustCompile(`^\s*(?:need|doubt|harm|problem|rush|hurry|point|guarantee|way\s+around|question\s+that)\b`)

// conditionals before a match in the same clause make it hypothetical: "if
// the key is not found, …", "如果没有找到…".
var conditionals = regexp.MustCompile(`(?:\b(?:if|unless|whether|in\s+case|even\s+if)\b|如果|假如|倘若|要是|若是|是否|萬一|万一)`)

// chineseAbsence are the Chinese phrasings, traditional and simplified.
var chineseAbsence = []string{
	"沒有", "没有", "不存在", "找不到", "找不着", "找不著", "未找到", "沒找到", "没找到",
	"查無", "查无", "並無", "并无", "無此", "无此", "未提及", "未提到", "未發現", "未发现",
	"沒提到", "没提到", "不包含", "未定義", "未定义",
}

// chineseNonClaims are 沒有/没有 idioms that claim no absence: "no problem",
// "no need", "doesn't matter", "whether there is", and "did not <verb>"
// about the agent's own actions.
var chineseNonClaims = []string{
	"沒有問題", "没有问题", "沒有必要", "没有必要", "沒有關係", "没有关系", "有沒有", "有没有",
	"沒有修改", "没有修改", "沒有改動", "没有改动", "沒有更改", "没有更改", "沒有運行", "没有运行",
	"沒有執行", "没有执行", "沒有提交", "没有提交", "沒有刪除", "没有删除",
}

// AbsenceMatch is where an absence claim was found.
type AbsenceMatch struct {
	// Phrase is the matched wording, e.g. "there is no" or "找不到".
	Phrase string
	// Sentence is the sentence holding it, trimmed, as the answer wrote it
	// minus code spans and quoted text.
	Sentence string
}

// AbsenceClaim reports whether text asserts that something does not exist or
// was not found.
func AbsenceClaim(text string) bool {
	_, ok := FindAbsenceClaim(text)
	return ok
}

// maxClaimInput bounds the text examined; an answer's claim is in its first
// few thousand words.
const maxClaimInput = 64 << 10

// FindAbsenceClaim returns the first absence claim in text.
func FindAbsenceClaim(text string) (AbsenceMatch, bool) {
	if len(text) > maxClaimInput {
		text = text[:maxClaimInput]
	}
	text = stripQuoted(strings.ToValidUTF8(text, " "))
	for _, sent := range sentences(text) {
		if isQuestion(sent) {
			continue
		}
		low := normalizeClaimText(sent)
		if m, ok := findEnglish(low); ok {
			return AbsenceMatch{Phrase: m, Sentence: strings.TrimSpace(sent)}, true
		}
		if m, ok := findChinese(low); ok {
			return AbsenceMatch{Phrase: m, Sentence: strings.TrimSpace(sent)}, true
		}
	}
	return AbsenceMatch{}, false
}

func findEnglish(s string) (string, bool) {
	best, bestAt := "", len(s)
	for _, ph := range englishPhrases {
		for from := 0; from < bestAt; {
			k := strings.Index(s[from:], ph.lead)
			if k < 0 {
				break
			}
			at := from + k
			from = at + len(ph.lead)
			if at >= bestAt {
				break
			}
			phrase, start, ok := matchEnglish(s, at, ph)
			if ok && start < bestAt {
				best, bestAt = phrase, start
			}
		}
	}
	return best, best != ""
}

// matchEnglish checks phrase ph at its keyword position at, returning the
// reported phrase and where it starts.
func matchEnglish(s string, at int, ph englishPhrase) (string, int, bool) {
	contraction := ph.lead == "n't"
	if !contraction && at > 0 && isWordByte(s[at-1]) {
		return "", 0, false // inside a word: "another", "notfound"
	}
	loc := ph.re.FindStringIndex(s[at:min(len(s), at+englishWindow)])
	if loc == nil {
		return "", 0, false
	}
	end := at + loc[1]
	prev, prevStart := wordBefore(s, at, contraction)
	if ph.prev != nil && !ph.prev(prev) {
		return "", 0, false
	}
	start := at
	if contraction || isAuxiliary(prev) {
		start = prevStart
	}
	if prev == "404" {
		return "", 0, false // "404 not found" is a status, not a claim
	}
	if idiomsAfter.MatchString(s[end:min(len(s), end+40)]) || conditionals.MatchString(clauseBefore(s, start)) {
		return "", 0, false
	}
	return strings.Join(strings.Fields(s[start:end]), " "), start, true
}

// wordBefore returns the word ending just before position at (for a
// contraction, the word "n't" is glued to) and where it starts.
func wordBefore(s string, at int, glued bool) (string, int) {
	end := at
	if !glued {
		for end > 0 && (s[end-1] == ' ' || s[end-1] == '\t') {
			end--
		}
	}
	start := end
	for start > 0 && (isWordByte(s[start-1]) || s[start-1] == '\'') {
		start--
	}
	return s[start:end], start
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

func findChinese(s string) (string, bool) {
	for _, phrase := range chineseAbsence {
		for from := 0; from < len(s); {
			k := strings.Index(s[from:], phrase)
			if k < 0 {
				break
			}
			at := from + k
			from = at + len(phrase)
			if chineseNonClaim(s, at) || conditionals.MatchString(clauseBefore(s, at)) {
				continue
			}
			return phrase, true
		}
	}
	return "", false
}

// chineseNonClaim reports whether an idiom covers position at of s.
func chineseNonClaim(s string, at int) bool {
	for _, idiom := range chineseNonClaims {
		// The idiom may start up to one character before the match (有沒有).
		for _, start := range [...]int{at, at - len("有")} {
			if start >= 0 && strings.HasPrefix(s[start:], idiom) {
				return true
			}
		}
	}
	return false
}

// maxClauseLookback bounds how far back a clause is examined, which keeps
// detection linear on long unpunctuated text; a conditional that governs a
// phrase sits within a few words of it.
const maxClauseLookback = 160

// clauseBefore is the text from the start of the clause holding position at
// up to at, at most maxClauseLookback bytes.
func clauseBefore(s string, at int) string {
	from := max(0, at-maxClauseLookback)
	for from > 0 && from < at && !utf8.RuneStart(s[from]) {
		from++
	}
	s = s[from:at]
	if start := strings.LastIndexAny(s, ",;:，、；："); start >= 0 {
		return s[start:]
	}
	return s
}

// apostrophes straightens typographic apostrophes.
var apostrophes = strings.NewReplacer("’", "'", "‘", "'")

// normalizeClaimText lower-cases and straightens apostrophes.
func normalizeClaimText(s string) string {
	return apostrophes.Replace(strings.ToLower(s))
}

// sentences splits text at sentence ends, keeping each end with its sentence
// so that questions can be recognised. A '.' ends a sentence only before
// white space or the end, so "config.go" stays whole.
func sentences(text string) []string {
	var out []string
	start := 0
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		next := i + size
		end := false
		switch r {
		case '\n', '!', '?', '。', '！', '？':
			end = true
		case '.':
			end = next >= len(text) || text[next] == ' ' || text[next] == '\n' || text[next] == '\t'
		}
		if end {
			if s := text[start:next]; strings.TrimSpace(s) != "" {
				out = append(out, s)
			}
			start = next
		}
		i = next
	}
	if s := text[start:]; strings.TrimSpace(s) != "" {
		out = append(out, s)
	}
	return out
}

// isQuestion: a sentence ending in a question mark, or in Chinese 嗎/吗.
func isQuestion(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasSuffix(s, "?") || strings.HasSuffix(s, "？") ||
		strings.HasSuffix(s, "嗎") || strings.HasSuffix(s, "吗")
}

// maxQuoted is the longest quoted or code span removed; a longer one is
// more likely an unbalanced quote than a quotation.
const maxQuoted = 300

// stripQuoted blanks out fenced code blocks, inline code spans and double-
// quoted text: what an answer quotes (an error message, a search string) is
// not what it claims. Blanked text becomes a single space.
func stripQuoted(s string) string {
	if !strings.ContainsAny(s, "`\"“「") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], "```") {
			end := strings.Index(s[i+3:], "```")
			if end < 0 {
				b.WriteByte(' ')
				break
			}
			b.WriteByte(' ')
			i += 3 + end + 3
			continue
		}
		if skip := quotedSpan(s[i:]); skip > 0 {
			b.WriteByte(' ')
			i += skip
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// quotedSpan returns the length of a short quoted span at the start of s
// (`…`, "…", “…”, 「…」), or 0.
func quotedSpan(s string) int {
	for _, q := range [...][2]string{{"`", "`"}, {`"`, `"`}, {"“", "”"}, {"「", "」"}} {
		if !strings.HasPrefix(s, q[0]) {
			continue
		}
		body := s[len(q[0]):]
		end := strings.Index(body, q[1])
		if end < 0 || end > maxQuoted || strings.Contains(body[:end], "\n") {
			return 0
		}
		return len(q[0]) + end + len(q[1])
	}
	return 0
}
