package ctxauditprocessor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"

	"github.com/klauspost/compress/s2"
	"github.com/tinylib/msgp/msgp"

	"github.com/ctxaudit/ctxaudit/collector/internal/storageclient"
	"github.com/ctxaudit/ctxaudit/collector/session"
	"github.com/ctxaudit/ctxaudit/schema"
)

// What the processor holds per session, kept in a storage extension so that
// a restart — a crash included — loses no held call and no session
// analysis. One buffer of a session (a generation: a session whose buffer
// started again has two) is a few keys:
//
//	held/<gen>/meta       the session id, whether the buffer is partial,
//	                      the fingerprints of what was last emitted, and
//	                      the last increment an emission covered
//	held/<gen>/r/<seq>    the records one request added
//	held/<gen>/base       (written by earlier versions, still read) records
//	                      held when the buffer was last emitted
//	dropped/<session id>  a session whose buffer was dropped (see recentSet)
//
// A buffer dropped past max_sessions keeps its keys once emitted, its meta
// marked parked (parked.go), until its session goes on — it is read back
// and held again — or it is forgotten (max_parked_calls, or the dropped
// set forgets its session).
//
// A request's records are written in one Batch before the request is
// answered, so an acknowledged call is on disk; requests that arrive while
// a Batch is written share the next one (commitQueue). An emission writes only the
// meta — the fingerprints and the last increment it covered — so a restart
// re-emits nothing that was already handed on, and no record is written
// twice. A buffer that is dropped
// after its emission loses all its keys. Records are redacted before they
// get here: no secret reaches the storage extension.
const (
	heldPrefix    = "held/"
	droppedPrefix = "dropped/"
)

func metaKey(gen uint64) string { return heldPrefix + strconv.FormatUint(gen, 10) + "/meta" }
func baseKey(gen uint64) string { return heldPrefix + strconv.FormatUint(gen, 10) + "/base" }
func incKey(gen, seq uint64) string {
	return heldPrefix + strconv.FormatUint(gen, 10) + "/r/" + strconv.FormatUint(seq, 10)
}

// storedMeta is a buffer's meta key.
type storedMeta struct {
	SessionID string         `json:"session_id"`
	Source    schema.Harness `json:"source,omitempty"`
	Partial   bool           `json:"partial,omitempty"`
	Sent      session.Sent   `json:"sent"`
	// Emitted is the last increment (seq) an emission covered: later ones
	// hold records not emitted yet.
	Emitted uint64 `json:"emitted,omitempty"`
	// Parked: the buffer was dropped past max_sessions and emitted whole;
	// its keys wait for its session to go on. Calls is how many it holds.
	Parked bool `json:"parked,omitempty"`
	Calls  int  `json:"calls,omitempty"`
}

// heldStore reads and writes those keys. Without a storage extension it is
// nil and every method does nothing: the processor then holds sessions in
// memory only.
type heldStore struct {
	client storage.Client
	walker storage.Walker
	// commits groups the writes of requests that arrive while one is
	// being written (submit).
	commits commitQueue
}

// openHeldStore gets the storage client of the extension id names.
func openHeldStore(ctx context.Context, host component.Host, id *component.ID, self component.ID) (*heldStore, error) {
	if id == nil {
		return nil, nil
	}
	client, err := storageclient.Open(ctx, host, *id, component.KindProcessor, self, "sessions")
	if err != nil {
		return nil, err
	}
	w, ok := client.(storage.Walker)
	if !ok {
		_ = client.Close(ctx)
		return nil, fmt.Errorf("storage: extension %q cannot list its keys (it is no storage.Walker), so held sessions could not be reloaded after a restart; use file_storage", id.String())
	}
	return &heldStore{client: client, walker: w}, nil
}

func (s *heldStore) close(ctx context.Context) error {
	if s == nil {
		return nil
	}
	return s.client.Close(ctx)
}

// write applies ops as one batch.
func (s *heldStore) write(ctx context.Context, ops []*storage.Operation) error {
	if s == nil || len(ops) == 0 {
		return nil
	}
	if err := s.client.Batch(ctx, ops...); err != nil {
		return fmt.Errorf("storage: write held sessions: %w", err)
	}
	return nil
}

