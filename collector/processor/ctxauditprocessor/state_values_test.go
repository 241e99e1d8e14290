package ctxauditprocessor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/klauspost/compress/s2"

	"github.com/ctxaudit/ctxaudit/collector/session"
	"github.com/ctxaudit/ctxaudit/schema"
	"github.com/ctxaudit/ctxaudit/schema/schematest"
)

// asStored is r as storing it keeps it: times in UTC, and no Analysis
// (which JSON leaves out too).
func asStored(r storedRecords) storedRecords {
	r.At = r.At.UTC()
	r.Calls = slices.Clone(r.Calls)
	for i, c := range r.Calls {
		if c != nil {
			u := *c
			u.Timestamp, u.Analysis = u.Timestamp.UTC(), schema.Analysis{}
			r.Calls[i] = &u
		}
	}
	r.ExplicitTurns = true // every value this version stores says so
	r.Answers = slices.Clone(r.Answers)
	for i := range r.Answers {
		r.Answers[i].Timestamp, r.Answers[i].Analysis = r.Answers[i].Timestamp.UTC(), schema.Analysis{}
	}
	return r
}

// sampleRecords has every field of its first call and answer filled (text
// that needs escaping and text that is not UTF-8 included), an empty call
// and answer, and a nil call.
func sampleRecords() storedRecords {
	odd := schematest.Filled[schema.ToolCall](0)
	odd.Marker = "cut <here> & \xff there"
	odd.Arguments = "{\"a\":\"\x80\"}"
	return storedRecords{At: time.Date(2026, 5, 1, 9, 0, 0, 0, time.FixedZone("x", 3600)),
		Calls:   []*schema.ToolCall{ptr(schematest.Filled[schema.ToolCall](0)), {}, &odd, nil},
		Answers: []schema.Answer{schematest.Filled[schema.Answer](0), {}}}
}

// TestStoredRecordsReadBack: records stored as MessagePack read back as
// they were (times in UTC, no Analysis), and carry exactly what their JSON
// carries. Records stored by earlier versions — plain JSON,
// and compressed JSON — still read; a damaged value is an error, not a
// panic or a half-read record.
func TestStoredRecordsReadBack(t *testing.T) {
	for name, recs := range map[string]storedRecords{"filled": sampleRecords(), "empty": {}} {
		want := asStored(recs)
		stored, err := encodeValue(recs)
		if err != nil {
			t.Fatal(err)
		}
		if stored[0] != tagMsgpack {
			t.Fatalf("%s: stored value starts with %#x, not the MessagePack tag", name, stored[0])
		}
		var got storedRecords
		if err := decodeValue(stored, &got); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: reads back differently\n got %+v\nwant %+v", name, got, want)
		}
		gotJSON, _ := json.Marshal(got)
		wantJSON, _ := json.Marshal(want)
		if !bytes.Equal(gotJSON, wantJSON) {
			t.Errorf("%s: carries other than its JSON\n got %s\nwant %s", name, gotJSON, wantJSON)
		}

		var fromJSON storedRecords
		if err := json.Unmarshal(wantJSON, &fromJSON); err != nil {
			t.Fatal(err)
		}
		compressedJSON := append([]byte{tagJSON}, s2.Encode(nil, wantJSON)...)
		for form, value := range map[string][]byte{"plain JSON": wantJSON, "compressed JSON": compressedJSON} {
			var old storedRecords
			if err := decodeValue(value, &old); err != nil {
				t.Fatalf("%s, %s: %v", name, form, err)
			}
			if !reflect.DeepEqual(old, fromJSON) {
				t.Errorf("%s, %s: reads back differently", name, form)
			}
		}

		damaged := append([]byte(nil), stored[:len(stored)/2]...)
		if err := decodeValue(damaged, new(storedRecords)); err == nil {
			t.Errorf("%s: a value cut in half read back without an error", name)
		}
	}
	// A record call with Analysis filled (never held, but the field exists)
	// loses it, as its JSON does.
	c := schematest.Filled[schema.ToolCall](0)
	if !c.Analysis.Done {
		t.Fatal("filled left Analysis empty")
	}
	stored, err := encodeValue(storedRecords{Calls: []*schema.ToolCall{&c}})
	if err != nil {
		t.Fatal(err)
	}
	var got storedRecords
	if err := decodeValue(stored, &got); err != nil {
		t.Fatal(err)
	}
	if got.Calls[0].Analysis != (schema.Analysis{}) {
		t.Errorf("Analysis was stored: %+v", got.Calls[0].Analysis)
	}
}

