package forensics

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/ctxaudit/ctxaudit/collector/internal/jsonscan"
	"github.com/ctxaudit/ctxaudit/schema"
)

// Harness metadata (Claude Code's toolUseResult, pi's details, SDK metadata,
// call arguments) is read selectively: the rules need a dozen scalars, while
// the objects routinely carry the whole output again (Bash stdout, the file a
// Read returned), often 100 KB and more per call. Decoding them into maps
// cost more than all the rules together; reading only the members the rules
// name costs one validation pass and one skipping pass, without allocating.
//
// The readers keep encoding/json's semantics exactly, so that what a source
// wrote means the same whichever way it is read:
//   - an object that encoding/json would not decode (malformed anywhere, even
//     inside a member nobody reads) is absent, as it was when decoding failed;
//     jsonscan.Check validates the full grammar first for that reason;
//   - when a key repeats, the last member wins, as it does in a decoded map;
//   - scalars convert as numberOf, boolOf, stringOf and textOf convert the
//     decoded values (FuzzReaders compares both ways on arbitrary input).

// object is a JSON object that encoding/json would decode into a map, held
// raw. The zero value (nil) is an absent or malformed object: callers never
// have to tell the two apart, both mean the source said nothing.
type object []byte

// objectIn returns raw as an object when json.Decoder would decode it into a
// map: after trimming whitespace it starts with '{' and its first value is
// valid JSON. What follows that value is ignored, as the decoder ignores it.
func objectIn(raw []byte) object {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '{' {
		return nil
	}
	end, err := jsonscan.Check(raw)
	if err != nil {
		return nil
	}
	return object(raw[:end])
}

// member returns v as an object when it is one. v must come from a checked
// object (a member value, an array element), so it needs no validation.
func member(v []byte) object {
	if len(v) < 2 || v[0] != '{' {
		return nil
	}
	return object(v)
}

// fields sets vals[i] to the raw value of the member named keys[i], or nil
// when there is none; of repeated keys the last wins. One pass reads all
// the keys, so callers list everything they need from one object at once.
func (o object) fields(keys []string, vals [][]byte) {
	clear(vals)
	if o == nil {
		return
	}
	keys = keys[:min(len(keys), len(vals))]
	it := jsonscan.Object(o)
	for it.Next() {
		k := it.UnescapedKey()
		for i, want := range keys {
			if string(k) == want {
				vals[i] = it.Value()
				break
			}
		}
	}
}

// countIn reads a raw JSON value as numberOf reads its decoded form: a
// number (fractions truncated, negative unknown) or a string holding a
// decimal integer. Anything else, absence included, is unknown.
func countIn(v []byte) schema.Count {
	if len(v) == 0 {
		return schema.Unknown
	}
	switch c := v[0]; {
	case c == '"':
		s, ok := jsonscan.String(v)
		if !ok {
			return schema.Unknown
		}
		return atoi(strings.TrimSpace(s))
	case c >= '0' && c <= '9':
		// Up to 19 digits always fit a uint64; this is what real sources
		// write, and it allocates nothing. The rest goes the general way.
		if len(v) <= 19 {
			var n uint64
			for _, d := range v {
				if d < '0' || d > '9' {
					return numberOf(json.Number(v))
				}
				n = n*10 + uint64(d-'0')
			}
			return schema.Known(n)
		}
		return numberOf(json.Number(v))
	case c == '-':
		return numberOf(json.Number(v))
	}
	return schema.Unknown
}

// boolIn reads a raw JSON value as boolOf reads its decoded form.
func boolIn(v []byte) (value, ok bool) {
	switch {
	case string(v) == "true":
		return true, true
	case string(v) == "false":
		return false, true
	case jsonscan.IsString(v):
		s, _ := jsonscan.String(v)
		b, err := strconv.ParseBool(strings.TrimSpace(s))
		return b, err == nil
	}
	return false, false
}

// stringIn decodes a raw JSON string; ok is false for any other value.
func stringIn(v []byte) (s string, ok bool) {
	return jsonscan.String(v)
}

// stringOr decodes a raw JSON string, or returns "" as stringOf does for
// any other value.
func stringOr(v []byte) string {
	s, _ := jsonscan.String(v)
	return s
}

// textIn renders a raw hint value as textOf renders its decoded form. Only
// non-string values are decoded (and re-encoded compactly); they are rare
// and small (continue_options, a page number).
func textIn(v []byte) string {
	switch {
	case len(v) == 0 || string(v) == "null" || string(v) == "false":
		return ""
	case jsonscan.IsString(v):
		return stringOr(v)
	}
	return textOf(valueIn(v))
}

// valueIn decodes a raw value of a checked object as decodeObject decoded
// its members (numbers as json.Number).
func valueIn(v []byte) any {
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber()
	var x any
	if d.Decode(&x) != nil {
		return nil
	}
	return x
}

// numberOf reads a non-negative integer from a decoded JSON value or an OTel
// attribute value: json.Number, any Go integer or float type, or a decimal
// string. A fraction, a negative or a non-finite value is no count: unknown.
func numberOf(v any) schema.Count {
	switch x := v.(type) {
	case json.Number:
		if n, err := strconv.ParseUint(string(x), 10, 64); err == nil {
			return schema.Known(n)
		}
		f, err := x.Float64()
		if err != nil {
			return schema.Unknown
		}
		return schema.KnownFloat(f)
	case int:
		return schema.KnownInt(x)
	case int64:
		if x < 0 {
			return schema.Unknown
		}
		return schema.Known(uint64(x))
	case int32:
		return schema.KnownInt(int(x))
	case uint64:
		return schema.Known(x)
	case uint32:
		return schema.Known(uint64(x))
	case uint:
		return schema.Known(uint64(x))
	case float64:
		return schema.KnownFloat(x)
	case float32:
		return schema.KnownFloat(float64(x))
	case string:
		return atoi(strings.TrimSpace(x))
	}
	return schema.Unknown
}

// boolOf reads a boolean from a JSON value or attribute ("true"/"false" strings included).
func boolOf(v any) (value, ok bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case string:
		b, err := strconv.ParseBool(strings.TrimSpace(x))
		return b, err == nil
	}
	return false, false
}

// stringOf reads a string value; other scalars are not coerced.
func stringOf(v any) string {
	s, _ := v.(string)
	return s
}

// textOf renders a hint value for NextHint: strings verbatim, other JSON
// values re-encoded compactly. Null and empty values render as "".
func textOf(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		if !x {
			return ""
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	s := string(b)
	if s == "{}" || s == "[]" || s == "null" {
		return ""
	}
	return s
}
