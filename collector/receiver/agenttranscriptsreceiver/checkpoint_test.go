package agenttranscriptsreceiver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/ctxaudit/ctxaudit/collector/otelconv"
	"github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver/internal/checkpoint"
	"github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver/internal/metadata"
)

// startFileStorage starts the contrib file_storage extension on dir, as a
// collector would; stop it with the returned function.
func startFileStorage(t *testing.T, dir string) (extension.Extension, func()) {
	t.Helper()
	f := filestorage.NewFactory()
	cfg := f.CreateDefaultConfig().(*filestorage.Config)
	cfg.Directory = dir
	cfg.Compaction.Directory = dir
	ext, err := f.Create(context.Background(), extensiontest.NewNopSettings(f.Type()), cfg)
	require.NoError(t, err)
	require.NoError(t, ext.Start(context.Background(), componenttest.NewNopHost()))
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			require.NoError(t, ext.Shutdown(context.Background()))
		}
	}
	t.Cleanup(stop)
	return ext, stop
}

// TestRestartNeitherLosesNorRepeats stops the receiver mid-file three
// times over a real file_storage: once cleanly after its spans were
// accepted, once while the pipeline refused what it had read. The union of
// what the pipeline accepted has every call of the session exactly once.
func TestRestartNeitherLosesNorRepeats(t *testing.T) {
	root := t.TempDir()
	storageDir := t.TempDir()
	src := filepath.Join(fixture216(t), session216+".jsonl")
	all := lines(t, src)
	calls := callsOf(t, src)
	project := filepath.Join(root, "projects", "-p")
	main := filepath.Join(project, session216+".jsonl")
	writeFile(t, main, all[:40]...)
	copyTree(t, filepath.Join(fixture216(t), session216, "subagents"), filepath.Join(project, session216, "subagents"))

	storageID := component.MustNewID("file_storage")
	cfg := testConfig(root)
	cfg.StorageID = &storageID
	run := func(next consumer.Traces, until func() bool) {
		t.Helper()
		ext, stopExt := startFileStorage(t, storageDir)
		set := receivertest.NewNopSettings(metadata.Type)
		set.ID = component.NewID(metadata.Type) // the storage client is keyed by the receiver's id
		rcv, err := NewFactory().CreateTraces(context.Background(), set, cfg, next)
		require.NoError(t, err)
		require.NoError(t, rcv.Start(context.Background(), host{ext: map[component.ID]component.Component{storageID: ext}}))
		require.Eventually(t, until, waitFor, 10*time.Millisecond)
		require.NoError(t, rcv.Shutdown(context.Background()))
		stopExt()
	}

	// Run 1: the first 40 lines and the sub-agent, accepted.
	sink1 := new(consumertest.TracesSink)
	want1 := len(callIDsUpTo(calls, 40)) + session216Sub
	run(sink1, func() bool { return len(toolSpans(sink1)) == want1 })

	// Run 2: 30 more lines, read but refused downstream until shutdown.
	appendFile(t, main, all[40:70]...)
	sink2 := &flakySink{refuse: 1 << 30}
	run(sink2, func() bool { return sink2.Calls() >= 3 })
	require.Zero(t, sink2.SpanCount())

	// Run 3: the rest.
	appendFile(t, main, all[70:]...)
	sink3 := new(consumertest.TracesSink)
	want3 := len(calls) - len(callIDsUpTo(calls, 40))
	run(sink3, func() bool { return len(toolSpans(sink3)) >= want3 })

	// Each clean stop also analyses the open session and re-emits the calls
	// the analysis changed; the calls as read are what must not repeat.
	union := append(readSpans(sink1), readSpans(sink3)...)
	got := countByCallID(union)
	assert.Len(t, got, len(calls)+session216Sub)
	for _, c := range calls {
		assert.Equal(t, 1, got[c.Call.CallID], "call %s (line %d)", c.Call.CallID, c.Call.SourceLine)
	}
	for id, n := range got {
		assert.Equal(t, 1, n, "call %s", id)
	}
	bySpanID := map[string]int{}
	for _, s := range union {
		bySpanID[s.spanID.String()]++
	}
	assert.Len(t, bySpanID, len(union), "span ids repeat")
}

// TestRefusedBatchIsRetried: while the pipeline refuses, the checkpoint
// does not move and the same batch is offered again; once accepted, every
// call has arrived exactly once and the checkpoint sits at the file's end.
func TestRefusedBatchIsRetried(t *testing.T) {
	root := t.TempDir()
	project := filepath.Join(root, "projects", "-p")
	copyTree(t, fixture216(t), project)
	main := filepath.Join(project, session216+".jsonl")

	store := newMemStorage()
	storageID := component.MustNewID("memory")
	cfg := testConfig(root)
	cfg.StorageID = &storageID
	const refusals = 3
	sink := &flakySink{refuse: refusals}
	var storedWhileRefused []bool
	sink.onCall = func(call int) {
		if call <= refusals+1 { // runs in the receiver's goroutine, before it sees the answer
			_, ok := store.checkpoint(t, main)
			storedWhileRefused = append(storedWhileRefused, ok)
		}
	}
	startReceiver(t, cfg, sink, host{ext: map[component.ID]component.Component{storageID: store}}, nil)

	require.Eventually(t, func() bool { return len(toolSpans(&sink.TracesSink)) == session216Main+session216Sub },
		waitFor, 10*time.Millisecond)
	require.Eventually(t, func() bool {
		cp, ok := store.checkpoint(t, main)
		st, err := os.Stat(main)
		return ok && err == nil && cp.Offset == st.Size()
	}, waitFor, 10*time.Millisecond)

	sink.mu.Lock()
	refused := append([]int(nil), sink.refused...)
	sink.mu.Unlock()
	require.Len(t, refused, refusals)
	for _, n := range refused {
		assert.Equal(t, refused[0], n, "a refused batch is offered again unchanged")
	}
	assert.Equal(t, []bool{false, false, false, false}, storedWhileRefused, "no checkpoint before the pipeline accepted")
	for id, n := range countByCallID(toolSpans(&sink.TracesSink)) {
		assert.Equal(t, 1, n, "call %s", id)
	}
	cp, _ := store.checkpoint(t, main)
	assert.Equal(t, int64(len(lines(t, main))), cp.Line)
	assert.Equal(t, session216, cp.SessionID)
	assert.Equal(t, "claude-code", cp.Format)
}

