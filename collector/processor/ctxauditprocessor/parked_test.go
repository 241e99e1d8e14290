package ctxauditprocessor

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ctxaudit/ctxaudit/collector/otelconv"
	"github.com/ctxaudit/ctxaudit/schema"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

// readSpan is a Claude Code Read of /srv/app/config.md (5,000 lines) as a
// harness that reports its own figures sends it: lines first..last.
func readSpan(spans ptrace.SpanSlice, session, id string, first, last int, at time.Time) {
	a := callSpan(spans, session, id, "Read", "claude_code", at)
	a.PutInt(otelconv.AttrTurn, 0)
	a.PutStr(otelconv.AttrToolCallArguments, fmt.Sprintf(`{"file_path":"/srv/app/config.md","offset":%d,"limit":%d}`, first, last-first+1))
	cut := last < 5000
	a.PutInt("ctxaudit.output.original.lines", 5000)
	a.PutInt("ctxaudit.output.context.lines", int64(last-first+1))
	a.PutBool("ctxaudit.output.truncated", cut)
	kind, strategy := "none", "none"
	if cut {
		kind, strategy = "explicit", "paginated"
	}
	a.PutStr("ctxaudit.output.truncation.kind", kind)
	a.PutStr("ctxaudit.output.strategy", strategy)
	a.PutInt("ctxaudit.output.shown.start", int64(first))
	a.PutInt("ctxaudit.output.shown.end", int64(last))
	a.PutStr("ctxaudit.output.shown.unit", "lines")
	a.PutInt("ctxaudit.output.total", 5000)
}

// requests of the dropped-session scenario: the session reads the first
// 2,000 lines of a file (cut); another session comes, which with
// max_sessions 1 drops the first; the first goes on, reads the rest of the
// file — following its cut read up — and answers.
func droppedScenario(session, other string) (first, between, then ptrace.Traces) {
	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	first = ptrace.NewTraces()
	spans := first.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	readSpan(spans, session, "r1", 1, 2000, at)
	between = ptrace.NewTraces()
	shellSpan(between.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans(), other, "o1", codexCut, at.Add(time.Second))
	then = ptrace.NewTraces()
	spans = then.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	readSpan(spans, session, "r2", 2001, 5000, at.Add(2*time.Second))
	chatSpan(spans, session, "The timeout is set on line 4,200.", at.Add(3*time.Second))
	spans.At(spans.Len()-1).Attributes().PutInt(otelconv.AttrTurn, 0)
	return first, between, then
}

// kept is what the tables keep of emitted rows: per id the row of highest
// rank (chstore.Rank), the later of equals.
type kept struct {
	calls   map[string]schema.ToolCall
	answers map[string]schema.Answer
	session map[string]schema.Session
}

func keptOf(sink *consumertest.TracesSink) kept {
	k := kept{calls: map[string]schema.ToolCall{}, answers: map[string]schema.Answer{}, session: map[string]schema.Session{}}
	for _, td := range sink.AllTraces() {
		var rows otelconv.Rows
		otelconv.EachSpan(td, func(res pcommon.Map, _ string, sp ptrace.Span) { rows.AddSpan(sp, res) })
		for _, c := range rows.Calls {
			if old, ok := k.calls[c.SessionID+"/"+c.CallID]; !ok || rank(&c) >= rank(&old) {
				k.calls[c.SessionID+"/"+c.CallID] = c
			}
		}
		for _, a := range rows.Answers {
			if old, ok := k.answers[a.SessionID+"/"+a.MessageID]; !ok || rank(&a) >= rank(&old) {
				k.answers[a.SessionID+"/"+a.MessageID] = a
			}
		}
		for _, s := range rows.Sessions {
			if old, ok := k.session[s.SessionID]; !ok || rank(&s) >= rank(&old) {
				k.session[s.SessionID] = s
			}
		}
	}
	return k
}

func rank(row any) uint64 {
	r, ok := chstore.Rank(row)
	if !ok {
		panic(fmt.Sprintf("no rank for %T", row))
	}
	return r
}

// loadStored is what a start would load from p's storage, and the ids of
// the parked sessions in it, oldest first.
func loadStored(t *testing.T, p *tracesProcessor) (*loaded, []string) {
	t.Helper()
	l, err := p.store.load(context.Background(), func(k string, err error) { t.Errorf("%s: %v", k, err) })
	if err != nil {
		t.Fatal(err)
	}
	var parked []string
	for _, pb := range l.parked {
		parked = append(parked, pb.id)
	}
	return l, parked
}

