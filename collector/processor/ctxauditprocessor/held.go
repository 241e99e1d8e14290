package ctxauditprocessor

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/ctxaudit/ctxaudit/collector/otelconv"
	"github.com/ctxaudit/ctxaudit/collector/session"
	"github.com/ctxaudit/ctxaudit/schema"
)

// Session holding: a call tracked for session analysis is held, and its
// tool_calls row is written once, by the session's analysis (its span goes
// no further, or, with forward_held_spans, passes on marked
// ctxaudit.analysis.pending). A session is
// emitted when it has been quiet for session_idle, when a call of it has
// been held for max_hold, when it reaches max_calls_per_session, when it is
// evicted, and at shutdown; a later emission carries only the records whose
// analysis changed.

// sessionBuffer is one session as seen so far: its records, held and
// analysed by collector/session, and the metadata its spans carry.
type sessionBuffer struct {
	id     string
	source schema.Harness
	b      *session.Builder
	// meta is what the spans say of the session: its time span, and the
	// model and place of its first call.
	meta schema.Session
	// The time and id of the session's first call, the one meta's model
	// and place come from (hasFirst: there is one).
	hasFirst bool
	firstAt  time.Time
	firstID  string
	lastSeen time.Time
	dirty    bool
	// pendingSince is when the oldest record not yet emitted arrived (zero:
	// none), for max_hold.
	pendingSince time.Time

	// In storage (see state.go): the buffer's generation, whether its meta
	// and base keys exist, the increments written since the last emission,
	// those an emission covered already (kept as they are, not folded into
	// a base: folding rewrote every record of a session at each of its
	// emissions), and the fingerprints of everything emitted.
	gen         uint64
	metaStored  bool
	hasBase     bool
	incs        []uint64
	emittedIncs []uint64
	sent        session.Sent
	// retired: dropped from the held set; its keys go once it is emitted
	// (or stay, parked), and an emission of it still under way must not
	// write them again.
	retired bool
	// evicted: dropped past max_sessions (not max_calls_per_session), so
	// its keys may be parked once it is emitted.
	evicted bool
	// waitingCalls are the calls it counts in the processor's waiting,
	// from when it was dropped until it is emitted.
	waitingCalls int
}

func newSessionBuffer(id string, source schema.Harness, partial bool, gen uint64) *sessionBuffer {
	b := session.New(id)
	// Partial: an earlier buffer of the same session was dropped, so this
	// one lacks the session's first records.
	b.Partial = partial
	return &sessionBuffer{id: id, source: source, b: b, meta: schema.Session{SessionID: id, Source: source}, gen: gen,
		sent: session.Sent{Calls: map[string]uint64{}, Answers: map[string]uint64{}}}
}

// span widens the session's time span to t.
func (b *sessionBuffer) span(t time.Time) {
	if b.meta.StartedAt.IsZero() || t.Before(b.meta.StartedAt) {
		b.meta.StartedAt = t
	}
	if t.After(b.meta.EndedAt) {
		b.meta.EndedAt = t
	}
}

// addCall holds c and returns its encoding as held (session.Builder.HoldCall).
func (b *sessionBuffer) addCall(c *schema.ToolCall) []byte {
	enc := b.b.HoldCall(c)
	b.span(c.Timestamp)
	if !b.hasFirst || c.Timestamp.Before(b.firstAt) || (c.Timestamp.Equal(b.firstAt) && c.CallID < b.firstID) {
		b.hasFirst, b.firstAt, b.firstID = true, c.Timestamp, c.CallID
		b.meta.Model, b.meta.HarnessVersion = c.Model, c.HarnessVersion
		b.meta.Project, b.meta.Cwd, b.meta.GitBranch = c.Project, c.Cwd, c.GitBranch
	}
	if b.source == "" {
		b.source = c.Source
		b.meta.Source = c.Source
	}
	return enc
}

func (b *sessionBuffer) addAnswer(a schema.Answer) {
	b.b.AddAnswer(a) // a Source it lacks is the session's, filled by the analysis
	b.span(a.Timestamp)
}

// touch records that the buffer received records now.
func (b *sessionBuffer) touch(now time.Time) {
	b.lastSeen, b.dirty = now, true
	if b.pendingSince.IsZero() {
		b.pendingSince = now
	}
}

// added are the records one request added, per buffer, to be persisted
// before the request is answered. Its calls live in slabs sized by the
// request (reserve), so holding a call allocates nothing of its own.
type added struct {
	by   map[*sessionBuffer]*storedRecords
	slab []schema.ToolCall
}

