package redact

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ctxaudit/ctxaudit/collector/redact/redacttest"
)

func TestString(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		n              int
	}{
		{"anthropic key", "export ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123", "export ANTHROPIC_API_KEY=[REDACTED]", 1},
		{"openai key in prose", "use sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX1234 here", "use [REDACTED] here", 1},
		{"bearer header", "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig", "Authorization: Bearer [REDACTED]", 1},
		{"bearer any case", "AUTHORIZATION: BEARER abcdefgh12345678", "AUTHORIZATION: BEARER [REDACTED]", 1},
		{"aws key", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "aws_access_key_id = [REDACTED]", 1},
		{"github token", "token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB", "token [REDACTED]", 1},
		{"password pair", "db: password=hunter22 host=x", "db: password=[REDACTED] host=x", 1},
		{"json secret", `{"client_secret": "abc123xyz"}`, `{"client_secret": "[REDACTED]"}`, 1},
		{"json secret with spaces", `{"password": "correct horse battery"}`, `{"password": "[REDACTED]"}`, 1},
		{"json-escaped assignment", `{"command":"export API_TOKEN=\"abc123def\" && run"}`, `{"command":"export API_TOKEN=\"[REDACTED]\" && run"}`, 1},
		{"url credentials", "postgres://app:s3cr3t@db:5432/x", "postgres://app:[REDACTED]@db:5432/x", 1},
		{"redis empty user", "redis://:s3cr3tpass@cache:6379", "redis://:[REDACTED]@cache:6379", 1},
		{"private key block", "a\n-----BEGIN RSA PRIVATE KEY-----\nMIIE\nxyz\n-----END RSA PRIVATE KEY-----\nb", "a\n-----BEGIN RSA PRIVATE KEY-----[REDACTED]-----END RSA PRIVATE KEY-----\nb", 1},
		{"cut-off private key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn", "-----BEGIN OPENSSH PRIVATE KEY-----[REDACTED]", 1},
		{"basic auth", "Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic [REDACTED]", 1},
		{"basic in prose is not a credential", "a basic configuration works", "a basic configuration works", 0},
		{"cli flag", "mysql --password hunter22 -h db", "mysql --password [REDACTED] -h db", 1},
		{"token counts are not tokens", "max_tokens=4096 input_tokens: 1234 tokenizer=cl100k", "max_tokens=4096 input_tokens: 1234 tokenizer=cl100k", 0},
		{"nothing secret", "grep -n password_reset src/ | head -5\nsk-is-a-prefix", "grep -n password_reset src/ | head -5\nsk-is-a-prefix", 0},
		{"non-ASCII kept", "沒有 secret here — só texto", "沒有 secret here — só texto", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, n := String(tc.in)
			if got != tc.want || n != tc.n {
				t.Fatalf("String(%q) = %q, %d; want %q, %d", tc.in, got, n, tc.want, tc.n)
			}
			again, n2 := String(got)
			if again != got || n2 != 0 {
				t.Fatalf("second pass changed %q -> %q (%d): redacting twice must count once", got, again, n2)
			}
		})
	}
}

// TestCorpus: every provider's secret, in its usual surroundings, is gone
// after redaction, and so is its tail; the text around it survives.
func TestCorpus(t *testing.T) {
	corpus := redacttest.Corpus()
	if len(corpus) < 40 {
		t.Fatalf("corpus has %d entries", len(corpus))
	}
	for _, s := range corpus {
		t.Run(s.Provider, func(t *testing.T) {
			got, n := String(s.Text)
			if redacttest.Leaked(got, s) || n == 0 {
				t.Fatalf("%s leaked (%d redactions): %q", s.Provider, n, got)
			}
			if !strings.Contains(got, Placeholder) {
				t.Fatalf("no placeholder in %q", got)
			}
			// The surroundings still say what was there.
			before := s.Text[:strings.Index(s.Text, s.Secret)]
			if len(before) > 4 && !strings.Contains(got, strings.TrimSpace(before[len(before)-4:])) {
				t.Errorf("context before the secret lost: %q -> %q", s.Text, got)
			}
			// JSON-encoded (as tool arguments are stored) it is redacted too.
			enc := strings.NewReplacer("\\", "\\\\", "\"", "\\\"", "\n", "\\n").Replace(s.Text)
			if got, _ := String(`{"command":"` + enc + `"}`); redacttest.Leaked(got, s) {
				t.Fatalf("%s leaked from JSON-encoded text: %q", s.Provider, got)
			}
			// encoding/json also escapes &, < and > (\u0026…).
			marshalled, _ := json.Marshal(map[string]string{"command": s.Text})
			if got, _ := String(string(marshalled)); redacttest.Leaked(got, s) {
				t.Fatalf("%s leaked from json.Marshal output: %q", s.Provider, got)
			}
		})
	}
}

func TestConfiguredPattern(t *testing.T) {
	r, err := New([]Pattern{{Name: "acme", Regex: `\bacme_(?P<secret>[a-z0-9]{12})\b`, Keywords: []string{"ACME_"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got, n := r.String("key acme_0123456789ab end"); got != "key acme_[REDACTED] end" || n != 1 {
		t.Fatalf("got %q, %d", got, n)
	}
	// The built-in rules still apply.
	if got, _ := r.String("password=hunter22"); got != "password=[REDACTED]" {
		t.Fatalf("got %q", got)
	}
	// The default set does not know the configured pattern.
	if got, n := String("key acme_0123456789ab end"); n != 0 {
		t.Fatalf("default redacted %q", got)
	}
	for _, bad := range []Pattern{{Name: "x", Regex: `(`}, {Regex: `abc`}} {
		if _, err := New([]Pattern{bad}); err == nil {
			t.Errorf("New(%+v) accepted", bad)
		}
	}
}

func FuzzString(f *testing.F) {
	f.Add("Authorization: Bearer abcdefghijkl")
	f.Add("-----BEGIN PRIVATE KEY-----\nabc")
	f.Add("password: x")
	f.Add("redis://:abcdefgh@x")
	f.Fuzz(func(t *testing.T, s string) {
		out, n := String(s)
		if n == 0 && out != s {
			t.Fatalf("text changed without a redaction: %q -> %q", s, out)
		}
		if n > 0 && !strings.Contains(out, Placeholder) {
			t.Fatalf("%d redactions but no placeholder in %q", n, out)
		}
		// The collector redacts a text in the processor and again in the
		// store; `ctxaudit ingest` once, in the store. Both must store the
		// same text.
		if again, _ := String(out); again != out {
			t.Fatalf("redacting twice differs from once: %q -> %q -> %q", s, out, again)
		}
	})
}

func BenchmarkStringPlain(b *testing.B) {
	text := strings.Repeat("func main() { fmt.Println(\"hello, world\") } // a line of ordinary source\n", 1000)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		String(text)
	}
}

func BenchmarkStringShortValues(b *testing.B) {
	vals := []string{"toolu_01ABCDEF", "Bash", "/home/user/project", "main", "claude-opus-4", "ls -la src/"}
	for b.Loop() {
		for _, v := range vals {
			String(v)
		}
	}
}
