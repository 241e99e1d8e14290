package ctxauditprocessor

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/extension/xextension/storage"
)

// gatedClient is a storage client whose every Batch records the keys it
// was given, then waits for a value on gate and returns it.
type gatedClient struct {
	storage.Client
	mu      sync.Mutex
	batches [][]string
	started chan struct{} // one value per Batch begun
	gate    chan error
}

func newGatedClient() *gatedClient {
	return &gatedClient{started: make(chan struct{}, 16), gate: make(chan error)}
}

func (c *gatedClient) Batch(_ context.Context, ops ...*storage.Operation) error {
	keys := make([]string, len(ops))
	for i, op := range ops {
		keys[i] = op.Key
	}
	c.mu.Lock()
	c.batches = append(c.batches, keys)
	c.mu.Unlock()
	c.started <- struct{}{}
	return <-c.gate
}

// seen is the keys of every Batch begun so far, in order.
func (c *gatedClient) seen() [][]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.batches)
}

// setOps sets each key to its own name.
func setOps(keys ...string) []*storage.Operation {
	ops := make([]*storage.Operation, len(keys))
	for i, k := range keys {
		ops[i] = storage.SetOperation(k, []byte(k))
	}
	return ops
}

// result is what the wait of the i-th write of a waitAll returned.
type result struct {
	i   int
	err error
}

// waitAll runs every write's wait in a goroutine of its own and sends
// each one's result on the channel it returns.
func waitAll(ctx context.Context, ws ...*pendingWrite) chan result {
	out := make(chan result, len(ws))
	for i, w := range ws {
		go func() { out <- result{i, w.wait(ctx)} }()
	}
	return out
}

// receive is the next result on ch, failing the test after 10 s.
func receive(t *testing.T, ch chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("a write did not return")
		return result{}
	}
}

// awaitBatch returns once c has begun a Batch, failing the test after 10 s.
func awaitBatch(t *testing.T, c *gatedClient) {
	t.Helper()
	select {
	case <-c.started:
	case <-time.After(10 * time.Second):
		t.Fatal("no batch began")
	}
}

// Writes submitted while a batch is written go, in the order submitted,
// into one batch of their own; each writer learns its batch's outcome, and
// the writer that led the first does not wait for the second.
func TestWritesArrivingDuringACommitShareTheNext(t *testing.T) {
	ctx := context.Background()
	c := newGatedClient()
	s := &heldStore{client: c}

	first := s.submit(setOps("a1", "a2"))
	firstDone := waitAll(ctx, first)
	awaitBatch(t, c)
	// Three requests arrive while the first batch is being written.
	later := []*pendingWrite{s.submit(setOps("b1")), s.submit(setOps("c1", "c2")), s.submit(setOps("d1"))}
	laterDone := waitAll(ctx, later...)

	c.gate <- nil // the first batch is written
	if r := receive(t, firstDone); r.err != nil {
		t.Fatalf("first write: %v", r.err)
	}
	// The first writer returned; the second batch is being written by one
	// of the later ones, and fails.
	awaitBatch(t, c)
	boom := errors.New("disk full")
	c.gate <- boom
	for range later {
		if r := receive(t, laterDone); !errors.Is(r.err, boom) {
			t.Errorf("write %d of the second batch: err = %v, want %v", r.i, r.err, boom)
		}
	}
	want := [][]string{{"a1", "a2"}, {"b1", "c1", "c2", "d1"}}
	if got := c.seen(); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("batches = %v, want %v", got, want)
	}

	// Nothing is in progress any more: the next write leads, alone.
	next := waitAll(ctx, s.submit(setOps("e1")))
	awaitBatch(t, c)
	c.gate <- nil
	if r := receive(t, next); r.err != nil {
		t.Fatalf("write after the batches: %v", r.err)
	}
	if got := c.seen(); len(got) != 3 || !slices.Equal(got[2], []string{"e1"}) {
		t.Errorf("batches = %v, want a third holding e1 alone", got)
	}
}

// A write with nothing to write, or without storage, returns at once and
// writes no batch.
func TestEmptyWriteWritesNothing(t *testing.T) {
	c := newGatedClient()
	s := &heldStore{client: c}
	if err := s.submit(nil).wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	var none *heldStore
	if err := none.submit(setOps("x")).wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := c.seen(); len(got) != 0 {
		t.Errorf("batches = %v, want none", got)
	}
}

// A leading writer whose request is cancelled still writes the batch: it
// carries other requests' records.
func TestCancelledLeaderStillCommits(t *testing.T) {
	c := newGatedClient()
	s := &heldStore{client: &ctxCheckingClient{c}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	done := waitAll(ctx, s.submit(setOps("a1")))
	awaitBatch(t, c)
	c.gate <- nil
	if r := receive(t, done); r.err != nil {
		t.Fatalf("err = %v, want the batch written", r.err)
	}
}

// ctxCheckingClient fails a Batch given a context that is done, as a
// storage extension may.
type ctxCheckingClient struct{ *gatedClient }

func (c *ctxCheckingClient) Batch(ctx context.Context, ops ...*storage.Operation) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return c.gatedClient.Batch(ctx, ops...)
}
