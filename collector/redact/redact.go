// Package redact removes secrets from text before it is stored (docs/design.md §10.4):
// provider API keys and tokens, Authorization headers, JWTs, private-key
// blocks, credentials in URLs and password or token assignments. It errs on
// the side of redacting: stored text is evidence for a postmortem, not a copy
// to run again.
//
// Only stored text is redacted. Sizes, hashes and truncation forensics are
// measured on the original text before it gets here, so a redaction never
// changes what a record says about the output.
//
// The rule set is a compact table (rules.go) rather than a general
// secret-scanning engine: the engines' rule sets are tuned for scanning
// repositories (entropy thresholds that let ordinary passwords through, no
// rules for credentials in URLs or environment assignments) and their
// detection code pulls in archive, terminal and logging dependencies that a
// collector does not need. Deployments add their own patterns in
// configuration (Pattern).
package redact

import (
	"fmt"
	"regexp"
	"strings"
)

// Placeholder replaces every secret.
const Placeholder = "[REDACTED]"

// secretGroupPrefix names the submatches that are the secret itself: when a
// rule has any, only they are replaced, so "password=" or "Bearer " stays
// and the redacted text still says what was there. A rule without them has
// its whole match replaced.
const secretGroupPrefix = "secret"

// Pattern is a rule added in configuration.
type Pattern struct {
	// Name identifies the rule in errors.
	Name string `mapstructure:"name"`
	// Regex is an RE2 expression (Go regexp syntax). Submatches named
	// secret (or secret2, secret3…) are replaced; without one, the whole
	// match is.
	Regex string `mapstructure:"regex"`
	// Keywords, if given, are substrings (matched case-insensitively) one of
	// which must be present for the regex to run: a cheap pre-filter.
	Keywords []string `mapstructure:"keywords"`
}

// Validate names the bad field.
func (p Pattern) Validate() error {
	_, err := compile(p)
	return err
}

type rule struct {
	name     string
	keywords []string // lower case; empty = always run
	re       *regexp.Regexp
	groups   []int // submatch indexes whose names start with "secret"
	// valid, when set, must accept the secret for it to be replaced (a
	// check a regular expression cannot make, such as "decodes to user:pass").
	valid func(secret string) bool
}

func compile(p Pattern) (rule, error) {
	if strings.TrimSpace(p.Name) == "" {
		return rule{}, fmt.Errorf("redact pattern %q: name is required", p.Regex)
	}
	re, err := regexp.Compile(p.Regex)
	if err != nil {
		return rule{}, fmt.Errorf("redact pattern %s: %w", p.Name, err)
	}
	r := rule{name: p.Name, re: re}
	for _, k := range p.Keywords {
		k = strings.ToLower(k)
		if len(k) < 2 {
			// Too short to pre-filter on: the regex runs on every text.
			r.keywords = nil
			break
		}
		r.keywords = append(r.keywords, k)
	}
	for i, n := range re.SubexpNames() {
		if strings.HasPrefix(n, secretGroupPrefix) {
			r.groups = append(r.groups, i)
		}
	}
	return r, nil
}

// Redactor applies a rule set. It is safe for concurrent use.
type Redactor struct {
	rules []rule
	// byFirst indexes every keyword by its first (lower-case) byte, so one
	// pass over the text finds which rules can match at all.
	byFirst [256][]keywordRef
	// pairs has a bit for every byte pair the scan must stop at (see
	// candidates): most pairs of ordinary text are rejected with one lookup.
	pairs  [1 << 16 / 64]uint64
	always []int // rules without keywords
	// fields is Record's per-type plan of the fields to visit.
	fields fieldPlans
}

type keywordRef struct {
	keyword string
	rule    int
}

func (r *Redactor) add(c rule) {
	i := len(r.rules)
	r.rules = append(r.rules, c)
	if len(c.keywords) == 0 {
		r.always = append(r.always, i)
		return
	}
	for _, k := range c.keywords {
		r.byFirst[k[0]] = append(r.byFirst[k[0]], keywordRef{k, i})
		// The scan looks at the pairs starting at even offsets. A keyword
		// at an even offset starts such a pair; one at an odd offset has
		// its second and third bytes there, or, two bytes long, its second
		// byte followed by anything.
		r.setPair(k[0], k[1])
		if len(k) >= 3 {
			r.setPair(k[1], k[2])
		} else {
			for b := 0; b < 256; b++ {
				r.setPair(k[1], byte(b))
			}
		}
	}
}

func (r *Redactor) setPair(a, b byte) {
	p := uint16(a)<<8 | uint16(b)
	r.pairs[p/64] |= 1 << (p % 64)
}

var defaultRedactor = mustNew()

func mustNew() *Redactor {
	r, err := New(nil)
	if err != nil {
		panic(err) // the built-in table is fixed; a test compiles it
	}
	return r
}

// Default is the built-in rule set.
func Default() *Redactor { return defaultRedactor }

// New returns the built-in rules followed by extra.
func New(extra []Pattern) (*Redactor, error) {
	r := &Redactor{}
	for _, b := range builtin {
		c, err := compile(b.Pattern)
		if err != nil {
			return nil, err
		}
		c.valid = b.valid
		r.add(c)
	}
	for _, p := range extra {
		c, err := compile(p)
		if err != nil {
			return nil, err
		}
		r.add(c)
	}
	return r, nil
}

