package ctxauditprocessor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/collector/session"
	"github.com/ctxaudit/ctxaudit/schema"
)

// fillAll sets every exported field reachable from v to a value other than
// its zero value, with strings that need escaping (quotes, control and HTML
// characters, U+2028, non-ASCII), so that comparing encodings covers every
// field a record has now or gets later.
func fillAll(v reflect.Value, n int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("v%d \"<a&b>\"\n\t\u2028 Größe 大小 \x01", n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(n + 1))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(n + 1))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(n) + 0.25)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillAll(v.Elem(), n+1)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fillAll(v.Index(i), n+i+1)
		}
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for i := range 3 {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fillAll(k, n+10*i+1)
			fillAll(e, n+i+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(time.Date(2026, 5, 1, 9, 0, n%60, 123456789, time.FixedZone("x", 3600))))
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fillAll(v.Field(i), n+i+1)
			}
		}
	}
}

func filled[T any]() T {
	var x T
	fillAll(reflect.ValueOf(&x).Elem(), 0)
	return x
}

// What the processor stores is encoding/json's encoding byte for byte, for
// every field filled and for empty records; text that is not UTF-8 (a
// marker quoted from a binary output) reads back as encoding/json's would.
func TestStoredJSONIsEncodingJSON(t *testing.T) {
	odd := filled[schema.ToolCall]()
	odd.Forensics.Marker = "cut \xff\xfe here"
	odd.Arguments = "{\"a\":\"\x80\"}"
	cases := map[string]any{
		"records": storedRecords{At: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC),
			Calls: []*schema.ToolCall{ptr(filled[schema.ToolCall]()), {}}, Answers: []schema.Answer{filled[schema.Answer](), {}}},
		"empty records": storedRecords{},
		"meta":          filled[storedMeta](),
		"empty meta":    storedMeta{Sent: session.Sent{}},
		"not UTF-8":     storedRecords{Calls: []*schema.ToolCall{&odd}},
	}
	for name, v := range cases {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := encodeJSON(v)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(got, want) {
			continue
		}
		// Not byte for byte: it must at least read back the same.
		back := func(b []byte) any {
			p := reflect.New(reflect.TypeOf(v))
			if err := json.Unmarshal(b, p.Interface()); err != nil {
				t.Fatalf("%s: %v in %s", name, err, b)
			}
			return p.Elem().Interface()
		}
		if !reflect.DeepEqual(back(got), back(want)) {
			t.Errorf("%s: encodings differ and read back differently\n got %s\nwant %s", name, got, want)
		} else if name != "not UTF-8" {
			t.Errorf("%s: encodings differ\n got %s\nwant %s", name, got, want)
		}
	}
}