// TestStoredRecordsOfEveryKeyReadBack: records stored before zero fields
// were left out of the encoding (every key written, zeros included) read
// back as they were. testdata/stored-records-every-key.bin is such a value,
// written by that version from sampleRecords plus a call whose only figures
// are known zeros (a context of 0 bytes, a coverage of 0), and .json is
// what its records were, as JSON, written at the same time.
func TestStoredRecordsOfEveryKeyReadBack(t *testing.T) {
	stored, err := os.ReadFile("testdata/stored-records-every-key.bin")
	if err != nil {
		t.Fatal(err)
	}
	wantJSON, err := os.ReadFile("testdata/stored-records-every-key.json")
	if err != nil {
		t.Fatal(err)
	}
	var got storedRecords
	if err := decodeValue(stored, &got); err != nil {
		t.Fatal(err)
	}
	asJSON := func(r storedRecords) string {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	// The JSON was written by the version that stored the value: a field
	// added since is in neither, and must read as its zero value.
	var gotTree, wantTree any
	if err := json.Unmarshal([]byte(asJSON(got)), &gotTree); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(wantJSON, &wantTree); err != nil {
		t.Fatal(err)
	}
	nullUnknownTimes(wantTree)
	if added := dropAddedZeroKeys(gotTree, wantTree, ""); len(added) > 0 {
		t.Errorf("fields added since the value was stored read back as non-zero: %v", added)
	}
	if !reflect.DeepEqual(gotTree, wantTree) {
		t.Errorf("reads back differently\n got %s\nwant %s", asJSON(got), wantJSON)
	}
	zero := got.Calls[len(got.Calls)-1]
	if zero.CallID != "known-zero" || zero.Context.Bytes != schema.Known(0) || zero.SessionCoverage != schema.KnownRatio(0) {
		t.Errorf("known zeros read back as %+v, %+v", zero.Context.Bytes, zero.SessionCoverage)
	}
	// The same records stored now read back the same, in fewer bytes: a
	// zero field is not written.
	now, err := encodeValue(got)
	if err != nil {
		t.Fatal(err)
	}
	var again storedRecords
	if err := decodeValue(now, &again); err != nil {
		t.Fatal(err)
	}
	got.ExplicitTurns = true // stored now, it says whether a turn is known
	if !reflect.DeepEqual(again, got) {
		t.Errorf("stored again, reads back differently\n got %+v\nwant %+v", again, got)
	}
	_, before, _ := valuePayload(stored)
	_, after, _ := valuePayload(now)
	if len(after) >= len(before) {
		t.Errorf("stored again in %d bytes of MessagePack, not fewer than every key's %d", len(after), len(before))
	}
}

// TestStoredMetaReadBack: a buffer's meta is stored as compressed JSON and
// reads back as its JSON would; plain JSON (earlier versions) still reads.
func TestStoredMetaReadBack(t *testing.T) {
	meta := schematest.Filled[storedMeta](0)
	plain, err := json.Marshal(meta)
	if err != nil {
		t.Fatal(err)
	}
	var want storedMeta
	if err := json.Unmarshal(plain, &want); err != nil {
		t.Fatal(err)
	}
	stored, err := encodeValue(meta)
	if err != nil {
		t.Fatal(err)
	}
	if stored[0] != tagJSON {
		t.Fatalf("stored meta starts with %#x, not the JSON tag", stored[0])
	}
	for form, value := range map[string][]byte{"compressed": stored, "plain JSON": plain} {
		var got storedMeta
		if err := decodeValue(value, &got); err != nil {
			t.Fatalf("%s: %v", form, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: reads back differently", form)
		}
	}
	if err := decodeValue(stored[:len(stored)/2], new(storedMeta)); err == nil {
		t.Error("a meta value cut in half read back without an error")
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
	plain, err := json.Marshal(recs)
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
// persist reuses one, its buffers holding the last value) stores each as a
// fresh one would: records as MessagePack, anything else as JSON, reading
// back the same. (Not compared byte for byte: MessagePack writes a map in
// Go's iteration order.)
func TestValueEncoderIsEncodeValue(t *testing.T) {
	e := new(valueEncoder)
	big := sampleRecords()
	for i, v := range []any{big, storedRecords{}, schematest.Filled[storedMeta](0), &big,
		storedRecords{Answers: []schema.Answer{schematest.Filled[schema.Answer](0)}}} {
		got, err := e.encode(v)
		if err != nil {
			t.Fatal(err)
		}
		fresh, err := encodeValue(v)
		if err != nil {
			t.Fatal(err)
		}
		wantTag := byte(tagMsgpack)
		if _, meta := v.(storedMeta); meta {
			wantTag = tagJSON
		}
		if got[0] != wantTag || fresh[0] != wantTag {
			t.Errorf("value %d: tags %#x (reused) and %#x (fresh), want %#x", i, got[0], fresh[0], wantTag)
		}
		typ := reflect.TypeOf(v)
		if typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		a, b := reflect.New(typ), reflect.New(typ)
		if err := decodeValue(got, a.Interface()); err != nil {
			t.Fatalf("value %d, reused: %v", i, err)
		}
		if err := decodeValue(fresh, b.Interface()); err != nil {
			t.Fatalf("value %d, fresh: %v", i, err)
		}
		if !reflect.DeepEqual(a.Interface(), b.Interface()) {
			t.Errorf("value %d: the reused encoder stored another value than a fresh one", i)
		}
	}
}

// TestAppendMsgIsMarshalMsg: records whose calls come with their encodings
// as a session holds them (what persist stores) encode byte for byte as the
// generated MarshalMsg encodes them — with and without answers, an empty
// answer list, a call held again with other content, no calls — and
// records without an encoding for every call are encoded by MarshalMsg.
func TestAppendMsgIsMarshalMsg(t *testing.T) {
	held := func(r storedRecords) storedRecords {
		b := session.New("s")
		r.encoded = nil
		for _, c := range r.Calls {
			r.encoded = append(r.encoded, b.HoldCall(c))
		}
		return r
	}
	sample := sampleRecords()
	sample.Calls = slices.DeleteFunc(sample.Calls, func(c *schema.ToolCall) bool { return c == nil }) // a held call is never nil
	for i := range sample.Answers {
		// A map is encoded in Go's iteration order: one entry, so that two
		// encodings can be compared byte for byte.
		for k := range sample.Answers[i].ReasonCalls {
			if len(sample.Answers[i].ReasonCalls) > 1 {
				delete(sample.Answers[i].ReasonCalls, k)
			}
		}
	}
	noAnswers := sample
	noAnswers.Answers = nil
	emptyAnswers := sample
	emptyAnswers.Answers = []schema.Answer{}
	short := held(sample)
	short.encoded = short.encoded[:1]
	for name, r := range map[string]storedRecords{
		"calls and answers": held(sample), "calls only": held(noAnswers), "empty answers": held(emptyAnswers),
		"answers only": held(storedRecords{At: sample.At, Answers: sample.Answers}), "nothing": held(storedRecords{}),
		"an encoding missing": short, "no encodings": sample,
	} {
		want, err := r.MarshalMsg(nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.appendMsg([]byte("prefix"))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Errorf("%s: appendMsg wrote %d bytes, MarshalMsg %d: not the same encoding", name, len(got)-len("prefix"), len(want))
		}
	}
}

// FuzzDecodeStoredRecords: whatever a storage file holds, reading it back
// is a value or an error, never a panic: the stored value, and the
// MessagePack inside it (which random bytes would seldom reach through
// the decompression).
func FuzzDecodeStoredRecords(f *testing.F) {
	for _, v := range []any{sampleRecords(), storedRecords{}} {
		b, err := encodeValue(v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		_, payload, _ := valuePayload(b)
		f.Add(payload)
		j, _ := json.Marshal(v)
		f.Add(j)
	}
	f.Fuzz(func(t *testing.T, value []byte) {
		_ = unmarshalMsg(value, new(storedRecords))
		if len(value) > 1 {
			// A damaged length claims up to 4 GiB, which S2 allocates before
			// it finds the data short: an error, but a slow one to fuzz.
			if n, err := s2.DecodedLen(value[1:]); err == nil && n > 1<<20 {
				return
			}
		}
		_ = decodeValue(value, new(storedRecords))
	})
}

// BenchmarkStoredRecords encodes one request's records (512 calls), as
// persist does before the request is answered: as JSON (what earlier
// versions stored, with encoding/json), as MessagePack encoding every call,
// and as the processor stores them, with the calls' encodings their
// sessions hold (stored-held).
func BenchmarkStoredRecords(b *testing.B) {
	c := schema.ToolCall{SessionID: "0b1c7f9e-2d4a-4c39-9e55-6c1f0f3f6a10", CallID: "toolu_01PersistedGrep000001", Tool: "Bash",
		Source: schema.HarnessClaudeCode, Model: "claude-sonnet-4", Project: "/home/dev/app", Arguments: `{"command":"grep -rn TODO src/"}`,
		Timestamp: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)}
	c.Forensics.Original.Bytes = schema.Known(5000)
	c.Forensics.Context.Bytes = schema.Known(4000)
	c.Forensics.Kind = schema.KindExplicit
	c.Forensics.Marker = "[1000 characters truncated]"
	recs := &storedRecords{At: c.Timestamp, Calls: make([]*schema.ToolCall, 512)}
	for i := range recs.Calls {
		recs.Calls[i] = &c
	}
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(recs); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("stored", func(b *testing.B) {
		e := new(valueEncoder)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := e.encode(recs); err != nil {
				b.Fatal(err)
			}
		}
	})
	// As persist stores them: each call's encoding copied from its session,
	// which holds it encoded already.
	held := *recs
	enc, err := c.MarshalMsg(nil)
	if err != nil {
		b.Fatal(err)
	}
	for range held.Calls {
		held.encoded = append(held.encoded, enc)
	}
	b.Run("stored-held", func(b *testing.B) {
		e := new(valueEncoder)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := e.encode(&held); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// dropAddedZeroKeys deletes from got, an object tree decoded from JSON, the
// keys want lacks, and returns the paths of those whose value was not the
// zero value (false, null, "", 0, or an empty list or object).
// nullUnknownTimes rewrites, in a JSON tree written before records gave a
// time not known as null (schema.TimeKnown), such times — year 1 as the
// zero time encoded, the epoch — as null, as the records' JSON gives them
// now.
func nullUnknownTimes(tree any) {
	switch x := tree.(type) {
	case map[string]any:
		for k, v := range x {
			if s, ok := v.(string); ok && (k == "timestamp" || k == "started_at" || k == "ended_at") &&
				(s == "0001-01-01T00:00:00Z" || s == "1970-01-01T00:00:00Z") {
				x[k] = nil
				continue
			}
			nullUnknownTimes(v)
		}
	case []any:
		for _, v := range x {
			nullUnknownTimes(v)
		}
	}
}

func dropAddedZeroKeys(got, want any, path string) (nonZero []string) {
	switch g := got.(type) {
	case map[string]any:
		w, _ := want.(map[string]any)
		for k, v := range g {
			if _, ok := w[k]; ok {
				nonZero = append(nonZero, dropAddedZeroKeys(v, w[k], path+"."+k)...)
				continue
			}
			if !isZeroJSON(v) {
				nonZero = append(nonZero, path+"."+k)
			}
			delete(g, k)
		}
	case []any:
		w, _ := want.([]any)
		for i := range g {
			if i < len(w) {
				nonZero = append(nonZero, dropAddedZeroKeys(g[i], w[i], fmt.Sprintf("%s[%d]", path, i))...)
			}
		}
	}
	return nonZero
}

func isZeroJSON(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return !x
	case string:
		return x == ""
	case float64:
		return x == 0
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}