// TestRestartAfterAnalysisIsQuiet: a session analysed and accepted before a
// restart is neither re-read nor re-emitted after it; when it grows, it is
// rebuilt from its files and analysed again.
func TestRestartAfterAnalysisIsQuiet(t *testing.T) {
	root := t.TempDir()
	project := filepath.Join(root, "projects", "-p")
	copyTree(t, fixture216(t), project)
	main := filepath.Join(project, session216+".jsonl")
	cfg := testConfig(root)
	h, store := withMemoryStorage(cfg)
	cfg.SessionIdle = 50 * time.Millisecond

	sink1 := new(consumertest.TracesSink)
	runUntil(t, cfg, h, sink1, func() bool {
		cp, ok := store.checkpoint(t, main)
		return ok && cp.Line > 0 && cp.AnalyzedLine == cp.Line
	})
	require.Len(t, withOp(spansOf(sink1.AllTraces()), otelconv.OperationInvokeAgent), 1)

	sink2 := new(consumertest.TracesSink)
	startReceiver(t, cfg, sink2, h, nil)
	time.Sleep(300 * time.Millisecond)
	assert.Zero(t, sink2.SpanCount(), "nothing new, nothing emitted")

	appendFile(t, main, []byte("not json\n"))
	require.Eventually(t, func() bool {
		return len(withOp(spansOf(sink2.AllTraces()), otelconv.OperationInvokeAgent)) == 1
	}, waitFor, 10*time.Millisecond)
	all := spansOf(sink2.AllTraces())
	s := withOp(all, otelconv.OperationInvokeAgent)[0]
	assert.Equal(t, int64(session216Main+session216Sub), attrInt(t, s, otelconv.AttrSessionToolCalls), "rebuilt with the sub-agent")
	assert.Equal(t, int64(3), attrInt(t, s, otelconv.AttrSessionAnswers))
	for id, n := range countByCallID(all) {
		assert.Equal(t, 1, n, "call %s re-emitted more than once", id)
	}
}

// TestDeletedFileIsForgotten: the checkpoint of a file that disappears is
// deleted, and so is its entry in the index.
func TestDeletedFileIsForgotten(t *testing.T) {
	root := t.TempDir()
	project := filepath.Join(root, "projects", "-p")
	copyTree(t, fixture216(t), project)
	main := filepath.Join(project, session216+".jsonl")
	store := newMemStorage()
	storageID := component.MustNewID("memory")
	cfg := testConfig(root)
	cfg.StorageID = &storageID
	startReceiver(t, cfg, consumertest.NewNop(), host{ext: map[component.ID]component.Component{storageID: store}}, nil)

	require.Eventually(t, func() bool { _, ok := store.checkpoint(t, main); return ok }, waitFor, 10*time.Millisecond)
	require.NoError(t, os.Remove(main))
	require.Eventually(t, func() bool {
		_, ok := store.checkpoint(t, main)
		store.mu.Lock()
		index := string(store.data[checkpoint.IndexKey])
		store.mu.Unlock()
		return !ok && !strings.Contains(index, main) && strings.Contains(index, "agent-a4d534b.jsonl")
	}, waitFor, 10*time.Millisecond)
}

// Without storage the checkpoints live in memory and a restart cannot take
// back an answer sent before: the receiver says so once at start, and not
// when storage keeps them.
func TestStartWarnsWithoutStorage(t *testing.T) {
	for _, withStorage := range []bool{false, true} {
		cfg := testConfig(t.TempDir())
		var h component.Host
		if withStorage {
			storageID := component.MustNewID("file_storage")
			cfg.StorageID = &storageID
			ext, _ := startFileStorage(t, t.TempDir())
			h = host{ext: map[component.ID]component.Component{storageID: ext}}
		}
		core, logs := observer.New(zap.WarnLevel)
		set := receivertest.NewNopSettings(metadata.Type)
		set.ID = component.NewID(metadata.Type) // the storage client is keyed by the receiver's id
		set.Logger = zap.New(core)
		rcv := startReceiver(t, cfg, new(consumertest.TracesSink), h, &set)
		require.NoError(t, rcv.Shutdown(context.Background()))
		want := map[bool]int{false: 1, true: 0}[withStorage]
		assert.Equal(t, want, logs.FilterMessageSnippet("No storage configured").Len(), "storage %v", withStorage)
	}
}
