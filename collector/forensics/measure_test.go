package forensics

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// countRunes must count exactly what utf8.RuneCountInString counts, on
// ASCII, on valid multi-byte text and on invalid bytes, at every length
// around its eight-byte steps.
func TestCountRunesIsRuneCount(t *testing.T) {
	pieces := []string{"a", "é", "日本", "🙂", "\xff", "\xe6\x97", "\x80", "\n", "  at handler()"}
	n := 0
	for _, p := range pieces {
		for _, q := range pieces {
			for k := 0; k < 20; k++ {
				s := strings.Repeat(p, k) + q + strings.Repeat("x", k%9)
				if got, want := countRunes(s), utf8.RuneCountInString(s); got != want {
					t.Fatalf("countRunes(%q) = %d, want %d", s, got, want)
				}
				n++
			}
		}
	}
	if n == 0 {
		t.Fatal("nothing compared")
	}
}

func FuzzCountRunes(f *testing.F) {
	f.Add("plain ascii text, longer than eight bytes")
	f.Add("mixed é 日本 🙂 text")
	f.Add("bad \xff\xfe bytes \xe6\x97")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := countRunes(s), utf8.RuneCountInString(s); got != want {
			t.Fatalf("countRunes(%q) = %d, want %d", s, got, want)
		}
	})
}

// BenchmarkCountRunes against the standard library, on the ASCII text most
// tool output is and on text with a multi-byte character in every line.
func BenchmarkCountRunes(b *testing.B) {
	ascii := strings.Repeat("    at handler (/srv/app/internal/server/handler.go:118) ok\n", 100)
	mixed := strings.Repeat("    at handler (/srv/app/internal/server/handler.go:118) é\n", 100)
	for _, c := range []struct{ name, s string }{{"ascii", ascii}, {"multibyte", mixed}} {
		b.Run(c.name+"/countRunes", func(b *testing.B) {
			b.SetBytes(int64(len(c.s)))
			for b.Loop() {
				countRunes(c.s)
			}
		})
		b.Run(c.name+"/RuneCountInString", func(b *testing.B) {
			b.SetBytes(int64(len(c.s)))
			for b.Loop() {
				utf8.RuneCountInString(c.s)
			}
		})
	}
}

// TestIsASCIIFindsEveryHighByte: a byte above 0x7F is found wherever it is,
// in the 32-byte blocks, the 8-byte words and the tail.
func TestIsASCIIFindsEveryHighByte(t *testing.T) {
	for n := range 100 {
		base := strings.Repeat("a", n)
		if !isASCII(base) {
			t.Fatalf("%d ASCII bytes reported as not ASCII", n)
		}
		for i := range n {
			for _, c := range []byte{0x80, 0xC3, 0xFF} {
				b := []byte(base)
				b[i] = c
				if isASCII(string(b)) {
					t.Fatalf("byte %#x at %d of %d not found", c, i, n)
				}
			}
		}
	}
}
