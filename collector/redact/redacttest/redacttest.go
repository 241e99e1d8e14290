// Package redacttest holds the secret corpus the redaction tests run on: one
// realistic but fake secret per provider and format (corpus.jsonl), each in
// the text it typically arrives in (an env file, a curl command, a JSON
// credentials document, a connection string), and a scanner that reports
// which of them survive in stored text.
//
// Every secret is made up: generated in the provider's documented format
// from a fixed seed, valid for no account.
package redacttest

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
)

//go:embed corpus.jsonl
var corpus []byte

// Secret is one corpus entry.
type Secret struct {
	Provider string `json:"provider"`
	// Text is the secret in its usual surroundings.
	Text string `json:"text"`
	// Secret is the part that must never be stored.
	Secret string `json:"secret"`
}

// Corpus returns every entry.
func Corpus() []Secret {
	var out []Secret
	sc := bufio.NewScanner(bytes.NewReader(corpus))
	for n := 1; sc.Scan(); n++ {
		var s Secret
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			panic(fmt.Sprintf("corpus.jsonl:%d: %v", n, err)) // embedded, fixed; a test reads it
		}
		out = append(out, s)
	}
	return out
}

// tailLen is how much of a secret's end counts as a leak on its own: a
// secret cut in half by a cap or partly redacted still leaks its tail.
const tailLen = 12

// Leaks returns the providers whose secret, or the last characters of it,
// appear in text.
func Leaks(text string) []string {
	var out []string
	for _, s := range Corpus() {
		if Leaked(text, s) {
			out = append(out, s.Provider)
		}
	}
	return out
}

// Leaked reports whether text holds s's secret or its tail.
func Leaked(text string, s Secret) bool {
	if strings.Contains(text, s.Secret) {
		return true
	}
	return len(s.Secret) > tailLen && strings.Contains(text, s.Secret[len(s.Secret)-tailLen:])
}
