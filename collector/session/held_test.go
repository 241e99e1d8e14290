package session

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/schema"
)

// A held call is returned by the next analysis; Pending without Commit
// returns it again; a builder restored from Commit's fingerprints returns
// nothing for the same records, and a call held again with other content
// is returned again.
func TestHoldPendingCommitRestore(t *testing.T) {
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	meta := schema.Session{SessionID: "s"}
	held := []schema.ToolCall{call("c1", at, true, `{"file_path":"/a.go"}`), call("c2", at.Add(time.Second), false, `{"file_path":"/b.go"}`)}
	b := New("s")
	for _, c := range held {
		b.HoldCall(&c)
	}
	if got := ids(b.Pending(meta).Calls); len(got) != 2 {
		t.Fatalf("first pending: %v; want both held calls", got)
	}
	res := b.Pending(meta) // not committed: the same again
	if got := ids(res.Calls); len(got) != 2 {
		t.Fatalf("pending again without commit: %v; want both", got)
	}
	sent := b.Commit(res)
	if len(sent.Calls) != 2 {
		t.Fatalf("commit fingerprints: %v", sent)
	}
	if got := ids(b.Pending(meta).Calls); len(got) != 0 {
		t.Fatalf("after commit: %v; want nothing", got)
	}

	r := New("s")
	for _, c := range held {
		r.HoldCall(&c)
	}
	r.Restore(sent)
	if got := ids(r.Pending(meta).Calls); len(got) != 0 {
		t.Fatalf("restored builder returns %v; want nothing (all emitted before)", got)
	}
	r.HoldCall(&held[1]) // the same call again: nothing new
	if got := ids(r.Pending(meta).Calls); len(got) != 0 {
		t.Fatalf("same call held again: %v; want nothing", got)
	}
	changed := held[1]
	changed.IsError = true
	r.HoldCall(&changed)
	if got := ids(r.Pending(meta).Calls); len(got) != 1 || got[0] != "c2" {
		t.Fatalf("call held again with other content: %v; want c2", got)
	}
}

// HoldCall returns the call's encoding as held — what MarshalMsg gives for
// it, first held, held again unchanged and held again changed — and an
// encoding it returned stays the same however many calls are held after
// it (they fill and add chunks), since callers keep it to store the call.
func TestHoldCallReturnsItsEncoding(t *testing.T) {
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	b := New("s")
	check := func(what string, c *schema.ToolCall, got []byte) []byte {
		t.Helper()
		want, err := c.MarshalMsg(nil)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("%s: HoldCall returned %d bytes, not the call's encoding (%d bytes)", what, len(got), len(want))
		}
		return slices.Clone(got)
	}
	first := call("c1", at, true, `{"file_path":"/a.go"}`)
	enc := b.HoldCall(&first)
	kept := check("first held", &first, enc)
	check("held again unchanged", &first, b.HoldCall(&first))
	changed := first
	changed.IsError = true
	check("held again changed", &changed, b.HoldCall(&changed))
	for i := range 2000 { // well past maxCallChunk
		c := call(fmt.Sprintf("more-%d", i), at.Add(time.Duration(i)*time.Second), i%2 == 0, `{"file_path":"/b.go"}`)
		check("another call", &c, b.HoldCall(&c))
	}
	if string(enc) != string(kept) {
		t.Fatal("an encoding HoldCall returned changed as more calls were held")
	}
}
