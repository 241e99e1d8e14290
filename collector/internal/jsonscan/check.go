package jsonscan

import "encoding/binary"

// Check validates the first JSON value of d against the full grammar, as
// encoding/json's scanner does, and returns the index just past it. Leading
// JSON whitespace is skipped; what follows the value is not looked at, so
// Check accepts exactly what a json.Decoder accepts for its first Decode.
//
// The iterators validate only the path they walk. A reader that must treat
// malformed input exactly as encoding/json does (as "absent", say) checks
// the value once with Check and then reads it selectively: on a value Check
// accepted, the iterators and scalar decoders see what encoding/json sees.
//
// Strings are checked eight bytes at a time (SWAR), so Check costs a small
// fraction of a decode: it allocates nothing and copies nothing. Nesting
// deeper than encoding/json's limit (10000) is rejected as it rejects it.
func Check(d []byte) (int, error) {
	// stack holds one bit per open container: 1 for an object, 0 for an
	// array. 64 levels fit without allocating; deeper input grows it.
	var stackBuf [4]uint64
	stack := stackBuf[:]
	depth := 0
	i := skipSpace(d, 0)
	for {
		// A value starts at d[i] (whitespace skipped).
		if i >= len(d) {
			return i, ErrSyntax
		}
		var err error
		switch c := d[i]; c {
		case '{', '[':
			if depth >= maxDepth {
				return i, ErrSyntax
			}
			if depth>>6 >= len(stack) {
				stack = append(stack, make([]uint64, len(stack))...)
			}
			w, bit := depth>>6, uint64(1)<<(depth&63)
			if c == '{' {
				stack[w] |= bit
			} else {
				stack[w] &^= bit
			}
			depth++
			i = skipSpace(d, i+1)
			if i < len(d) && d[i] == c+2 { // '{'+2 == '}', '['+2 == ']'
				depth--
				i++
				break
			}
			if c == '{' {
				if i, err = checkKey(d, i); err != nil {
					return i, err
				}
			}
			continue
		case '"':
			i, err = checkString(d, i)
		case 't':
			i, err = skipLiteral(d, i, "true")
		case 'f':
			i, err = skipLiteral(d, i, "false")
		case 'n':
			i, err = skipLiteral(d, i, "null")
		default:
			i, err = checkNumber(d, i)
		}
		if err != nil {
			return i, err
		}
		// After a value: close containers until one continues with ','.
		for {
			if depth == 0 {
				return i, nil
			}
			i = skipSpace(d, i)
			if i >= len(d) {
				return i, ErrSyntax
			}
			inObject := stack[(depth-1)>>6]&(1<<((depth-1)&63)) != 0
			closer := byte(']')
			if inObject {
				closer = '}'
			}
			if d[i] == closer {
				depth--
				i++
				continue
			}
			if d[i] != ',' {
				return i, ErrSyntax
			}
			i = skipSpace(d, i+1)
			if inObject {
				if i, err = checkKey(d, i); err != nil {
					return i, err
				}
			}
			break
		}
	}
}

// checkKey checks `"key" :` at d[i] and returns the index of the value
// after it, whitespace skipped.
func checkKey(d []byte, i int) (int, error) {
	if i >= len(d) || d[i] != '"' {
		return i, ErrSyntax
	}
	i, err := checkString(d, i)
	if err != nil {
		return i, err
	}
	i = skipSpace(d, i)
	if i >= len(d) || d[i] != ':' {
		return i, ErrSyntax
	}
	return skipSpace(d, i+1), nil
}

const (
	swarOnes  = 0x0101010101010101
	swarHighs = 0x8080808080808080
)

// swarSpecial reports whether any of the eight bytes of v is a quote, a
// backslash or a control character (< 0x20): the bytes a string scan must
// stop at. Each test is the exact "has zero byte" / "has byte less than"
// idiom; borrows can misplace which byte fired, never whether one did.
func swarSpecial(v uint64) bool {
	q := v ^ (swarOnes * '"')
	b := v ^ (swarOnes * '\\')
	return ((q-swarOnes)&^q|(b-swarOnes)&^b|(v-swarOnes*0x20)&^v)&swarHighs != 0
}

// checkString checks the string at d[i] == '"' as encoding/json does: no raw
// control characters, only the escapes \" \\ \/ \b \f \n \r \t \uXXXX. Any
// other byte, invalid UTF-8 included, is accepted (decoding replaces invalid
// sequences with U+FFFD). It returns the index just past the closing quote.
func checkString(d []byte, i int) (int, error) {
	j := i + 1
	for {
		for j+8 <= len(d) && !swarSpecial(binary.LittleEndian.Uint64(d[j:])) {
			j += 8
		}
		// At most eight bytes to the special byte the block holds (or the end).
		for ; j < len(d); j++ {
			c := d[j]
			if c == '"' {
				return j + 1, nil
			}
			if c < 0x20 {
				return j, ErrSyntax
			}
			if c == '\\' {
				break
			}
		}
		if j >= len(d) {
			return j, ErrSyntax
		}
		// d[j] == '\\'
		if j+1 >= len(d) {
			return j, ErrSyntax
		}
		switch d[j+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			j += 2
		case 'u':
			if _, ok := hex4(d, j+2); !ok {
				return j, ErrSyntax
			}
			j += 6
		default:
			return j, ErrSyntax
		}
	}
}

// checkNumber checks a number against JSON's grammar,
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, and returns its end.
func checkNumber(d []byte, i int) (int, error) {
	start := i
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		i = skipDigits(d, i+1)
	default:
		return start, ErrSyntax
	}
	if i < len(d) && d[i] == '.' {
		j := skipDigits(d, i+1)
		if j == i+1 {
			return j, ErrSyntax
		}
		i = j
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		j := skipDigits(d, i)
		if j == i {
			return j, ErrSyntax
		}
		i = j
	}
	return i, nil
}

func skipDigits(d []byte, i int) int {
	for i < len(d) && d[i] >= '0' && d[i] <= '9' {
		i++
	}
	return i
}
