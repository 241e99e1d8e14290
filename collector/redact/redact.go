// Package redact removes secrets from tool output text before it is stored
// (docs/design.md §10.4): API keys of the common providers, bearer tokens, private-key
// blocks and password assignments. It errs on the side of redacting: a stored
// output is evidence for a postmortem, not a copy to run again.
package redact

import (
	"regexp"
	"strings"
)

// Placeholder replaces every secret.
const Placeholder = "[REDACTED]"

// rule is one kind of secret. keep names the submatch that survives (the
// key or header name), so the redacted text still says what was there.
type rule struct {
	name   string
	anchor string // a cheap substring that must be present for the regexp to run
	re     *regexp.Regexp
	keep   int // submatch index kept before the placeholder; 0 = replace all
}

var rules = []rule{
	{"private_key", "PRIVATE KEY", regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|\z)`), 0},
	{"bearer", "earer", regexp.MustCompile(`(?i)(\bauthorization\s*[:=]\s*bearer\s+|\bbearer\s+)[A-Za-z0-9\-._~+/]{8,}=*`), 1},
	{"anthropic", "sk-ant-", regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_\-]{20,}`), 0},
	{"openai", "sk-", regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}`), 0},
	{"aws_access_key", "A", regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`), 0},
	{"github", "gh", regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})`), 0},
	{"slack", "xox", regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`), 0},
	{"google", "AIza", regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{35}`), 0},
	{"stripe", "_live_", regexp.MustCompile(`\b(?:sk|rk)_live_[0-9A-Za-z]{16,}`), 0},
	{"huggingface", "hf_", regexp.MustCompile(`\bhf_[A-Za-z0-9]{30,}`), 0},
	{"password", "", regexp.MustCompile(`(?i)(\b(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret)\b["']?\s*[:=]\s*["']?)[^\s"'&,;]{3,}`), 1},
	{"url_credentials", "://", regexp.MustCompile(`(\b[a-z][a-z0-9+.\-]*://[^/\s:@]+:)[^@\s/]{3,}(@)`), 1},
}

// String returns text with secrets replaced, and how many were replaced.
func String(text string) (string, int) {
	total := 0
	for _, r := range rules {
		if r.anchor != "" && !strings.Contains(text, r.anchor) {
			continue
		}
		n := 0
		text = r.re.ReplaceAllStringFunc(text, func(m string) string {
			n++
			if r.keep == 0 {
				return Placeholder
			}
			sub := r.re.FindStringSubmatch(m)
			out := sub[r.keep] + Placeholder
			if r.name == "url_credentials" && len(sub) > 2 {
				out += sub[2]
			}
			return out
		})
		total += n
	}
	return text, total
}