// waitDroppedWritten waits until every dropped buffer's emission was
// accepted (and, when it is to be, the buffer parked).
func waitDroppedWritten(t *testing.T, p *tracesProcessor) {
	t.Helper()
	waitUntil(t, "the dropped buffers' emission", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.retry) == 0 && p.waiting == 0
	})
}

// droppedRun runs the scenario through a processor on storage in dir, with
// a restart between the drop and the session going on when restart is set.
func droppedRun(t *testing.T, cfg *Config, restart bool) (kept, *tracesProcessor) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	sink := new(consumertest.TracesSink)
	p, ext := startParking(t, dir, cfg, sink)
	first, between, then := droppedScenario("s", "o")
	for _, td := range []ptrace.Traces{first, between} {
		if _, err := process(ctx, p, td); err != nil {
			t.Fatal(err)
		}
	}
	waitDroppedWritten(t, p)
	if restart {
		crash(t, p, ext)
		p, ext = startParking(t, dir, cfg, sink)
	}
	if _, err := process(ctx, p, then); err != nil {
		t.Fatal(err)
	}
	stop(t, p, ext)
	return keptOf(sink), p
}

// TestDroppedSessionGoesOnWhole: a session dropped past max_sessions that
// goes on is read back from storage and analysed whole, so what is kept of
// it is what a processor that never dropped it keeps — the cut read
// followed up, the session row counting both calls and the answer, every
// row ranked as a complete analysis — also across a restart in between.
// With parking off (max_parked_calls: 0) it is not, which shows what the
// comparison checks.
func TestDroppedSessionGoesOnWhole(t *testing.T) {
	whole := *parkingConfig(1000)
	want, _ := droppedRun(t, &whole, false)
	r1 := want.calls["s/r1"]
	if !r1.Truncated || !r1.FollowedUp {
		t.Fatalf("never dropped: r1 %+v; want cut and followed up (the scenario shows nothing)", r1)
	}
	if s := want.session["s"]; s.ToolCalls != 2 || s.Answers != 1 || s.Analysis.Partial {
		t.Fatalf("never dropped: session %+v; want 2 calls, 1 answer, a complete analysis", s)
	}

	dropping := *parkingConfig(1)
	for _, restart := range []bool{false, true} {
		t.Run(fmt.Sprintf("restart=%v", restart), func(t *testing.T) {
			got, p := droppedRun(t, &dropping, restart)
			for _, k := range []string{"s/r1", "s/r2"} {
				if !reflect.DeepEqual(got.calls[k], want.calls[k]) {
					t.Errorf("call %s kept\n%+v\nnever dropped:\n%+v", k, got.calls[k], want.calls[k])
				}
			}
			if !reflect.DeepEqual(got.answers, want.answers) {
				t.Errorf("answers kept\n%+v\nnever dropped:\n%+v", got.answers, want.answers)
			}
			if !reflect.DeepEqual(got.session["s"], want.session["s"]) {
				t.Errorf("session kept\n%+v\nnever dropped:\n%+v", got.session["s"], want.session["s"])
			}
			// "o", dropped when "s" went on, stays parked; "s" was read
			// back and is held, dropped no more.
			if _, ok := p.parked.by["o"]; !ok || len(p.parked.by) != 1 || p.parked.calls != 1 || p.dropped.has("s") {
				t.Errorf("after the run %d sessions with %d calls parked (o among them: %v), s dropped %v; want o alone, 1 call, s not dropped",
					len(p.parked.by), p.parked.calls, ok, p.dropped.has("s"))
			}
		})
	}

	t.Run("parking off", func(t *testing.T) {
		off := dropping
		off.MaxParkedCalls = 0
		got, _ := droppedRun(t, &off, false)
		if c := got.calls["s/r1"]; c.FollowedUp {
			t.Errorf("without parking r1 is followed up: %+v; the comparison above shows nothing", c)
		}
		if s := got.session["s"]; s.ToolCalls != 1 {
			t.Errorf("without parking the session row counts %d calls; want the first buffer's 1", s.ToolCalls)
		}
	})
}

