package redact

import (
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		n              int
	}{
		{"anthropic key", "export ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123", "export ANTHROPIC_API_KEY=[REDACTED]", 1},
		{"openai key in prose", "use sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX1234 here", "use [REDACTED] here", 1},
		{"bearer header", "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig", "Authorization: Bearer [REDACTED]", 1},
		{"aws key", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "aws_access_key_id = [REDACTED]", 1},
		{"github token", "token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB", "token [REDACTED]", 1},
		{"password pair", "db: password=hunter22 host=x", "db: password=[REDACTED] host=x", 1},
		{"json secret", `{"client_secret": "abc123xyz"}`, `{"client_secret": "[REDACTED]"}`, 1},
		{"url credentials", "postgres://app:s3cr3t@db:5432/x", "postgres://app:[REDACTED]@db:5432/x", 1},
		{"private key block", "a\n-----BEGIN RSA PRIVATE KEY-----\nMIIE\nxyz\n-----END RSA PRIVATE KEY-----\nb", "a\n[REDACTED]\nb", 1},
		{"cut-off private key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn", "[REDACTED]", 1},
		{"nothing secret", "grep -n password_reset src/ | head -5\nsk-is-a-prefix", "grep -n password_reset src/ | head -5\nsk-is-a-prefix", 0},
		{"non-ASCII kept", "沒有 secret here — só texto", "沒有 secret here — só texto", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, n := String(tc.in)
			if got != tc.want || n != tc.n {
				t.Fatalf("String(%q) = %q, %d; want %q, %d", tc.in, got, n, tc.want, tc.n)
			}
		})
	}
}

func FuzzString(f *testing.F) {
	f.Add("Authorization: Bearer abcdefghijkl")
	f.Add("-----BEGIN PRIVATE KEY-----\nabc")
	f.Add("password: x")
	f.Fuzz(func(t *testing.T, s string) {
		out, n := String(s)
		if n == 0 && out != s {
			t.Fatalf("text changed without a redaction: %q -> %q", s, out)
		}
		if n > 0 && !strings.Contains(out, Placeholder) {
			t.Fatalf("%d redactions but no placeholder in %q", n, out)
		}
	})
}
