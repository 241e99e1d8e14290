package session

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/schema"
	"github.com/ctxaudit/ctxaudit/schema/schematest"
)

// filled is a call with every field set to a value of its own, so that a
// field added to schema.ToolCall that the store would not keep fails
// TestCallStoreKeepsEveryField instead of going unnoticed.
func filled(seed int) schema.ToolCall { return schematest.Filled[schema.ToolCall](seed) }

// TestCallStoreKeepsEveryField: every call comes back exactly as it was
// added, in order — every field set, its time's zone included — across
// chunks, with a call larger than a chunk, and after replacing one.
func TestCallStoreKeepsEveryField(t *testing.T) {
	var s callStore
	var want []schema.ToolCall
	for i := range 300 {
		c := filled(i)
		switch i {
		case 150:
			c.Arguments = strings.Repeat("x", 2*maxCallChunk) // its own chunk
		case 151:
			c = schema.ToolCall{} // every field zero: none is written
		case 152:
			// Known zeros are not unknowns.
			c = schema.ToolCall{CallID: "zeros", Timestamp: c.Timestamp, SessionCoverage: schema.KnownRatio(0),
				Forensics: schema.Forensics{Original: schema.Original{Sizes: schema.Sizes{Bytes: schema.Known(0)}}}}
		}
		if got := s.add(&c); got != i {
			t.Fatalf("add #%d returned index %d", i, got)
		}
		want = append(want, c)
	}
	replaced := filled(1000)
	s.set(7, &replaced)
	want[7] = replaced
	if s.len() != len(want) {
		t.Fatalf("len %d, want %d", s.len(), len(want))
	}
	got := s.all()
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("call %d came back as\n%+v\nwant\n%+v", i, got[i], want[i])
		}
	}
	if len(s.chunks) < 3 {
		t.Errorf("300 calls in %d chunks: the test does not cross chunk boundaries", len(s.chunks))
	}
	oversized := 0
	for _, ch := range s.chunks {
		if cap(ch) > maxCallChunk {
			oversized++
		}
	}
	if oversized != 1 {
		t.Errorf("%d chunks larger than %d bytes, want 1 (the oversized call's)", oversized, maxCallChunk)
	}
	var empty callStore
	if got := empty.all(); len(got) != 0 {
		t.Errorf("an empty store returned %d calls", len(got))
	}
}

// TestCallStoreUpdate: update keeps a call equal to the held one as it is,
// and replaces one that differs in any field — the zone of its time and its
// analysis included, which the encoding does not carry — with that call.
func TestCallStoreUpdate(t *testing.T) {
	c := filled(1)
	var s callStore
	s.add(&c)
	if s.update(0, &c) {
		t.Fatal("a call replaced the same call")
	}
	if len(s.chunks[0]) != len(s.bytes(0)) {
		t.Fatal("keeping the same call wrote its encoding again")
	}
	for name, change := range map[string]func(*schema.ToolCall){
		"marker":        func(c *schema.ToolCall) { c.Marker += "!" },
		"original size": func(c *schema.ToolCall) { c.Original.Bytes.N++ },
		"known":         func(c *schema.ToolCall) { c.Context.Lines.Known = false },
		"zone":          func(c *schema.ToolCall) { c.Timestamp = c.Timestamp.UTC() },
		"analysis":      func(c *schema.ToolCall) { c.Analysis.Records++ },
		"coverage":      func(c *schema.ToolCall) { c.SessionCoverage.V /= 2 },
	} {
		var s callStore
		s.add(&c)
		d := c
		change(&d)
		if !s.update(0, &d) {
			t.Errorf("a call with another %s did not replace the held one", name)
		}
		if got := s.all(); !reflect.DeepEqual(got[0], d) {
			t.Errorf("after a call with another %s, the store holds\n%+v\nwant\n%+v", name, got[0], d)
		}
	}
}

// BenchmarkHeldCallsGC is why the store holds bytes: a full collection with
// 50,000 calls held (1,000 sessions of 50, what the example's max_sessions
// lets the processor hold) as structs and as the store's encoding. The
// struct form is what the GC marks at every cycle while sessions wait for
// session_idle; the encoding is scanned not at all.
func BenchmarkHeldCallsGC(b *testing.B) {
	const sessions, perSession = 1000, 50
	calls := make([]schema.ToolCall, perSession)
	for i := range calls {
		calls[i] = filled(i)
		calls[i].Arguments = `{"file_path":"/srv/app/internal/server/handler.go"}`
	}
	// Each held call has strings of its own, as calls decoded from spans do.
	own := func(c schema.ToolCall, s int) schema.ToolCall {
		c.SessionID = fmt.Sprintf("session-%d", s)
		c.CallID = fmt.Sprintf("%s-%s", c.SessionID, c.CallID)
		c.Marker = strings.Clone(c.Marker)
		c.Target = strings.Clone(c.Target)
		return c
	}
	b.Run("structs", func(b *testing.B) {
		held := make([][]schema.ToolCall, sessions)
		for s := range held {
			for _, c := range calls {
				held[s] = append(held[s], own(c, s))
			}
		}
		b.ResetTimer()
		for b.Loop() {
			runtime.GC()
		}
		runtime.KeepAlive(held)
	})
	b.Run("store", func(b *testing.B) {
		held := make([]callStore, sessions)
		for s := range held {
			for _, c := range calls {
				c = own(c, s)
				held[s].add(&c)
			}
		}
		b.ResetTimer()
		for b.Loop() {
			runtime.GC()
		}
		runtime.KeepAlive(held)
	})
}

// BenchmarkCallStore is what the store costs instead: adding a 50-call
// session's calls and decoding them all for its analysis.
func BenchmarkCallStore(b *testing.B) {
	c := call("toolu_01", time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC), true, `{"file_path":"/a.go"}`)
	b.ReportAllocs()
	for b.Loop() {
		var s callStore
		for range 50 {
			s.add(&c)
		}
		_ = s.all()
	}
}
