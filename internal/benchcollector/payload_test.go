package benchcollector

import (
	"strings"
	"testing"
)

// TestPayloadMix holds the generator to the mix the benchmark reports: sizes
// within bounds, a truncation marker on every third result, a stated
// original size on 31 of every 100 calls, and the same call for the same
// (run, index).
func TestPayloadMix(t *testing.T) {
	p := NewPayload("t")
	const n = 3000
	var markers, stated int
	for i := range n {
		c := p.Call(i)
		body := c.Result
		if strings.Contains(c.Result, "characters truncated] ...") {
			markers++
			if i%MarkerEvery != 0 {
				t.Fatalf("call %d: marker off the every-%d pattern", i, MarkerEvery)
			}
			if c.Tool != "Read" {
				t.Errorf("call %d: marked result from %q, want Read", i, c.Tool)
			}
			head, tail, _ := strings.Cut(c.Result, "\n\n... [")
			_, tail, _ = strings.Cut(tail, "] ...\n\n")
			body = head + tail
		}
		if len(body) < MinResultBytes || len(body) > MaxResultBytes {
			t.Fatalf("call %d: body of %d bytes, outside [%d, %d]", i, len(body), MinResultBytes, MaxResultBytes)
		}
		if !strings.HasPrefix(resultLine+resultLine, body[:len(resultLine)+1]) {
			t.Fatalf("call %d: body does not start with the result line: %q", i, body[:40])
		}
		if c.OriginalBytes > 0 {
			stated++
			if c.OriginalBytes < int64(len(c.Result)) {
				t.Errorf("call %d: stated original %d below the %d bytes shown", i, c.OriginalBytes, len(c.Result))
			}
		}
		if again := NewPayload("t").Call(i); again != c {
			t.Fatalf("call %d is not deterministic", i)
		}
		if other := NewPayload("u").Call(i); other.CallID == c.CallID || other.ConversationID == c.ConversationID {
			t.Fatalf("call %d: ids do not carry the run id", i)
		}
	}
	if want := n / MarkerEvery; markers != want {
		t.Errorf("%d marked results, want %d", markers, want)
	}
	if want := n * OriginalBytesPercent / 100; stated != want {
		t.Errorf("%d calls state an original size, want %d", stated, want)
	}
	if a, b := p.Call(0).ConversationID, p.Call(SpansPerConversation-1).ConversationID; a != b {
		t.Errorf("calls 0 and %d in conversations %q and %q, want one", SpansPerConversation-1, a, b)
	}
	if a, b := p.Call(0).ConversationID, p.Call(SpansPerConversation).ConversationID; a == b {
		t.Errorf("call %d still in conversation %q", SpansPerConversation, a)
	}
}
