package forensics

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/ctxaudit/ctxaudit/schema"
)

// decodeObject decodes raw as a JSON object, keeping numbers exact. It
// returns nil for anything that is not an object, so callers never have to
// tell "absent" from "malformed": both mean the source said nothing.
func decodeObject(raw []byte) map[string]any {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '{' {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil
	}
	return m
}

// numberOf reads a non-negative integer from a decoded JSON value or an OTel
// attribute value: json.Number, any Go integer or float type, or a decimal
// string. Fractions are truncated; negative or non-finite values are unknown.
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
		return floatCount(f)
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
		return floatCount(x)
	case float32:
		return floatCount(float64(x))
	case string:
		return atoi(strings.TrimSpace(x))
	}
	return schema.Unknown
}

func floatCount(f float64) schema.Count {
	if f < 0 || math.IsNaN(f) || f >= math.MaxUint64/2 {
		return schema.Unknown
	}
	return schema.Known(uint64(f))
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

// objectOf returns v as a JSON object, or nil.
func objectOf(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