// commitQueue is a group commit: the operations submitted while a batch is
// being written wait, in the order they were submitted, and are written
// together in the next batch — one transaction, and with fsync one flush to
// disk, for every request that arrived meanwhile instead of one each.
// Submitting in order is the caller's (persistMu); waiting is not ordered.
type commitQueue struct {
	mu sync.Mutex
	// busy: a writer leads — it writes what is queued, then hands the lead
	// to the first writer that queued since, if any.
	busy    bool
	ops     []*storage.Operation
	waiting []*pendingWrite
}

// pendingWrite is one submitted write: wait returns once its operations are
// in storage, or the error that kept them out.
type pendingWrite struct {
	s    *heldStore
	lead bool
	done chan error // buffered: a result, or errLead
}

// errLead tells a waiting writer that it writes the next batch.
var errLead = errors.New("lead the next commit")

// submit queues ops for the next batch. The caller calls wait, after
// releasing what orders its submissions.
func (s *heldStore) submit(ops []*storage.Operation) *pendingWrite {
	w := &pendingWrite{s: s, done: make(chan error, 1)}
	if s == nil || len(ops) == 0 {
		w.done <- nil
		return w
	}
	q := &s.commits
	q.mu.Lock()
	defer q.mu.Unlock()
	q.ops = append(q.ops, ops...)
	q.waiting = append(q.waiting, w)
	if !q.busy {
		q.busy, w.lead = true, true
	}
	return w
}

// wait returns once w's operations are written. The leading writer writes
// everything queued by then, whoever submitted it, and answers them all;
// the write is not cancelled with ctx, since it carries other requests'
// records too (and w's are held in memory already).
func (w *pendingWrite) wait(ctx context.Context) error {
	if !w.lead {
		if err := <-w.done; !errors.Is(err, errLead) {
			return err
		}
	}
	q := &w.s.commits
	q.mu.Lock()
	ops, waiting := q.ops, q.waiting
	q.ops, q.waiting = nil, nil
	q.mu.Unlock()
	err := w.s.write(context.WithoutCancel(ctx), ops)
	for _, x := range waiting {
		x.done <- err
	}
	q.mu.Lock()
	if len(q.waiting) > 0 {
		q.waiting[0].done <- errLead
	} else {
		q.busy = false
	}
	q.mu.Unlock()
	return <-w.done
}

// A stored value starts with a tag byte saying how it is encoded. Both
// tagged forms are S2-compressed: a request's records repeat the same keys
// call after call, so a value shrinks about 17 times
// (TestStoredValuesAreSmall), and with it the storage file, the bytes each
// request fsyncs before it is answered and the file pages the collector
// keeps mapped. A value with neither tag is plain JSON, as the first
// versions stored everything; JSON never starts with 0x01 or 0x02.
const (
	// tagJSON: JSON. Meta keys, and records written by earlier versions.
	tagJSON = 0x01
	// tagMsgpack: MessagePack (stored_records.go). Records.
	tagMsgpack = 0x02
)

// encodeValue is what setValue stores for v.
func encodeValue(v any) ([]byte, error) { return new(valueEncoder).encode(v) }

// valueEncoder encodes stored values with buffers it keeps: every
// request's records are encoded before it is answered, and a fresh
// encoding buffer and compression buffer per request were an eighth of the
// collector's allocation under load. Only the compressed value, a fraction
// of the encoding, is allocated per value. Not safe for concurrent use.
type valueEncoder struct {
	raw []byte // MessagePack of the last records
	s2  []byte
}

// encode stores records as MessagePack and anything else (a buffer's meta,
// written once per emission) as JSON.
func (e *valueEncoder) encode(v any) ([]byte, error) {
	if r, ok := v.(storedRecords); ok {
		v = &r // its generated methods are the pointer's
	}
	tag, raw, err := byte(tagMsgpack), []byte(nil), error(nil)
	if r, ok := v.(*storedRecords); ok {
		explicit := *r
		explicit.ExplicitTurns = true
		e.raw, err = explicit.appendMsg(e.raw[:0])
		raw = e.raw
	} else {
		tag = tagJSON
		raw, err = json.Marshal(v)
	}
	if err != nil {
		return nil, err
	}
	if need := s2.MaxEncodedLen(len(raw)); cap(e.s2) < need {
		e.s2 = make([]byte, need)
	}
	compressed := s2.Encode(e.s2[:cap(e.s2)], raw)
	out := make([]byte, 1+len(compressed))
	out[0] = tag
	copy(out[1:], compressed)
	return out, nil
}