// newAdded is the records of a request of about spans spans.
func newAdded(spans int) *added {
	return &added{by: map[*sessionBuffer]*storedRecords{}, slab: make([]schema.ToolCall, 0, max(spans, 1))}
}

// takeAdded is newAdded from the processor's pool: a request's slab is
// about 400 KB (512 spans), and allocated afresh per request the slabs
// were a twentieth of the collector's allocation under the benchmark's
// load. The records are copied out (into their sessions and into storage)
// before the request is answered, so nothing refers to the slab after
// releaseAdded.
func (p *tracesProcessor) takeAdded(spans int) *added {
	a, ok := p.addeds.Get().(*added)
	if !ok || cap(a.slab) < spans {
		return newAdded(spans)
	}
	return a
}

// releaseAdded gives a back to the pool, emptied: no string of a call it
// held stays reachable from the pool.
func (p *tracesProcessor) releaseAdded(a *added) {
	clear(a.slab)
	a.slab = a.slab[:0]
	clear(a.by)
	p.addeds.Put(a)
}

// reserve returns room for one call. A full slab is replaced, not grown:
// the calls already in it are pointed to and must not move.
func (a *added) reserve() *schema.ToolCall {
	if len(a.slab) == cap(a.slab) {
		a.slab = make([]schema.ToolCall, 0, max(cap(a.slab), 16))
	}
	a.slab = a.slab[:len(a.slab)+1]
	return &a.slab[len(a.slab)-1]
}

// call records c, from reserve, as added to b; enc is its encoding as b
// holds it, which persist stores instead of encoding c again.
func (a *added) call(b *sessionBuffer, c *schema.ToolCall, enc []byte) {
	if b == nil {
		return
	}
	r := a.of(b)
	r.Calls = append(r.Calls, c)
	r.encoded = append(r.encoded, enc)
}

func (a *added) answer(b *sessionBuffer, x schema.Answer) {
	if b == nil {
		return
	}
	r := a.of(b)
	r.Answers = append(r.Answers, x)
}

func (a *added) of(b *sessionBuffer) *storedRecords {
	r, ok := a.by[b]
	if !ok {
		r = &storedRecords{}
		a.by[b] = r
	}
	return r
}

func (p *tracesProcessor) start(ctx context.Context, host component.Host) error {
	if !p.cfg.AnalyzeSessions {
		return nil
	}
	store, err := openHeldStore(ctx, host, p.cfg.Storage, p.id)
	if err != nil {
		return err
	}
	if store == nil {
		// Requests are answered while their calls are held for analysis:
		// without storage an acknowledgement does not mean kept.
		p.logger.Warn("No storage configured: sessions held for analysis live in memory only, so a crash loses calls " +
			"whose requests were already answered; set storage (file_storage) to keep them")
	}
	p.store = store
	if err := p.reload(ctx); err != nil {
		_ = p.store.close(ctx)
		p.store = nil
		return err
	}
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	// The loop's emissions end with shutdown: with an exporter that answers
	// once the rows are written (wait_for_result), one still waiting in the
	// queue after shutdownGrace is given up, and stays in storage.
	loopCtx, cancel := context.WithCancel(context.Background())
	p.cancelLoop = cancel
	go p.loop(loopCtx)
	return nil
}

// reload rebuilds the buffers a previous process held, so that a restart
// leaves no call unanalysed: each comes back with its records and what was
// emitted of them, dirty if it received records since its last emission.
func (p *tracesProcessor) reload(ctx context.Context) error {
	l, err := p.store.load(ctx, func(key string, err error) {
		p.logger.Warn("Ignoring unreadable held-session state", zap.String("key", key), zap.Error(err))
	})
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seq = max(p.seq, l.maxSeq)
	// The dropped set is bounded (8 × max_sessions, at least 1,024),
	// which may be smaller than the previous process's: the sessions it
	// cannot hold are forgotten as drop forgets them, their keys deleted,
	// plain dropped sessions (added first) before parked ones. A parked
	// session is a dropped one (its dropped key was written when it was
	// dropped).
	parked := make(map[string]bool, len(l.parked))
	for _, pb := range l.parked {
		parked[pb.id] = true
	}
	remember := func(id string) {
		if forgot, ok := p.dropped.add(id); ok {
			p.pendingOps = append(p.pendingOps, p.forgetDropped(forgot)...)
		}
	}
	for _, id := range l.dropped {
		if !parked[id] {
			remember(id)
		}
	}
	for _, pb := range l.parked {
		remember(pb.id)
		p.pendingOps = append(p.pendingOps, p.parkBuffer(pb)...)
	}
	calls := 0
	for _, lb := range l.buffers {
		b := restoreBuffer(lb)
		calls += b.b.Calls()
		if el, ok := p.sessions[b.id]; ok {
			// An older buffer of the same session (its buffer started again
			// before the restart): it is emitted and dropped first. The
			// session went on past it (Continues).
			old := el.Value.(*sessionBuffer)
			old.retired, old.b.Continues = true, true
			p.lru.Remove(el)
			delete(p.sessions, old.id)
			p.tel.sessionsHeld.Add(ctx, -1)
			p.queueDropped(old)
		}
		p.sessions[b.id] = p.lru.PushFront(b)
		p.tel.sessionsHeld.Add(ctx, 1)
	}
	if len(l.buffers) > 0 {
		p.logger.Info("Reloaded held sessions from storage", zap.Int("sessions", len(p.sessions)+len(p.retry)), zap.Int("calls", calls))
	}
	return nil
}

