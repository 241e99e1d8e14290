package ctxauditprocessor

import (
	"container/list"
	"context"
	"fmt"

	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"
)

// Parking: a session dropped past max_sessions is the least recently
// active one, and it may yet go on — a developer back from lunch. Its
// buffer's memory is freed once its analysis is written, but with storage
// its keys stay there (parked, up to max_parked_calls calls): if the session
// goes on, its records are read back and it is held again whole, so its
// next analysis sees it from its first record. Without parking its new
// buffer would lack the session's start, and the rows it wrote could never
// be corrected: a cut call of the first buffer followed up in the second
// would stay "not followed up", an answer's inputs in the first buffer
// would be missing, and the session row would be the exporter's recount of
// both buffers' records instead of one analysis of the whole session. A
// session dropped past max_calls_per_session is not parked:
// reading it back would undo the bound.

// parkedBuffer is where a parked session's records are in storage.
type parkedBuffer struct {
	id      string
	gen     uint64
	incs    []uint64
	hasBase bool
	calls   int
}

// parkedSet is the parked sessions, oldest first, and how many calls they
// hold.
type parkedSet struct {
	by    map[string]*list.Element // of parkedBuffer
	order *list.List
	calls int
}

func newParkedSet() *parkedSet {
	return &parkedSet{by: map[string]*list.Element{}, order: list.New()}
}

// add parks pb, the newest; the caller has taken any buffer of the same
// session parked before.
func (s *parkedSet) add(pb parkedBuffer) {
	s.by[pb.id] = s.order.PushBack(pb)
	s.calls += pb.calls
}

// take removes and returns the parked buffer of id.
func (s *parkedSet) take(id string) (parkedBuffer, bool) {
	el, ok := s.by[id]
	if !ok {
		return parkedBuffer{}, false
	}
	return s.remove(el), true
}

// oldest removes and returns the buffer parked first.
func (s *parkedSet) oldest() (parkedBuffer, bool) {
	el := s.order.Front()
	if el == nil {
		return parkedBuffer{}, false
	}
	return s.remove(el), true
}

func (s *parkedSet) remove(el *list.Element) parkedBuffer {
	pb := s.order.Remove(el).(parkedBuffer)
	delete(s.by, pb.id)
	s.calls -= pb.calls
	return pb
}

// park keeps the keys of b, dropped and now emitted, in storage instead of
// deleting them: it returns the storage operations that say so (b's meta,
// marked parked, with everything emitted), or false when b is not to be
// parked — dropped past max_calls_per_session, parking off, no storage,
// or the session went on in a buffer of its own before this one was
// emitted. Parked buffers beyond max_parked_calls, oldest first, lose
// their keys. Called with p.mu held.
func (p *tracesProcessor) park(b *sessionBuffer, incs []uint64) ([]*storage.Operation, bool) {
	if !b.evicted || p.store == nil || p.cfg.MaxParkedCalls <= 0 || !p.dropped.has(b.id) {
		return nil, false
	}
	if _, held := p.sessions[b.id]; held {
		return nil, false
	}
	b.emittedIncs, b.incs = incs, nil
	m := b.storedMeta()
	m.Parked, m.Calls = true, b.b.Calls()
	meta, err := setValue(metaKey(b.gen), m)
	if err != nil {
		p.logger.Warn("Could not park a dropped session; its records are deleted", zap.String("session", b.id), zap.Error(err))
		return nil, false
	}
	ops := []*storage.Operation{meta}
	ops = append(ops, p.parkBuffer(parkedBuffer{id: b.id, gen: b.gen, incs: incs, hasBase: b.hasBase, calls: m.Calls})...)
	return ops, true
}

// parkBuffer records pb as parked, and returns the operations that delete
// the keys of the parked buffers it replaces (an older buffer of the same
// session, which only a storage write that failed can leave) or pushes
// past max_parked_calls.
func (p *tracesProcessor) parkBuffer(pb parkedBuffer) []*storage.Operation {
	var ops []*storage.Operation
	if old, ok := p.parked.take(pb.id); ok {
		ops = append(ops, p.unpark(old)...)
	}
	p.parked.add(pb)
	p.tel.callsParked.Add(context.Background(), int64(pb.calls))
	for p.parked.calls > p.cfg.MaxParkedCalls {
		old, _ := p.parked.oldest()
		ops = append(ops, p.unpark(old)...)
	}
	return ops
}

