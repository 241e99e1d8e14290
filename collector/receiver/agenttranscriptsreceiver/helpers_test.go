package agenttranscriptsreceiver

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ctxaudit/ctxaudit/collector/otelconv"
	"github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver/internal/checkpoint"
	"github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver/internal/metadata"
	"github.com/ctxaudit/ctxaudit/collector/transcript"
	"github.com/ctxaudit/ctxaudit/collector/transcript/claudecode"
	"github.com/ctxaudit/ctxaudit/collector/transcript/transcripttest"
)

// session216 is the real Claude Code 2.1.6 session in testdata/transcripts: 19
// calls in the main thread, 7 in its sub-agent, one truncated Grep (line 52).
const (
	session216     = "637ef6e7-e740-4503-8ff8-5780d7c0918f"
	session216Main = 19
	session216Sub  = 7
	grep216CallID  = "toolu_01PRASLbbpSRmj2CjAaB1NP4"
)

// waitFor is how long a test waits for the receiver; generous for -race.
const waitFor = 20 * time.Second

func fixture216(tb testing.TB) string {
	return filepath.Join(transcripttest.FixturesDir(tb), "claude-code", "session-2.1.6-637ef6e7")
}

// copyTree copies the folder src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	require.NoError(t, err)
}

// lines returns the file's lines, each with its newline.
func lines(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return bytes.SplitAfter(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
}

func writeFile(t *testing.T, path string, parts ...[]byte) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, bytes.Join(parts, nil), 0o644))
}

func appendFile(t *testing.T, path string, parts ...[]byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	_, err = f.Write(bytes.Join(parts, nil))
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// callsOf parses a Claude Code file the way the one-shot path does and
// returns its calls: the ground truth the receiver's spans are checked against.
func callsOf(t *testing.T, path string) []*transcript.Call {
	t.Helper()
	rec, _ := transcripttest.ParseFile(t, path, func(o transcript.Options) transcript.Parser {
		return claudecode.New(o)
	}, transcript.Options{})
	return rec.Calls
}

// callIDsUpTo returns the ids of the calls completed on a line <= last.
func callIDsUpTo(calls []*transcript.Call, last int64) map[string]bool {
	ids := map[string]bool{}
	for _, c := range calls {
		if c.Call.SourceLine <= last {
			ids[c.Call.CallID] = true
		}
	}
	return ids
}

// testConfig tails every .jsonl below root, polls fast and never goes idle.
func testConfig(root string) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.Include = []string{filepath.Join(root, "**", "*.jsonl")}
	cfg.PollInterval = 10 * time.Millisecond
	cfg.SessionIdle = time.Hour
	return cfg
}

// startReceiver creates and starts a receiver through the factory; it is
// shut down when the test ends unless the test does it first.
func startReceiver(t *testing.T, cfg *Config, next consumer.Traces, host component.Host, set *receiver.Settings) receiver.Traces {
	t.Helper()
	s := receivertest.NewNopSettings(metadata.Type)
	if set != nil {
		s = *set
	}
	if host == nil {
		host = componenttest.NewNopHost()
	}
	rcv, err := NewFactory().CreateTraces(context.Background(), s, cfg, next)
	require.NoError(t, err)
	require.NoError(t, rcv.Start(context.Background(), host))
	t.Cleanup(func() { require.NoError(t, rcv.Shutdown(context.Background())) })
	return rcv
}

// span is one received span, flattened.
type span struct {
	op      string
	name    string
	traceID pcommon.TraceID
	spanID  pcommon.SpanID
	parent  pcommon.SpanID
	scope   string
	attrs   pcommon.Map
	start   time.Time
	end     time.Time
}

func spansOf(tds []ptrace.Traces) []span {
	var out []span
	for _, td := range tds {
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			sss := rss.At(i).ScopeSpans()
			for j := 0; j < sss.Len(); j++ {
				ss := sss.At(j)
				for k := 0; k < ss.Spans().Len(); k++ {
					sp := ss.Spans().At(k)
					out = append(out, span{
						op: otelconv.Operation(sp.Attributes()), name: sp.Name(), traceID: sp.TraceID(),
						spanID: sp.SpanID(), parent: sp.ParentSpanID(), scope: ss.Scope().Name(), attrs: sp.Attributes(),
						start: sp.StartTimestamp().AsTime(), end: sp.EndTimestamp().AsTime(),
					})
				}
			}
		}
	}
	return out
}

func withOp(spans []span, op string) []span {
	var out []span
	for _, s := range spans {
		if s.op == op {
			out = append(out, s)
		}
	}
	return out
}

// toolSpans returns the execute_tool spans the sink received.
func toolSpans(sink *consumertest.TracesSink) []span {
	return withOp(spansOf(sink.AllTraces()), otelconv.OperationExecuteTool)
}

// readSpans returns the calls as read: the execute_tool spans that carry no
// session analysis (an analysis re-emits the calls it changed).
func readSpans(sink *consumertest.TracesSink) []span {
	var out []span
	for _, s := range toolSpans(sink) {
		if _, analysed := s.attrs.Get(otelconv.AttrAnalysisRecords); !analysed {
			out = append(out, s)
		}
	}
	return out
}

