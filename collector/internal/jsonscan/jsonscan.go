// Package jsonscan gives selective, allocation-free access to JSON objects:
// iterate the members of an object, the elements of an array, and decode only
// the scalar values a caller asks for.
//
// Transcript lines are large (a tool result routinely carries 100 KB of
// escaped text twice: once as the model saw it, once as the tool produced
// it) and the parsers need a handful of fields from each. Decoding whole
// lines with encoding/json costs ~55 MB/s; skipping the values nobody reads
// costs a bytes.IndexByte per string, which is what makes the ingester fast.
//
// Validation is structural: strings, brackets and literals are checked on the
// path the caller walks, and skipped containers must be balanced, but the
// grammar inside a skipped container is not verified. A line that encoding/json
// accepts is always accepted and decoded to the same values (the fuzz test
// checks this); a few malformed lines may be accepted too, which is harmless
// for a reader that only extracts fields. A reader that must reject exactly
// what encoding/json rejects validates the value with Check first (a SWAR
// pass, several times cheaper than decoding) and then reads it selectively.
//
// Stats measures a string's decoded text (bytes, code points, newlines)
// without decoding it, for callers that need a text's size, not the text.
package jsonscan

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/bits"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrSyntax reports input that is not the JSON the caller expected.
var ErrSyntax = errors.New("invalid JSON")

// maxDepth bounds container nesting while skipping, so hostile input cannot
// grow the bracket stack without limit.
const maxDepth = 10000

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(d []byte, i int) int {
	for i < len(d) && isSpace(d[i]) {
		i++
	}
	return i
}

// skipString returns the index just past the string that starts at d[i] == '"'.
func skipString(d []byte, i int) (int, error) {
	j := i + 1
	for {
		k := bytes.IndexByte(d[j:], '"')
		if k < 0 {
			return len(d), ErrSyntax
		}
		q := j + k
		// An odd run of backslashes before the quote escapes it.
		n := 0
		for p := q - 1; p > i && d[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1, nil
		}
		j = q + 1
	}
}

func skipLiteral(d []byte, i int, lit string) (int, error) {
	if len(d)-i < len(lit) || string(d[i:i+len(lit)]) != lit {
		return i, ErrSyntax
	}
	return i + len(lit), nil
}

func skipNumber(d []byte, i int) (int, error) {
	start := i
	if i < len(d) && d[i] == '-' {
		i++
	}
	digits := 0
	for i < len(d) {
		c := d[i]
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-':
		default:
			if digits == 0 {
				return start, ErrSyntax
			}
			return i, nil
		}
		i++
	}
	if digits == 0 {
		return start, ErrSyntax
	}
	return i, nil
}

// skipContainer returns the index just past the object or array at d[i].
// Brackets must balance and match; strings are skipped whole so brackets
// inside them do not count.
func skipContainer(d []byte, i int) (int, error) {
	var stackBuf [64]byte
	stack := stackBuf[:0]
	for i < len(d) {
		switch c := d[i]; c {
		case '"':
			var err error
			if i, err = skipString(d, i); err != nil {
				return i, err
			}
			continue
		case '{', '[':
			if len(stack) >= maxDepth {
				return i, ErrSyntax
			}
			closer := byte('}')
			if c == '[' {
				closer = ']'
			}
			stack = append(stack, closer)
		case '}', ']':
			if len(stack) == 0 || stack[len(stack)-1] != c {
				return i, ErrSyntax
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return i + 1, nil
			}
		}
		i++
	}
	return i, ErrSyntax
}

// skipValue returns the index just past the value that starts at d[i]
// (leading whitespace already skipped).
func skipValue(d []byte, i int) (int, error) {
	if i >= len(d) {
		return i, ErrSyntax
	}
	switch c := d[i]; {
	case c == '"':
		return skipString(d, i)
	case c == '{' || c == '[':
		return skipContainer(d, i)
	case c == 't':
		return skipLiteral(d, i, "true")
	case c == 'f':
		return skipLiteral(d, i, "false")
	case c == 'n':
		return skipLiteral(d, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		return skipNumber(d, i)
	}
	return i, ErrSyntax
}

// Value returns the first JSON value of d, trimmed, and reports whether only
// whitespace follows it. It is how a whole line is checked to be one value.
func Value(d []byte) ([]byte, error) {
	i := skipSpace(d, 0)
	end, err := skipValue(d, i)
	if err != nil {
		return nil, err
	}
	if skipSpace(d, end) != len(d) {
		return nil, ErrSyntax
	}
	return d[i:end], nil
}

// ObjectIter walks the members of one JSON object. The zero value is an
// exhausted iterator. Typical use:
//
//	it := jsonscan.Object(raw)
//	for it.Next() {
//		switch { case it.KeyIs("type"): ... }
//	}
//	if it.Err() != nil { ... }
type ObjectIter struct {
	d     []byte
	i     int
	key   []byte
	val   []byte
	err   error
	first bool
	done  bool
}

// Object starts iterating the object raw (a complete value, e.g. from Value
// or from another iterator). A non-object sets Err.
func Object(raw []byte) ObjectIter {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return ObjectIter{err: ErrSyntax, done: true}
	}
	return ObjectIter{d: raw, i: i + 1, first: true}
}