// restoreBuffer rebuilds a buffer from what storage holds of it: its
// records and what was emitted of them, dirty if it received records since
// its last emission.
func restoreBuffer(lb *loadedBuffer) *sessionBuffer {
	b := newSessionBuffer(lb.meta.SessionID, lb.meta.Source, lb.meta.Partial, lb.gen)
	b.metaStored, b.hasBase = true, lb.base != nil
	// What was emitted first, then the records (session.Builder.Restore).
	b.b.Restore(lb.meta.Sent)
	seqs, incs := lb.sortedIncs()
	for i, r := range append([]*storedRecords{lb.base}, incs...) {
		if r == nil {
			continue
		}
		for _, c := range r.Calls {
			if c != nil { // a null in a damaged key
				b.addCall(c)
			}
		}
		for _, a := range r.Answers {
			b.addAnswer(a)
		}
		if r.At.After(b.lastSeen) {
			b.lastSeen = r.At
		}
		if i == 0 {
			continue
		}
		// An increment up to the meta's Emitted was covered by an
		// emission; one after it was not emitted yet.
		if seq := seqs[i-1]; seq <= lb.meta.Emitted {
			b.emittedIncs = append(b.emittedIncs, seq)
			continue
		}
		b.incs = append(b.incs, seqs[i-1])
		if b.pendingSince.IsZero() || r.At.Before(b.pendingSince) {
			b.pendingSince = r.At
		}
	}
	b.sent.Merge(lb.meta.Sent)
	b.dirty = len(b.incs) > 0
	return b
}

// shutdown analyses what is still held, so a stopping collector does not
// lose the verdicts of sessions that had not gone idle yet. What cannot be
// handed on (the next consumer refuses it: a full queue) stays in storage
// for the next start; without storage it is lost, and shutdown says so.
func (p *tracesProcessor) shutdown(ctx context.Context) error {
	if p.stop == nil {
		return nil
	}
	close(p.stop)
	// An emission under way is let finish: the exporter is still running
	// (a pipeline stops its exporters after its processors), and giving it
	// up would write its rows again in the flush below and log its export
	// as failed. One that waits longer than shutdownGrace, or than ctx
	// allows, is given up and stays in storage.
	grace := time.NewTimer(shutdownGrace)
	select {
	case <-p.done:
	case <-grace.C:
	case <-ctx.Done():
	}
	grace.Stop()
	p.cancelLoop()
	<-p.done
	p.stop = nil
	err := p.flush(ctx, func(*sessionBuffer) bool { return true })
	if err != nil {
		if p.store != nil {
			p.logger.Warn("Held sessions could not be passed on at shutdown; they stay in storage and are emitted after the next start", zap.Error(err))
			err = nil
		} else {
			err = fmt.Errorf("ctxaudit processor: the analysis of held sessions could not be passed on at shutdown and, without `storage`, is lost: %w", err)
		}
	}
	if cerr := p.store.close(ctx); cerr != nil {
		err = fmt.Errorf("ctxaudit processor: close storage: %w", cerr)
	}
	p.store = nil
	return err
}

// shutdownGrace is how long shutdown waits for an emission under way to be
// written (one INSERT, well under a second with ClickHouse up) before it
// gives it up.
const shutdownGrace = 5 * time.Second