// countByCallID counts execute_tool spans per gen_ai.tool.call.id.
func countByCallID(spans []span) map[string]int {
	n := map[string]int{}
	for _, s := range spans {
		if s.op == otelconv.OperationExecuteTool {
			v, _ := s.attrs.Get(otelconv.AttrToolCallID)
			n[v.Str()]++
		}
	}
	return n
}

// latest returns the last span received for each span id.
func latest(spans []span) map[pcommon.SpanID]span {
	out := map[pcommon.SpanID]span{}
	for _, s := range spans {
		out[s.spanID] = s
	}
	return out
}

func attrInt(t *testing.T, s span, key string) int64 {
	t.Helper()
	v, ok := s.attrs.Get(key)
	require.True(t, ok, "span %s has no %s", s.name, key)
	return v.Int()
}

func attrStr(s span, key string) string {
	v, ok := s.attrs.Get(key)
	if !ok {
		return ""
	}
	return v.AsString()
}

// metricSum sums a counter's data points whose attribute key has value
// (all points when key is empty); 0 when the metric was never recorded.
func metricSum(t *testing.T, tel *componenttest.Telemetry, name, key, value string) int64 {
	t.Helper()
	m, err := tel.GetMetric(name)
	if err != nil {
		return 0
	}
	sum, ok := m.Data.(metricdata.Sum[int64])
	require.True(t, ok, "%s is not an int64 sum", name)
	var total int64
	for _, dp := range sum.DataPoints {
		if key == "" {
			total += dp.Value
			continue
		}
		if v, ok := dp.Attributes.Value(attribute.Key(key)); ok && v.AsString() == value {
			total += dp.Value
		}
	}
	return total
}

// withMemoryStorage gives cfg an in-memory storage extension: the host to
// start receivers with, and the storage, to inspect.
func withMemoryStorage(cfg *Config) (host, *memStorage) {
	store := newMemStorage()
	id := component.MustNewID("memory")
	cfg.StorageID = &id
	return host{ext: map[component.ID]component.Component{id: store}}, store
}

// runUntil runs a receiver until done holds, and shuts it down.
func runUntil(t *testing.T, cfg *Config, h component.Host, sink *consumertest.TracesSink, done func() bool) {
	t.Helper()
	rcv, err := NewFactory().CreateTraces(context.Background(), receivertest.NewNopSettings(metadata.Type), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, rcv.Start(context.Background(), h))
	require.Eventually(t, done, waitFor, 10*time.Millisecond)
	require.NoError(t, rcv.Shutdown(context.Background()))
}

// host is a component.Host with extensions.
type host struct {
	ext map[component.ID]component.Component
}

func (h host) GetExtensions() map[component.ID]component.Component { return h.ext }

// memStorage is an in-memory storage extension whose content tests inspect.
type memStorage struct {
	mu   sync.Mutex
	data map[string][]byte
}

func newMemStorage() *memStorage { return &memStorage{data: map[string][]byte{}} }

func (*memStorage) Start(context.Context, component.Host) error { return nil }
func (*memStorage) Shutdown(context.Context) error              { return nil }

func (m *memStorage) GetClient(context.Context, component.Kind, component.ID, string) (storage.Client, error) {
	return memClient{m}, nil
}

// checkpoint returns the stored entry for path, or false.
func (m *memStorage) checkpoint(t *testing.T, path string) (checkpoint.File, bool) {
	t.Helper()
	m.mu.Lock()
	raw := m.data[checkpoint.Key(path)]
	m.mu.Unlock()
	if raw == nil {
		return checkpoint.File{}, false
	}
	cp, err := checkpoint.Decode(raw)
	require.NoError(t, err)
	return cp, true
}

type memClient struct{ m *memStorage }

func (c memClient) Get(_ context.Context, key string) ([]byte, error) {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	return bytes.Clone(c.m.data[key]), nil
}

func (c memClient) Set(_ context.Context, key string, value []byte) error {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	c.m.data[key] = bytes.Clone(value)
	return nil
}

func (c memClient) Delete(_ context.Context, key string) error {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	delete(c.m.data, key)
	return nil
}

func (c memClient) Batch(_ context.Context, ops ...*storage.Operation) error {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	for _, op := range ops {
		switch op.Type {
		case storage.Get:
			op.Value = bytes.Clone(c.m.data[op.Key])
		case storage.Set:
			c.m.data[op.Key] = bytes.Clone(op.Value)
		case storage.Delete:
			delete(c.m.data, op.Key)
		}
	}
	return nil
}

func (memClient) Close(context.Context) error { return nil }

// flakySink refuses the first n requests with a retryable error, then
// stores what it receives. onCall runs inside each call, before the answer.
type flakySink struct {
	consumertest.TracesSink
	mu      sync.Mutex
	refuse  int
	calls   int
	refused []int // span count of each refused request
	onCall  func(call int)
}

var errDown = errors.New("exporter queue full")

func (s *flakySink) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	s.mu.Lock()
	s.calls++
	call := s.calls
	refuse := call <= s.refuse
	if refuse {
		s.refused = append(s.refused, td.SpanCount())
	}
	onCall := s.onCall
	s.mu.Unlock()
	if onCall != nil {
		onCall(call)
	}
	if refuse {
		return errDown
	}
	return s.TracesSink.ConsumeTraces(ctx, td)
}

func (s *flakySink) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}