// String returns text with secrets replaced by the built-in rules, and how
// many were replaced.
func String(text string) (string, int) { return defaultRedactor.String(text) }

// String returns text with secrets replaced, and how many were replaced.
// Text that is already redacted comes back unchanged with a count of 0, so
// redacting twice (collector processor, then the writer) counts once.
func (r *Redactor) String(text string) (string, int) {
	if r == nil || len(text) < 8 {
		return text, 0
	}
	// Up to 64 rules (the built-in table has fewer) the candidate set lives
	// on the stack: this runs for every string of every span.
	var buf [64]bool
	var candidates []bool
	if len(r.rules) <= len(buf) {
		candidates = buf[:len(r.rules)]
	} else {
		candidates = make([]bool, len(r.rules))
	}
	if r.candidates(text, candidates) == 0 {
		return text, 0
	}
	total := 0
	for i := range r.rules {
		if !candidates[i] {
			continue
		}
		out, n := r.rules[i].apply(text)
		text, total = out, total+n
	}
	return text, total
}

// lowerASCII maps A–Z to a–z and every other byte to itself. It is a
// constant table, built once.
var lowerASCII = func() (t [256]byte) {
	for i := range t {
		t[i] = lowerByte(byte(i))
	}
	return t
}()

// candidates marks in out the rules whose keywords occur in text (any case),
// in one pass over it, plus the rules that have none, and returns how many
// it marked. Every keyword is at least two bytes long, so the pass looks at
// every other position only: the pair at an even offset i is either a
// keyword's first two bytes (the keyword starts at i) or its second and
// third (it starts at i-1), or the second byte of a two-byte keyword
// (starts at i-1); pairs is set for all three. One lookup and one bit test
// per two bytes reject most of ordinary text; only where the bit is set are
// whole keywords compared, at i and at i-1 (BenchmarkCandidates).
func (r *Redactor) candidates(text string, out []bool) int {
	marked := 0
	for _, i := range r.always {
		out[i] = true
		marked++
	}
	if len(text) < 2 || len(r.always) == len(r.rules) {
		return marked
	}
	for i := 0; i < len(text); i += 2 {
		c := lowerASCII[text[i]]
		var next byte
		if i+1 < len(text) {
			next = lowerASCII[text[i+1]]
		}
		if p := uint16(c)<<8 | uint16(next); r.pairs[p>>6]&(1<<(p&63)) == 0 {
			continue
		}
		for _, at := range [2]int{i - 1, i} {
			if at < 0 {
				continue
			}
			for _, k := range r.byFirst[lowerASCII[text[at]]] {
				if !out[k.rule] && hasPrefixFold(text[at:], k.keyword) {
					out[k.rule] = true
					if marked++; marked == len(r.rules) {
						return marked
					}
				}
			}
		}
	}
	return marked
}

// apply replaces the secrets of one rule.
func (ru *rule) apply(text string) (string, int) {
	matches := ru.re.FindAllStringSubmatchIndex(text, -1)
	if matches == nil {
		return text, 0
	}
	var b strings.Builder
	last, n := 0, 0
	for _, m := range matches {
		spans := [][2]int{{m[0], m[1]}}
		if len(ru.groups) > 0 {
			spans = spans[:0]
			for _, g := range ru.groups {
				if m[2*g] >= 0 && m[2*g+1] > m[2*g] {
					spans = append(spans, [2]int{m[2*g], m[2*g+1]})
				}
			}
		}
		for _, sp := range spans {
			secret := text[sp[0]:sp[1]]
			if sp[0] < last || strings.HasPrefix(secret, Placeholder) || (ru.valid != nil && !ru.valid(secret)) {
				continue
			}
			if n == 0 {
				b.Grow(len(text))
			}
			b.WriteString(text[last:sp[0]])
			b.WriteString(Placeholder)
			last = sp[1]
			n++
		}
	}
	if n == 0 {
		return text, 0
	}
	b.WriteString(text[last:])
	return b.String(), n
}

func lowerByte(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// hasPrefixFold reports whether s starts with the lower-case ASCII prefix,
// ignoring the case of s.
func hasPrefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if lowerASCII[s[i]] != prefix[i] {
			return false
		}
	}
	return true
}

// Config is the redaction setting of a collector component (`redact:` in
// the processor's and the exporter's configuration) and of ctxaudit.yaml
// (`redact_patterns:`): patterns added to the built-in rules.
type Config struct {
	Patterns []Pattern `mapstructure:"patterns"`

	// prevent unkeyed literals
	_ struct{}
}

// Validate names the bad pattern.
func (c *Config) Validate() error {
	for i, p := range c.Patterns {
		if err := p.Validate(); err != nil {
			return fmt.Errorf("patterns[%d]: %w", i, err)
		}
	}
	return nil
}

// Redactor builds the rule set: the built-in rules plus the patterns.
func (c *Config) Redactor() (*Redactor, error) {
	if len(c.Patterns) == 0 {
		return defaultRedactor, nil
	}
	return New(c.Patterns)
}