func (p *tracesProcessor) loop(ctx context.Context) {
	defer close(p.done)
	tick := max(min(p.cfg.SessionIdle, p.cfg.MaxHold)/4, 10*time.Millisecond)
	t := time.NewTicker(tick)
	defer t.Stop()
	// rest fires p.dropWait after a wake-up left dropped buffers unemitted.
	var rest <-chan time.Time
	for {
		// Stopping wins over a tick or wake-up that is ready too: shutdown
		// emits what is left itself.
		select {
		case <-p.stop:
			return
		default:
		}
		select {
		case <-p.stop:
			return
		case <-t.C:
		case <-p.wake:
			p.emitDropped(ctx, true)
			if rest == nil && p.hasDropped() {
				rest = time.After(p.dropWait)
			}
			continue
		case <-rest:
			rest = nil
			p.emitDropped(ctx, false)
			continue
		}
		rest = nil // the flush emits them all
		now := p.now()
		idle, hold := now.Add(-p.cfg.SessionIdle), now.Add(-p.cfg.MaxHold)
		if err := p.flush(ctx, func(b *sessionBuffer) bool {
			return b.lastSeen.Before(idle) || (!b.pendingSince.IsZero() && b.pendingSince.Before(hold))
		}); err != nil && ctx.Err() == nil {
			p.logger.Warn("emitting analysed session failed; will retry", zap.Error(err))
		}
	}
}

// evict hands buffers dropped from the held set (max_sessions,
// max_calls_per_session) to the loop, which emits them at once: the
// request that dropped them is not kept waiting for the analysis and
// export of other sessions. Their keys stay in storage until emitted, so
// a crash in between loses nothing.
func (p *tracesProcessor) evict(bufs []*sessionBuffer) {
	if len(bufs) == 0 {
		return
	}
	p.mu.Lock()
	p.queueDropped(bufs...)
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default: // a wake-up is pending already
	}
}

// queueDropped queues dropped buffers for emission and counts their calls
// as waiting. Called with p.mu held.
func (p *tracesProcessor) queueDropped(bufs ...*sessionBuffer) {
	n := 0
	for _, b := range bufs {
		b.waitingCalls = b.b.Calls()
		n += b.waitingCalls
	}
	p.waiting += n
	p.tel.callsWaiting.Add(context.Background(), int64(n))
	p.retry = append(p.retry, bufs...)
}

// emissionWait is how long a request waits for the sessions analysed early
// to be written (max_waiting_calls) before it is refused.
const emissionWait = 5 * time.Second

// errWaitingCalls refuses a request while the sessions analysed early are
// not written: a retryable error (gRPC UNAVAILABLE, HTTP 503), so the
// client sends the request again, later.
var errWaitingCalls = errors.New("ctxaudit processor: sessions analysed early are waiting to be written (max_waiting_calls); try again later")

// awaitWritten holds a request while the sessions dropped from the held set
// keep more than max_waiting_calls calls waiting for their emission: the
// loop writes their rows, emitLanes emissions at a time, and a sender that
// outpaces it would otherwise fill the collector's memory with them. It
// gives up with errWaitingCalls after emissionWait, or half the time left
// before ctx's deadline if that is sooner (the client hears the retryable
// refusal, not its own timeout), or when ctx ends.
func (p *tracesProcessor) awaitWritten(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.waiting <= p.cfg.MaxWaitingCalls {
		return nil
	}
	wait := emissionWait
	if d, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(d)/2)
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for p.waiting > p.cfg.MaxWaitingCalls {
		written := p.written
		p.mu.Unlock()
		select {
		case <-written:
		case <-timer.C:
			p.mu.Lock()
			p.tel.requestsRefused.Add(ctx, 1)
			return errWaitingCalls
		case <-ctx.Done():
			p.mu.Lock()
			p.tel.requestsRefused.Add(ctx, 1)
			return fmt.Errorf("%w: %w", errWaitingCalls, ctx.Err())
		}
		p.mu.Lock()
	}
	return nil
}

// wroteDropped records dropped buffers as emitted: their calls wait no
// more, and the requests waiting for that are woken. Called with p.mu held.
func (p *tracesProcessor) wroteDropped(bufs []*sessionBuffer) {
	n := 0
	for _, b := range bufs {
		n += b.waitingCalls
		b.waitingCalls = 0
	}
	p.waiting -= n
	p.tel.callsWaiting.Add(context.Background(), -int64(n))
	close(p.written)
	p.written = make(chan struct{})
}