// unpark is the operations that delete the keys of pb, taken from the
// parked set: if its session goes on, its buffer starts again without its
// start (partial).
func (p *tracesProcessor) unpark(pb parkedBuffer) []*storage.Operation {
	p.tel.callsParked.Add(context.Background(), -int64(pb.calls))
	return deleteBuffer(pb.gen, pb.incs, pb.hasBase)
}

// resume returns the session's parked buffer, read back from storage and
// held again whole (nil: id is not parked, or its records could not be
// read, and are deleted). Called with p.mu held, which it releases while it
// reads storage — a storage read is a transaction that commits, an fsync
// with file_storage — so that other requests go on meanwhile; a request
// for the same session waits for it in buffer (p.resuming). Once per
// session that goes on after it was dropped.
func (p *tracesProcessor) resume(ctx context.Context, id string) *sessionBuffer {
	pb, ok := p.parked.take(id)
	if !ok {
		return nil
	}
	p.tel.callsParked.Add(ctx, -int64(pb.calls))
	done, store := make(chan struct{}), p.store
	p.resuming[id] = done
	p.mu.Unlock()
	lb, err := p.readParked(store, ctx, pb)
	p.mu.Lock()
	delete(p.resuming, id)
	close(done)
	// Held again, its meta no longer parked: rewritten with the request's
	// records, in the same batch.
	var meta *storage.Operation
	if err == nil {
		held := *lb.meta
		held.Parked, held.Calls = false, 0
		meta, err = setValue(metaKey(pb.gen), held)
	}
	if err != nil {
		p.logger.Warn("A session dropped past max_sessions went on, but its records could not be read back from storage; its new buffer lacks the session's start",
			zap.String("session", id), zap.Error(err))
		p.pendingOps = append(p.pendingOps, deleteBuffer(pb.gen, pb.incs, pb.hasBase)...)
		return nil
	}
	b := restoreBuffer(lb)
	p.dropped.remove(id)
	p.pendingOps = append(p.pendingOps, storage.DeleteOperation(droppedPrefix+id), meta)
	p.tel.sessionsResumed.Add(ctx, 1)
	return b
}

// read reads a parked buffer's keys back, in one batch.
func (s *heldStore) read(ctx context.Context, pb parkedBuffer) (*loadedBuffer, error) {
	ops := []*storage.Operation{storage.GetOperation(metaKey(pb.gen))}
	if pb.hasBase {
		ops = append(ops, storage.GetOperation(baseKey(pb.gen)))
	}
	for _, seq := range pb.incs {
		ops = append(ops, storage.GetOperation(incKey(pb.gen, seq)))
	}
	if err := s.client.Batch(ctx, ops...); err != nil {
		return nil, fmt.Errorf("storage: read parked session: %w", err)
	}
	lb := &loadedBuffer{gen: pb.gen, incs: make(map[uint64]*storedRecords, len(pb.incs))}
	var m storedMeta
	if err := decodeStored(ops[0], &m); err != nil {
		return nil, err
	}
	if m.SessionID != pb.id {
		return nil, fmt.Errorf("storage: %s is session %q, not %q", ops[0].Key, m.SessionID, pb.id)
	}
	lb.meta = &m
	rest := ops[1:]
	if pb.hasBase {
		lb.base = &storedRecords{}
		if err := decodeStored(rest[0], lb.base); err != nil {
			return nil, err
		}
		lb.base.readTurns()
		rest = rest[1:]
	}
	for i, seq := range pb.incs {
		r := &storedRecords{}
		if err := decodeStored(rest[i], r); err != nil {
			return nil, err
		}
		r.readTurns()
		lb.incs[seq] = r
	}
	return lb, nil
}

// decodeStored decodes the value a Get operation read into v.
func decodeStored(op *storage.Operation, v any) error {
	if op.Value == nil {
		return fmt.Errorf("storage: %s: missing", op.Key)
	}
	if err := decodeValue(op.Value, v); err != nil {
		return fmt.Errorf("storage: %s: %w", op.Key, err)
	}
	return nil
}