// TestParkedCallsAreBounded: beyond max_parked_calls the oldest parked
// session's keys are deleted; if it goes on, its new buffer is marked
// partial, while one still parked is read back whole.
func TestParkedCallsAreBounded(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := parkingConfig(1)
	cfg.MaxParkedCalls = 3
	sink := new(consumertest.TracesSink)
	p, ext := startParking(t, dir, cfg, sink)
	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	send := func(sid string, from, n int) {
		t.Helper()
		if _, err := process(ctx, p, sessionSpans(sid, from, n, at)); err != nil {
			t.Fatal(err)
		}
		waitDroppedWritten(t, p)
	}
	send("a", 0, 2) // a: 2 calls and an answer
	send("b", 0, 2) // drops a: parked, 2 calls
	send("c", 0, 1) // drops b: 4 calls parked, over 3: a goes
	p.mu.Lock()
	_, aParked := p.parked.by["a"]
	_, bParked := p.parked.by["b"]
	calls := p.parked.calls
	p.mu.Unlock()
	if aParked || !bParked || calls != 2 {
		t.Fatalf("parked: a %v, b %v, %d calls; want b alone, 2 calls", aParked, bParked, calls)
	}
	l, stored := loadStored(t, p)
	if len(l.buffers) != 1 || l.buffers[0].meta.SessionID != "c" || !reflect.DeepEqual(stored, []string{"b"}) {
		t.Errorf("storage holds buffers %d (want c's alone) and parked %v (want [b])", len(l.buffers), stored)
	}

	send("a", 2, 1) // a goes on without its start
	send("b", 2, 1) // b goes on whole
	if err := p.shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ext.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	k := keptOf(sink)
	if a := k.session["a"]; a.ToolCalls != 2 || a.Analysis.Partial {
		t.Errorf("a: kept session row %d calls, partial %v; want the first buffer's complete row (2 calls) above the partial one", a.ToolCalls, a.Analysis.Partial)
	}
	if b := k.session["b"]; b.ToolCalls != 3 || b.Answers != 2 || b.Analysis.Partial {
		t.Errorf("b: kept session row %d calls, %d answers, partial %v; want 3, 2, complete", b.ToolCalls, b.Answers, b.Analysis.Partial)
	}
}