// buffer returns the session's buffer, creating it — or reading it back
// from storage if it was parked — and evicting the least recently active
// session when full. Called with p.mu held.
func (p *tracesProcessor) buffer(ctx context.Context, id string, source schema.Harness) (*sessionBuffer, []*sessionBuffer) {
	for {
		if el, ok := p.sessions[id]; ok {
			p.lru.MoveToFront(el)
			return el.Value.(*sessionBuffer), nil
		}
		// Another request is reading the session back from storage
		// (resume, which releases p.mu meanwhile): wait for its buffer.
		resuming, ok := p.resuming[id]
		if !ok {
			break
		}
		p.mu.Unlock()
		if p.onResumeWait != nil {
			p.onResumeWait()
		}
		<-resuming
		p.mu.Lock()
	}
	b := p.resume(ctx, id) // may release p.mu: the held set is read after it
	var evicted []*sessionBuffer
	for p.lru.Len() >= p.cfg.MaxSessions {
		d := p.drop(p.lru.Back())
		d.evicted = true
		evicted = append(evicted, d)
	}
	p.seq++
	if b == nil {
		b = newSessionBuffer(id, source, p.dropped.has(id), p.seq)
	}
	p.sessions[id] = p.lru.PushFront(b)
	p.tel.sessionsHeld.Add(context.Background(), 1)
	return b, evicted
}

// drop takes a buffer out of the held set, to be emitted and forgotten.
// Called with p.mu held.
func (p *tracesProcessor) drop(el *list.Element) *sessionBuffer {
	b := el.Value.(*sessionBuffer)
	b.retired = true
	p.lru.Remove(el)
	delete(p.sessions, b.id)
	p.tel.sessionsHeld.Add(context.Background(), -1)
	p.tel.sessionsEvicted.Add(context.Background(), 1)
	if p.dropped.has(b.id) {
		return b
	}
	forgot, ok := p.dropped.add(b.id)
	if p.store == nil {
		return b
	}
	if ok {
		p.pendingOps = append(p.pendingOps, p.forgetDropped(forgot)...)
	}
	p.pendingOps = append(p.pendingOps, storage.SetOperation(droppedPrefix+b.id, []byte{}))
	return b
}

// forgetDropped is the storage operations that forget a session the
// dropped set no longer holds: its dropped key, and its parked buffer's
// keys if it is parked (if it goes on, its buffer starts without its
// start). Called with p.mu held.
func (p *tracesProcessor) forgetDropped(id string) []*storage.Operation {
	ops := []*storage.Operation{storage.DeleteOperation(droppedPrefix + id)}
	if pb, parked := p.parked.take(id); parked {
		ops = append(ops, p.unpark(pb)...)
	}
	return ops
}

// addCall holds *c, redacted in place (held, and possibly kept in
// storage: no secret past this point); it returns the buffer that holds it
// (nil: not held), the call's encoding as held, and the buffers dropped to
// make room.
func (p *tracesProcessor) addCall(ctx context.Context, c *schema.ToolCall) (*sessionBuffer, []byte, []*sessionBuffer) {
	if c.SessionID == "" {
		return nil, nil, nil
	}
	p.secret.Record(c)
	p.mu.Lock()
	defer p.mu.Unlock()
	b, evicted := p.buffer(ctx, c.SessionID, c.Source)
	if !b.b.HasCall(c.CallID) && b.b.Calls() >= p.cfg.MaxCallsPerSession {
		// Analyse what we have and start the session's buffer again: bounded
		// memory wins over whole-session analysis for runaway sessions. The
		// session goes on past the dropped buffer, whose analysis is never
		// redone: a cut call it holds that none of its calls followed up
		// may be followed up in the next buffer, so that is not known.
		full := p.drop(p.sessions[c.SessionID])
		full.b.Continues = true
		evicted = append(evicted, full)
		var more []*sessionBuffer
		b, more = p.buffer(ctx, c.SessionID, c.Source)
		evicted = append(evicted, more...)
	}
	enc := b.addCall(c)
	b.touch(p.now())
	return b, enc, evicted
}

// addAnswer holds *pa, redacted in place, as addCall does.
func (p *tracesProcessor) addAnswer(ctx context.Context, pa *schema.Answer) (*sessionBuffer, []*sessionBuffer) {
	p.secret.Record(pa)
	a := *pa
	p.mu.Lock()
	defer p.mu.Unlock()
	b, evicted := p.buffer(ctx, a.SessionID, a.Source)
	b.addAnswer(a)
	b.touch(p.now())
	return b, evicted
}

