package redact

import (
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxaudit/ctxaudit/collector/redact/redacttest"
)

// fixtureTexts are real texts to compare the fast path against the slow
// one: the secret corpus, every line and every saved tool result of the
// transcript fixtures (testdata/transcripts) and of the lab recordings
// (testdata/lab), and a few lines in between.
func fixtureTexts(t testing.TB) []string {
	t.Helper()
	var texts []string
	for _, s := range redacttest.Corpus() {
		texts = append(texts, s.Text)
	}
	for _, root := range []string{"../../testdata/transcripts", "../../testdata/lab"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if ext := filepath.Ext(path); ext != ".jsonl" && ext != ".txt" && ext != ".json" {
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			texts = append(texts, string(b))
			texts = append(texts, strings.Split(string(b), "\n")...)
			return nil
		})
		if err != nil {
			t.Fatalf("fixtures under %s: %v", root, err)
		}
	}
	if len(texts) < 1000 {
		t.Fatalf("only %d fixture texts: fixtures missing?", len(texts))
	}
	return texts
}

// slowCandidates is the definition the fast scan implements: a rule is a
// candidate when it has no keywords or one of them occurs in the text, ASCII
// letters compared without case.
func slowCandidates(r *Redactor, text string) []bool {
	b := []byte(text)
	for i, c := range b {
		b[i] = lowerByte(c)
	}
	lower := string(b)
	out := make([]bool, len(r.rules))
	for i, ru := range r.rules {
		out[i] = len(ru.keywords) == 0
		for _, k := range ru.keywords {
			out[i] = out[i] || strings.Contains(lower, k)
		}
	}
	return out
}

// everyRule is String without any pre-filter: every rule's regex runs on
// the text. The keywords are a pre-filter only if this gives the same text.
func everyRule(r *Redactor, text string) (string, int) {
	if len(text) < 8 {
		return text, 0
	}
	total := 0
	for i := range r.rules {
		out, n := r.rules[i].apply(text)
		text, total = out, total+n
	}
	return text, total
}

// mutate returns text with a keyword of a random rule spliced in, in random
// case, so the comparison also covers keywords at every position.
func mutate(rng *rand.Rand, r *Redactor, text string) string {
	ru := r.rules[rng.IntN(len(r.rules))]
	if len(ru.keywords) == 0 {
		return text
	}
	k := []byte(ru.keywords[rng.IntN(len(ru.keywords))])
	for i := range k {
		if rng.IntN(2) == 0 && 'a' <= k[i] && k[i] <= 'z' {
			k[i] -= 'a' - 'A'
		}
	}
	at := rng.IntN(len(text) + 1)
	return text[:at] + string(k) + text[at:]
}

func TestCandidatesMatchSlowPath(t *testing.T) {
	extra, err := New([]Pattern{{Name: "ticket", Regex: `TCK-[0-9]{6}`, Keywords: []string{"tck-"}}, {Name: "no keyword", Regex: `zz[0-9]{4}zz`}})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	texts := fixtureTexts(t)
	for _, r := range []*Redactor{Default(), extra} {
		for _, text := range texts {
			for _, s := range []string{text, mutate(rng, r, text)} {
				got := make([]bool, len(r.rules))
				n := r.candidates(s, got)
				want := slowCandidates(r, s)
				marked := 0
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("rule %s on %.80q: fast %v, slow %v", r.rules[i].name, s, got[i], want[i])
					}
					if want[i] {
						marked++
					}
				}
				if len(s) >= 2 && n != marked {
					t.Fatalf("candidates returned %d, marked %d on %.80q", n, marked, s)
				}
			}
		}
	}
}

// TestStringMatchesEveryRule: with the pre-filter, String gives exactly the
// text and count of running every rule, on the secret corpus and every
// tenth fixture text (each with a keyword spliced in as well). Running all
// rules on every fixture would take a minute; TestCandidatesMatchSlowPath
// covers the pre-filter on all of them.
func TestStringMatchesEveryRule(t *testing.T) {
	r := Default()
	rng := rand.New(rand.NewPCG(3, 4))
	var texts []string
	for _, s := range redacttest.Corpus() {
		texts = append(texts, s.Text)
	}
	for i, text := range fixtureTexts(t) {
		if i%10 == 0 && len(text) < 64<<10 {
			texts = append(texts, text)
		}
	}
	for _, text := range texts {
		for _, s := range []string{text, mutate(rng, r, text)} {
			got, n := r.String(s)
			want, wn := everyRule(r, s)
			if got != want || n != wn {
				t.Fatalf("String(%.80q) = %.80q, %d; every rule gives %.80q, %d", s, got, n, want, wn)
			}
		}
	}
}

// BenchmarkCandidates is why candidates is hand-written: it runs over every
// string of every span, and the slow definition (lower-case copy, then one
// strings.Contains per keyword) costs several times as much per byte.
func BenchmarkCandidates(b *testing.B) {
	text := strings.Repeat("    at handler (/srv/app/internal/server/handler.go:118) ok\n", 100)
	r := Default()
	b.Run("fast", func(b *testing.B) {
		out := make([]bool, len(r.rules))
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			clear(out)
			r.candidates(text, out)
		}
	})
	b.Run("slow", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			slowCandidates(r, text)
		}
	})
}
