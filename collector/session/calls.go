package session

import (
	"bytes"
	"fmt"
	"reflect"
	"time"

	"github.com/ctxaudit/ctxaudit/schema"
)

// callStore holds a session's calls, in the order they were first added, as
// their MessagePack encoding (schema's generated codec) in byte chunks.
//
// A call held as a struct is 816 bytes and a dozen strings, every one a
// pointer the garbage collector follows at every cycle for as long as the
// session is held. The collector holds tens of thousands of calls at once
// (up to max_sessions sessions waiting for session_idle), and marking them
// was the largest share of its GC work. Bytes hold no pointers, so the GC
// skips them; a call is decoded only when its session is analysed.
// BenchmarkHeldCallsGC compares a collection with either form held, and
// BenchmarkCallStore measures what encoding and decoding cost instead.
//
// The encoding keeps a time as its instant in UTC and leaves out Analysis
// (json:"-"), so the store keeps each call's Timestamp and Analysis beside
// its bytes: a call comes back exactly as it was added.
type callStore struct {
	// chunks are filled in turn; a full one never grows, so adding a call
	// never copies the calls held before it.
	chunks   [][]byte
	locs     []callLoc
	times    []time.Time
	analyses []schema.Analysis
	// scratch is the encoding of a call compared with a held one (update).
	scratch []byte
}

// callLoc is where a call's encoding is: chunk, offset and length.
type callLoc struct{ chunk, off, n uint32 }

// Chunks double from firstCallChunk to maxCallChunk bytes (a call of the
// benchmark load is 460 bytes encoded), so that a session of a few calls
// costs a few KB and a long one an allocation per hundred calls or so,
// instead of the dozen a call's struct and strings took.
const (
	firstCallChunk = 4 << 10
	maxCallChunk   = 64 << 10
)

func (s *callStore) len() int { return len(s.locs) }

// add appends a copy of *c and returns its index.
func (s *callStore) add(c *schema.ToolCall) int {
	s.locs = append(s.locs, s.encode(c))
	s.times = append(s.times, c.Timestamp)
	s.analyses = append(s.analyses, c.Analysis)
	return len(s.locs) - 1
}

// set replaces call i with a copy of *c. The old encoding stays in its
// chunk, unused: a call is replaced only when a source sends it again.
func (s *callStore) set(i int, c *schema.ToolCall) {
	s.locs[i] = s.encode(c)
	s.times[i] = c.Timestamp
	s.analyses[i] = c.Analysis
}

// update replaces call i with a copy of *c unless the two are the same,
// field for field (what reflect.DeepEqual of the two structs reports), and
// reports whether it did. The encoding it compares is the one it keeps.
func (s *callStore) update(i int, c *schema.ToolCall) bool {
	var err error
	s.scratch, err = c.MarshalMsg(s.scratch[:0])
	if err != nil {
		panic(fmt.Sprintf("session: encoding call %q: %v", c.CallID, err))
	}
	if bytes.Equal(s.bytes(i), s.scratch) &&
		reflect.DeepEqual(s.times[i], c.Timestamp) && s.analyses[i] == c.Analysis {
		return false
	}
	s.locs[i] = s.place(s.scratch)
	s.times[i] = c.Timestamp
	s.analyses[i] = c.Analysis
	return true
}

// all decodes every call, in order, into a new slice.
func (s *callStore) all() []schema.ToolCall {
	out := make([]schema.ToolCall, len(s.locs))
	for i := range s.locs {
		s.decode(i, &out[i])
	}
	return out
}

func (s *callStore) decode(i int, c *schema.ToolCall) {
	if _, err := c.UnmarshalMsg(s.bytes(i)); err != nil {
		// The bytes were written by the same codec a moment ago: only a
		// bug gets here, and a call silently lost would be worse.
		panic(fmt.Sprintf("session: held call %d does not decode: %v", i, err))
	}
	c.Timestamp, c.Analysis = s.times[i], s.analyses[i]
}

// bytes is call i's encoding. A chunk is only ever appended to, within its
// capacity, so the slice stays what it is for as long as the store lives:
// a caller may keep it, read-only, without holding the store's lock.
func (s *callStore) bytes(i int) []byte {
	l := s.locs[i]
	return s.chunks[l.chunk][l.off : l.off+l.n]
}

// encode appends c's encoding to the last chunk, or to a new one when it
// would not fit (MarshalMsg would otherwise grow the chunk by copying it).
func (s *callStore) encode(c *schema.ToolCall) callLoc {
	last := s.room(c.Msgsize()) // an upper bound
	buf := s.chunks[last]
	off := len(buf)
	buf, err := c.MarshalMsg(buf)
	if err != nil {
		// MarshalMsg fails only on a value it cannot encode, and a call
		// holds none (strings, numbers, booleans and a time).
		panic(fmt.Sprintf("session: encoding call %q: %v", c.CallID, err))
	}
	s.chunks[last] = buf
	return callLoc{chunk: uint32(last), off: uint32(off), n: uint32(len(buf) - off)}
}

// place appends an encoding made elsewhere (update's).
func (s *callStore) place(enc []byte) callLoc {
	last := s.room(len(enc))
	off := len(s.chunks[last])
	s.chunks[last] = append(s.chunks[last], enc...)
	return callLoc{chunk: uint32(last), off: uint32(off), n: uint32(len(enc))}
}

// room is the chunk that has room for size more bytes: the last one, or a
// new one.
func (s *callStore) room(size int) int {
	last := len(s.chunks) - 1
	if last >= 0 && cap(s.chunks[last])-len(s.chunks[last]) >= size {
		return last
	}
	next := firstCallChunk
	if last >= 0 {
		next = min(2*cap(s.chunks[last]), maxCallChunk)
	}
	s.chunks = append(s.chunks, make([]byte, 0, max(next, size)))
	return last + 1
}
