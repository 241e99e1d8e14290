package transcript

// Pending holds tool calls waiting for their results, keyed by call id, in
// the order they were issued, and bounded: beyond its limit the oldest call
// is evicted (and reported unpaired by the parser) so a transcript that never
// delivers results cannot grow a parser's memory without bound.
type Pending[T any] struct {
	limit int
	seq   uint64
	byID  map[string]pendingEntry[T]
	// order lists issue slots oldest first. A slot is live only while its id
	// still maps to an entry of the same seq: taken or re-issued ids leave
	// stale slots, pruned lazily, so Take stays O(1).
	order []pendingSlot
}

type pendingEntry[T any] struct {
	v   T
	seq uint64
}

type pendingSlot struct {
	id  string
	seq uint64
}

// NewPending returns an empty queue holding at most limit calls.
func NewPending[T any](limit int) *Pending[T] {
	return &Pending[T]{limit: max(limit, 1), byID: make(map[string]pendingEntry[T])}
}

func (q *Pending[T]) live(s pendingSlot) bool {
	e, ok := q.byID[s.id]
	return ok && e.seq == s.seq
}

// Put adds the call id (a re-issued id moves to the back) and returns the
// calls evicted to stay within the limit, oldest first.
func (q *Pending[T]) Put(id string, v T) (evicted []T) {
	q.seq++
	q.byID[id] = pendingEntry[T]{v: v, seq: q.seq}
	q.order = append(q.order, pendingSlot{id: id, seq: q.seq})
	for len(q.byID) > q.limit && len(q.order) > 0 {
		s := q.order[0]
		q.order = q.order[1:]
		if q.live(s) {
			evicted = append(evicted, q.byID[s.id].v)
			delete(q.byID, s.id)
		}
	}
	if len(q.order) > 2*q.limit {
		kept := q.order[:0]
		for _, s := range q.order {
			if q.live(s) {
				kept = append(kept, s)
			}
		}
		q.order = kept
	}
	return evicted
}

// Take removes and returns the call id.
func (q *Pending[T]) Take(id string) (T, bool) {
	e, ok := q.byID[id]
	if ok {
		delete(q.byID, id)
	}
	return e.v, ok
}

// Drain removes and returns every waiting call in issue order.
func (q *Pending[T]) Drain() []T {
	var out []T
	for _, s := range q.order {
		if q.live(s) {
			out = append(out, q.byID[s.id].v)
			delete(q.byID, s.id)
		}
	}
	q.order = nil
	return out
}

// Len is the number of waiting calls.
func (q *Pending[T]) Len() int { return len(q.byID) }