// TestParkedMetaWithLaterRecordsIsReloaded: a parked session that went on
// has its meta rewritten (no longer parked) in the batch of the request
// that brought its next record. Should storage hold a record after the
// last emission while the meta still says parked — a batch that failed
// half-way, or a storage written by hand — the next start holds the
// buffer again, with that record, and writes its row: an acknowledged call
// is never left parked unwritten.
func TestParkedMetaWithLaterRecordsIsReloaded(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := parkingConfig(1)
	p, ext := startParking(t, dir, cfg, new(consumertest.TracesSink))
	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	for _, sid := range []string{"a", "b"} { // b drops a: parked
		if _, err := process(ctx, p, sessionSpans(sid, 0, 2, at)); err != nil {
			t.Fatal(err)
		}
		waitDroppedWritten(t, p)
	}
	p.mu.Lock()
	pb, ok := p.parked.by["a"]
	seq := p.seq + 1
	p.mu.Unlock()
	if !ok {
		t.Fatal("a is not parked")
	}
	late := &schema.ToolCall{SessionID: "a", CallID: "a-late", Tool: "shell_command", Source: schema.HarnessCodex,
		Timestamp: at.Add(time.Minute), Turn: schema.KnownTurn(0)}
	v, err := encodeValue(storedRecords{At: at.Add(time.Minute), Calls: []*schema.ToolCall{late}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.store.write(ctx, []*storage.Operation{storage.SetOperation(incKey(pb.Value.(parkedBuffer).gen, seq), v)}); err != nil {
		t.Fatal(err)
	}
	crash(t, p, ext)

	sink := new(consumertest.TracesSink)
	p, ext = startParking(t, dir, cfg, sink)
	p.mu.Lock()
	_, parked := p.parked.by["a"]
	_, held := p.sessions["a"]
	p.mu.Unlock()
	if parked || !held {
		t.Fatalf("after the restart a is parked %v, held %v; want held", parked, held)
	}
	if err := p.shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ext.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	k := keptOf(sink)
	if _, ok := k.calls["a/a-late"]; !ok {
		t.Error("the record after the last emission got no row")
	}
	if s := k.session["a"]; s.ToolCalls != 3 || s.Analysis.Partial {
		t.Errorf("a's session row: %d calls, partial %v; want 3, complete", s.ToolCalls, s.Analysis.Partial)
	}
}

// BenchmarkResumeParked is what a request that brings a parked session's
// next record does under the processor's lock: read the session's keys back
// from file_storage and rebuild its buffer. Sessions of the benchmark's
// shell calls, written as requests of 10 calls.
func BenchmarkResumeParked(b *testing.B) {
	for _, calls := range []int{50, 1000} {
		b.Run(fmt.Sprintf("calls=%d", calls), func(b *testing.B) {
			ctx := context.Background()
			p, ext := startParking(b, b.TempDir(), parkingConfig(1), new(consumertest.TracesSink))
			at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
			for from := 0; from < calls; from += 10 {
				if _, err := process(ctx, p, sessionSpans("a", from, 10, at)); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := process(ctx, p, sessionSpans("b", 0, 1, at)); err != nil {
				b.Fatal(err)
			}
			for {
				p.mu.Lock()
				el, ok := p.parked.by["a"]
				p.mu.Unlock()
				if ok {
					pb := el.Value.(parkedBuffer)
					b.ResetTimer()
					for b.Loop() {
						lb, err := p.store.read(ctx, pb)
						if err != nil {
							b.Fatal(err)
						}
						if got := restoreBuffer(lb).b.Calls(); got != calls {
							b.Fatalf("read back %d calls; want %d", got, calls)
						}
					}
					break
				}
				time.Sleep(time.Millisecond)
			}
			b.StopTimer()
			crash(b, p, ext)
		})
	}
}

// TestBufferDroppedPastMaxCallsLeavesFollowUpsUnknown: a buffer dropped
// past max_calls_per_session is dropped because its session goes on, and
// its analysis is never redone with what comes after. A cut read in it
// that the next buffer follows up is stored with its follow-up unknown
// (followed_up NULL), not as a known "not followed up"; the same read
// closing a session is known not followed up.
func TestBufferDroppedPastMaxCallsLeavesFollowUpsUnknown(t *testing.T) {
	ctx := context.Background()
	for _, goesOn := range []bool{false, true} {
		cfg := parkingConfig(1000)
		cfg.MaxCallsPerSession = 1
		sink := new(consumertest.TracesSink)
		p, ext := startParking(t, t.TempDir(), cfg, sink)
		first, _, then := droppedScenario("s", "o")
		if _, err := process(ctx, p, first); err != nil {
			t.Fatal(err)
		}
		if goesOn {
			if _, err := process(ctx, p, then); err != nil {
				t.Fatal(err)
			}
			waitDroppedWritten(t, p)
		}
		stop(t, p, ext)
		r1 := keptOf(sink).calls["s/r1"]
		if !r1.Truncated || r1.FollowedUp || r1.FollowUpUnknown != goesOn || !r1.FollowUpExact {
			t.Errorf("session goes on %v: r1 truncated %v, followed up %v, unknown %v, exact %v; want cut, not followed up, unknown %v, exact",
				goesOn, r1.Truncated, r1.FollowedUp, r1.FollowUpUnknown, r1.FollowUpExact, goesOn)
		}
	}
}

// TestRestartWithFewerDroppedForgetsTheOldest: the dropped set is bounded
// (8 × max_sessions, at least 1,024), so a restart with a smaller bound
// than the previous process's finds more dropped sessions in storage than
// it can remember. It forgets the oldest, as drop does — their dropped
// keys deleted, a parked one's records too — instead of leaving their keys
// in storage that no bound covers; a forgotten session that goes on starts
// again partial, a remembered one resumes whole.
func TestRestartWithFewerDroppedForgetsTheOldest(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := parkingConfig(1)
	sink := new(consumertest.TracesSink)
	p, ext := startParking(t, dir, cfg, sink)
	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	ids := []string{"s0", "s1", "s2", "s3", "s4", "s5"}
	for _, sid := range ids { // each drops the one before: s0–s4 parked
		if _, err := process(ctx, p, sessionSpans(sid, 0, 2, at)); err != nil {
			t.Fatal(err)
		}
		waitDroppedWritten(t, p)
	}
	crash(t, p, ext)

	const bound = 3
	p, ext = startOnStorage(t, dir, cfg, sink, func(p *tracesProcessor) {
		p.dropWait = time.Millisecond
		p.dropped = newRecentSet(bound)
	})
	p.mu.Lock()
	var parked []string
	for _, sid := range ids {
		if _, ok := p.parked.by[sid]; ok {
			parked = append(parked, sid)
			if !p.dropped.has(sid) {
				t.Errorf("%s is parked but not among the dropped sessions", sid)
			}
		}
	}
	p.mu.Unlock()
	if want := []string{"s2", "s3", "s4"}; !reflect.DeepEqual(parked, want) {
		t.Fatalf("parked after the restart: %v; want the %d newest, %v", parked, bound, want)
	}
	// A request of the held session writes what the restart forgot.
	if _, err := process(ctx, p, sessionSpans("s5", 2, 1, at.Add(time.Minute))); err != nil {
		t.Fatal(err)
	}
	l, stored := loadStored(t, p)
	slices.Sort(l.dropped)
	if !reflect.DeepEqual(stored, parked) || !reflect.DeepEqual(l.dropped, parked) {
		t.Errorf("storage: parked %v, dropped keys %v; want both %v", stored, l.dropped, parked)
	}
	// s0 goes on: forgotten, its buffer starts again partial. s4 goes on:
	// resumed whole.
	for _, sid := range []string{"s0", "s4"} {
		if _, err := process(ctx, p, sessionSpans(sid, 2, 1, at.Add(2*time.Minute))); err != nil {
			t.Fatal(err)
		}
		waitDroppedWritten(t, p)
	}
	stop(t, p, ext)
	k := keptOf(sink)
	if s := k.session["s0"]; s.ToolCalls != 2 || s.Analysis.Partial {
		t.Errorf("s0: kept row %d calls, partial %v; want its first buffer's complete row (2 calls) above the partial one", s.ToolCalls, s.Analysis.Partial)
	}
	if s := k.session["s4"]; s.ToolCalls != 3 || s.Analysis.Partial {
		t.Errorf("s4: kept row %d calls, partial %v; want 3 calls, complete", s.ToolCalls, s.Analysis.Partial)
	}
}

// TestResumeReadsStorageWithoutTheLock: reading a parked session back is a
// storage transaction (with file_storage, a commit and an fsync), so the
// processor's lock is released meanwhile: a request of another session is
// answered while the read waits, and a second request of the resuming
// session waits for it and joins the buffer read back — the session is
// analysed whole, as if both requests had come one after the other.
func TestResumeReadsStorageWithoutTheLock(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := parkingConfig(2)
	sink := new(consumertest.TracesSink)
	p, ext := startParking(t, dir, cfg, sink)
	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	for _, sid := range []string{"a", "b", "c"} { // c drops a: parked
		if _, err := process(ctx, p, sessionSpans(sid, 0, 2, at)); err != nil {
			t.Fatal(err)
		}
		waitDroppedWritten(t, p)
	}
	reading, release := make(chan struct{}), make(chan struct{})
	read := p.readParked
	p.readParked = func(s *heldStore, ctx context.Context, pb parkedBuffer) (*loadedBuffer, error) {
		close(reading)
		<-release
		return read(s, ctx, pb)
	}
	waiting := make(chan struct{})
	p.onResumeWait = sync.OnceFunc(func() { close(waiting) })
	done := make(chan error, 2)
	go func() { // a goes on: its records are read back
		_, err := process(ctx, p, sessionSpans("a", 2, 1, at.Add(time.Minute)))
		done <- err
	}()
	<-reading
	answered := make(chan error, 1)
	go func() { // b goes on meanwhile, without waiting for the read
		_, err := process(ctx, p, sessionSpans("b", 2, 1, at.Add(time.Minute)))
		answered <- err
	}()
	select {
	case err := <-answered:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a request of another session waited for the storage read: the lock is held")
	}
	go func() { // a's next request waits for the read
		_, err := process(ctx, p, sessionSpans("a", 3, 1, at.Add(2*time.Minute)))
		done <- err
	}()
	select {
	case <-waiting:
	case err := <-done: // the first request is still reading: this is the second
		t.Fatalf("a's second request was answered (%v) while a was being read back, without waiting for it", err)
	case <-time.After(30 * time.Second):
		t.Fatal("a's second request neither waited for the read nor was answered")
	}
	close(release)
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	stop(t, p, ext)
	k := keptOf(sink)
	if s := k.session["a"]; s.ToolCalls != 4 || s.Analysis.Partial {
		t.Errorf("a: kept row %d calls, partial %v; want 4 calls (2 read back, 2 after), complete", s.ToolCalls, s.Analysis.Partial)
	}
	for id, c := range k.calls {
		if c.SessionID == "a" && c.Analysis.Partial {
			t.Errorf("a's call %s is kept from a partial analysis", id)
		}
	}
}
