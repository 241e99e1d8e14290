package forensics

import (
	"math/bits"
	"strings"
	"unicode/utf8"

	"github.com/ctxaudit/ctxaudit/schema"
)

// Measure returns the four sizes of s: UTF-8 bytes, code points, lines (a
// final line without a newline counts), and tokens estimated as ceil(bytes/4).
func Measure(s string) schema.Sizes {
	b := uint64(len(s))
	return schema.Sizes{
		Bytes:  schema.Known(b),
		Chars:  schema.Known(uint64(countRunes(s))),
		Lines:  schema.Known(uint64(countLines(s))),
		Tokens: schema.Known(estimateTokens(b)),
	}
}

// estimateTokens is the token estimate of docs/design.md §4.1, ceil(bytes/4). It is also
// exactly Codex's approx_token_count, so Codex token figures compare directly.
func estimateTokens(bytes uint64) uint64 { return schema.TokenEstimate(bytes) }

// countLines counts newline-terminated lines plus a final unterminated one.
func countLines(s string) int {
	n := strings.Count(s, "\n")
	if len(s) > 0 && s[len(s)-1] != '\n' {
		n++
	}
	return n
}

// countRunes equals utf8.RuneCountInString but runs several times faster on
// valid UTF-8, which is nearly every tool output: there the code points are
// the bytes that are not continuation bytes (10xxxxxx), counted eight at a
// time. Invalid input falls back to the standard library so that invalid
// bytes are counted one rune each, exactly as RuneCountInString does.
func countRunes(s string) int {
	if isASCII(s) {
		// Most tool output: one pass, and every byte is a code point.
		return len(s)
	}
	if !utf8.ValidString(s) {
		return utf8.RuneCountInString(s)
	}
	const high = 0x8080808080808080
	cont := 0
	i := 0
	for ; i+8 <= len(s); i += 8 {
		v := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		// A continuation byte has bit 7 set and bit 6 clear; v<<1 moves
		// each byte's bit 6 onto its bit 7.
		cont += bits.OnesCount64(v &^ (v << 1) & high)
	}
	for ; i < len(s); i++ {
		if s[i]&0xC0 == 0x80 {
			cont++
		}
	}
	return len(s) - cont
}

// isASCII reports whether s has no byte above 0x7F, 32 bytes at a time:
// four words ORed together, one test per 32 bytes.
func isASCII(s string) bool {
	const high = 0x8080808080808080
	i := 0
	for ; i+32 <= len(s); i += 32 {
		w := s[i : i+32] // one bounds check for the four loads
		if (word(w[0:8])|word(w[8:16])|word(w[16:24])|word(w[24:32]))&high != 0 {
			return false
		}
	}
	for ; i+8 <= len(s); i += 8 {
		if word(s[i:i+8])&high != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// word is the first eight bytes of s as one little-endian word, which the
// compiler turns into a single load.
func word(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}