// Next advances to the next member; it returns false at the end or on error.
func (it *ObjectIter) Next() bool {
	if it.done {
		return false
	}
	d := it.d
	i := skipSpace(d, it.i)
	if i >= len(d) {
		return it.fail(i)
	}
	if it.first {
		it.first = false
		if d[i] == '}' {
			it.done = true
			return false
		}
	} else {
		switch d[i] {
		case '}':
			it.done = true
			return false
		case ',':
			i = skipSpace(d, i+1)
		default:
			return it.fail(i)
		}
	}
	if i >= len(d) || d[i] != '"' {
		return it.fail(i)
	}
	kend, err := skipString(d, i)
	if err != nil {
		return it.fail(kend)
	}
	it.key = d[i+1 : kend-1]
	i = skipSpace(d, kend)
	if i >= len(d) || d[i] != ':' {
		return it.fail(i)
	}
	i = skipSpace(d, i+1)
	vend, err := skipValue(d, i)
	if err != nil {
		return it.fail(vend)
	}
	it.val = d[i:vend]
	it.i = vend
	return true
}

func (it *ObjectIter) fail(i int) bool {
	it.err = ErrSyntax
	it.done = true
	it.i = i
	return false
}

// Key is the current member's key, still escaped (keys rarely have escapes;
// use KeyIs to compare).
func (it *ObjectIter) Key() []byte { return it.key }

// Value is the current member's raw value.
func (it *ObjectIter) Value() []byte { return it.val }

// KeyIs reports whether the current key equals s after unescaping.
func (it *ObjectIter) KeyIs(s string) bool {
	if bytes.IndexByte(it.key, '\\') < 0 {
		return string(it.key) == s
	}
	k, ok := unquoteBody(it.key)
	return ok && k == s
}

// UnescapedKey is the current key decoded as encoding/json decodes it. It
// returns Key itself, without copying, when the key has no escapes and is
// valid UTF-8 (the usual case).
func (it *ObjectIter) UnescapedKey() []byte {
	if bytes.IndexByte(it.key, '\\') < 0 && utf8.Valid(it.key) {
		return it.key
	}
	k, _ := unquoteBody(it.key)
	return []byte(k)
}

// Err is the syntax error that stopped the iteration, if any.
func (it *ObjectIter) Err() error { return it.err }

// ArrayIter walks the elements of one JSON array.
type ArrayIter struct {
	d     []byte
	i     int
	val   []byte
	err   error
	first bool
	done  bool
}

// Array starts iterating the array raw. A non-array sets Err.
func Array(raw []byte) ArrayIter {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return ArrayIter{err: ErrSyntax, done: true}
	}
	return ArrayIter{d: raw, i: i + 1, first: true}
}

// Next advances to the next element.
func (it *ArrayIter) Next() bool {
	if it.done {
		return false
	}
	d := it.d
	i := skipSpace(d, it.i)
	if i >= len(d) {
		return it.fail(i)
	}
	if it.first {
		it.first = false
		if d[i] == ']' {
			it.done = true
			return false
		}
	} else {
		switch d[i] {
		case ']':
			it.done = true
			return false
		case ',':
			i = skipSpace(d, i+1)
		default:
			return it.fail(i)
		}
	}
	end, err := skipValue(d, i)
	if err != nil {
		return it.fail(end)
	}
	it.val = d[i:end]
	it.i = end
	return true
}

func (it *ArrayIter) fail(i int) bool {
	it.err = ErrSyntax
	it.done = true
	it.i = i
	return false
}

// Value is the current element's raw value.
func (it *ArrayIter) Value() []byte { return it.val }

// Err is the syntax error that stopped the iteration, if any.
func (it *ArrayIter) Err() error { return it.err }

// Get follows a path of object keys from raw and returns the raw value found,
// or nil when any step is missing or not an object.
func Get(raw []byte, path ...string) []byte {
	cur := raw
	for _, k := range path {
		it := Object(cur)
		var next []byte
		for it.Next() {
			if it.KeyIs(k) {
				next = it.Value()
				break
			}
		}
		if next == nil {
			return nil
		}
		cur = next
	}
	return cur
}

// IsString reports whether raw is a JSON string.
func IsString(raw []byte) bool { return len(raw) >= 2 && raw[0] == '"' }