// persist writes what one request added, in one batch, before the request
// is answered: an acknowledged call is then on disk.
func (p *tracesProcessor) persist(ctx context.Context, add *added) error {
	if p.store == nil {
		return nil
	}
	// The request's own records are encoded before the locks are taken, so
	// that requests encode in parallel and only the write is ordered.
	type value struct {
		b   *sessionBuffer
		val []byte
	}
	values := make([]value, 0, len(add.by))
	now := p.now()
	enc := p.encoders.Get().(*valueEncoder) // the pool's New makes one
	for b, r := range add.by {
		r.At = now
		v, err := enc.encode(r)
		if err != nil {
			p.encoders.Put(enc)
			return fmt.Errorf("encode held records: %w", err)
		}
		values = append(values, value{b, v})
	}
	p.encoders.Put(enc)
	p.persistMu.Lock()
	p.mu.Lock()
	ops := p.pendingOps
	p.pendingOps = nil
	for _, v := range values {
		b := v.b
		if !b.metaStored {
			op, err := setValue(metaKey(b.gen), b.storedMeta())
			if err != nil {
				p.mu.Unlock()
				p.persistMu.Unlock()
				return err
			}
			ops = append(ops, op)
			b.metaStored = true
		}
		p.seq++
		ops = append(ops, storage.SetOperation(incKey(b.gen, p.seq), v.val))
		b.incs = append(b.incs, p.seq)
	}
	p.mu.Unlock()
	// Submitted in the order the keys were numbered; written with those of
	// the requests that arrive while an earlier batch is written.
	w := p.store.submit(ops)
	p.persistMu.Unlock()
	return w.wait(ctx)
}

// flush analyses and emits every dirty held session that pick selects,
// and every dropped session not emitted yet.
func (p *tracesProcessor) flush(ctx context.Context, pick func(*sessionBuffer) bool) error {
	// Dropped buffers first: a session's older buffer goes before its
	// newer one. Each emission carries at most about emitCalls calls, so
	// that what is built, encoded and queued at once stays the size of an
	// export batch however many sessions fall due together. The first
	// refusal ends the flush: the rest would be refused too (a full queue)
	// and is emitted on a later one — dropped buffers, in order, before
	// any dropped since; held ones simply stay dirty.
	if err := p.emitDroppedRuns(ctx, false); err != nil {
		return err
	}
	p.mu.Lock()
	var ready []*sessionBuffer
	for el := p.lru.Front(); el != nil; el = el.Next() {
		if b := el.Value.(*sessionBuffer); b.dirty && pick(b) {
			ready = append(ready, b)
		}
	}
	p.mu.Unlock()
	for _, chunk := range chunks(ready, emitCalls) {
		if err := p.emit(ctx, chunk, false); err != nil {
			return err
		}
	}
	return nil
}

// defaultDropWait is how long dropped buffers too few to fill an emission
// wait for more before they are emitted anyway (tracesProcessor.dropWait).
const defaultDropWait = time.Second

// emitDropped emits the dropped buffers, in order. With whole, it keeps the
// last run if it holds fewer than emitCalls calls (or max_waiting_calls,
// if lower, which the requests waiting on it need written), for a later
// wake-up or p.dropWait: an emission smaller than the exporter's
// batch.min_size would wait there for its flush_timeout, and the loop,
// which emits one at a time, with it. A failure is logged; the buffers
// stay queued.
func (p *tracesProcessor) emitDropped(ctx context.Context, whole bool) {
	if err := p.emitDroppedRuns(ctx, whole); err != nil && ctx.Err() == nil {
		p.logger.Warn("emitting analysed session failed; will retry", zap.Error(err))
	}
}

func (p *tracesProcessor) hasDropped() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.retry) > 0
}

// emitDroppedRuns takes the dropped buffers queued now, in runs of about
// emitCalls calls (with whole, a last run short of a full emission stays
// queued), and emits them (emitRuns).
func (p *tracesProcessor) emitDroppedRuns(ctx context.Context, whole bool) error {
	full := min(emitCalls, p.cfg.MaxWaitingCalls)
	p.mu.Lock()
	runs := chunks(p.retry, emitCalls)
	if n := len(runs); whole && n > 0 && callsOf(runs[n-1]) < full {
		runs = runs[:n-1]
	}
	taken := 0
	for _, run := range runs {
		taken += len(run)
	}
	p.retry = slices.Clone(p.retry[taken:])
	p.mu.Unlock()
	return p.emitRuns(ctx, runs)
}

// emitLanes is how many emissions of dropped buffers are under way at
// once: the next is analysed and built while the one before it is written
// (the example's exporter has num_consumers: 2 for that).
const emitLanes = 2