// decodeValue reads a stored value into v; a MessagePack value only into
// a type that reads it (storedRecords).
func decodeValue(value []byte, v any) error {
	tag, b, err := valuePayload(value)
	if err != nil {
		return err
	}
	if tag != tagMsgpack {
		return json.Unmarshal(b, v)
	}
	u, ok := v.(msgp.Unmarshaler)
	if !ok {
		return fmt.Errorf("a MessagePack value cannot be read into %T", v)
	}
	return unmarshalMsg(b, u)
}

// unmarshalMsg reads the MessagePack b into u, all of it. The structure is
// walked first, allocating nothing: a damaged length would otherwise have
// the generated decoder allocate room for elements that are not there (up
// to 4G of them).
func unmarshalMsg(b []byte, u msgp.Unmarshaler) error {
	if _, err := msgp.Skip(b); err != nil {
		return fmt.Errorf("damaged value: %w", err)
	}
	rest, err := u.UnmarshalMsg(b)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return fmt.Errorf("%d bytes after the value", len(rest))
	}
	return nil
}

// valuePayload is a stored value's tag (0: plain JSON) and its encoding,
// decompressed.
func valuePayload(value []byte) (byte, []byte, error) {
	if len(value) == 0 || (value[0] != tagJSON && value[0] != tagMsgpack) {
		return 0, value, nil
	}
	b, err := s2.Decode(nil, value[1:])
	if err != nil {
		return 0, nil, fmt.Errorf("decompress: %w", err)
	}
	return value[0], b, nil
}

func setValue(key string, v any) (*storage.Operation, error) {
	b, err := encodeValue(v)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", key, err)
	}
	return storage.SetOperation(key, b), nil
}

// loadedBuffer is one buffer as read back from storage.
type loadedBuffer struct {
	gen  uint64
	meta *storedMeta
	base *storedRecords
	incs map[uint64]*storedRecords
}

// loaded is everything read back at start.
type loaded struct {
	buffers []*loadedBuffer // oldest generation first
	parked  []parkedBuffer  // oldest generation first
	dropped []string
	maxSeq  uint64
}