// IsNull reports whether raw is absent or the literal null.
func IsNull(raw []byte) bool { return len(raw) == 0 || string(raw) == "null" }

// String decodes raw as a JSON string. ok is false when raw is not a string.
// Invalid UTF-8 and unpaired surrogates become U+FFFD, as with encoding/json.
func String(raw []byte) (s string, ok bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	return unquoteBody(raw[1 : len(raw)-1])
}

// StringOr returns the decoded string, or "" when raw is not a string.
func StringOr(raw []byte) string {
	s, _ := String(raw)
	return s
}

// Bool decodes raw as a JSON boolean.
func Bool(raw []byte) (v, ok bool) {
	switch string(raw) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// Uint decodes raw as a non-negative JSON number, truncating fractions
// (token counts are integers, but nothing should break if a source writes 3.0).
func Uint(raw []byte) (uint64, bool) {
	if len(raw) == 0 || raw[0] == '-' {
		return 0, false
	}
	var n uint64
	for i, c := range raw {
		if c < '0' || c > '9' {
			if i == 0 {
				return 0, false
			}
			f, err := strconv.ParseFloat(string(raw), 64)
			if err != nil || f < 0 || f >= 1<<63 {
				return 0, false
			}
			return uint64(f), true
		}
		d := uint64(c - '0')
		if n > (1<<64-1-d)/10 {
			return 0, false // overflow: 2^64 and above are not a uint64
		}
		n = n*10 + d
	}
	return n, true
}

// Int decodes raw as a JSON integer (fractions truncated).
func Int(raw []byte) (int64, bool) {
	if len(raw) > 0 && raw[0] == '-' {
		u, ok := Uint(raw[1:])
		if !ok || u > 1<<63 {
			return 0, false
		}
		return -int64(u), true
	}
	u, ok := Uint(raw)
	if !ok || u > 1<<63-1 {
		return 0, false
	}
	return int64(u), true
}

// unquoteBody decodes the inside of a JSON string literal.
func unquoteBody(b []byte) (string, bool) {
	i := plainPrefix(b)
	if i == len(b) {
		return string(b), true
	}
	out := append(make([]byte, 0, len(b)), b[:i]...)
	for {
		// Copy the run of plain ASCII (no escape) in one go. Tool outputs
		// have an escape every few words (\n, \t, \"), so the run ends are
		// found eight bytes at a time rather than with a call per run.
		j := i + plainPrefix(b[i:])
		out = append(out, b[i:j]...)
		i = j
		if i >= len(b) {
			return string(out), true
		}
		if b[i] == '\\' {
			if i+1 < len(b) && shortEscape[b[i+1]] != 0 {
				out = append(out, shortEscape[b[i+1]])
				i += 2
				continue
			}
			r, n, ok := unescape(b, i)
			if !ok {
				return "", false
			}
			out = utf8.AppendRune(out, r)
			i += n
			continue
		}
		// Non-ASCII: copy the run up to the next escape whole when it is
		// valid UTF-8 (prose, CJK), else with U+FFFD for each invalid byte
		// as encoding/json decodes it. Either way each byte is seen once.
		run := b[i : i+escapeFree(b[i:])]
		if utf8.Valid(run) {
			out = append(out, run...)
		} else {
			out = appendReplacingInvalid(out, run)
		}
		i += len(run)
	}
}

// escapeFree returns the length of the prefix of b before the first backslash.
func escapeFree(b []byte) int {
	if k := bytes.IndexByte(b, '\\'); k >= 0 {
		return k
	}
	return len(b)
}

// appendReplacingInvalid appends run with each invalid UTF-8 byte replaced
// by U+FFFD, as encoding/json decodes it.
func appendReplacingInvalid(out, run []byte) []byte {
	for i := 0; i < len(run); {
		r, size := utf8.DecodeRune(run[i:])
		if r == utf8.RuneError && size == 1 {
			out = append(out, "\uFFFD"...)
		} else {
			out = append(out, run[i:i+size]...)
		}
		i += size
	}
	return out
}

// plainPrefix returns the length of the longest prefix of b that is ASCII
// without a backslash: text that decodes to itself, byte for byte.
func plainPrefix(b []byte) int {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		v := binary.LittleEndian.Uint64(b[i:])
		bs := v ^ (swarOnes * '\\')
		if (v|(bs-swarOnes)&^bs)&swarHighs != 0 {
			break
		}
	}
	for ; i < len(b) && b[i] < utf8.RuneSelf && b[i] != '\\'; i++ {
	}
	return i
}

// plainPrefixNoNewline is plainPrefix stopping at a raw newline too.
func plainPrefixNoNewline(b []byte) int {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		v := binary.LittleEndian.Uint64(b[i:])
		bs := v ^ (swarOnes * '\\')
		nl := v ^ (swarOnes * '\n')
		if (v|(bs-swarOnes)&^bs|(nl-swarOnes)&^nl)&swarHighs != 0 {
			break
		}
	}
	for ; i < len(b) && b[i] < utf8.RuneSelf && b[i] != '\\' && b[i] != '\n'; i++ {
	}
	return i
}