// BenchmarkStoredJSON encodes one request's records (512 calls), as
// persist does before the request is answered, with encoding/json and with
// the processor's encoder.
func BenchmarkStoredJSON(b *testing.B) {
	c := schema.ToolCall{SessionID: "0b1c7f9e-2d4a-4c39-9e55-6c1f0f3f6a10", CallID: "toolu_01PersistedGrep000001", Tool: "Bash",
		Source: schema.HarnessClaudeCode, Model: "claude-sonnet-4", Project: "/home/dev/app", Arguments: `{"command":"grep -rn TODO src/"}`,
		Timestamp: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)}
	c.Forensics.Original.Bytes = schema.Known(5000)
	c.Forensics.Context.Bytes = schema.Known(4000)
	c.Forensics.Kind = schema.KindExplicit
	c.Forensics.Marker = "[1000 characters truncated]"
	recs := storedRecords{At: c.Timestamp, Calls: make([]*schema.ToolCall, 512)}
	for i := range recs.Calls {
		recs.Calls[i] = &c
	}
	for _, enc := range []struct {
		name    string
		marshal func(any) ([]byte, error)
	}{{"encoding_json", json.Marshal}, {"processor", encodeJSON}} {
		b.Run(enc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := enc.marshal(recs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestStoredValuesReadBack: what setValue stores reads back as the JSON of
// the record would; a plain JSON value (as earlier versions stored it)
// still reads; a damaged compressed value is an error, not a panic or a
// half-read record.
func TestStoredValuesReadBack(t *testing.T) {
	for name, v := range map[string]any{
		"records": storedRecords{At: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC),
			Calls: []*schema.ToolCall{ptr(filled[schema.ToolCall]()), {}}, Answers: []schema.Answer{filled[schema.Answer](), {}}},
		"meta": filled[storedMeta](),
	} {
		plain, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		want := reflect.New(reflect.TypeOf(v))
		if err := json.Unmarshal(plain, want.Interface()); err != nil {
			t.Fatal(err)
		}
		stored, err := encodeValue(v)
		if err != nil {
			t.Fatal(err)
		}
		if stored[0] != s2Tag {
			t.Fatalf("%s: stored value starts with %#x, not the compression tag", name, stored[0])
		}
		for form, value := range map[string][]byte{"compressed": stored, "plain JSON": plain} {
			got := reflect.New(reflect.TypeOf(v))
			if err := decodeValue(value, got.Interface()); err != nil {
				t.Fatalf("%s, %s: %v", name, form, err)
			}
			if !reflect.DeepEqual(got.Interface(), want.Interface()) {
				t.Errorf("%s, %s: reads back differently", name, form)
			}
		}
		damaged := append([]byte(nil), stored[:len(stored)/2]...)
		if err := decodeValue(damaged, reflect.New(reflect.TypeOf(v)).Interface()); err == nil {
			t.Errorf("%s: a value cut in half read back without an error", name)
		}
	}
}

// TestStoredValuesAreSmall: one request's records for a 50-call session,
// with distinct ids and figures, take a small fraction of their JSON.
func TestStoredValuesAreSmall(t *testing.T) {
	recs := storedRecords{At: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)}
	for i := range 50 {
		c := schema.ToolCall{SessionID: "0b1c7f9e-2d4a-4c39-9e55-6c1f0f3f6a10", CallID: fmt.Sprintf("toolu_01%016d", i*7919), Tool: "Bash",
			Source: schema.HarnessClaudeCode, Timestamp: recs.At.Add(time.Duration(i) * time.Second),
			Arguments: fmt.Sprintf(`{"command":"grep -rn TODO src/%d"}`, i)}
		c.Original.Bytes = schema.Known(uint64(20_000 + i*137))
		c.Context = schema.Sizes{Bytes: schema.Known(uint64(4000 + i*31)), Chars: schema.Known(uint64(3990 + i*31)),
			Lines: schema.Known(uint64(60 + i)), Tokens: schema.Known(uint64(1000 + i*8))}
		c.Kind, c.Truncated = schema.KindExplicit, true
		c.Marker = fmt.Sprintf("... [%d characters truncated] ...", 16_000+i*106)
		recs.Calls = append(recs.Calls, &c)
	}
	plain, err := encodeJSON(recs)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := encodeValue(recs)
	if err != nil {
		t.Fatal(err)
	}
	ratio := float64(len(plain)) / float64(len(stored))
	t.Logf("50 calls: %d bytes of JSON stored in %d (%.1f×)", len(plain), len(stored), ratio)
	if ratio < 5 {
		t.Errorf("stored in %d bytes, %.1f× less than the JSON's %d; want at least 5×", len(stored), ratio, len(plain))
	}
}

// TestValueEncoderIsEncodeValue: an encoder reused across values (as
// persist reuses one) stores each exactly as a fresh one would, and its
// JSON is encodeJSON's.
func TestValueEncoderIsEncodeValue(t *testing.T) {
	e := newValueEncoder()
	odd := filled[schema.ToolCall]()
	odd.Marker = "cut <here> & \xff there"
	for i, v := range []any{
		storedRecords{At: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC), Calls: []*schema.ToolCall{ptr(filled[schema.ToolCall]()), {}, &odd}},
		storedRecords{},
		filled[storedMeta](),
		storedRecords{Answers: []schema.Answer{filled[schema.Answer]()}},
	} {
		got, err := e.encode(v)
		if err != nil {
			t.Fatal(err)
		}
		want, err := encodeJSON(v)
		if err != nil {
			t.Fatal(err)
		}
		plain, err := valueJSON(got)
		if err != nil {
			t.Fatal(err)
		}
		if got[0] != s2Tag || !bytes.Equal(plain, want) {
			t.Errorf("value %d: the reused encoder stored %q, want the JSON %q", i, plain, want)
		}
	}
}