// load reads every held buffer, and where the parked ones are (their
// records are read if their session goes on). A key that cannot be decoded
// is reported and skipped (the rest still loads); a storage error fails the
// start.
func (s *heldStore) load(ctx context.Context, warn func(key string, err error)) (*loaded, error) {
	out := &loaded{}
	if s == nil {
		return out, nil
	}
	bufs := map[uint64]*loadedBuffer{}
	// Records are decoded once the walk has found every meta: a parked
	// buffer's are not decoded at all. Walked values are valid only during
	// the walk, so they are copied — but not those of a buffer whose meta
	// said parked already (it comes first in file_storage's key order):
	// a parked buffer is where most of a large storage is.
	type rawRecords struct {
		base []byte
		incs map[uint64][]byte
	}
	raws := map[uint64]*rawRecords{}
	buf := func(gen uint64) *loadedBuffer {
		b, ok := bufs[gen]
		if !ok {
			b = &loadedBuffer{gen: gen, incs: map[uint64]*storedRecords{}}
			bufs[gen] = b
			raws[gen] = &rawRecords{incs: map[uint64][]byte{}}
		}
		return b
	}
	err := s.walker.Walk(ctx, func(key string, value []byte) ([]*storage.Operation, error) {
		if id, ok := strings.CutPrefix(key, droppedPrefix); ok {
			out.dropped = append(out.dropped, id)
			return nil, nil
		}
		rest, ok := strings.CutPrefix(key, heldPrefix)
		if !ok {
			return nil, nil
		}
		parts := strings.Split(rest, "/")
		gen, err := strconv.ParseUint(parts[0], 10, 64)
		if err != nil {
			warn(key, err)
			return nil, nil
		}
		out.maxSeq = max(out.maxSeq, gen)
		switch {
		case len(parts) == 2 && parts[1] == "meta":
			var m storedMeta
			if err := decodeValue(value, &m); err != nil {
				warn(key, err)
				return nil, nil
			}
			buf(gen).meta = &m
		case len(parts) == 2 && parts[1] == "base":
			buf(gen)
			raws[gen].base = bytes.Clone(value)
		case len(parts) == 3 && parts[1] == "r":
			seq, err := strconv.ParseUint(parts[2], 10, 64)
			if err != nil {
				warn(key, err)
				return nil, nil
			}
			out.maxSeq = max(out.maxSeq, seq)
			if b := buf(gen); b.meta != nil && b.meta.Parked {
				raws[gen].incs[seq] = nil
			} else {
				raws[gen].incs[seq] = bytes.Clone(value)
			}
		default:
			warn(key, errors.New("unknown key"))
		}
		return nil, nil
	})
	if err != nil {
		return nil, fmt.Errorf("storage: read held sessions: %w", err)
	}
	for _, b := range bufs {
		if b.meta == nil {
			// The meta key is written with the buffer's first records, in
			// the same batch: records without it are not a buffer's.
			warn(metaKey(b.gen), errors.New("records without their session; ignored"))
			continue
		}
		raw := raws[b.gen]
		if pb, ok := parkedOf(b, raw.incs, raw.base != nil); ok {
			out.parked = append(out.parked, pb)
			continue
		} else if b.meta.Parked {
			// Records after its last emission (see parkedOf), whose
			// values the walk did not keep: read it whole.
			lb, err := s.read(ctx, parkedBuffer{id: b.meta.SessionID, gen: b.gen, incs: slices.Sorted(maps.Keys(raw.incs)), hasBase: raw.base != nil})
			if err != nil {
				warn(metaKey(b.gen), err)
				continue
			}
			out.buffers = append(out.buffers, lb)
			continue
		}
		if raw.base != nil {
			var r storedRecords
			if err := decodeValue(raw.base, &r); err != nil {
				warn(baseKey(b.gen), err)
			} else {
				r.readTurns()
				b.base = &r
			}
		}
		for seq, v := range raw.incs {
			var r storedRecords
			if err := decodeValue(v, &r); err != nil {
				warn(incKey(b.gen, seq), err)
				continue
			}
			r.readTurns()
			b.incs[seq] = &r
		}
		out.buffers = append(out.buffers, b)
	}
	sort.Slice(out.buffers, func(i, j int) bool { return out.buffers[i].gen < out.buffers[j].gen })
	sort.Slice(out.parked, func(i, j int) bool { return out.parked[i].gen < out.parked[j].gen })
	return out, nil
}

// parkedOf is where a loaded buffer marked parked keeps its records. A
// buffer with records after its last emission is not parked, whatever its
// meta says (a resumed session whose meta was not rewritten yet): it is
// held again, so that those records get their rows.
func parkedOf(b *loadedBuffer, incs map[uint64][]byte, hasBase bool) (parkedBuffer, bool) {
	if !b.meta.Parked {
		return parkedBuffer{}, false
	}
	pb := parkedBuffer{id: b.meta.SessionID, gen: b.gen, hasBase: hasBase, calls: b.meta.Calls}
	for seq := range incs {
		if seq > b.meta.Emitted {
			return parkedBuffer{}, false
		}
		pb.incs = append(pb.incs, seq)
	}
	slices.Sort(pb.incs)
	return pb, true
}

// sortedIncs returns a loaded buffer's increments in the order written.
func (b *loadedBuffer) sortedIncs() ([]uint64, []*storedRecords) {
	seqs := make([]uint64, 0, len(b.incs))
	for s := range b.incs {
		seqs = append(seqs, s)
	}
	sort.Slice(seqs, func(i, j int) bool { return seqs[i] < seqs[j] })
	recs := make([]*storedRecords, len(seqs))
	for i, s := range seqs {
		recs[i] = b.incs[s]
	}
	return seqs, recs
}

// deleteBuffer is the operations that drop every key of a buffer.
func deleteBuffer(gen uint64, incs []uint64, hasBase bool) []*storage.Operation {
	ops := []*storage.Operation{storage.DeleteOperation(metaKey(gen))}
	if hasBase {
		ops = append(ops, storage.DeleteOperation(baseKey(gen)))
	}
	for _, s := range incs {
		ops = append(ops, storage.DeleteOperation(incKey(gen, s)))
	}
	return ops
}
