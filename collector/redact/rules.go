package redact

import (
	"encoding/base64"
	"strings"
)

type builtinRule struct {
	Pattern
	valid func(secret string) bool
}

// Characters that end an unquoted value: whitespace, quotes, a backslash (the
// start of an escape in JSON-encoded text) and the separators of query
// strings, shell commands and connection strings.
const valueChars = `[^\s"'\\&,;{}<>()|` + "`" + `]`

// keyNames are the names whose assigned value is a secret: password=…,
// API_TOKEN=…, "client_secret": "…". The name may carry a prefix (PGPASSWORD,
// GITHUB_TOKEN, aws_session_token) but must end here, so max_tokens=4096 and
// input_tokens: 12 are left alone.
const keyNames = `(?:passwd|password|passphrase|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|credentials?|_auth)`

// builtin is the default rule set: one row per kind of secret, token formats
// as the providers document them. Keywords are matched case-insensitively.
var builtin = []builtinRule{
	{Pattern: Pattern{Name: "private_key", Keywords: []string{"private key"},
		Regex: `-----BEGIN[ A-Z0-9_-]*PRIVATE KEY(?: BLOCK)?-----(?P<secret>[\s\S]*?)(?:-----END[ A-Z0-9_-]*PRIVATE KEY(?: BLOCK)?-----|\z)`}},
	// Authorization: Bearer …, any case, also bare "bearer <token>" in prose or curl -H.
	{Pattern: Pattern{Name: "bearer", Keywords: []string{"bearer"},
		Regex: `(?i)\bbearer\s+(?P<secret>[A-Za-z0-9\-._~+/]{8,}=*)`}},
	// Basic credentials are base64("user:password"): the check decodes them,
	// so "basic configuration" in prose is left alone.
	{Pattern: Pattern{Name: "basic_auth", Keywords: []string{"basic"},
		Regex: `(?i)\bbasic\s+(?P<secret>[A-Za-z0-9+/]{6,}={0,2})`}, valid: isBasicCredential},
	{Pattern: Pattern{Name: "token_auth", Keywords: []string{"authorization"},
		Regex: `(?i)\bauthorization\\?["']?\s*[:=]\s*\\?["']?(?:token|apikey|key)\s+(?P<secret>[A-Za-z0-9\-._~+/=]{8,})`}},
	{Pattern: Pattern{Name: "jwt", Keywords: []string{"eyj"},
		Regex: `\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*`}},
	{Pattern: Pattern{Name: "anthropic", Keywords: []string{"sk-ant-"},
		Regex: `\bsk-ant-[A-Za-z0-9_\-]{20,}`}},
	{Pattern: Pattern{Name: "openai", Keywords: []string{"sk-"},
		Regex: `\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}`}},
	{Pattern: Pattern{Name: "aws_access_key_id", Keywords: []string{"akia", "asia", "abia", "acca", "a3t"},
		Regex: `\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b`}},
	{Pattern: Pattern{Name: "aws_secret_access_key", Keywords: []string{"secret"},
		Regex: `(?i)secret_?access_?key\\?["']?\s*[:=]\s*\\?["']?(?P<secret>[A-Za-z0-9/+]{40})`}},
	{Pattern: Pattern{Name: "github", Keywords: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"},
		Regex: `\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})`}},
	{Pattern: Pattern{Name: "gitlab", Keywords: []string{"glpat-", "gldt-", "glrt-", "glptt-", "glsoat-", "glcbt-", "glft-", "glimt-", "glagent-", "gloas-"},
		Regex: `\bgl(?:pat|dt|rt|ptt|soat|cbt|ft|imt|agent|oas)-[A-Za-z0-9_\-]{20,}`}},
	{Pattern: Pattern{Name: "slack", Keywords: []string{"xox", "xapp-"},
		Regex: `\b(?:xox[abposre]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{10,})`}},
	{Pattern: Pattern{Name: "slack_webhook", Keywords: []string{"hooks.slack.com"},
		Regex: `hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9+/_\-]{20,})`}},
	{Pattern: Pattern{Name: "google_api_key", Keywords: []string{"aiza"},
		Regex: `\bAIza[0-9A-Za-z_\-]{35}`}},
	{Pattern: Pattern{Name: "google_oauth", Keywords: []string{"gocspx-", "ya29."},
		Regex: `\b(?:GOCSPX-[A-Za-z0-9_\-]{20,}|ya29\.[0-9A-Za-z_\-]{20,})`}},
	{Pattern: Pattern{Name: "stripe", Keywords: []string{"_live_", "_test_", "whsec_"},
		Regex: `\b(?:(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}|whsec_[0-9A-Za-z]{24,})`}},
	{Pattern: Pattern{Name: "huggingface", Keywords: []string{"hf_"},
		Regex: `\bhf_[A-Za-z0-9]{30,}`}},
	{Pattern: Pattern{Name: "npm", Keywords: []string{"npm_"},
		Regex: `\bnpm_[A-Za-z0-9]{36}\b`}},
	{Pattern: Pattern{Name: "pypi", Keywords: []string{"pypi-"},
		Regex: `\bpypi-AgE[A-Za-z0-9_\-]{50,}`}},
	{Pattern: Pattern{Name: "sendgrid", Keywords: []string{"sg."},
		Regex: `\bSG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}\b`}},
	{Pattern: Pattern{Name: "digitalocean", Keywords: []string{"_v1_"},
		Regex: `\bdo[opr]_v1_[a-f0-9]{64}\b`}},
	{Pattern: Pattern{Name: "shopify", Keywords: []string{"shpat_", "shpca_", "shppa_", "shpss_"},
		Regex: `\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b`}},
	{Pattern: Pattern{Name: "docker_hub", Keywords: []string{"dckr_pat_"},
		Regex: `\bdckr_pat_[A-Za-z0-9_\-]{20,}`}},
	{Pattern: Pattern{Name: "databricks", Keywords: []string{"dapi"},
		Regex: `\bdapi[a-f0-9]{32}(?:-\d)?\b`}},
	// Azure storage and Service Bus connection strings, and SAS signatures in URLs.
	{Pattern: Pattern{Name: "azure_key", Keywords: []string{"accountkey", "sharedaccesskey", "sig="},
		Regex: `(?i)(?:\b(?:AccountKey|SharedAccessKey)\s*=\s*(?P<secret>[A-Za-z0-9+/]{20,}={0,2})|(?:[?&]|\\u0026)sig=(?P<secret2>[A-Za-z0-9%+/=]{20,}))`}},
	// user:password@ in any URL (postgres, mysql, redis with an empty user, https…).
	{Pattern: Pattern{Name: "url_credentials", Keywords: []string{"://"},
		Regex: `(?i)\b[a-z][a-z0-9+.\-]*://[^/\s:@"'\\]*:(?P<secret>[^@\s/"'\\]+)@`}},
	// curl -u user:password, --user user:password.
	{Pattern: Pattern{Name: "cli_user_password", Keywords: []string{"-u", "--user"},
		Regex: `(?:\s-u|\s--user)[ =]\\?["']?[^\s:"'\\]+:(?P<secret>[^\s"'\\@]+)`}},
	// --password x, --password=x, --api-key x, --token=x.
	{Pattern: Pattern{Name: "cli_flag", Keywords: []string{"--"},
		Regex: `(?i)--(?:[a-z0-9]+-)*` + keyNames + `(?:=|\s+)\\?["']?(?P<secret>` + valueChars + `{3,})`}},
	// password=…, PGPASSWORD=…, GITHUB_TOKEN=…, "client_secret": "…", api_key: …
	{Pattern: Pattern{Name: "assignment", Keywords: []string{"pass", "pwd", "secret", "token", "key", "credential", "_auth"},
		Regex: `(?i)\b[a-z0-9_.\-]*` + keyNames + `\\?["']?\s*(?::=|=>|[:=])\s*(?:\\?["'](?P<secret>[^"'\\\n]{3,})|(?P<secret2>` + valueChars + `{3,}))`}},
}

// isBasicCredential reports whether a Basic token decodes to user:password.
func isBasicCredential(s string) bool {
	s = strings.TrimRight(s, "=")
	b, err := base64.RawStdEncoding.DecodeString(s)
	if err != nil {
		return false
	}
	return strings.Contains(string(b), ":")
}
