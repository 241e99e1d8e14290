package ctxauditprocessor

import (
	"time"

	"github.com/tinylib/msgp/msgp"

	"github.com/ctxaudit/ctxaudit/schema"
)

// The records a request adds are stored before the request is answered, so
// they are encoded as MessagePack by generated code (stored_records_gen.go,
// `make generate`), not as JSON: BenchmarkStoredRecords. The keys are the
// JSON names; times read back in UTC.

//go:generate go tool msgp -file stored_records.go -o stored_records_gen.go -io=false -tests=false -unexported

//msgp:tags msg,json
//msgp:timezone utc

// storedRecords are records of one buffer, with when they were added.
type storedRecords struct {
	At time.Time `json:"at"`
	// Calls are pointers so that a request's calls are copied into its
	// records once, in one slab (added.reserve), not once more per buffer.
	Calls   []*schema.ToolCall `json:"calls,omitempty"`
	Answers []schema.Answer    `json:"answers,omitempty"`
	// ExplicitTurns marks records written since a turn could be unknown
	// (schema.Turn), as every value this version stores is (encode): in
	// them a call without a turn has none known. Earlier versions left a
	// turn of 0 out, so in their records a call without one is in turn 0
	// (readTurns); read as unknown, an upgrade would store NULL over the 0
	// already written, a row that knows less.
	ExplicitTurns bool `json:"explicit_turns,omitempty"`
	// encoded, when it has one entry per call, is each call's MessagePack
	// encoding as its session holds it (added.call): appendMsg copies these
	// instead of encoding every call a second time, which was most of
	// encoding a request's records (BenchmarkStoredRecords). Not stored.
	encoded [][]byte `msg:"-" json:"-"`
}

// appendMsg appends r's MessagePack encoding to b: byte for byte what the
// generated MarshalMsg appends (TestAppendMsgIsMarshalMsg), with the calls'
// encodings copied from encoded when it has them all.
func (r *storedRecords) appendMsg(b []byte) ([]byte, error) {
	if r.Calls == nil || len(r.encoded) != len(r.Calls) {
		return r.MarshalMsg(b)
	}
	size := 32 // the keys, the headers and the time
	for _, enc := range r.encoded {
		size += len(enc)
	}
	for i := range r.Answers {
		size += r.Answers[i].Msgsize()
	}
	b = msgp.Require(b, size)
	fields := uint32(2) // at and calls; answers and explicit_turns when set, as omitempty says
	if r.Answers != nil {
		fields++
	}
	if r.ExplicitTurns {
		fields++
	}
	b = msgp.AppendMapHeader(b, fields)
	b = msgp.AppendString(b, "at")
	b = msgp.AppendTime(b, r.At)
	b = msgp.AppendString(b, "calls")
	b = msgp.AppendArrayHeader(b, uint32(len(r.encoded)))
	for _, enc := range r.encoded {
		b = append(b, enc...)
	}
	if r.Answers != nil {
		b = msgp.AppendString(b, "answers")
		b = msgp.AppendArrayHeader(b, uint32(len(r.Answers)))
		for i := range r.Answers {
			var err error
			if b, err = r.Answers[i].MarshalMsg(b); err != nil {
				return b, msgp.WrapError(err, "Answers", i)
			}
		}
	}
	if r.ExplicitTurns {
		b = msgp.AppendString(b, "explicit_turns")
		b = msgp.AppendBool(b, true)
	}
	return b, nil
}

// readTurns gives the calls of records an earlier version wrote the turn
// they had: 0 where it was left out.
func (r *storedRecords) readTurns() {
	if r.ExplicitTurns {
		return
	}
	for _, c := range r.Calls {
		if c != nil && !c.Turn.Known {
			c.Turn = schema.KnownTurn(0)
		}
	}
}
