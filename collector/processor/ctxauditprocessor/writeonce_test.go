package ctxauditprocessor

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	bolt "go.etcd.io/bbolt"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/ctxaudit/ctxaudit/collector/otelconv"
	"github.com/ctxaudit/ctxaudit/collector/processor/ctxauditprocessor/internal/metadata"
	"github.com/ctxaudit/ctxaudit/collector/session"
	"github.com/ctxaudit/ctxaudit/exporters/ctxauditclickhouseexporter"
	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/schema"
)

func TestMain(m *testing.M) { chtest.Main(m) }

// callRows counts, per call id, the tool_calls rows the exporter writes
// for what passes through it: execute_tool spans without the pending marker
// (those it counts apart).
type callRows struct {
	next    consumer.Traces
	mu      sync.Mutex
	rows    map[string]int
	pending int
	held    map[string][]schema.ToolCall // by session, see expect
	// sessions are the last session row emitted of each session.
	sessions map[string]schema.Session
}

func (c *callRows) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (c *callRows) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	c.mu.Lock()
	otelconv.EachSpan(td, func(res pcommon.Map, _ string, sp ptrace.Span) {
		attrs := sp.Attributes()
		if _, ok := attrs.Get(otelconv.AttrSessionToolCalls); ok && otelconv.Operation(attrs) == otelconv.OperationInvokeAgent {
			s := otelconv.SessionFromAttributes(attrs, sp.StartTimestamp().AsTime(), sp.EndTimestamp().AsTime())
			c.sessions[s.SessionID] = s
		}
		if otelconv.Operation(attrs) != otelconv.OperationExecuteTool {
			return
		}
		if otelconv.AnalysisPending(attrs) {
			c.pending++
			return
		}
		c.rows[otelconv.ToolCallFromAttributes(attrs, res, sp.StartTimestamp().AsTime()).CallID]++
	})
	c.mu.Unlock()
	if c.next == nil {
		return nil
	}
	return c.next.ConsumeTraces(ctx, td)
}

// expect keeps the calls of a request the processor will hold, with the
// verdict forensics gives them, for the expected analysis.
func (c *callRows) expect(td ptrace.Traces) {
	cp := ptrace.NewTraces()
	td.CopyTo(cp)
	c.mu.Lock()
	defer c.mu.Unlock()
	otelconv.EachSpan(cp, func(res pcommon.Map, _ string, sp ptrace.Span) {
		attrs := sp.Attributes()
		if otelconv.Operation(attrs) != otelconv.OperationExecuteTool {
			return
		}
		detectInto(attrs, schema.HarnessGeneric)
		call := otelconv.ToolCallFromAttributes(attrs, res, sp.StartTimestamp().AsTime())
		c.held[call.SessionID] = append(c.held[call.SessionID], call)
	})
}

func newCallRows(next consumer.Traces) *callRows {
	return &callRows{next: next, rows: map[string]int{}, held: map[string][]schema.ToolCall{}, sessions: map[string]schema.Session{}}
}

// sessionSpans is one request of a session: n shell calls from index from,
// every third one cut (a Codex notice), and an answer after the last.
func sessionSpans(sid string, from, n int, at time.Time) ptrace.Traces {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for i := from; i < from+n; i++ {
		result := "a\nb\n"
		if i%3 == 0 {
			result = codexCut
		}
		shellSpan(spans, sid, fmt.Sprintf("%s-c%03d", sid, i), result, at.Add(time.Duration(i)*time.Second))
	}
	chatSpan(spans, sid, "done", at.Add(time.Duration(from+n)*time.Second))
	spans.At(spans.Len() - 1).SetSpanID(otelconv.SpanID(sid, "answer", fmt.Sprint(from)))
	return td
}

// TestEachCallWrittenOnce: through processor and exporter into ClickHouse,
// every call of the analysed sessions gets exactly one tool_calls row, with
// the follow-through and verdict session analysis gives those records on
// the ingest and receiver path (collector/session over the same calls) —
// whether or not the held spans are also passed on.
func TestEachCallWrittenOnce(t *testing.T) {
	addr := chtest.Address(t)
	for _, forward := range []bool{false, true} {
		t.Run(fmt.Sprintf("forward_held_spans=%v", forward), func(t *testing.T) { testEachCallWrittenOnce(t, addr, forward) })
	}
}

