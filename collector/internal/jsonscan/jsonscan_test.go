package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
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

func TestCheck(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	tests := []struct {
		in      string
		end     int // -1: want an error
		comment string
	}{
		{`{"a":[1,-2.5e+3,true,false,null,"x\u00e9\n"],"b":{}}`, 52, "everything"},
		{` {"a":1} trailing`, 8, "what follows the value is not looked at"},
		{`{}`, 2, ""}, {`[]`, 2, ""}, {`[ ]`, 3, ""}, {`{ }`, 3, ""},
		{`0`, 1, ""}, {`01`, 1, "a top-level number ends at the first non-digit, as the decoder reads it"},
		{`"` + "\xff\xfe" + `"`, 4, "invalid UTF-8 is accepted"},
		{`[01]`, -1, "leading zero"}, {`[1.]`, -1, ""}, {`[.5]`, -1, ""}, {`[1e]`, -1, ""}, {`[-]`, -1, ""},
		{`[+1]`, -1, ""}, {`[1,]`, -1, "trailing comma"}, {`{"a":1,}`, -1, ""}, {`{"a"}`, -1, ""},
		{`{1:2}`, -1, "non-string key"}, {`["a` + "\n" + `"]`, -1, "raw control character"},
		{`["\x"]`, -1, "bad escape"}, {`["\u12G4"]`, -1, ""}, {`["\u12"]`, -1, ""},
		{`{"a":[1}`, -1, "mismatched"}, {`[tru]`, -1, ""}, {`[nul`, -1, ""}, {``, -1, ""}, {`  `, -1, ""},
		{`[1 2]`, -1, ""}, {`{"a":1 "b":2}`, -1, ""},
		{deep(10000), 20000, "encoding/json's depth limit"}, {deep(10001), -1, "one deeper"},
	}
	for _, tt := range tests {
		end, err := Check([]byte(tt.in))
		if tt.end < 0 {
			if err == nil {
				t.Errorf("Check(%.40q) = %d, want an error (%s)", tt.in, end, tt.comment)
			}
			continue
		}
		if err != nil || end != tt.end {
			t.Errorf("Check(%.40q) = %d, %v, want %d (%s)", tt.in, end, err, tt.end, tt.comment)
		}
	}
}

// FuzzCheck checks Check against encoding/json: it accepts exactly what a
// json.Decoder's first Decode accepts, and exactly json.Valid's inputs when
// nothing but whitespace follows the value.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		`{"a":[1,-2.5e+3,true,false,null,"x\u00e9\n\"\\"],"b":{}}`, `{"a":"` + "\xff\xfe\x1f" + `"}`,
		`01`, `[01]`, `1.`, `{"a":1,}`, `["\u12G4"]`, `[[[[[]]]]]`, ` {} x`, `"abc\"def\\"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		end, err := Check(data)
		if err == nil && (end < 0 || end > len(data)) {
			t.Fatalf("end %d out of range", end)
		}
		whole := err == nil && skipSpace(data, end) == len(data)
		if v := json.Valid(data); v != whole {
			t.Fatalf("Check(%q) = %d, %v; json.Valid = %v", data, end, err, v)
		}
		var v any
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		derr := dec.Decode(&v)
		if (derr == nil) != (err == nil) {
			t.Fatalf("Check(%q) = %d, %v; json.Decoder: %v", data, end, err, derr)
		}
		if err == nil && dec.InputOffset() != int64(end) {
			t.Fatalf("Check(%q) ends at %d, json.Decoder at %d", data, end, dec.InputOffset())
		}
	})
}

// statsOf measures a decoded string the way Stats must.
func statsOf(s string) StringStats {
	return StringStats{
		Bytes: len(s), Runes: utf8.RuneCountInString(s), Newlines: strings.Count(s, "\n"),
		EndsInNewline: strings.HasSuffix(s, "\n"),
	}
}

func checkStats(t *testing.T, raw []byte) {
	t.Helper()
	s, ok := String(raw)
	st, ok2 := Stats(raw)
	if ok != ok2 {
		t.Fatalf("Stats(%q) ok = %v, String ok = %v", raw, ok2, ok)
	}
	if ok && st != statsOf(s) {
		t.Fatalf("Stats(%q) = %+v, want %+v", raw, st, statsOf(s))
	}
}

func TestStats(t *testing.T) {
	for _, s := range []string{
		`""`, `"a"`, `"a\n"`, `"line 1\nline 2\n\tindented \"quoted\" \\ back\/slash"`,
		`"\u00e9t\u00e9\u000a"`, `"\ud83d\ude00 grin"`, `"\ud800 lone"`, `"\ud800\u0041"`,
		`"` + "\xff\xfe invalid \xe2\x82 cut" + `"`, `"` + "héllo wörld 配置文件 " + strings.Repeat("x", 100) + "\n" + `"`,
		`"bad \x escape"`, `"cut \u12"`, `"ends in \"`, `not a string`, `"`,
	} {
		checkStats(t, []byte(s))
	}
}

// FuzzStats checks Stats against measuring what String decodes.
func FuzzStats(f *testing.F) {
	for _, s := range []string{`a\nb`, `\u00e9\ud83d\ude00\ud800`, "\xff\xfe\n", `\"\\\/\b\f\r\t`, `\x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkStats(t, append(append([]byte{'"'}, body...), '"'))
	})
}

// benchTexts are tool outputs JSON-escaped as Claude Code writes them: a
// Read of source code (ASCII, an escape every few words, one non-ASCII
// arrow per line) and prose that is mostly non-ASCII.
func benchTexts() map[string][]byte {
	var code, prose strings.Builder
	for n := 1; code.Len() < 64<<10; n += 2 {
		fmt.Fprintf(&code, "%6d→\tif err := s.store.Put(ctx, \"key\", value); err != nil { // Überprüfen\n", n)
		fmt.Fprintf(&code, "%6d→\tlog.Info(\"processed batch\", \"id\", id, \"size\", 512, \"latency\", d)\n", n+1)
	}
	for prose.Len() < 64<<10 {
		prose.WriteString("配置文件不存在，请检查路径是否正确。Überprüfen Sie die Konfiguration — résumé naïve café.\n")
	}
	out := map[string][]byte{}
	for name, t := range map[string]string{"code": code.String(), "prose": prose.String()} {
		out[name], _ = json.Marshal(t)
	}
	return out
}

// benchObject is a toolUseResult-like object: a Read of source code.
func benchObject() []byte {
	return []byte(`{"type":"text","file":{"filePath":"/src/main.go","content":` + string(benchTexts()["code"]) +
		`,"numLines":2000,"startLine":1,"totalLines":4512}}`)
}

func BenchmarkCheck(b *testing.B) {
	obj := benchObject()
	b.SetBytes(int64(len(obj)))
	for b.Loop() {
		if _, err := Check(obj); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStats(b *testing.B) {
	for _, name := range []string{"code", "prose"} {
		s := benchTexts()[name]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := Stats(s); !ok {
					b.Fatal("not a string")
				}
			}
		})
	}
}

func BenchmarkString(b *testing.B) {
	for _, name := range []string{"code", "prose"} {
		s := benchTexts()[name]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := String(s); !ok {
					b.Fatal("not a string")
				}
			}
		})
	}
}
