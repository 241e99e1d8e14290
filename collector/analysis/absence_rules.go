package analysis

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/ctxaudit/ctxaudit/schema"
)

// The rules of absence detection. Patterns see normalized text (ASCII
// lower-cased, apostrophes straight, code masked as x…, quotations as q…).

// clauses splits sentence sent of s at clause boundaries: ; : , (not between
// digits), dashes, and the conjunctions that start a new assertion ("but",
// "while", "so", "because"; 但, 不過, 所以 …). "but not" stays with its
// clause: "has tokensBefore but not tokensAfter" is one claim.
func clauses(s string, sent tspan) []tspan {
	var out []tspan
	start := sent.lo
	cut := func(end, next int) {
		lo := start
		for lo < end && isSpace(s[lo]) {
			lo++
		}
		if end > lo {
			out = append(out, tspan{lo, end})
		}
		start = next
	}
	for i := sent.lo; i < sent.hi; {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch r {
		case ';', ':', '；', '：', '，', '—', '–', '|':
			cut(i, i+size)
		case ',':
			if !(i > sent.lo && isDigit(s[i-1]) && i+1 < sent.hi && isDigit(s[i+1])) {
				cut(i, i+size)
			}
		case ' ':
			if w := conjunctionAt(s[i+1 : sent.hi]); w > 0 {
				cut(i, i+1)
			} else if strings.HasPrefix(s[i:sent.hi], " - ") {
				cut(i, i+3)
			}
		default:
			if w := chineseConjunctionAt(s[i:sent.hi]); w > 0 {
				cut(i, i)
				i += w
				continue
			}
		}
		i += size
	}
	cut(sent.hi, sent.hi)
	return out
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

var englishConjunctions = []string{"but ", "while ", "whereas ", "although ", "though ", "so ", "because ", "since ", "however "}

// conjunctionAt returns the length of a clause-starting conjunction at the
// start of s, or 0.
func conjunctionAt(s string) int {
	for _, c := range englishConjunctions {
		if strings.HasPrefix(s, c) {
			if c == "but " && strings.HasPrefix(s[len(c):], "not ") || c == "so " && strings.HasPrefix(s[len(c):], "far") {
				return 0
			}
			return len(c)
		}
	}
	return 0
}

var chineseConjunctions = []string{"但是", "不過", "不过", "可是", "所以", "因此", "因為", "因为", "然而", "但"}

func chineseConjunctionAt(s string) int {
	for _, c := range chineseConjunctions {
		if strings.HasPrefix(s, c) {
			return len(c)
		}
	}
	return 0
}

// rule is one trigger pattern and the exclusions that apply to it.
type rule struct {
	re *regexp.Regexp
	// notAfter, when set, must not match the text right after the trigger.
	notAfter *regexp.Regexp
	// notBefore, when set, must not match the clause text before the trigger.
	notBefore *regexp.Regexp
	// finding marks "couldn't find"-style triggers, for which "yet" is a scope.
	finding bool
	// idiom, when set, must not match the text from the trigger's last "no".
	idiom *regexp.Regexp
	// verbNot, when set, must not hold the re's first group (the verb).
	verbNot map[string]bool
	// objNot, when set, must not hold the re's second group (the object's first word).
	objNot map[string]bool
	// cue, when set: the clause must contain one of these strings for the
	// regexp to be worth running.
	cue []string
	// baseVerb: after do/does/did the verb is in its base form; "don't
	// suggests" is a garbled sentence, not a claim.
	baseVerb bool
}

// behaviourVerbs negated say how something acts, not that something is missing.
var behaviourVerbs = words(`block blocks hold holds change changes affect affects break breaks slow slows allocate
	allocates crash crashes work works compile compiles pass passes matter matters need needs apply applies match
	matches handle handles ensure ensures account accounts pad pads distinguish distinguishes render renders update
	updates touch touches modify modifies alter alters leak leaks wait waits stop stops fail fails run runs start
	starts make makes take takes get gets give gives let lets seem seems look looks mean means help helps hurt
	hurts scale scales fit fits respect respects honour honor honors trigger triggers reach reaches cause causes
	want wants like likes know knows think thinks see sees find finds understand understands guarantee guarantees
	lock locks retry retries stream streams interrupt interrupts overwrite overwrites replace replaces
	rename renames move moves use uses care cares worry bother bothers recognise recognize recognizes
	recognises parse parses expect expects accept accepts do does did happen happens stand stands catch catches
	capture captures detect detects finish finishes complete completes succeed succeeds terminate terminates
	exit exits respond responds converge converges lose loses drop drops batch batches buffer buffers
	wrap wraps escape escapes mutate mutates answer answers reply replies follow follows allow allows permit permits forbid forbids prevent prevents reject rejects`)

// changeVerbs negated are behaviour ("this doesn't change the API") except
// where the source is a diff or a history, whose contents are changes: "the
// first 20 commits don't touch auth/" says no such change is there.
var changeVerbs = words(`touch touches touched modify modifies modified change changes changed alter alters altered update
	updates updated`)

var diffContext = re(`\b(?:diffs?|commits?|patch(?:es)?|changesets?|pull\s+requests?|prs?|history|changelog|the\s+log\s+of)\b`)

// pastStem returns the base of a regular past form ("responded" → "respond",
// "stopped" → "stop", "used" → "use"), or "" when v is not one.
func pastStem(v string) string {
	b, ok := strings.CutSuffix(v, "ed")
	if !ok || len(b) < 2 {
		return ""
	}
	if n := len(b); n >= 2 && b[n-1] == b[n-2] && !strings.ContainsRune("aeiouls", rune(b[n-1])) {
		return b[:n-1] // stopped
	}
	if behaviourVerbs[b] {
		return b
	}
	return b + "e" // used, parsed → use, parse
}

// truncationReport: "2,744 lines were omitted" reports a cut output, not
// something missing from the source.
const truncationReport = `\b(?:\d[\d,]*|some|many|several|the\s+remaining|the\s+other)\s+(?:lines?|bytes?|characters?|chars?|tokens?|entries|rows|results|matches|items)\s+(?:were|was|are|is|have\s+been|got|being)\s+$`

// truncationChinese: 有 2744 行被省略了 reports a cut output.
var truncationChinese = re(`\d[\d,]*\s*(?:行|個字元|个字符|字元|字符|位元組|字节|bytes?|kb|筆|笔|條|条|個結果|个结果)\s*(?:被|已被|已經被|已经被)?\s*$`)

// passiveNot are the participles a negated passive does not make a claim
// with: those of behaviourVerbs ("isn't blocked", "wasn't changed") and those
// of need, intent, judgement and state ("is not needed", "isn't supposed to",
// "is not related", "isn't fixed").
var passiveNot = func() map[string]bool {
	m := words(`needed required expected supposed allowed permitted meant intended designed recommended advised
		guaranteed related tied limited affected impacted concerned interested worried convinced surprised pleased
		satisfied confused tempted inclined prepared equipped obligated forced involved bothered fixed resolved
		solved addressed finished completed passed failed succeeded reached stopped killed interrupted paused
		throttled delayed deprecated ordered sorted based focused optimized optimised aligned compared
		authorized authorised authenticated able aware sure married awaited blocked locked broken changed modified altered updated touched
		affected parsed rendered escaped buffered flushed retried reused triggered respected honoured honored
		accepted rejected handled recognized recognised detected caught captured noticed watched monitored polled
		reloaded refreshed invalidated closed delivered surfaced compressed decompressed formatted encrypted
		decrypted hashed processed evaluated propagated forwarded released freed cleaned cleared retained
		preserved enforced sanitized sanitised normalized normalised serialized serialised deserialized encoded
		decoded translated converted transformed rotated renewed expired evicted restored synced synchronized
		replicated batched queued dispatched routed proxied redirected cancelled canceled aborted joined reused
		shared duplicated overwritten truncated split saved persisted returned thrown raised read sent written
		displayed rendered printed executed reproduced reproducible tuned balanced scaled sized capped bounded
		paginated localized localised translated quoted escaped trimmed padded rounded coded hardcoded drained
		migrated
		flushed`)
	for v := range behaviourVerbs {
		if strings.HasSuffix(v, "s") {
			continue
		}
		m[v+"ed"], m[v+"d"] = true, true
		if n := len(v); n >= 3 && !strings.ContainsRune("aeiouwy", rune(v[n-1])) && strings.ContainsRune("aeiou", rune(v[n-2])) {
			m[v+v[n-1:]+"ed"] = true // stopped, dropped
		}
	}
	return m
}()

func words(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

func re(s string) *regexp.Regexp { return regexp.MustCompile(s) }

const (
	adv  = `(?:(?:actually|really|currently|yet|even|explicitly|directly|ever|still|also|properly|publicly|officially|anywhere|seem\s+to|appear\s+to|seemingly|apparently)\s+)*`
	pred = `(?:present|defined|declared|exported|documented|mentioned|listed|included|supported|available|configured|set|used|referenced|implemented|there|found|registered|specified|exposed|provided|imported|called|invoked|covered|shown|visible|detected|recorded|logged|stored|populated|emitted|printed|attached|started|enabled|installed|described|explained|pinned|seeded|cached|loaded|initialized|initialised|copied|bundled|shipped|mounted|deployed|applied|wired|hooked|connected|linked|merged|committed|pushed|tested|checked|handled|part\s+of|in\s+(?:the|this|that|any|either|x+|q+|[\w/-]+\.\w+)\b|anywhere)`
	// subjectIWe: the agent talking about its own actions or abilities.
	subjectIWe = `(?:^|\s)(?:i|we|you|let's)\s*$`
	// imperative: nothing but softeners before the trigger ("just don't show …").
	imperative = `^\s*(?:(?:please|just|simply|then|and|so|also|now|or|maybe|instead|first|finally)\s+)*$`
)

// noIdioms follow "no" without making a claim: "no need", "no longer
// needed", "no worries".
var noIdioms = re(`^no\s+(?:need|needs|problem|problems|worries|worry|doubt|way|rush|hurry|idea|matter|more|less|later|sooner|longer|offense|harm|point|reason|choice|guarantee|change|changes|action|further\s+action|pressure|big\s+deal|thanks|luck|wonder|kidding|comment|objection|objections|preference|opinion|concern|concerns|time|one\s+(?:knows|else)|go|dice)\b`)

var englishRules = []rule{
	{ // there is no / there isn't / there are none
		cue:      []string{"there"},
		re:       re(`\bthere(?:'s|\s+is|\s+are|\s+was|\s+were|\s+has\s+been|\s+have\s+been|\s+seems\s+to\s+be|\s+appears\s+to\s+be|\s+is\s+still|\s+are\s+still|\s+is\s+currently|\s+are\s+currently)\s+(?:no|not\s+any|not\s+a\s+single|not\s+one|nothing|none|zero)\b|\bthere\s+(?:isn't|aren't|wasn't|weren't|is\s+not|are\s+not|was\s+not|were\s+not)\b|\bthere\s+(?:doesn't|does\s+not|didn't|did\s+not|don't|do\s+not)\s+(?:seem|appear)\s+to\s+(?:be|have\s+been|exist)\b`),
		notAfter: re(`^\s*(?:(?:a|any|real|much|big|such)\s+)?(?:need|needs|doubt|harm|problem|problems|rush|hurry|point|guarantee|guarantees|way|reason|choice|question|difference|sense|use\s+in|harm\s+in|excuse|shortcut|telling|denying|hope|chance|time|rule|issue\s+with\s+(?:that|this|it)|obligation|requirement)\b|^\s*(?:else\s+)?(?:to\s|left\s+to|more\s+to|(?:more|else)\s+(?:i|we|you)\s+(?:can|could)\b|wrong|much\s+to|that\s+(?:needs|need|requires|should|must)|which\s+(?:needs|requires))`),
	},
	{ // no X was found / no X is defined
		cue:      []string{"no "},
		re:       re(`\bno\s+(?:[\w'-]+\s+){0,7}?(?:was|were|is|are|has\s+been|have\s+been|could\s+be|can\s+be|got|gets|get)\s+(?:\w+\s+)?(?:found|detected|reported|returned|present|defined|listed|shown|mentioned|declared|exported|set|configured|matched|raised|logged|printed|emitted|used|referenced|registered|visible|seen|located|produced|triggered|thrown|generated|recorded|included|specified|documented|available|marked|flagged|labeled|labelled|affected|left|open|enabled|running|listening|active|installed|exposed|allowed)\b`),
		notAfter: nil,
	},
	{ // no X exists / no test failed
		cue: []string{"no "},
		re:  re(`\bno\s+(?:[\w'-]+\s+){0,4}?(?:exists?|existed|appears?|appeared|matche[sd]|turned\s+up|showed\s+up|shows\s+up|came\s+up|comes\s+up|remains?|remained|occurs?|occurred|mentions?|references?|defines?|contains?|failed|fails|failing)\b`),
	},
	{ // no migration touches it (these verbs are also nouns: "no changes" is not one)
		cue: []string{"no "},
		re:  re(`\bno\s+(?:[\w'-]+\s+){1,3}?(?:touch(?:es)?|modifies|changes|reads|writes|sets|uses|calls|imports|exports|handles|covers|registers|declares|implements)\b`),
	},
	{ // nobody calls it
		cue: []string{"no"},
		re:  re(`\b(?:nobody|no\s+one|no-one)\s+(?:ever\s+|actually\s+)?(?:calls?|uses?|references?|imports?|sets?|reads?|mentions?|defines?|registers?|invokes?|called|used|referenced|imported|wrote|writes|added|adds|created|creates|defined|registered|implemented|implements|configured|configures|documented|documents|mentioned|reported|reports|owns)\b`),
	},
	{ // no such / no mention / no errors / no `tokensAfter`
		cue:       []string{"no "},
		re:        re(`\bno\s+(?:(?:other|such|further|additional|matching|failing|related|relevant|existing|remaining|explicit|actual|real|single|known|obvious|visible|direct|separate|dedicated|built-in|custom|corresponding|equivalent|specific|more|open|pending|unused|compile|type|runtime|test|lint|syntax|build|config|environment|env)\s+)*(?:such|mention|mentions|reference|references|trace|traces|sign|signs|evidence|record|records|definition|definitions|documentation|docs|result|results|match|matches|occurrence|occurrences|instance|instances|hit|hits|entry|entries|error|errors|failure|failures|warning|warnings|usage|usages|uses|call|calls|caller|callers|import|imports|export|exports|declaration|declarations|implementation|implementations|tests|test\s+files|file|files|line|lines|config|configuration|setting|settings|option|options|flag|flags|variable|variables|vars?|key|keys|field|fields|property|properties|method|methods|function|functions|handler|handlers|endpoint|endpoints|route|routes|table|tables|column|columns|package|packages|module|modules|dependency|dependencies|class|classes|constant|constants|parameter|parameters|event|events|hook|hooks|plugin|plugins|command|commands|script|scripts|section|sections|issues|bug|bugs|panic|panics|exception|exceptions|crash|crashes|leak|leaks|logs|value|values|default|defaults|limit|limits|timeout|retry|retries|api|feature|features|x+|q+)\b`),
		notBefore: re(`\b(?:i|we)\s+(?:\w+\s+)?(?:made|make|changed|change|added|add|ran|run|wrote|write|touched|modified|need|needed|want|have|had|expect|expected)\s+$|\b(?:with|makes?|made|needs?|requires?)\s+$`),
		notAfter:  re(`^\s*(?:\w+\s+){0,3}(?:is|are|was|were)\s+(?:needed|required|necessary|allowed|wanted|expected|intended)\b|^\s*(?:needed|required|necessary)\b`),
	},
	{ // "No alert rule fires on …", "No unit tests for X.": a clause that opens
		cue: []string{"no "},
		// with no + a noun phrase is existential, unless it is an idiom.
		re:       re(`^\s*(?:[-•]\s*|\d+\.\s*)?(?:and\s+|but\s+|also\s+|so\s+)?no\s+[a-z][\w'-]*`),
		notAfter: re(`^\s*(?:[,.!:;)]|$)|^\s*(?:[\w'-]+\s+){0,4}?(?:is|are|was|were|be)\s+(?:needed|required|necessary|allowed|expected|wanted)\b|^\s*(?:can|could|may|might|should|must|shall|will|would)\b|^\s*(?:[a-z]+er|more|less)\s+than\b`),
		idiom:    noIdioms,
	},
	{ // none of them / found none
		cue: []string{"none"},
		re:  re(`\bnone\s+of\s+(?:the|these|those|them|its|our|your|their|my|\d+|x+|q+)\b|\bnone\s+(?:(?:of\s+them\s+)?(?:failed|fail|fails|failing|errored|broke)\b)|\bnone\s+(?:is|are|was|were|exists?|matche[sd]|match|contains?|mentions?|defines?|has|have|includes?|references?|uses?|calls?|showed|shows?|returned|found|appears?|appeared|turned\s+up|exports?|imports?|sets?|registers?|handles?|covers?|implements?|supports?|provides?|declares?|lists?|reads?|checks?|touch(?:es)?|do|does|did|had|produced?|returns?)\b|\b(?:found|returned|showed|yielded|got|matched|see|saw)\s+none\b`),
	},
	{ // not a single / not one
		cue: []string{"not "},
		re:  re(`\bnot\s+(?:a\s+single|one|even\s+one)\b`),
	},
	{ // nothing matched / nothing in the docs / found nothing
		cue:      []string{"nothing"},
		re:       re(`\bnothing\s+(?:(?:was|is|has\s+been|got)\s+)?(?:found|failed|errored|crashed|broke|matches|matched|turned\s+up|came\s+up|comes\s+up|showed\s+up|shows\s+up|returned|printed|logged|defines?|mentions?|references?|refers|calls?|uses?|sets?|exports?|imports?)\b|\bnothing\s+(?:in|about|related\s+to|regarding|named|called|like|on|under|inside|within)\b|\b(?:found|returned|printed|matched|shows?|showed|yields?|yielded|gave|gives|produced|contains?|mentions?|lists?|turned\s+up|turns\s+up|came\s+back\s+with|comes\s+back\s+with|came\s+up\s+with|brought\s+up|surfaced|collected|reported|logged|output|outputs)\s+nothing\b`),
		notAfter: re(`^\s*(?:common|particular|else)\b`),
	},
	{ // "nothing registers the handler", "nothing depends on libfoo"
		cue:     []string{"nothing"},
		re:      re(`\bnothing\s+(?:(?:in|across|under|inside)\s+(?:[\w./-]+\s+){1,3}?)?(?:else\s+)?(?:ever\s+|actually\s+|still\s+)?([a-z]+s)\b`),
		verbNot: words(`happens changes works needs matters breaks seems looks stands helps hurts beats comes goes remains`),
	},
	{ // "isn't seeded with any currencies", "omits the column"
		re:        re(`\b(?:isn't|is\s+not|aren't|are\s+not|wasn't|was\s+not|weren't|were\s+not)\s+[a-z]+ed\s+with\s+(?:any|a|an)\b|\b(?:omits?|omitted|leaves\s+out|left\s+out)\b`),
		notBefore: re(subjectIWe + `|` + truncationReport),
	},
	{ // zero results / 0 matches
		re: re(`\b(?:zero|0)\s+(?:results?|matches|hits|occurrences|references|mentions|errors|failures|failed|failing|warnings|entries|rows|lines|files|usages|callers|items|tests|records|documents|objects|events|messages|alerts|issues|findings|vulnerabilities|problems|packages|dependencies|deps|callsites|call\s+sites|violations|defects|offenses|offences|incidents|hits)\b`),
	},
	{ // the list is empty / came back empty
		cue: []string{"empty"},
		re:  re(`\b(?:is|are|was|were|came\s+back|comes\s+back|returned|returns|looks|seems)\s+(?:(?:still|completely|entirely|totally|all|just)\s+)?empty\b`),
	},
	{ // couldn't find / never found / "Didn't find anything in the wiki": a
		// report with its subject left out is still a finding.
		re:       re(`\b(?:could\s+not|couldn't|can't|cannot|can\s+not|did\s+not|didn't|does\s+not|doesn't|unable\s+to|failed\s+to|fail\s+to|never|haven't|have\s+not|hasn't|has\s+not|wasn't\s+able\s+to|weren't\s+able\s+to|was\s+not\s+able\s+to|not\s+able\s+to)\s+(?:(?:yet|actually|really|even|seem\s+to|manage\s+to|quite|ever|been\s+able\s+to|immediately|find\s+or)\s+)*(?:find|found|locate|located|see|seen|spot|spotted|detect|detected|identify|identified|discover|discovered|come\s+across|turn\s+up|turned\s+up|notice|noticed|get\s+(?:a|an|any)|got\s+(?:a|an|any)|receive|received)\b`),
		notAfter: re(`^\s*(?:why|how|what|whether|if|the\s+point|a\s+(?:reason|way|need|problem|difference|chance)|any\s+(?:reason|way|need|problem|difference|harm)|anything\s+wrong|it\s+as|this\s+as|that\s+as|them\s+as|fit|myself|chance|time|to\s)`),
		finding:  true,
	},
	{ // don't see: without a subject it may be an imperative
		re:        re(`\b(?:do\s+not|don't)\s+(?:(?:yet|actually|really|even|seem\s+to|manage\s+to|quite|ever|been\s+able\s+to|immediately|find\s+or)\s+)*(?:find|found|locate|located|see|seen|spot|spotted|detect|detected|identify|identified|discover|discovered|come\s+across|turn\s+up|turned\s+up|notice|noticed|get\s+(?:a|an|any)|got\s+(?:a|an|any)|receive|received)\b`),
		notAfter:  re(`^\s*(?:why|how|what|whether|if|the\s+point|a\s+(?:reason|way|need|problem|difference|chance)|any\s+(?:reason|way|need|problem|difference|harm)|anything\s+wrong|it\s+as|this\s+as|that\s+as|them\s+as|fit|myself|chance|time|to\s)`),
		notBefore: re(`^\s*(?:please\s+)?$`),
		finding:   true,
	},
	{ // is not defined / isn't exported / is not in the file
		re:        re(`\b(?:is|are|was|were|be|been|'s|'re|remains|remain)\s+not\s+` + adv + pred + `|\b(?:isn't|aren't|wasn't|weren't)\s+` + adv + pred),
		notAfter:  re(`^\s*(?:to\s+(?:be|build|make|do|run|get|keep|avoid|help|work)\b|up\s+yet|by\s+default\s+but)`),
		notBefore: re(`\b(?:i|we|you)(?:'m|\s+am|'re|\s+are)?\s*$`),
	},
	{ // "isn't subscribed to", "wasn't built with debug symbols", "the index
		// is not created": a negated passive says the thing was not made or
		// put there, unless the participle is about behaviour, need or
		// judgement ("isn't blocked", "is not needed", "isn't supposed to").
		re:        re(`\b(?:(?:is|are|was|were|'s|'re|remains|remain|has\s+been|have\s+been)\s+not|isn't|aren't|wasn't|weren't|hasn't\s+been|haven't\s+been)\s+(?:(?:actually|really|currently|yet|even|explicitly|ever|still|also|properly|correctly|automatically|ever\s+been|been)\s+)*(?:[a-z]+-)?([a-z]+ed|built\s+with|written|bound|sent)\b`),
		notAfter:  re(`^\s*(?:to\s+(?:be|build|make|do|run|get|keep|avoid|help|work|use|say|the\s+same)\b|that\b|as\s+(?:a|an|the)\b|enough\b|by\s+default\s+but)`),
		notBefore: re(`\b(?:i|we|you)(?:'m|\s+am|'re|\s+are)?\s*$`),
		verbNot:   passiveNot,
		cue:       []string{"not", "n't"},
	},
	{ // doesn't exist / does not export / doesn't have
		re:        re(`\b(?:does\s+not|doesn't|do\s+not|don't|did\s+not|didn't|cannot|can't|will\s+not|won't)\s+` + adv + `(?:exist|contain|include|define|declare|have|mention|export|implement|provide|offer|support|list|expose|reference|call|invoke|import|specify|document|describe|cover|set|configure|enable|register|attach|copy|install|query|appear|show|occur|carry|store|ship|bundle|emit|log|print|report|mount|initialize|initialise|instantiate|declare)\b`),
		notAfter:  re(`^\s*(?:to\s|access|time|permission|enough|an?\s+(?:opinion|preference)|much\s+time|up\b|off\b|out\b|in\s+(?:mind|the\s+way))`),
		notBefore: re(subjectIWe + `|` + imperative),
	},
	{ // "doesn't require x/sync", "doesn't extend the config": a negated
		// transitive verb with an object says the thing is not there, unless the
		// verb is about behaviour ("doesn't block the loop", "doesn't change the API").
		re:        re(`\b(?:does\s+not|doesn't|do\s+not|don't|did\s+not|didn't|never)\s+(?:(?:actually|really|currently|even|explicitly|ever|yet|also)\s+)*([a-z]+)\s+(?:(?:up|out|in|on|over|into|to|for|from|with|back)\s+)?(?:the|a|an|any|its|their|this|that|these|those|x+|q+)\b`),
		notBefore: re(subjectIWe + `|` + imperative),
		verbNot:   behaviourVerbs,
		baseVerb:  true,
	},
	{ // "doesn't accept a --config flag", "doesn't take a timeout option": a
		// verb of accepting with an option noun as object says the option is not there.
		re:        re(`\b(?:does\s+not|doesn't|do\s+not|don't|did\s+not|didn't|cannot|can't|won't|will\s+not)\s+(?:accept|accepts|take|recognise|recognize|understand|allow|permit)\s+(?:(?:a|an|any|the)\s+)?(?:[\w-]+\s+){0,2}?(?:flags?|options?|arguments?|args?|parameters?|params?|switch|switches|fields?|keys?|headers?|settings?|subcommands?)\b`),
		notBefore: re(subjectIWe + `|` + imperative),
	},
	{ // the same with a bare noun object: "doesn't pin pytest"
		re:        re(`\b(?:does\s+not|doesn't|do\s+not|don't|did\s+not|didn't)\s+(?:(?:actually|really|currently|even|explicitly|ever|yet|also|properly|always|correctly|fully|necessarily|exactly|quite|entirely|reliably)\s+)*([a-z]+)\s+([a-z][\w-]*(?:\.[\w-]+)*)`),
		notBefore: re(subjectIWe + `|` + imperative),
		verbNot:   behaviourVerbs,
		baseVerb:  true,
		objNot: words(`on in at with for to when while because if yet anymore well properly correctly fast quickly
			much often always now here there until unless after before since so as like by any a an the this that
			it them him her me us you anything everything everywhere up out off down over back away through into
			from of or and but than then even really seem appear need have be get make mean work seem either`),
	},
	{ // "isn't overridden anywhere", "not used anywhere"
		re:        re(`(?:\bnot|n't|\bnever)\s+(?:[\w'-]+\s+){0,3}?anywhere\b|\bnowhere\b`),
		notBefore: re(`\b(?:i|we|you)\b`),
	},
	{ // never used / never defined
		cue:       []string{"never"},
		re:        re(`\bnever\s+(?:been\s+|actually\s+|once\s+|even\s+)?(?:used|uses|called|calls|referenced|references|defined|defines|set|sets|mentioned|mentions|appears?|appeared|imported|imports|exported|exports|invoked|instantiated|registered|declared|assigned|committed|found|occurs?|occurred|shows\s+up|showed\s+up|populated|emitted|logged|documented|reached|triggered|created|exists?|existed|applied|merged|deployed|released|published|executed|run|ran|copies|copied|attached|queries|queried|loads|loaded|installs|installed|enabled|configured|initialized|initializes|checked|checks|closes|closed|reads|read|written|writes|includes|included|contains|contained|covers|covered|tested)\b`),
		notBefore: re(subjectIWe + `|` + imperative),
	},
	{ // "the consumer is never started in main.go": passive, the code never
		// starts it (the active "the server never started" is an event that failed)
		cue:       []string{"never"},
		re:        re(`\b(?:is|are|was|were|been)\s+never\s+(?:started|launched|spawned|scheduled)\b`),
		notBefore: re(subjectIWe),
	},
	{ // "never verifies the signature": never + a verb with an object
		cue:       []string{"never"},
		re:        re(`\bnever\s+([a-z]+(?:s|ed))\s+(?:the|a|an|any|its|their|this|that|these|those|x+|q+)\b`),
		notBefore: re(subjectIWe + `|` + imperative),
		verbNot:   behaviourVerbs,
	},
	{ // is missing / lacks / nowhere / nonexistent / "Missing import in …"
		re:       re(`\b(?:is|are|was|were|'s|'re|'m|am|seems?\s+to\s+be|appears?\s+to\s+be|still|goes|went|remains?|remained)\s+(?:(?:completely|entirely|still|also|now|simply|just|clearly|totally)\s+)?(?:missing|absent|lacking|unused|unreferenced|undefined|unset|undeclared|unspecified|unconfigured|undocumented|unregistered|unimplemented|untested)\b|\bmissing\s+(?:from|in)\b|\b(?:lacks|lack|lacked)\b|\babsent\s+(?:from|in)\b|\bnowhere\b|\bnot\s+anywhere\b|\bnon-?existent\b|^\s*(?:[-•]\s*)?missing\b|\b(?:is|are|was|were|remains?|stays?)\s+(?:(?:completely|entirely|totally|oddly|strangely)\s+)?silent\s+(?:on|about|regarding)\b`),
		notAfter: re(`^\s*(?:near|close|else\s+to)\b`),
	},
	{ // found no OOM messages / saw no errors
		cue:      []string{"no"},
		re:       re(`\b(?:found|find|finds|saw|see|sees|spotted|got|get|detected|noticed|observed|turns?\s+up|turned\s+up|came\s+up\s+with|comes\s+up\s+with|surfaced|surfaces)\s+no\b`),
		notAfter: re(`^\s*(?:reason|way|need|point|problem\s+with|harm)\b`),
		finding:  true,
	},
	{ // "the SDK offers no way to set the base URL": what an API offers or
		// exposes is a thing in it, a way included.
		cue:       []string{" no"},
		re:        re(`\b(?:offers?|offered|provides?|provided|exposes?|exposed|supports?|supported|ships?|shipped|emits?|emitted|sends?|sent|carries|carried)\s+no\b`),
		notAfter:  re(`^\s*(?:guarantee|guarantees|warranty|benefit|advantage|help)\b`),
		notBefore: re(subjectIWe + `|(?:^|[,;]\s*|\b(?:and|but|so|then)\s+)(?:i|we)\s+(?:\w+\s+)?$`),
	},
	{ // contains no Dockerfile / has no tests
		cue:       []string{" no"},
		re:        re(`\b(?:adds?|added|creates?|created|imports?|imported|registers?|registered|configures?|configured|contains?|contained|includes?|included|has|have|had|defines?|defined|exports?|exported|lists?|listed|shows?|showed|mentions?|mentioned|returned|returns|yields?|yielded|gave|gives|produced?|matched|printed|logged|reported|declares?|sets?)\s+no\b`),
		notAfter:  re(`^\s*(?:[a-z]+er|more|less|better|worse)\s+than\b|^\s*(?:effect|impact|idea|choice|way|reason|need|time|access|permission|problem|problems|issue\s+with|say|bearing|business|intention|plans?|opinion|preference)\b`),
		notBefore: re(subjectIWe + `|(?:^|[,;]\s*|\b(?:and|but|so|then)\s+)(?:i|we)\s+(?:\w+\s+)?$`),
	},
	{ // "neither file defines it", "neither A nor B lists it"
		cue: []string{"neither"},
		re:  re(`\bneither\s+(?:[\w'./-]+\s+){0,8}?(?:nor\s+(?:[\w'./-]+\s+){0,6}?)?(?:defines?|contains?|mentions?|has|have|includes?|exports?|sets?|references?|uses?|calls?|lists?|declares?|documents?|describes?|covers?|provides?|supports?|shows?|matches|match|is|are|was|were)\b|\bneither\s+(?:[\w'./-]+\s+){1,8}?nor\s+(?:[\w'./-]+\s+){1,6}?(?:[a-z]+s)\b`),
	},
	{ // "declares serde without the derive feature", "it ships without tests":
		// what was declared or shipped lacks the thing.
		cue:       []string{"without"},
		re:        re(`\b(?:declares?|declared|ships?|shipped|built|compiled|deployed|released|defined|published|packaged|generated|installed|vendored|merged|committed|landed)\s+(?:[\w.'-]+\s+){0,4}?without\s+(?:(?:a|an|any|the|its|their)\s+)?[a-z]`),
		notBefore: re(subjectIWe),
	},
	{ // "docs/api.md skips the /export endpoint entirely"
		cue:       []string{"skip", "leave", "left"},
		re:        re(`\b(?:skips?|skipped|leaves?\s+out|left\s+out)\b[^.;]{0,60}?\b(?:entirely|completely|altogether|wholesale)\b`),
		notBefore: re(subjectIWe + `|` + imperative),
	},
	{ // "lists log4j-core and no other log4j artifact"
		cue: []string{"no "},
		re:  re(`\b(?:and|but|or)\s+no\s+(?:other|further|additional|more|second|extra)\s+[a-z][\w'-]*`),
	},
	{ // compiled without errors, passed with no failures
		cue: []string{"with"},
		re:  re(`\bwithout\s+(?:any\s+)?(?:errors?|warnings?|failures?|issues|problems|failing\s+tests)\b|\bwith\s+(?:no|zero|0)\s+(?:(?:new|compile|type|lint|test)\s+)?(?:errors?|warnings?|failures?|issues|problems|failing\s+tests|failed\s+tests)\b`),
	},
	{ // "adds the column but no index", "a README and no LICENSE": "but/and
		// no" + a noun after a clause boundary says the second thing is not there.
		cue:      []string{"no "},
		re:       re(`^\s*(?:but|and|yet|plus)\s+no\s+[a-z][\w'-]*`),
		idiom:    noIdioms,
		notAfter: re(`^\s*(?:[\w'-]+\s+){0,4}?(?:is|are|was|were|be)\s+(?:needed|required|necessary|allowed|expected|wanted)\b`),
	},
	{ // "x/sync isn't a dependency", "--dry-run is not a valid option": not a
		// member of the set of things that exist there.
		cue:       []string{"not", "n't"},
		re:        re(`\b(?:(?:is|are|was|were|'s)\s+not|isn't|aren't|wasn't|weren't)\s+(?:(?:a|an|one\s+of\s+the|among\s+the|part\s+of\s+the)\s+)?(?:(?:valid|known|recognized|recognised|supported|declared|direct|listed|registered|defined|available|existing|real)\s+)?(?:dependency|dependencies|option|options|flag|flags|field|fields|column|columns|key|keys|member|members|property|properties|setting|settings|subcommand|subcommands|command|commands|target|targets|parameter|parameters|argument|arguments|table|tables|package|packages|module|modules|variable|variables|entry|entries|route|routes|endpoint|endpoints|requirement|requirements)\b`),
		notBefore: re(`\b(?:i|we|you|it|this|that)(?:'m|\s+am|'re|\s+are)?\s*$`),
		notAfter:  re(`^\s*(?:issue|problem|concern|worry|question)\b`),
	},
	{ // was already removed (a report of its own deletion is not a claim)
		cue:       []string{"already", "since"},
		re:        re(`\b(?:is|are|was|were|has\s+been|have\s+been|'s\s+been)\s+(?:already|since|long\s+since)\s+(?:been\s+)?(?:removed|deleted|dropped)\b(?:\s+(?:from|in)\b)?`),
		notBefore: re(subjectIWe),
	},
	{ // hasn't exported the interfaces / has not been defined
		cue:       []string{"ha"},
		re:        re(`\b(?:hasn't|has\s+not|haven't|have\s+not)\s+(?:been\s+)?(?:exported|defined|declared|implemented|registered|documented|published|included|added|set|configured|created|committed)\b`),
		notBefore: re(subjectIWe + `|` + imperative),
	},
	{ // has tokensBefore but not tokensAfter
		cue: []string{"but not"},
		re:  re(`\b(?:has|have|had|contains?|includes?|defines?|exports?|lists?|mentions?|sets?)\b[^;]{1,80}?\bbut\s+not\b`),
	},
	{ // not found
		cue:       []string{"not"},
		re:        re(`\bnot\s+(?:be\s+)?found\b`),
		notBefore: re(`\b(?:404|command|http|status)\s+$`),
		notAfter:  re(`^\s*(?:error|errors|exception|status|page|response|handler|case|branch|code)\b`),
	},
	{ // no longer exists
		cue: []string{"no longer"},
		re:  re(`\bno\s+longer\s+(?:exists?|present|there|defined|available|supported|exported|listed|included|in\s+the|part\s+of|mentioned|documented|referenced)\b`),
	},
}

// negationCue lists the words at least one of which every English rule
// needs; a clause without any is not searched further.
var negationCue = re(`\b(?:no|not|none|nothing|nobody|neither|never|nowhere|without|missing|lacks?|lacked|lacking|absent|zero|0|empty|omits?|omitted|left\s+out|leaves\s+out|skips?|skipped|removed|deleted|dropped|unused|unreferenced|undefined|unset|undeclared|unspecified|unconfigured|undocumented|unregistered|unimplemented|untested|silent|non-?existent|cannot|unable|failed|fail)\b|n't`)

// conditionals before a trigger in its clause make the claim hypothetical
// or normative: "if the key is not found", "make sure there is no", "there
// should be no".
var englishConditional = re(`\bwhen(?:ever)?\s*$|\bwhenever\b|\b(?:if|unless|whether|in\s+case|even\s+if|as\s+long\s+as|assuming|suppose|supposing|make\s+sure|ensure|ensures|ensuring|verify|verifies|confirm|double-check|double\s+check|check\s+that|make\s+certain|be\s+sure|to\s+see\s+(?:if|whether)|to\s+avoid|so\s+that|expect|expects|should|must|would|might|need\s+to|needs\s+to|want\s+to|let's|let\s+me|try\s+to|trying\s+to|wish)\b`)

// englishConditionalStart: a sentence that opens with a condition is
// hypothetical throughout ("If you use v2, there is no such flag").
var englishConditionalStart = re(`^(?:[-•]\s*)?(?:if|unless|in\s+case|even\s+if|assuming|suppose|when\s+there\s+is\s+no|whenever)\b`)

// Chinese triggers. strongChinese are claims wherever they stand (outside
// conditionals and questions).
var strongChinese = []string{
	"不存在", "找不到", "找不著", "找不着", "查無", "查无", "查不到", "搜不到", "搜尋不到", "搜索不到",
	"未找到", "沒找到", "没找到", "未能找到", "無法找到", "无法找到", "未發現", "未发现", "沒發現", "没发现",
	"無任何", "无任何", "並無", "并无", "均無", "均无", "皆無", "皆无", "毫無", "毫无", "無此", "无此",
	"未提及", "未提到", "沒提到", "没提到", "未定義", "未定义", "未包含", "不包含", "不含", "未出現", "未出现",
	"沒出現", "没出现", "缺少", "缺失", "從未", "从未", "從來沒", "从来没", "沒看到", "没看到", "看不到",
	"未見", "未见", "零個", "零个", "零筆", "零笔", "未列出", "沒列出", "没列出", "未宣告", "未聲明", "未声明",
	"未匯出", "未导出", "未實作", "未实现", "未實現", "未被使用", "未被引用", "未引用", "未設定", "未设置",
	"未設置", "未配置", "未註冊", "未注册", "未記錄", "未记录", "未提供", "不支援", "不支持", "未支援", "未支持",
	"無相關", "无相关", "不再存在", "未曾出現", "未曾出现", "未記載", "未记载", "沒有記載", "没有记载", "未說明",
	"未说明", "未描述", "未涵蓋", "未覆蓋", "未覆盖", "未啟用", "未启用", "未開啟", "未开启", "未安裝", "未安装",
	"未註明", "未注明", "未指定", "未驗證", "未验证", "未校驗", "未校验", "未提", "隻字未提", "只字未提",
}

// attributive strong triggers read as "the missing …" before 的.
var attributive = map[string]bool{"缺少": true, "缺失": true}

// omitChinese: 省略了時區偏移 (omits); like 缺少, attributive before 的, and the
// agent's own slip after 我.
var omitChinese = []string{"省略", "略去", "略掉", "遺漏", "遗漏", "漏掉", "漏了", "完全跳過", "完全跳过", "整個跳過", "整个跳过"}

// pronounSubject: a pronoun in before that is not inside a relative clause
// or a possessive (我讀過的…).
func pronounSubject(before string) bool {
	for _, p := range pronounSubjects {
		if k := strings.LastIndex(before, p); k >= 0 && !strings.Contains(before[k:], "的") {
			return true
		}
	}
	return false
}

// meiyou is 沒有/没有 (and 沒/没 before 有 forms): a claim unless an idiom or
// the agent's own action follows, or 有 precedes (有沒有: whether).
var meiyou = []string{"沒有", "没有", "並未", "并未", "沒", "没", "從來不", "从来不", "從不", "从不"}

// notIn: 不在 … 裡 ("pandas 不在 lockfile 裡").
var notIn = re(`(?:並|并)?不在[^，。；,;]{1,40}?(?:裡|里|中|內|内|上|清單|清单|列表|底下|下面|之下|目錄|目录)`)

// notInCause: 問題不在這裡 places a cause, it does not say a thing is missing.
var notInCause = re(`(?:問題|问题|原因|根因|癥結|症结|關鍵|关键|重點|重点)\s*(?:並|并|應該|应该|可能)?\s*$`)

var meiyouNotAfter = []string{
	"問題", "问题", "必要", "關係", "关系", "辦法", "办法", "意義", "意义", "想到", "注意", "完成", "成功", "生效",
	"影響", "影响", "差別", "差别", "區別", "区别", "回應", "回应", "反應", "反应", "權限", "权限", "時間", "时间",
	"用", "錯，", "错，", "錯。", "错。", "錯", "错", "要求", "真的", "太大", "那麼", "那么",
	"其他要做", "別的要做", "别的要做", "其他事", "更多要做", "什麼要做", "什么要做", "理由", "原因", "道理",
	"意見", "意见", "想法", "興趣", "兴趣", "把握", "別的事", "别的事", "其他的事", "其它事", "其它的事",
}

// meiNotAfter: after 沒/没 alone, idioms (沒事, 沒想到, 沒多久) and 有 (沒有 is
// matched as a word of its own).
var meiNotAfter = []string{"有", "事", "想", "多久", "多少", "什麼", "什么", "差", "空", "轍", "辙", "啥", "得", "法"}

// meiNeng: 沒能 + a verb is "could not …" (沒能復現: a failure), except with a
// finding verb (沒能找到: not found).
func meiNeng(rest string) bool {
	r, ok := strings.CutPrefix(rest, "能")
	return ok && !hasAnyPrefix(r, findingChinese)
}

var findingChinese = []string{"找到", "發現", "发现", "看到", "見到", "见到", "查到", "搜到", "找出", "定位到"}

// meiyouBehaviour after 沒有 says how something acts or that it failed, not
// that something is missing: 沒有阻塞事件迴圈, 測試沒通過. Followed by 的 it
// modifies a noun instead (沒有超時的任務: no timed-out tasks) and is a claim.
var meiyouBehaviour = []string{
	"阻塞", "卡住", "當機", "当机", "崩潰", "崩溃", "變慢", "变慢", "拖慢", "中斷", "中断", "洩漏", "泄漏",
	"破壞", "破坏", "阻擋", "阻挡", "等待", "重試", "重试", "超時", "超时", "通過", "通过", "跑完", "跑通",
	"過", "过", "成功", "變", "变", "壞", "坏", "掛", "挂", "反映", "用到", "用上", "當掉", "当掉", "處理", "处理",
	"回應", "回应", "響應", "响应", "走", "導致", "导致", "造成", "引起", "引發", "引发", "弄壞", "弄坏", "搞壞",
	"搞坏", "搞砸", "弄亂", "弄乱", "帶來", "带来", "考慮", "考虑", "更新", "批次", "批量", "並行", "并行",
	"非同步", "异步", "發生", "发生", "先", "改變", "改变", "起來", "起来", "上漲", "上涨", "成長", "成长", "增長", "增长", "下降", "回升", "波動", "波动",
}

// resultative complements: 沒啟動成功, 沒載入完成, 沒裝好, 沒跑完 say an action
// did not succeed, not that something is missing.
var resultative = []string{"成功", "完成", "起來", "起来", "好", "完"}

// failedResult: rest (after 沒/沒有) is a verb of one or two characters and
// a resultative complement.
func failedResult(rest string) bool {
	r := strings.TrimPrefix(rest, "能")
	for n, i := 0, 0; n < 2 && i < len(r); n++ {
		_, size := utf8.DecodeRuneInString(r[i:])
		i += size
		if r[i-size] < utf8.RuneSelf {
			return false
		}
		if hasAnyPrefix(r[i:], resultative) {
			return true
		}
	}
	return false
}

// notYet before an action is "not done yet" (遷移還沒跑), not "not there".
var notYet = []string{"還", "还", "尚", "仍", "仍然", "依然", "都還", "都还"}

// emptyChinese: 結果為空, 輸出是空的 (came back empty); not after 不/能/會
// (不能為空 is a norm, 不為空 the opposite).
var emptyChinese = []string{"為空", "为空", "是空的", "一片空白", "空空如也"}

// missingCount: 缺了 37 個鍵, 少了 52 个 key.
var missingCount = re(`(?:缺了|少了|缺少了)\s*(?:\d[\d,]*|[一二三四五六七八九十百千兩两幾几]+)\s*(?:個|个|條|条|筆|笔|項|项|行|列|種|种)?`)

// zeroChinese: 0 個失敗, 回傳 0 筆, 零個結果.
var zeroChinese = re(`(?:^|[^\d.,])(?:0|零)\s*(?:個|个|筆|笔|條|条|行|項|项|次|處|处|份)?\s*(?:結果|结果|失敗|失败|錯誤|错误|警告|命中|匹配|符合|問題|问题|測試失敗|测试失败|違規|违规|漏洞|告警|缺陷|筆|笔|條|条|行|項|项)`)

// meiyouNothingToAdd: 沒有(其他|別的|更多|什麼)要補充/說/做 … is "nothing (more) to
// add or do", said of the conversation, not of a source.
var meiyouNothingToAdd = re(`^(?:其他|其它|別的|别的|更多|什麼|什么|任何)?(?:的)?(?:要|需要|可以|可)(?:補充|补充|說|说|做|報告|报告|回報|回报|交代|提(?:[^交]|$)|處理|处理|問|问)`)

// meiyouActions after 沒有 are a deed not done ("我沒有修改…"): not a claim
// when the agent (or the user) is the subject, or the subject is left out;
// with another subject ("差異沒有動到 schema") or a relative clause ("沒有執行
// 遷移的步驟": no step that runs …) they are.
var meiyouActions = []string{
	"修改", "改動", "改动", "更改", "改變", "改变", "改", "動", "动", "碰", "運行", "运行", "執行", "执行", "跑",
	"提交", "刪除", "删除", "安裝", "安装", "做", "寫", "写", "讀", "读", "看完", "打開", "打开", "檢查", "检查",
	"查看", "推送", "合併", "合并", "部署", "重啟", "重启", "重新", "啟動", "启动", "建立", "创建", "新增", "增加",
	"加", "更新", "升級", "升级", "回滾", "回滚", "試", "试", "碰過", "碰过", "跑過", "跑过", "說", "说",
	"給", "给", "告訴", "告诉", "修", "合進", "合进", "合入", "上線", "上线", "發布", "发布", "發佈",
}

// deedTime: time words that may stand before a deed whose subject is left
// out (這次沒改到 schema: "this time [I] did not change …").
var deedTime = []string{"這次", "这次", "本次", "這回", "这回", "剛才", "刚才", "今天", "目前", "暫時", "暂时", "先"}

var pronounSubjects = []string{"我", "你", "您", "妳", "咱", "他們", "他们"}

// meiyouClaimAfter re-admits 沒有 forms the idiom list would drop: 沒有用到
// (not used), 沒有錯誤 (no errors).
var meiyouClaimAfter = []string{"錯誤", "错误", "被用", "被使用"}

var chineseConditional = []string{
	"如果", "若", "假如", "倘若", "要是", "萬一", "万一", "是否", "只要", "一旦", "確保", "确保", "確認", "确认",
	"應該", "应该", "必須", "必须", "以免", "避免", "看看", "看一下", "除非", "不管", "無論", "无论",
	"確定", "确定", "務必", "务必", "記得", "记得", "別忘", "别忘", "請先", "请先",
}

// yetChinese before a finding trigger scopes it to what was read so far.
var yetChinese = []string{"尚未", "還沒", "还没", "目前還", "目前还", "暫時", "暂时", "暫未", "暂未", "目前"}

// findTrigger returns the first absence trigger in clause cl of sentence sent.
func findTrigger(s string, cl, sent tspan) (tspan, bool) {
	c := s[cl.lo:cl.hi]
	sentText := s[sent.lo:sent.hi]
	if englishConditionalStart.MatchString(strings.TrimSpace(sentText)) {
		return tspan{}, false
	}
	best := tspan{-1, -1}
	rules := englishRules
	if !negationCue.MatchString(c) {
		rules = nil // every English rule needs one of these words: skip the regexps
	}
	for _, r := range rules {
		if !hasCue(c, r.cue) {
			continue
		}
		for _, m := range r.re.FindAllStringSubmatchIndex(c, 4) {
			if best.lo >= 0 && (m[0] > best.lo-cl.lo || m[0] == best.lo-cl.lo && cl.lo+m[1] <= best.hi) {
				break // the earliest trigger wins, the longest among equals
			}
			before, after := c[:m[0]], c[m[1]:]
			if r.notBefore != nil && r.notBefore.MatchString(before) {
				continue
			}
			if r.notAfter != nil && r.notAfter.MatchString(after) {
				continue
			}
			if englishConditional.MatchString(before) {
				continue
			}
			if r.verbNot != nil || r.objNot != nil {
				// The groups come from the match in the whole clause: matched
				// again from m[0], a leading \b before "'s" would fail.
				group := func(i int) string {
					if len(m) <= 2*i+1 || m[2*i] < 0 {
						return ""
					}
					return c[m[2*i]:m[2*i+1]]
				}
				v := group(1)
				if (r.verbNot[v] || r.verbNot[pastStem(v)]) && !(changeVerbs[v] && diffContext.MatchString(sentText)) || r.objNot[group(2)] ||
					r.baseVerb && strings.HasSuffix(v, "s") && !strings.HasSuffix(v, "ss") && !strings.HasPrefix(c[m[0]:], "never") {
					continue
				}
			}
			if r.idiom != nil {
				// normalize turns white space within a line into spaces, and
				// a clause ends at a line break: the trigger's `no\s+` is "no ".
				k := m[0] + max(strings.LastIndex(c[m[0]:m[1]], "no "), 0)
				if r.idiom.MatchString(c[k:]) {
					continue
				}
			}
			best = tspan{cl.lo + m[0], cl.lo + m[1]}
			break
		}
	}
	if sp, ok := findChineseTrigger(s, cl, sent); ok && (best.lo < 0 || sp.lo < best.lo) {
		best = sp
	}
	return best, best.lo >= 0
}

func hasCue(c string, cue []string) bool {
	if len(cue) == 0 {
		return true
	}
	for _, w := range cue {
		if strings.Contains(c, w) {
			return true
		}
	}
	return false
}

// findingTrigger: the trigger at sp is a "could not find" form, for which
// "yet" and "so far" scope the claim to what was read.
func findingTrigger(s string, sp tspan) bool {
	t := s[sp.lo:sp.hi]
	for _, r := range englishRules {
		if r.finding && r.re.MatchString(t) {
			return true
		}
	}
	for _, w := range []string{"找到", "發現", "发现", "看到"} {
		if strings.Contains(t, w) {
			return true
		}
	}
	return false
}

func findChineseTrigger(s string, cl, sent tspan) (tspan, bool) {
	c := s[cl.lo:cl.hi]
	if c == "" || isASCII(c) {
		return tspan{}, false
	}
	// 我看過的 diff 裡，沒有修改任何設定檔: a clause after a place phrase
	// (…裡，) has that place as its subject; 沒有 + an action there is not the
	// agent's own deed.
	locative := endsWithAny(strings.TrimRight(s[sent.lo:cl.lo], " ，,"), "裡", "里", "中", "內", "内")
	best := -1
	bestLen := 0
	consider := func(at, n int) {
		if best >= 0 && at >= best {
			return
		}
		for _, w := range chineseConditional {
			if strings.Contains(c[:at], w) {
				return
			}
		}
		best, bestLen = at, n
	}
	for _, w := range strongChinese {
		k := strings.Index(c, w)
		if k < 0 {
			continue
		}
		if attributive[w] && strings.HasPrefix(c[k+len(w):], "的") && !strings.HasPrefix(c[k+len(w):], "的是") {
			continue // 補上缺少的 import: "the missing import", an action
		}
		consider(k, len(w))
	}
	for _, w := range omitChinese {
		k := strings.Index(c, w)
		if k < 0 || strings.HasPrefix(c[k+len(w):], "的") && !strings.HasPrefix(c[k+len(w):], "的是") {
			continue
		}
		if pronounSubject(c[:k]) || truncationChinese.MatchString(c[:k]) {
			continue // 我漏掉了: the agent's own slip; 2744 行被省略: a cut output
		}
		consider(k, len(w))
	}
	for _, w := range meiyou {
		for from := 0; from < len(c); {
			k := strings.Index(c[from:], w)
			if k < 0 {
				break
			}
			at := from + k
			from = at + len(w)
			rest := strings.TrimLeft(c[at+len(w):], " ")
			if kept(c[:at], rest) || progressive(rest) {
				continue
			}
			if (w == "沒" || w == "没") && (hasAnyPrefix(rest, meiNotAfter) || meiNeng(rest)) ||
				meiyouActsOrFails(rest) && !allOf(s[sent.lo:cl.lo+at]) ||
				failedResult(rest) ||
				whenClause(rest) ||
				endsWithAny(c[:at], notYet...) && hasAnyPrefix(rest, meiyouActions) {
				continue
			}
			if strings.HasSuffix(c[:at], "有") || meiyouIdiom(rest) || !locative && meiyouDeed(c[:at], rest) ||
				meiyouPossession(c[:at], rest) || strings.Contains(rest, "就") {
				// 沒有 X 就 Y: "without X, Y" is a condition.
				continue
			}
			// 還沒有 + an action is "not yet done", not "not there".
			consider(at, len(w))
		}
	}
	if m := notIn.FindStringIndex(c); m != nil && !notInCause.MatchString(c[:m[0]]) {
		consider(m[0], m[1]-m[0])
	}
	for _, w := range emptyChinese {
		if k := strings.Index(c, w); k >= 0 && !endsWithAny(c[:k], "不", "能", "會", "会", "可", "可以", "應", "应") {
			consider(k, len(w))
		}
	}
	if m := missingCount.FindStringIndex(c); m != nil {
		consider(m[0], m[1]-m[0])
	}
	if m := zeroChinese.FindStringIndex(c); m != nil {
		lo := m[0]
		if lo < len(c) && c[lo] != '0' && !strings.HasPrefix(c[lo:], "零") {
			_, size := utf8.DecodeRuneInString(c[lo:])
			lo += size
		}
		consider(lo, m[1]-lo)
	}
	if best < 0 {
		return tspan{}, false
	}
	// Report 沒有找到 / 並沒有發現 as one phrase, and 沒在設定裡找到 with its place.
	end := best + bestLen
	if hasAnyPrefix(c[end:], []string{"在", "從", "从", "於", "于"}) {
		for _, w := range findingChinese {
			if k := strings.Index(c[end:], w); k >= 0 && k < 40 {
				end += k
				break
			}
		}
	}
	for _, w := range []string{"找到", "發現", "发现", "看到", "定義", "定义", "提到", "出現", "出现", "任何"} {
		if strings.HasPrefix(c[end:], w) {
			end += len(w)
			break
		}
	}
	return tspan{cl.lo + best, cl.lo + end}, true
}

// meiyouDeed: 沒有 + an action, said of the agent or with no subject, and
// not introducing a relative clause (…的 + noun).
func meiyouDeed(before, rest string) bool {
	act := false
	for _, w := range meiyouActions {
		if strings.HasPrefix(rest, w) {
			act = true
			break
		}
	}
	if !act {
		return false
	}
	// 我讀過的處理器都沒有檢查…: a pronoun followed by 的 is in a relative
	// clause or a possessive, and the subject is the noun after it.
	if pronounSubject(before) {
		return true
	}
	before = strings.TrimRight(before, " 並并還还都也就")
	for _, w := range deedTime {
		before = strings.TrimSuffix(strings.TrimRight(before, " ，,"), w)
	}
	return strings.TrimSpace(before) == "" && !strings.Contains(rest, "的")
}

// meiyouPossession: 我沒有 + a noun is "I don't have …" (access,
// credentials): about the agent, not about a source. 我沒有找到/看到 stays a
// claim.
func meiyouPossession(before, rest string) bool {
	before = strings.TrimRight(before, " 並并還还也都就")
	// 沒有正式環境的權限: a permission or an account with the subject left
	// out is the agent's own.
	if strings.TrimSpace(before) == "" {
		for _, w := range []string{"權限", "权限", "存取權", "访问权", "帳號", "账号", "憑證", "凭证"} {
			if strings.Contains(rest, w) {
				return true
			}
		}
		return false
	}
	// 我還沒在設定裡找到: a place, then a finding verb: a finding, not a possession.
	if hasAnyPrefix(rest, []string{"在", "從", "从", "於", "于"}) && containsAny(rest, findingChinese) {
		return false
	}
	if !strings.HasSuffix(before, "我") && !strings.HasSuffix(before, "我們") && !strings.HasSuffix(before, "我们") {
		return false
	}
	for _, w := range []string{"找到", "發現", "发现", "看到", "見到", "见到", "查到", "搜到", "收到", "拿到", "讀到", "读到"} {
		if strings.HasPrefix(rest, w) {
			return false
		}
	}
	return true
}

// countedSubject: 前兩個檔案都…, 三個服務都…: a counted set before 都.
var countedSubject = re(`(?:\d+|[兩两三四五六七八九十幾几]+)\s*(?:個|个|份|支|條|条|項|项|張|张)`)

// kept: 一直沒有 ready, 遲遲沒啟動: something kept not happening, a failure;
// 一直沒找到 is still a finding.
func kept(before, rest string) bool {
	return endsWithAny(before, "一直", "始終", "始终", "遲遲", "迟迟", "一直都", "始終都") &&
		!hasAnyPrefix(rest, findingChinese)
}

// progressive: 沒在跑, 沒在運行 ("was not running") is a state; 沒在設定裡找到
// (a place, then a finding) is not this.
func progressive(rest string) bool {
	r, ok := strings.CutPrefix(rest, "在")
	if !ok {
		return false
	}
	for _, v := range []string{"跑", "運行", "运行", "執行", "执行", "工作", "監聽", "监听", "動", "动", "線上", "线上", "用"} {
		if strings.HasPrefix(r, v) {
			return !modifiesNoun(r[len(v):]) // 沒在執行的容器: no running containers
		}
	}
	return false
}

// allOf: 所有/每個/任何 … 都 before 沒有 quantifies over the things of a
// source ("none of the objects handles it"), which makes even a behaviour
// verb a claim, as "none of" does in English.
func allOf(before string) bool {
	b := strings.TrimRight(before, " ")
	if !strings.HasSuffix(b, "都") && !strings.HasSuffix(b, "全都") {
		return false
	}
	for _, q := range []string{"所有", "每個", "每个", "每一個", "每一个", "任何", "全部", "各個", "各个", "這些", "这些", "那些"} {
		if strings.Contains(b, q) {
			return true
		}
	}
	return countedSubject.MatchString(b)
}

// whenClause: 沒有暫存的檔案時，… is "when there are none", a condition.
func whenClause(rest string) bool {
	if containsAny(rest, []string{"的時候", "的时候", "時候", "时候", "之時", "之时"}) {
		return true
	}
	r := strings.TrimSpace(rest)
	return strings.HasSuffix(r, "時") || strings.HasSuffix(r, "时")
}

func containsAny(s string, subs []string) bool {
	for _, w := range subs {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// adverbial behaviour words qualify a following verb (批量匯出): with 的
// after that verb they modify a noun (沒有批量匯出的介面: no batch-export API).
var adverbial = map[string]bool{"批次": true, "批量": true, "並行": true, "并行": true, "非同步": true, "异步": true, "先": true}

// modifiesNoun: r (after a verb) reaches 的 within two more Chinese
// characters: the verb is in a relative clause (批量|匯出|的 介面).
func modifiesNoun(r string) bool {
	for n := 0; n <= 2; n++ {
		if strings.HasPrefix(r, "的") {
			return true
		}
		c, size := utf8.DecodeRuneInString(r)
		if size == 0 || c < utf8.RuneSelf {
			return false
		}
		r = r[size:]
	}
	return false
}

// meiyouActsOrFails: 沒有 + a behaviour verb not introducing a relative clause.
func meiyouActsOrFails(rest string) bool {
	for _, a := range []string{"再也", "再", "有再", "真的", "真正"} {
		if r, ok := strings.CutPrefix(rest, a); ok {
			rest = r
			break
		}
	}
	for _, v := range meiyouBehaviour {
		if !strings.HasPrefix(rest, v) {
			continue
		}
		r := rest[len(v):]
		if strings.HasPrefix(r, "的") || adverbial[v] && modifiesNoun(r) {
			return false // modifies a noun: 沒有超時的任務, 沒有批量匯出的介面
		}
		if (v == "過" || v == "过") && (strings.HasPrefix(r, "濾") || strings.HasPrefix(r, "滤")) {
			return false // 過濾: filtering, not passing
		}
		return true
	}
	return false
}

func endsWithAny(s string, suffixes ...string) bool {
	s = strings.TrimRight(s, " ")
	for _, x := range suffixes {
		if strings.HasSuffix(s, x) {
			return true
		}
	}
	return false
}

func meiyouIdiom(rest string) bool {
	if meiyouNothingToAdd.MatchString(rest) {
		return true
	}
	for _, w := range meiyouClaimAfter {
		if strings.HasPrefix(rest, w) {
			return false
		}
	}
	for _, w := range meiyouNotAfter {
		if strings.HasPrefix(rest, w) {
			return true
		}
	}
	return false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// scopeMatch is a scope phrase found in a claim's sentence.
type scopeMatch struct {
	span tspan
	rng  ScopeRange
}

var (
	numWord = `(\d[\d,]*|one|two|three|four|five|six|seven|eight|nine|ten|twenty|fifty|hundred|few|several)`
	// scopeNumeric: "the first 2,000 lines", "the last 128 lines".
	scopeFirstN = re(`\b(?:the\s+)?(first|last|top|initial|opening|final)\s+` + numWord + `\s+(?:(?:search|grep|log|output|query|matching)\s+)?(lines?|rows?|characters?|chars?|bytes?|kb|results?|matches|entries|items|files|pages?|records|hits|tokens|packages|screens?|commits|messages|events|tests|issues|comments|users|jobs|pods|logs|mb|gb|megabytes|kilobytes)\b`)
	// scopeLines: "lines 1-500", "up to line 2000".
	scopeLines  = re(`\b(lines?|rows?|records?|entries|entry|items?|results?)\s+(\d[\d,]*)\s*(?:-|–|—|to|through|thru)\s*(\d[\d,]*)\b`)
	scopeUpTo   = re(`\b(?:up\s+to|until|before|through)\s+(?:line|row)\s+(\d[\d,]*)\b`)
	scopeEnglsh = re(`\b(?:in|of|from|within|among|across|on)\s+(?:the\s+|this\s+|these\s+)?(?:part|parts|portion|portions|section|sections|lines|rows|chunk|chunks|bit|excerpt|excerpts|snippet|snippets|sample|slice|output|results|content|text|page|pages|file|files|log|logs|entries|records|messages|matches|items|commits|events|documents|responses)\s+(?:that\s+|which\s+)?(?:i|we)(?:'ve|\s+have|\s+had|'d)?\s+(?:\w+\s+)?(?:read|seen|saw|looked\s+at|checked|viewed|got|received|was\s+shown|were\s+shown|could\s+see|can\s+see|scanned|inspected|reviewed|opened|fetched|loaded)\b` +
		`|\b(?:in|of|from|within|among)\s+what\s+(?:i|we)(?:'ve|\s+have|\s+had)?\s+(?:\w+\s+)?(?:read|seen|saw|see|looked\s+at|checked|viewed|view|got|get|received|been\s+shown|could\s+see|can\s+see|reviewed|scanned|fetched|fetch|load|loaded|open|opened|access|accessed)\b` +
		`|\b(?:part|portion|bit|chunk|lines|rows|section)\s+(?:that|which)\s+(?:arrived|came\s+through|loaded|got\s+through|made\s+it|was\s+returned|were\s+returned|was\s+delivered|were\s+delivered|i\s+got|we\s+got|i\s+received)\b` +
		`|\b(?:in|of|from|within)\s+what\s+(?:i|we)\s+(?:was|were|have\s+been|'ve\s+been|had\s+been)\s+(?:shown|given|sent)\b` +
		`|\bfrom\s+what\s+(?:i|we)\s+(?:can|could)\s+see\b|\bas\s+far\s+as\s+(?:i|we)\s+(?:can|could)\s+(?:see|tell)\b|\bas\s+far\s+as\s+(?:i|we)(?:'ve|\s+have)?\s+(?:read|looked|seen)\b` +
		`|\b(?:the\s+)?(?:visible|shown|displayed|returned|truncated|partial|excerpted|previewed|loaded|fetched)\s+(?:(?:test|build|search|grep|command|query|api|log|diff|page|file|tool|job|ci|shell|curl)\s+)?(?:part|portion|output|lines|section|text|content|results|page|excerpt|chunk|preview|window|slice|range|head|tail|listing|list|log|file|trace|response|diff|table|region|area|rows|bit)\b` +
		`|\b(?:part|portion|section|lines|bit|chunk|excerpt|page|pages|output|results|sample|subset|fragment|extract|rows|records|entries)\s+(?:of\s+(?:the\s+)?(?:[\d,]+\s+)?(?:[\w.-]+\s+){1,3}?)?(?:that\s+|which\s+)?(?:i|we)(?:'ve|\s+have|\s+had)?\s+(?:was\s+|were\s+)?(?:(?:could|can|was\s+able\s+to|were\s+able\s+to|managed\s+to)\s+)?(?:read|seen|saw|see|shown|looked\s+at|look\s+at|checked|check|viewed|view|got|get|received|scanned|scan|fetched|fetch|opened|open|load|loaded|access|accessed|pulled|sampled|exported|downloaded|retrieved|extracted|scrolled|skimmed|browsed)\b` +
		`|\b(?:part|portion|lines|page|section|output|results)\s+(?:shown|displayed|returned|visible|provided|i\s+got|we\s+got|loaded|i\s+read|i\s+saw|i\s+was\s+shown)\b` +
		`|\b(?:part|portion|section|chunk|lines|rows|bit|slice)\s+of\s+(?:the\s+)?(?:[\w.-]+\s+){1,3}?(?:that|which)\s+(?:was|were|got|has\s+been|have\s+been)\s+(?:returned|shown|displayed|delivered|loaded|fetched|printed|sent|kept|included)\b` +
		`|\b(?:the|this)\s+(?:[\w.-]+\s+)?(?:preview|excerpt|snippet)\b|\bso\s+far\b|\bup\s+to\s+now\b|\bas\s+of\s+now\b` +
		// what reached the agent, named by who delivered it: "what the
		// dashboard showed me", "the rows the query returned", "the part … that loaded".
		`|\bwhat\s+(?:the\s+)?(?:[\w.-]+\s+){0,3}?(?:showed|shows|gave|gives|sent|returned|displayed|printed)\s+(?:me|us)\b` +
		`|\b(?:shown|given|sent|displayed|returned|handed)\s+(?:to\s+)?(?:me|us)\b` +
		`|\b(?:the\s+)?(?:[\w.-]+\s+){1,3}?(?:that\s+|which\s+)?(?:the\s+)?(?:tool|api|search|command|server|fetch|query|viewer|endpoint|reader)\s+(?:returned|gave\s+me|showed\s+me|sent|delivered|displayed)\b` +
		`|\b(?:part|portion|section|chunk|bit|slice|lines|rows)\s+of\s+(?:the\s+)?(?:[\w.-]+\s+){1,3}?(?:that|which)\s+(?:loaded|came\s+through|arrived|got\s+through|rendered|downloaded|opened|was\s+readable|i\s+got)\b` +
		// a delivered quantity: "those 10,000 lines", "the returned 500 rows",
		// "the 50 results the API returned".
		`|\b(?:those|these)\s+(?:\d[\d,]*|few|several)\s+(?:lines|rows|results|entries|records|items|matches|hits|files|pages|messages|events|commits)\b|\b(?:of|among|in)\s+(?:those|these)\s+\d[\d,]*(?:\s+(?:lines|rows|results|entries|records|items|matches|hits|files|pages|messages|events|commits))?\b` +
		`|\bthe\s+(?:returned|delivered|visible|shown|loaded|fetched|received|displayed)\s+(?:\d[\d,]*\s+)?(?:lines|rows|results|entries|records|items|matches|hits|files|pages|messages|events|commits)\b` +
		`|\bthe\s+\d[\d,]*\s+(?:lines|rows|results|entries|records|items|matches|hits|files|pages|messages|events|commits)\s+(?:that\s+)?(?:(?:the\s+)?[\w.-]+\s+)?(?:returned|showed|sent|gave|delivered|loaded|printed|displayed|i\s+got|i\s+received|i\s+saw|we\s+got)\b` +
		// what the agent holds or could see: "the chunk I have", "the 2,000
		// lines available to me", "what's visible", "what came back".
		`|\b(?:the|this|that|these|those)\s+(?:[\w.,-]+\s+){0,2}?(?:part|portion|chunk|section|bit|slice|excerpt|sample|lines|rows|results|output|log|logs|data|page|pages|response|text|content|matches|hits|entries|records|files|listing)\s+(?:that\s+|which\s+)?(?:i|we)\s+(?:have|had|'ve\s+got|got|hold|was\s+given|were\s+given|was\s+sent|were\s+sent|have\s+access\s+to|had\s+access\s+to)\b` +
		`|\b(?:available|visible|accessible|shown|known)\s+to\s+(?:me|us)\b` +
		`|\b(?:sampled|pulled|fetched|selected|picked|extracted|exported|retrieved)\s+for\s+(?:me|us)\b` +
		`|\b(?:lines|rows|part|portion|section|entries|results|output|region)\s+(?:that|which)\s+(?:are|were|is|was)\s+(?:visible|shown|displayed|on\s+screen|in\s+view|loaded|available)\b` +
		`|\b(?:part|portion|section|chunk|bit|lines|rows)\s+(?:of\s+(?:the\s+)?(?:[\w.-]+|x+)\s+)?(?:that|which)\s+(?:fit|fits|fitted)\s+(?:in|on|into)\b` +
		`|\b(?:the|a|this|that)\s+(?:subset|fragment|sample|extract|selection)\s+of\b` +
		`|\bwhat\s+(?:i|we)\s+(?:could|can|was\s+able\s+to|were\s+able\s+to|managed\s+to)\s+(?:scroll|page|skim|browse|get)\s+(?:through|to)\b|\bas\s+far\s+as\s+(?:i|we)(?:'ve|\s+have)?\s+(?:scrolled|skimmed|browsed|paged|gotten|got)\b` +
		`|\bwhat(?:'s|\s+is|\s+was|\s+were)\s+(?:visible|shown|displayed|available|loaded|readable|in\s+view)\b|\bwhat\s+(?:came\s+back|arrived|got\s+through|loaded|was\s+returned|i\s+have|we\s+have)\b` +
		`|\beverything\s+(?:that\s+)?(?:i|we)\s+(?:was\s+able\s+to|were\s+able\s+to|could|can|have|managed\s+to)\s*(?:see|read|load|open|view|check)?\b` +
		// the agent says it saw only part: "I only saw part of the output"
		`|\bonly\s+(?:saw|read|got|received|looked\s+at|have|had|viewed|checked|skimmed|loaded|fetched|see)\s+(?:(?:a|the)\s+)?(?:part|portion|some|half|first|top|beginning|start|few|fraction|sample|excerpt|preview|head|tail)\b` +
		`|\bthe\s+(?:first|opening|initial|top)\s+(?:part|section|portion|half|screen|screenful|chunk|batch|window|few\s+lines)\b` +
		`|\b(?:the\s+)?(?:available|sampled)\s+(?:output|lines|log|logs|results|data|rows|part|portion|records|entries)\b` +
		// cut output: "the partial `journalctl` output", "the trimmed log"
		`|\b(?:the\s+)?(?:truncated|partial|trimmed|clipped|abridged|cut|cut-off|shortened)\s+(?:(?:[\w-]+|x+)\s+){0,2}?(?:output|log|logs|listing|response|results|diff|trace|dump|file|page|text|content|list)\b` +
		`|\bthe\s+(?:head|tail|beginning|start|top)\s+of\s+(?:the|this|that)\s+(?:[\w.-]+|x+)|\b(?:this|the\s+first|the\s+current)\s+page\b|\bthe\s+(?:first|opening)\s+(?:part|section|portion|half|screen|chunk)\b`)
	scopeYet = re(`\byet\b`)

	scopeChineseFirstN = re(`前\s*(\d[\d,，]*|[一二三四五六七八九十百千萬万兩两]+)\s*(行|列|筆|笔|條|条|個結果|个结果|項|项|頁|页|個字元|个字符|字元|字符|個字|个字|字|位元組|字节|kb|個檔案|个文件|个|個)`)
	scopeChineseBefore = re(`第\s*(\d[\d,]*)\s*行(?:之前|以前|前)`)
	scopeChineseRange  = re(`第?\s*(\d[\d,]*)\s*(?:行)?\s*(?:到|至|-|–|~|～|—)\s*(?:第\s*)?(\d[\d,]*)\s*行`)
	// scopeChineseSeen: what reached the agent, as a relative clause:
	// 我看得到的輸出, 我能打開的, 顯示給我的, 我收到的.
	scopeChineseSeen = re(`(?:我|我們|我们|目前|現在|现在|已經|已经|能|可以)(?:能|可以|所)?(?:看得到|看得見|看得见|看到|讀到|读到|收到|拿到|打開|打开|打得開|打得开|載入|加载|載得入|讀過|读过|看過|看过|取得|获取|獲取|讀取|读取|抓到|下載|下载)(?:了|過|过)?的|(?:顯示|显示|傳|传|發|发|回傳|回传|返回)給(?:我|我們)的|(?:显示|返回|传|发)给(?:我|我们)的`)
	// scopeChineseDelivered: a delivered quantity: 回傳的 500 筆, 這一萬行, 返回的 1000 条.
	scopeChineseDelivered = re(`(?:回傳|回传|返回|傳回|传回|收到|拿到|顯示|显示|載入|加载|取得|获取|獲取|輸出|输出)(?:的|了)\s*(?:\d[\d,]*|[一二三四五六七八九十百千萬万兩两]+)\s*(?:筆|笔|條|条|行|列|個|个|項|项|頁|页)|(?:這|这|那)\s*(?:\d[\d,]*|[一二三四五六七八九兩两]?[十百千萬万][一二三四五六七八九十百千萬万兩两]*)\s*(?:筆|笔|條|条|行|列|項|项|頁|页|個結果|个结果)|排名前\s*\d[\d,]*` +
		// what the agent holds or said it saw only part of: 我手上這段, 可見範圍,
		// 從現有的輸出看, 只看了一部分, 開頭那段.
		`|手(?:上|邊|边|頭|头)(?:的|這|这|那)|可見範圍|可见范围|看得到的範圍|看得到的范围|能看到的範圍|能看到的范围` +
		`|(?:從|从|就|以|根據|根据)(?:目前|現在|现在)?(?:現有|现有|已有|手上|手邊|手边)的?(?:輸出|输出|資料|数据|日誌|日志|內容|内容|資訊|信息|結果|结果|資料來看|数据来看)` +
		`|只(?:看|讀|读|拿到|收到|載入|加载|抓|抓到|取得|获取|獲取)(?:了|過|过)?(?:一|一小|一部)?部分|只(?:看|讀|读)(?:了|過|过)?(?:前|開頭|开头)` +
		`|(?:開頭|开头|前面)那(?:段|幾行|几行|部分)|前(?:幾|几)行` +
		`|(?:看|讀|读|翻|捲|卷|滾|滚|瀏覽|浏览|載入|加载|掃|扫|拉)(?:得到|得見|得见|到|過|过|動過|动过|了)?的(?:範圍|范围|那幾行|那几行|那段|幾頁|几页|那幾頁|那几页)` +
		`|樣本|样本|抽樣的|抽样的|採樣的|采样的` +
		`|(?:^|[^大一小這这那])部分(?:的)?(?:回應|响应|回傳|回传|輸出|输出|日誌|日志|結果|结果|內容|内容|資料|数据|檔案|文件|清單|清单)`)
)

var scopeChinese = []string{
	"讀到的", "读到的", "讀過的", "读过的", "已讀", "已读", "已經讀", "已经读", "看到的部分", "看到的內容", "看到的内容",
	"看過的", "看过的", "顯示的", "显示的", "顯示出來的", "显示出来的", "可見的", "可见的", "預覽", "预览", "截斷", "截断",
	"節錄", "节选", "摘錄", "摘录", "片段", "目前為止", "目前为止", "到目前", "迄今", "目前讀到", "目前读到", "目前看到",
	"目前看過", "目前看过", "這一頁", "这一页", "這頁", "这页", "本頁", "本页", "第一頁", "第一页", "前半", "檔案開頭", "文件开头", "文件開頭", "輸出開頭", "输出开头", "日誌開頭", "日志开头", "的開頭", "的开头",
	"我讀的", "我读的", "我看的", "讀取的部分", "读取的部分", "回傳的部分", "返回的部分", "已載入", "已加载",
	"部分內容", "部分内容", "這部分", "这部分", "這一段", "这一段", "目前的內容", "目前的内容",
	"我看到的", "的那部分", "的那一部分", "的部分裡", "的部分里", "的部分中",
}

// contrastWord ends the reach of a scope phrase: in "the first two forward
// it, but the orders service has no propagator" the range belongs to the
// first clause, not to the claim.
var contrastWord = re(`\s(?:but|however|whereas|although|though)\s|但是|但|不過|不过|可是|卻|却|然而`)

// anaphor: the claim's own clause points back at the scope named before the
// contrast ("… was cut off, but within it there are no hits").
var anaphor = re(`\b(?:within|in|among|of|from)\s+(?:it|them|those|these|that)\b|其中|裡面|里面|這裡面|这里面|當中|当中`)

// scopeReach is the part of sentence sent a scope phrase for the claim at
// tr may come from: the sentence, cut at contrast words around the claim.
func scopeReach(s string, sent, tr tspan) tspan {
	reach := sent
	before := s[sent.lo:tr.lo]
	for _, m := range contrastWord.FindAllStringIndex(before, -1) {
		reach.lo = sent.lo + m[0]
	}
	if m := contrastWord.FindStringIndex(s[tr.hi:sent.hi]); m != nil {
		reach.hi = tr.hi + m[0]
	}
	if anaphor.MatchString(s[reach.lo:reach.hi]) {
		return sent
	}
	return reach
}

// findScope looks for a scope phrase in sentence sent for the claim at tr.
func findScope(s string, sent tspan, tr tspan) (scopeMatch, bool) {
	sent = scopeReach(s, sent, tr)
	t := s[sent.lo:sent.hi]
	at := func(lo, hi int) tspan { return tspan{sent.lo + lo, sent.lo + hi} }
	if m := scopeFirstN.FindStringSubmatchIndex(t); m != nil {
		sc := scopeMatch{span: at(m[0], m[1])}
		which, num, unit := t[m[2]:m[3]], t[m[4]:m[5]], t[m[6]:m[7]]
		if n, ok := parseCount(num); ok {
			switch which {
			case "first", "top", "initial", "opening":
				sc.rng = firstN(n, englishUnit(unit))
			case "last", "final":
				sc.rng = lastN(n, englishUnit(unit))
			}
		}
		return sc, true
	}
	if m := scopeLines.FindStringSubmatchIndex(t); m != nil {
		sc := scopeMatch{span: at(m[0], m[1])}
		a, ok1 := parseCount(t[m[4]:m[5]])
		b, ok2 := parseCount(t[m[6]:m[7]])
		// Only lines and rows are numbered from 1 like a Read's shown range;
		// "results 1-50" is a scope whose range cannot be checked.
		if ok1 && ok2 && a <= b && englishUnit(t[m[2]:m[3]]) == schema.UnitLines {
			sc.rng = ScopeRange{Known: true, Start: a, End: b, Unit: schema.UnitLines}
		}
		return sc, true
	}
	if m := scopeUpTo.FindStringSubmatchIndex(t); m != nil {
		sc := scopeMatch{span: at(m[0], m[1])}
		if n, ok := parseCount(t[m[2]:m[3]]); ok {
			sc.rng = ScopeRange{Known: true, Start: 1, End: n, Unit: schema.UnitLines}
		}
		return sc, true
	}
	if m := scopeEnglsh.FindStringIndex(t); m != nil {
		return scopeMatch{span: at(m[0], m[1])}, true
	}
	if findingTrigger(s, tr) {
		if m := scopeYet.FindStringIndex(t); m != nil {
			return scopeMatch{span: at(m[0], m[1])}, true
		}
		for _, w := range yetChinese {
			if k := strings.Index(t, w); k >= 0 {
				return scopeMatch{span: at(k, k+len(w))}, true
			}
		}
	}
	if isASCII(t) {
		return scopeMatch{}, false
	}
	if m := scopeChineseFirstN.FindStringSubmatchIndex(t); m != nil {
		sc := scopeMatch{span: at(m[0], m[1])}
		if n, ok := parseCount(t[m[2]:m[3]]); ok {
			sc.rng = firstN(n, chineseUnit(t[m[4]:m[5]]))
		}
		return sc, true
	}
	if m := scopeChineseBefore.FindStringSubmatchIndex(t); m != nil {
		sc := scopeMatch{span: at(m[0], m[1])}
		if n, ok := parseCount(t[m[2]:m[3]]); ok && n > 1 {
			sc.rng = ScopeRange{Known: true, Start: 1, End: n - 1, Unit: schema.UnitLines}
		}
		return sc, true
	}
	if m := scopeChineseRange.FindStringSubmatchIndex(t); m != nil {
		sc := scopeMatch{span: at(m[0], m[1])}
		a, ok1 := parseCount(t[m[2]:m[3]])
		b, ok2 := parseCount(t[m[4]:m[5]])
		if ok1 && ok2 && a <= b {
			sc.rng = ScopeRange{Known: true, Start: a, End: b, Unit: schema.UnitLines}
		}
		return sc, true
	}
	for _, w := range scopeChinese {
		if k := strings.Index(t, w); k >= 0 {
			return scopeMatch{span: at(k, k+len(w))}, true
		}
	}
	for _, r := range []*regexp.Regexp{scopeChineseSeen, scopeChineseDelivered} {
		if m := r.FindStringIndex(t); m != nil {
			return scopeMatch{span: at(m[0], m[1])}, true
		}
	}
	return scopeMatch{}, false
}

// lastN is "the last n" of unit u: a range only the output's end places.
func lastN(n uint64, u schema.Unit) ScopeRange {
	r := firstN(n, u)
	r.Start, r.End, r.FromEnd = 0, n, r.Known
	return r
}

func firstN(n uint64, u schema.Unit) ScopeRange {
	switch u {
	case schema.UnitLines:
		return ScopeRange{Known: n > 0, Start: 1, End: n, Unit: u}
	case schema.UnitChars, schema.UnitBytes, schema.UnitItems:
		return ScopeRange{Known: n > 0, Start: 0, End: n, Unit: u}
	}
	return ScopeRange{}
}

func englishUnit(w string) schema.Unit {
	switch strings.TrimSuffix(w, "s") {
	case "line", "row":
		return schema.UnitLines
	case "character", "char":
		return schema.UnitChars
	case "byte":
		return schema.UnitBytes
	case "result", "matche", "match", "entrie", "item", "record", "hit":
		return schema.UnitItems
	}
	return schema.UnitNone
}

func chineseUnit(w string) schema.Unit {
	switch w {
	case "行", "列":
		return schema.UnitLines
	case "個字元", "个字符", "字元", "字符", "個字", "个字", "字":
		return schema.UnitChars
	case "位元組", "字节":
		return schema.UnitBytes
	case "筆", "笔", "條", "条", "個結果", "个结果", "項", "项":
		return schema.UnitItems
	}
	return schema.UnitNone
}

var englishNumbers = map[string]uint64{
	"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
	"ten": 10, "twenty": 20, "fifty": 50, "hundred": 100,
}

// parseCount reads "2,000", "2000", "two", "兩千", "一百".
func parseCount(s string) (uint64, bool) {
	s = strings.NewReplacer(",", "", "，", "").Replace(strings.TrimSpace(s))
	if n, ok := englishNumbers[s]; ok {
		return n, true
	}
	if s == "" {
		return 0, false
	}
	if isDigit(s[0]) {
		var n uint64
		for i := 0; i < len(s); i++ {
			if !isDigit(s[i]) || n > 1<<40 {
				return 0, false
			}
			n = n*10 + uint64(s[i]-'0')
		}
		return n, true
	}
	return parseChineseNumber(s)
}

// parseChineseNumber reads numbers up to the ten thousands: 一百, 兩千, 三千五百.
func parseChineseNumber(s string) (uint64, bool) {
	digits := map[rune]uint64{'一': 1, '二': 2, '兩': 2, '两': 2, '三': 3, '四': 4, '五': 5, '六': 6, '七': 7, '八': 8, '九': 9}
	units := map[rune]uint64{'十': 10, '百': 100, '千': 1000, '萬': 10000, '万': 10000}
	var total, cur uint64
	for _, r := range s {
		if d, ok := digits[r]; ok {
			cur = d
			continue
		}
		u, ok := units[r]
		if !ok {
			return 0, false
		}
		if cur == 0 {
			cur = 1
		}
		total += cur * u
		cur = 0
	}
	total += cur
	return total, total > 0
}