func testEachCallWrittenOnce(t *testing.T, addr string, forward bool) {
	ctx := context.Background()
	ecfg := ctxauditclickhouseexporter.NewFactory().CreateDefaultConfig().(*ctxauditclickhouseexporter.Config)
	ecfg.Endpoint = addr
	exp, err := ctxauditclickhouseexporter.NewFactory().CreateTraces(ctx, exportertest.NewNopSettings(component.MustNewType("ctxaudit_clickhouse")), ecfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.Start(ctx, componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	rows := newCallRows(exp)
	cfg := createDefaultConfig().(*Config)
	cfg.SessionIdle = 100 * time.Millisecond
	cfg.ForwardHeldSpans = forward
	p, err := NewFactory().CreateTraces(ctx, processortest.NewNopSettings(metadata.Type), cfg, rows)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx, componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	const sessions, perSession, perRequest = 4, 30, 10
	for s := range sessions {
		for r := 0; r < perSession; r += perRequest {
			td := sessionSpans(fmt.Sprintf("wo-%d-%v", s, forward), r, perRequest, at)
			rows.expect(td)
			if err := p.ConsumeTraces(ctx, td); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := p.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := exp.Shutdown(ctx); err != nil { // drains the queue
		t.Fatal(err)
	}

	if len(rows.rows) != sessions*perSession {
		t.Fatalf("%d calls got rows; want %d", len(rows.rows), sessions*perSession)
	}
	written := 0
	for id, n := range rows.rows {
		written += n
		if n != 1 {
			t.Errorf("call %s: %d tool_calls rows written; want 1", id, n)
		}
	}
	t.Logf("%d calls, %d tool_calls rows written (%.2f per call)", len(rows.rows), written, float64(written)/float64(len(rows.rows)))

	s := chtest.OpenStore(t, addr)
	covered := 0
	for sid, held := range rows.held {
		// The expected record: the same calls analysed as ingest does.
		b := session.New(sid)
		for _, c := range held {
			b.AddCall(c, "", false)
		}
		want := map[string]schema.ToolCall{}
		for _, c := range b.Analyze(schema.Session{SessionID: sid}).Calls {
			want[c.CallID] = c
		}
		stored, err := s.ToolCalls(ctx, sid)
		if err != nil {
			t.Fatal(err)
		}
		if len(stored) != perSession || len(want) != perSession {
			t.Fatalf("%s: %d rows stored, %d analysed; want %d", sid, len(stored), len(want), perSession)
		}
		for _, got := range stored {
			w := want[got.CallID]
			if got.SessionCoverage.Known {
				covered++
			}
			if got.Kind != w.Kind || got.Truncated != w.Truncated || got.FollowedUp != w.FollowedUp ||
				got.SessionCoverage != w.SessionCoverage || got.ContinuationOf != w.ContinuationOf || got.Turn != w.Turn {
				t.Errorf("%s/%s stored %+v; analysis gives kind %s truncated %v followed %v coverage %+v continuation %q turn %s",
					sid, got.CallID, got, w.Kind, w.Truncated, w.FollowedUp, w.SessionCoverage, w.ContinuationOf, w.Turn)
			}
		}
		sess, found, err := s.Session(ctx, sid)
		if err != nil || !found || sess.ToolCalls != perSession || sess.TruncatedCalls != perSession/3 {
			t.Errorf("%s: session %+v found=%v err=%v; want %d calls, %d truncated", sid, sess, found, err, perSession, perSession/3)
		}
	}
	if covered == 0 {
		t.Error("no stored call has a session_coverage: the comparison above checked no follow-through")
	}
	t.Logf("%d stored calls with a session_coverage, equal to the ingest path's", covered)
	if len(rows.held) != sessions {
		t.Errorf("%d sessions held; want %d", len(rows.held), sessions)
	}
	wantPending := 0
	if forward {
		wantPending = sessions * perSession
	}
	if rows.pending != wantPending {
		t.Errorf("%d spans passed on marked pending; want %d", rows.pending, wantPending)
	}
}

// storageHost is a host with one file_storage extension.
type storageHost struct {
	component.Host
	exts map[component.ID]component.Component
}

func (h storageHost) GetExtensions() map[component.ID]component.Component { return h.exts }

func newFileStorage(t testing.TB, dir string) (storageHost, extension.Extension) {
	t.Helper()
	f := filestorage.NewFactory()
	cfg := f.CreateDefaultConfig().(*filestorage.Config)
	cfg.Directory = dir
	cfg.Compaction.Directory = dir
	ext, err := f.Create(context.Background(), extensiontest.NewNopSettings(f.Type()), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := ext.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	return storageHost{Host: componenttest.NewNopHost(), exts: map[component.ID]component.Component{fileStorage: ext}}, ext
}

// crash ends a processor as kill -9 would: no flush, no final write; only
// the storage file is released, so the next process can open it.
func crash(t testing.TB, p *tracesProcessor, ext extension.Extension) {
	t.Helper()
	close(p.stop)
	p.cancelLoop()
	<-p.done
	if err := p.store.close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := ext.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestHeldSessionsSurviveACrash: with storage, what the processor held when
// it died is reloaded by the next process and analysed — every call is
// written (exactly once, or — for a session emitted early, as by max_hold,
// before the crash and grown after — once more, over the whole session),
// and the session rows count every call.
func TestHeldSessionsSurviveACrash(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	cfg := createDefaultConfig().(*Config)
	cfg.SessionIdle = time.Hour // nothing goes idle: only max_hold, shutdown and the crash decide
	cfg.MaxHold = time.Hour
	cfg.Storage = &fileStorage
	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	newProc := func(sink *callRows) (*tracesProcessor, extension.Extension) {
		host, ext := newFileStorage(t, dir)
		set := processortest.NewNopSettings(metadata.Type)
		p, err := newTracesProcessor(set, cfg, sink)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.start(ctx, host); err != nil {
			t.Fatal(err)
		}
		return p, ext
	}
	consume := func(p *tracesProcessor, sink consumer.Traces, td ptrace.Traces) {
		out, err := process(ctx, p, td)
		if err != nil {
			t.Fatal(err)
		}
		if err := sink.ConsumeTraces(ctx, out); err != nil {
			t.Fatal(err)
		}
	}

	first := newCallRows(nil)
	p, ext := newProc(first)
	consume(p, first, sessionSpans("crash-a", 0, 10, at))
	secretReq := sessionSpans("crash-b", 0, 10, at)
	secretSpan := secretReq.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(1)
	secretSpan.Attributes().PutStr(otelconv.AttrToolCallArguments, `{"command":"export ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123"}`)
	secretSpan.Attributes().PutStr(otelconv.AttrTarget, "postgres://app:s3cr3tpassw0rd@db:5432/x")
	consume(p, first, secretReq)
	// crash-b's calls have been held "too long": emitted before the crash.
	if err := p.flush(ctx, func(b *sessionBuffer) bool { return b.id == "crash-b" }); err != nil {
		t.Fatal(err)
	}
	consume(p, first, sessionSpans("crash-b", 10, 5, at))
	consume(p, first, sessionSpans("crash-a", 10, 5, at))
	crash(t, p, ext)
	// No secret reached the storage extension: not in the file, nor in any
	// value once decompressed.
	files, _ := os.ReadDir(dir)
	for _, f := range files {
		path := filepath.Join(dir, f.Name())
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range append(storedValues(t, path), raw) {
			if bytes.Contains(b, []byte("sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123")) || bytes.Contains(b, []byte("s3cr3tpassw0rd")) {
				t.Errorf("storage file %s holds a secret", f.Name())
			}
		}
		if !bytes.Contains(bytes.Join(storedValues(t, path), nil), []byte("crash-b-c001")) {
			t.Errorf("storage file %s does not hold the held calls: the scan proves nothing", f.Name())
		}
	}
	for id := range first.rows {
		if id[:7] != "crash-b" || id > "crash-b-c009" {
			t.Errorf("call %s written before the crash; only crash-b's first 10 were emitted", id)
		}
	}

	second := newCallRows(nil)
	p, ext = newProc(second)
	if err := p.shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ext.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	var dup, missing []string
	for s, n := range map[string]int{"crash-a": 15, "crash-b": 15} {
		for i := range n {
			id := fmt.Sprintf("%s-c%03d", s, i)
			// crash-b's first calls were emitted early, over 10 records; the
			// analysis over all 15 re-emits them (a row says how much of the
			// session it reflects), once.
			want := 1
			if s == "crash-b" && i < 10 {
				want = 2
			}
			switch n := first.rows[id] + second.rows[id]; {
			case n == 0:
				missing = append(missing, id)
			case n != want:
				dup = append(dup, fmt.Sprintf("%s (%d rows)", id, n))
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 || len(dup) > 0 {
		t.Fatalf("after the crash: missing %v, written a wrong number of times %v", missing, dup)
	}
	// The sessions' last rows count every call.
	for _, sid := range []string{"crash-a", "crash-b"} {
		sess, ok := second.sessions[sid]
		if !ok || sess.ToolCalls != 15 || sess.Analysis.Partial {
			t.Errorf("session %s after the restart: %+v (emitted %v); want 15 calls, not partial", sid, sess, ok)
		}
	}
	if got := first.sessions["crash-b"].ToolCalls; got != 10 {
		t.Errorf("crash-b's early emission counted %d calls; want 10", got)
	}
}

// storedValues is every value of a file_storage file, decompressed (JSON
// or MessagePack: either keeps a string's bytes as they are).
func storedValues(t *testing.T, path string) [][]byte {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var out [][]byte
	err = db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(_ []byte, b *bolt.Bucket) error {
			return b.ForEach(func(_, v []byte) error {
				_, j, err := valuePayload(v)
				if err != nil {
					return err
				}
				out = append(out, bytes.Clone(j))
				return nil
			})
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
