package benchcollector

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// The payload mix every run sends. It is fixed so that two runs (and the
// default pipeline and the floor within one run) see the same bytes.
const (
	// SpansPerConversation is how many execute_tool spans share one
	// gen_ai.conversation.id.
	SpansPerConversation = 50
	// MinResultBytes and MaxResultBytes bound gen_ai.tool.call.result.
	MinResultBytes = 2 << 10
	MaxResultBytes = 8 << 10
	// MarkerEvery: every third result carries a "[N characters truncated]"
	// marker, the cut Claude Code makes to long outputs.
	MarkerEvery = 3
	// OriginalBytesPercent of the spans carry ctxaudit.output.original.bytes,
	// an exact original size stated by the emitter.
	OriginalBytesPercent = 31
)

// Call is one tool call the load generator turns into a span.
type Call struct {
	CallID         string
	ConversationID string
	Tool           string
	Result         string
	// OriginalBytes is the stated original size, or 0 when the span states
	// none (the attribute is then absent, not 0).
	OriginalBytes int64
}

// Payload generates the i-th call of a run. It is deterministic in (runID, i)
// and cheap, so the generator builds each span as it sends it: every body is
// a prefix of one text built once, so the generator spends its CPU on the
// spans, not on the payload (it shares the machine with the collector).
type Payload struct {
	runID string
	text  string // the line repeated to MaxResultBytes
}

// resultLine is the line every body repeats.
const resultLine = "    at handler (/srv/app/internal/server/handler.go:118) ok\n"

// NewPayload returns the generator for one run; runID makes call and
// conversation ids unique across runs on the same database.
func NewPayload(runID string) *Payload {
	return &Payload{runID: runID, text: strings.Repeat(resultLine, MaxResultBytes/len(resultLine)+1)[:MaxResultBytes]}
}

// Call returns the i-th call.
func (p *Payload) Call(i int) Call {
	r := rand.New(rand.NewPCG(uint64(i), 0x9e3779b97f4a7c15))
	size := MinResultBytes + r.IntN(MaxResultBytes-MinResultBytes+1)
	c := Call{
		CallID:         fmt.Sprintf("%s-call-%07d", p.runID, i),
		ConversationID: fmt.Sprintf("%s-conv-%05d", p.runID, i/SpansPerConversation),
		Tool:           "Bash",
	}
	body := p.text[:size]
	if i%MarkerEvery == 0 {
		// Head and tail kept around the marker, as Claude Code writes it.
		cut := 20_000 + r.IntN(200_000)
		half := len(body) / 2
		c.Result = body[:half] + fmt.Sprintf("\n\n... [%d characters truncated] ...\n\n", cut) + body[half:]
		c.Tool = "Read"
	} else {
		c.Result = body
	}
	// 31 of every 100 consecutive calls: a fixed share, not a random one.
	if i%100 < OriginalBytesPercent {
		c.OriginalBytes = int64(len(c.Result)) + int64(r.IntN(100_000))
	}
	return c
}