// emitRuns emits dropped runs, up to emitLanes at once. A run that shares a
// session with an earlier one waits for it, and is not emitted if it
// failed: a session's older buffer is written first. After a failure no
// run starts; the runs not emitted go back, in order, before any dropped
// since.
func (p *tracesProcessor) emitRuns(ctx context.Context, runs [][]*sessionBuffer) error {
	errs := make([]error, len(runs))
	done := make([]chan struct{}, len(runs))
	lanes := make(chan struct{}, emitLanes)
	var wg sync.WaitGroup
	failed := func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return slices.ContainsFunc(errs, func(err error) bool { return err != nil })
	}
	last := map[string]int{} // session id -> the last run holding it
	for i, run := range runs {
		done[i] = make(chan struct{})
		for _, b := range run {
			if j, ok := last[b.id]; ok && j < i {
				<-done[j]
			}
			last[b.id] = i
		}
		lanes <- struct{}{}
		if failed() {
			<-lanes
			close(done[i])
			p.mu.Lock()
			errs[i] = errNotEmitted
			p.mu.Unlock()
			continue
		}
		wg.Go(func() {
			defer func() { <-lanes; close(done[i]) }()
			err := p.emit(ctx, run, true)
			p.mu.Lock()
			defer p.mu.Unlock()
			errs[i] = err
			if err == nil {
				p.wroteDropped(run)
			}
		})
	}
	wg.Wait()
	var back []*sessionBuffer
	var first error
	for i, err := range errs {
		if err != nil {
			back = append(back, runs[i]...)
			if first == nil || first == errNotEmitted {
				first = err
			}
		}
	}
	if len(back) > 0 {
		p.mu.Lock()
		p.retry = append(back, p.retry...)
		p.mu.Unlock()
	}
	return first
}

// errNotEmitted marks a run not started after an earlier one failed.
var errNotEmitted = errors.New("not emitted: an earlier emission failed")

// callsOf is how many calls bufs hold.
func callsOf(bufs []*sessionBuffer) int {
	n := 0
	for _, b := range bufs {
		n += b.b.Calls()
	}
	return n
}

// emitCalls bounds the calls of one emission: 11 MB and more of analysed
// spans (1.15 KB a call of the benchmark's load, more for calls with
// arguments and places), between the example's batch.min_size and
// max_size, so that an emission is one INSERT of its own, sent at once (a
// session holding more goes alone; TestFullEmissionIsOneExportBatch).
// ClickHouse 18.16 pays for an INSERT mostly by the part it creates: with
// 6,000 calls per emission it spent 30-45 % more CPU per span in the
// collector benchmark than with 10,000, while the collector's own CPU per
// span moved less than the benchmark resolves (docs/performance.md).
const emitCalls = 10000

// chunks splits bufs, in order, into runs holding at most limit calls
// (a buffer over the limit forms a run of its own).
func chunks(bufs []*sessionBuffer, limit int) [][]*sessionBuffer {
	var out [][]*sessionBuffer
	start, n := 0, 0
	for i, b := range bufs {
		c := b.b.Calls()
		if i > start && n+c > limit {
			out = append(out, bufs[start:i])
			start, n = i, 0
		}
		n += c
	}
	if start < len(bufs) {
		out = append(out, bufs[start:])
	}
	return out
}

// emitted is one buffer's part of an emission: what was analysed, and what
// of storage it covers.
type emitted struct {
	b        *sessionBuffer
	res      session.Result
	incs     []uint64
	pending  time.Time
	analysed bool
}

