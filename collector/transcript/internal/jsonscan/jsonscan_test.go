package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// toAny rebuilds a decoded value with the iterators, in the shape
// encoding/json produces with UseNumber, so the two can be compared.
func toAny(raw []byte) (any, error) {
	switch {
	case len(raw) == 0:
		return nil, ErrSyntax
	case raw[0] == '{':
		m := map[string]any{}
		it := Object(raw)
		for it.Next() {
			k, ok := String(append(append([]byte{'"'}, it.Key()...), '"'))
			if !ok {
				return nil, ErrSyntax
			}
			v, err := toAny(it.Value())
			if err != nil {
				return nil, err
			}
			m[k] = v
		}
		return m, it.Err()
	case raw[0] == '[':
		a := []any{}
		it := Array(raw)
		for it.Next() {
			v, err := toAny(it.Value())
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		return a, it.Err()
	case raw[0] == '"':
		s, ok := String(raw)
		if !ok {
			return nil, ErrSyntax
		}
		return s, nil
	case string(raw) == "null":
		return nil, nil
	case raw[0] == 't' || raw[0] == 'f':
		b, ok := Bool(raw)
		if !ok {
			return nil, ErrSyntax
		}
		return b, nil
	default:
		return json.Number(string(raw)), nil
	}
}

func TestValueAndIterators(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    any
		wantErr bool
	}{
		{name: "object", in: `{"a":1,"b":"x","c":[true,false,null],"d":{"e":"\u00e9\n"}}`,
			want: map[string]any{"a": json.Number("1"), "b": "x", "c": []any{true, false, nil}, "d": map[string]any{"e": "é\n"}}},
		{name: "whitespace", in: " \t{ \"a\" : [ 1 , 2 ] }\r\n", want: map[string]any{"a": []any{json.Number("1"), json.Number("2")}}},
		{name: "escaped quote in string", in: `{"a":"say \"}\" now\\"}`, want: map[string]any{"a": `say "}" now\`}},
		{name: "surrogate pair", in: `["\ud83d\ude00"]`, want: []any{"😀"}},
		{name: "lone surrogate", in: `["\ud800x"]`, want: []any{"\uFFFDx"}},
		{name: "escaped key", in: `{"t\u0079pe":"user"}`, want: map[string]any{"type": "user"}},
		{name: "empty containers", in: `{"a":{},"b":[]}`, want: map[string]any{"a": map[string]any{}, "b": []any{}}},
		{name: "truncated object", in: `{"a":"abc`, wantErr: true},
		{name: "truncated nested", in: `{"a":{"b":[1,2}`, wantErr: true},
		{name: "mismatched brackets", in: `{"a":[1}]`, wantErr: true},
		{name: "trailing garbage", in: `{"a":1} x`, wantErr: true},
		{name: "bad literal", in: `{"a":tru}`, wantErr: true},
		{name: "missing colon", in: `{"a" 1}`, wantErr: true},
		{name: "empty", in: ``, wantErr: true},
		{name: "bare minus", in: `[-]`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := Value([]byte(tt.in))
			var got any
			if err == nil {
				got, err = toAny(raw)
			}
			if tt.wantErr {
				if err == nil {
					t.Fatalf("want error, got %#v", got)
				}
				if !errors.Is(err, ErrSyntax) {
					t.Fatalf("error %v is not ErrSyntax", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestGetAndScalars(t *testing.T) {
	line := []byte(`{"message":{"usage":{"input_tokens":12,"output_tokens":3.0,"neg":-4}},"ok":true,"s":"x"}`)
	tests := []struct {
		name string
		path []string
		want string
	}{
		{"nested", []string{"message", "usage", "input_tokens"}, "12"},
		{"missing", []string{"message", "nope"}, ""},
		{"through scalar", []string{"ok", "x"}, ""},
		{"top", []string{"s"}, `"x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(Get(line, tt.path...)); got != tt.want {
				t.Fatalf("Get(%v) = %q, want %q", tt.path, got, tt.want)
			}
		})
	}
	if n, ok := Uint(Get(line, "message", "usage", "output_tokens")); !ok || n != 3 {
		t.Errorf("Uint(3.0) = %d, %v", n, ok)
	}
	if n, ok := Int(Get(line, "message", "usage", "neg")); !ok || n != -4 {
		t.Errorf("Int(-4) = %d, %v", n, ok)
	}
	if _, ok := Uint([]byte(`"7"`)); ok {
		t.Error("Uint accepted a string")
	}
	if _, ok := Uint([]byte(`99999999999999999999999`)); ok {
		t.Error("Uint accepted an overflowing number")
	}
}

// FuzzScan checks the scanner against encoding/json: whatever encoding/json
// accepts must be accepted and decoded to the same value, and nothing panics.
func FuzzScan(f *testing.F) {
	for _, s := range []string{
		`{"type":"user","message":{"content":[{"type":"tool_result","content":"a\"b\\"}]}}`,
		`{"a":[1,2,{"b":null}],"c":"\ud83d\ude00\u00e9"}`,
		`{"a":"\ud800"}`, `[]`, `{}`, `"x"`, `-1.5e3`, `{"a":"` + "\xff\xfe" + `"}`,
		`{"a":{"b":[1,2}`, `{"a":1,}`, `[1 2]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		raw, err := Value(data)
		var got any
		if err == nil {
			got, err = toAny(raw)
		}
		if !json.Valid(data) {
			return // leniency on malformed input is allowed; panics are not
		}
		if err != nil {
			t.Fatalf("rejected valid JSON %q: %v", data, err)
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var want any
		if err := dec.Decode(&want); err != nil {
			t.Fatalf("encoding/json: %v", err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decoded %q as %#v, encoding/json says %#v", data, got, want)
		}
	})
}