// shortEscape maps the byte after a backslash to the byte it stands for, for
// the two-byte escapes; 0 for \u and invalid escapes.
var shortEscape = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// unescape decodes the escape sequence at b[i] == '\\' and returns the rune
// and the number of bytes it took. A \u surrogate pair is one rune; an
// unpaired surrogate is U+FFFD. ok is false for a malformed escape.
func unescape(b []byte, i int) (r rune, n int, ok bool) {
	if i+1 >= len(b) {
		return 0, 0, false
	}
	switch e := b[i+1]; e {
	case '"', '\\', '/':
		return rune(e), 2, true
	case 'b':
		return '\b', 2, true
	case 'f':
		return '\f', 2, true
	case 'n':
		return '\n', 2, true
	case 'r':
		return '\r', 2, true
	case 't':
		return '\t', 2, true
	case 'u':
		r, ok := hex4(b, i+2)
		if !ok {
			return 0, 0, false
		}
		if utf16.IsSurrogate(r) {
			j := i + 6
			if r2, ok2 := hex4(b, j+2); ok2 && j+1 < len(b) && b[j] == '\\' && b[j+1] == 'u' {
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					return dec, 12, true
				}
			}
			return utf8.RuneError, 6, true
		}
		return r, 6, true
	}
	return 0, 0, false
}

// StringStats describes the text a JSON string decodes to.
type StringStats struct {
	// Bytes and Runes are its length in UTF-8 bytes and in code points;
	// Newlines counts its '\n'.
	Bytes, Runes, Newlines int
	// EndsInNewline reports whether its last byte is '\n'.
	EndsInNewline bool
}

// Stats measures the text the JSON string raw decodes to, exactly as String
// would decode it, without decoding it: nothing is allocated or copied. ok
// is false when raw is not a string or String would reject it.
func Stats(raw []byte) (st StringStats, ok bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return st, false
	}
	b := raw[1 : len(raw)-1]
	var last rune = -1
	for i := 0; i < len(b); {
		if j := i + plainPrefixNoNewline(b[i:]); j > i {
			// Plain ASCII: a byte is a rune.
			st.Bytes += j - i
			st.Runes += j - i
			last = rune(b[j-1])
			i = j
			continue
		}
		if b[i] == '\n' {
			// A raw newline: not valid JSON, but String accepts it.
			st.Bytes++
			st.Runes++
			st.Newlines++
			last = '\n'
			i++
			continue
		}
		if b[i] == '\\' {
			if i+1 < len(b) && shortEscape[b[i+1]] != 0 {
				st.Bytes++
				st.Runes++
				last = rune(shortEscape[b[i+1]])
				if last == '\n' {
					st.Newlines++
				}
				i += 2
				continue
			}
			r, n, ok := unescape(b, i)
			if !ok {
				return StringStats{}, false
			}
			st.Bytes += utf8.RuneLen(r)
			st.Runes++
			if r == '\n' {
				st.Newlines++
			}
			last = r
			i += n
			continue
		}
		// Non-ASCII: the run up to the next escape, as unquoteBody copies it.
		run := b[i : i+escapeFree(b[i:])]
		st.Newlines += bytes.Count(run, newline)
		if utf8.Valid(run) {
			st.Bytes += len(run)
			st.Runes += countRunesValid(run)
			last = rune(run[len(run)-1]) // '\n' if it ends in one
		} else {
			for j := 0; j < len(run); {
				r, size := utf8.DecodeRune(run[j:])
				if r == utf8.RuneError && size == 1 {
					st.Bytes += utf8.RuneLen(utf8.RuneError)
				} else {
					st.Bytes += size
				}
				st.Runes++
				last = r
				j += size
			}
		}
		i += len(run)
	}
	st.EndsInNewline = last == '\n'
	return st, true
}

var newline = []byte{'\n'}

// countRunesValid counts the code points of valid UTF-8: the bytes that are
// not continuation bytes (10xxxxxx), eight at a time.
func countRunesValid(b []byte) int {
	cont := 0
	i := 0
	for ; i+8 <= len(b); i += 8 {
		v := binary.LittleEndian.Uint64(b[i:])
		// A continuation byte has bit 7 set and bit 6 clear; v<<1 moves
		// each byte's bit 6 onto its bit 7.
		cont += bits.OnesCount64(v &^ (v << 1) & swarHighs)
	}
	for ; i < len(b); i++ {
		if b[i]&0xC0 == 0x80 {
			cont++
		}
	}
	return len(b) - cont
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