// emit analyses buffers and sends what changed downstream as spans: the
// calls (each held call's row is written here, once), the answers (with
// risk) and the session. Only once the next consumer accepted them are
// they recorded as emitted, in memory and in storage; a refused emission
// is retried whole (held buffers stay dirty; the caller keeps dropped ones
// for the next flush). retire: the buffers were dropped from the held set,
// and lose their keys once emitted.
func (p *tracesProcessor) emit(ctx context.Context, bufs []*sessionBuffer, retire bool) error {
	if len(bufs) == 0 {
		return nil
	}
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	otelconv.PutEmitterResource(rs.Resource().Attributes(), otelconv.ServiceProcessor, p.version)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(ScopeName)
	spans := ss.Spans()
	parts := make([]emitted, 0, len(bufs))
	p.mu.Lock()
	for _, b := range bufs {
		e := emitted{b: b, incs: b.incs, pending: b.pendingSince, analysed: b.dirty}
		if b.dirty && !retire {
			e.res = b.b.Pending(b.meta)
		}
		b.incs, b.dirty, b.pendingSince = nil, false, time.Time{}
		parts = append(parts, e)
	}
	p.mu.Unlock()
	if retire {
		// No request reaches a dropped buffer any more (addCall finds
		// buffers in p.sessions): it is analysed without holding the lock
		// the requests need.
		for i := range parts {
			if e := &parts[i]; e.analysed {
				e.res = e.b.b.Pending(e.b.meta)
			}
		}
	}
	for i := range parts {
		e := &parts[i]
		if !e.analysed {
			continue
		}
		p.tel.sessionsAnalysed.Add(ctx, 1)
		otelconv.AppendAnalysedSession(spans, &e.res.Meta, e.res.NotAnswers, e.res.Calls, e.res.Answers)
	}
	// No redaction pass here: every record was redacted as it was held
	// (addCall, addAnswer), and the analysis only reads them.
	var err error
	if spans.Len() > 0 {
		err = p.next.ConsumeTraces(ctx, td)
	}
	if err != nil {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, e := range parts {
			b := e.b
			b.incs = append(e.incs, b.incs...)
			b.dirty = b.dirty || e.analysed
			if !e.pending.IsZero() && (b.pendingSince.IsZero() || e.pending.Before(b.pendingSince)) {
				b.pendingSince = e.pending
			}
		}
		return err
	}
	return p.emitted(ctx, parts, retire)
}

// emitted records a successful emission: in the builders, so the next one
// carries only what changed, and in storage — the increments folded into
// the buffer's base with the fingerprints of what was emitted, or, for a
// retired buffer, every key dropped.
func (p *tracesProcessor) emitted(ctx context.Context, parts []emitted, retire bool) error {
	p.persistMu.Lock()
	p.mu.Lock()
	var ops []*storage.Operation
	for _, e := range parts {
		b := e.b
		if e.analysed {
			b.sent.Merge(b.b.Commit(e.res))
		}
		if p.store == nil || !b.metaStored {
			continue
		}
		if retire {
			all := slices.Concat(b.emittedIncs, e.incs, b.incs)
			if park, ok := p.park(b, all); ok {
				ops = append(ops, park...)
			} else {
				ops = append(ops, deleteBuffer(b.gen, all, b.hasBase)...)
			}
			continue
		}
		if !e.analysed || b.retired {
			continue
		}
		// The increments stay; the meta says they are emitted.
		b.emittedIncs = append(b.emittedIncs, e.incs...)
		meta, err := setValue(metaKey(b.gen), b.storedMeta())
		if err != nil {
			p.mu.Unlock()
			p.persistMu.Unlock()
			return err
		}
		ops = append(ops, meta)
	}
	ops = append(ops, p.pendingOps...)
	p.pendingOps = nil
	p.mu.Unlock()
	w := p.store.submit(ops)
	p.persistMu.Unlock()
	if err := w.wait(ctx); err != nil {
		// Handed on already; what storage still says is at worst emitted
		// again after a restart, as the same rows.
		p.logger.Warn("recording an emitted session in storage failed", zap.Error(err))
	}
	return nil
}

// storedMeta is the buffer's meta key as it stands.
func (b *sessionBuffer) storedMeta() storedMeta {
	m := storedMeta{SessionID: b.id, Source: b.source, Partial: b.b.Partial, Sent: b.sent}
	for _, s := range b.emittedIncs {
		m.Emitted = max(m.Emitted, s)
	}
	return m
}

// recentSet remembers up to n ids, forgetting the oldest first.
type recentSet struct {
	n     int
	ids   map[string]struct{}
	order []string
}

func newRecentSet(n int) *recentSet { return &recentSet{n: n, ids: map[string]struct{}{}} }

func (r *recentSet) has(id string) bool { _, ok := r.ids[id]; return ok }

// add remembers id, and returns the id it forgot to make room, if any.
func (r *recentSet) add(id string) (forgot string, ok bool) {
	if r.has(id) {
		return "", false
	}
	if len(r.order) >= r.n {
		forgot, ok = r.order[0], true
		delete(r.ids, forgot)
		r.order = r.order[1:]
	}
	r.ids[id] = struct{}{}
	r.order = append(r.order, id)
	return forgot, ok
}

// remove forgets id.
func (r *recentSet) remove(id string) {
	if !r.has(id) {
		return
	}
	delete(r.ids, id)
	r.order = slices.DeleteFunc(r.order, func(x string) bool { return x == id })
}
