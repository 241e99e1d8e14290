package agenttranscriptsreceiver

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver/internal/metadata"
	"github.com/ctxaudit/ctxaudit/collector/transcript"
	"github.com/ctxaudit/ctxaudit/collector/transcript/transcripttest"
	"github.com/ctxaudit/ctxaudit/schema"
)

// A sub-agent's metadata file that appears, changes or breaks after its
// thread was read — while the receiver runs, or while it is down — gives
// the rows `ctxaudit ingest` gives for the folder as it then is: the
// reproduction of an Agent call without its result (testdata/repro), whose
// sub-agent only the metadata places. An unusable file is logged naming it
// and counted, once, restarts included; a restart with nothing changed
// sends nothing again.
func TestAgentMetaFollowedLikeIngest(t *testing.T) {
	root, metaPath, good := agentUnfinished(t)
	require.NoError(t, os.Remove(metaPath))

	cfg := testConfig(root)
	h, _ := withMemoryStorage(cfg)
	sink := new(flakySink)
	core, logs := observer.New(zapcore.InfoLevel)
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	start := func() *agentReceiver {
		set := receivertest.NewNopSettings(metadata.Type)
		set.TelemetrySettings = tel.NewTelemetrySettings()
		set.Logger = zap.New(core)
		return steppedReceiverWith(t, cfg, h, sink, set)
	}
	const bash = "toolu_lab000004"
	check := func(step string, want schema.Turn) {
		t.Helper()
		got := keptRows(t, throughProcessor(t, sink.AllTraces()))
		oneShot := oneShotRows(t, root, cfg.MaxLineBytes)
		require.Equal(t, want, oneShot.calls[bash].Turn, "%s: ingest's turn", step)
		sameRows(t, "tool_calls", oneShot.calls, got.calls, func(w, g *schema.ToolCall) { sameInstant(t, &g.Timestamp, w.Timestamp) })
		sameRows(t, "answers", oneShot.answers, got.answers, func(w, g *schema.Answer) { sameInstant(t, &g.Timestamp, w.Timestamp) })
		sameRows(t, "sessions", oneShot.sessions, got.sessions, func(w, g *schema.Session) {
			sameInstant(t, &g.StartedAt, w.StartedAt)
			sameInstant(t, &g.EndedAt, w.EndedAt)
		})
	}
	ctx := context.Background()

	r := start()
	pollIdle(r)
	check("no metadata yet", schema.Turn{})

	// Written after the thread, while the receiver runs.
	writeFile(t, metaPath, good)
	pollIdle(r)
	check("metadata written", schema.KnownTurn(0))
	require.NoError(t, r.Shutdown(ctx))

	// Restarted with nothing changed: nothing is due, nothing sent again.
	sent := sink.Calls()
	r = start()
	pollIdle(r)
	require.NoError(t, r.Shutdown(ctx))
	require.Equal(t, sent, sink.Calls(), "a restart with nothing changed sent something")

	// Broken while the receiver was down: the checkpoint says the last
	// analysis was told of the call, the file no longer says so.
	writeFile(t, metaPath, good[:len(good)/2])
	r = start()
	pollIdle(r)
	check("metadata broken", schema.Turn{})
	bad := logs.FilterMessage("Skipped sub-agent metadata file").All()
	require.Len(t, bad, 1)
	require.Equal(t, metaPath, bad[0].ContextMap()["path"])
	require.Equal(t, transcript.SkipBadAgentMeta, bad[0].ContextMap()["reason"])
	require.Equal(t, int64(1), metricSum(t, tel, metadata.MetricLinesSkipped, "reason", transcript.SkipBadAgentMeta))

	// Restarted with the file still broken: the same version is not
	// reported or counted again.
	require.NoError(t, r.Shutdown(ctx))
	r = start()
	pollIdle(r)
	check("metadata still broken after a restart", schema.Turn{})
	require.Len(t, logs.FilterMessage("Skipped sub-agent metadata file").All(), 1, "a restart reported the same broken file again")
	require.Equal(t, int64(1), metricSum(t, tel, metadata.MetricLinesSkipped, "reason", transcript.SkipBadAgentMeta))

	// Mended, then the receiver killed and restarted.
	writeFile(t, metaPath, good)
	pollIdle(r)
	check("metadata mended", schema.KnownTurn(0))
	r = start()
	sent = sink.Calls()
	pollIdle(r)
	require.NoError(t, r.Shutdown(ctx))
	require.Equal(t, sent, sink.Calls(), "a restart after the mended file's analysis sent something")
}

// steppedReceiverWith is steppedReceiver with the given settings.
func steppedReceiverWith(t *testing.T, cfg *Config, h component.Host, next *flakySink, set receiver.Settings) *agentReceiver {
	t.Helper()
	r, err := newReceiver(set, cfg, next)
	require.NoError(t, err)
	require.NoError(t, r.prepare(context.Background(), h))
	stopped := make(chan struct{})
	close(stopped)
	r.cancel, r.done = func() {}, stopped
	return r
}

// start_at: end skips the history it finds at the first scan: it feeds the
// sessions but is neither emitted nor analysed. A sub-agent metadata file
// found beside that history is part of it: it must not make the old
// session due for analysis, which would send the whole skipped session.
func TestStartAtEndSkipsAgentMetaHistory(t *testing.T) {
	src := filepath.Join(filepath.Dir(transcripttest.LabDir(t)), "repro", "claude-code@2.1.328", "agent-unfinished", "transcript")
	root := t.TempDir()
	copyTree(t, src, root)

	cfg := testConfig(root)
	cfg.StartAt = StartAtEnd
	h, _ := withMemoryStorage(cfg)
	sink := new(flakySink)
	r := steppedReceiver(t, cfg, h, sink)
	pollIdle(r)
	pollIdle(r)
	require.NoError(t, r.Shutdown(context.Background()))
	require.Zero(t, sink.SpanCount(), "start_at: end sent the history it was to skip")
}

// Claude Code writes a sub-agent's metadata file in place: a poll may find
// it empty or cut. Until it has been left so for a while it is a file being
// written, not a bad one — nothing is reported or counted, and what its
// last readable version said stands (the rows keep the sub-agent's turn).
// Left broken, it is reported once and says nothing, as ingest reads it.
func TestAgentMetaBeingWrittenIsNotBad(t *testing.T) {
	root, metaPath, good := agentUnfinished(t)

	cfg := testConfig(root)
	h, _ := withMemoryStorage(cfg)
	sink := new(flakySink)
	core, logs := observer.New(zapcore.InfoLevel)
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := receivertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings, set.Logger = tel.NewTelemetrySettings(), zap.New(core)
	r := steppedReceiverWith(t, cfg, h, sink, set)
	const bash = "toolu_lab000004"
	turnOfBash := func() schema.Turn {
		t.Helper()
		return keptRows(t, throughProcessor(t, sink.AllTraces())).calls[bash].Turn
	}
	skipped := func() int {
		return len(logs.FilterMessage("Skipped sub-agent metadata file").All())
	}
	// The clock pollIdle runs the receiver on; a file's time set to it is
	// "just written".
	idleNow := func() time.Time { return time.Now().Add(cfg.SessionIdle + time.Minute) }

	pollIdle(r)
	require.Equal(t, schema.KnownTurn(0), turnOfBash(), "placed by the metadata file")

	for _, cut := range [][]byte{{}, good[:len(good)/2]} {
		// Caught while being written: empty, then half of it.
		writeFile(t, metaPath, cut)
		at := idleNow()
		require.NoError(t, os.Chtimes(metaPath, at, at))
		pollIdle(r)
		require.Zero(t, skipped(), "a file being written reported as bad")
		require.Zero(t, metricSum(t, tel, metadata.MetricLinesSkipped, "reason", transcript.SkipBadAgentMeta))
		require.Equal(t, schema.KnownTurn(0), turnOfBash(), "the last readable claim stands while the file is written")
	}

	// Left broken: reported once, and it no longer places the sub-agent.
	old := idleNow().Add(-10 * time.Second)
	require.NoError(t, os.Chtimes(metaPath, old, old))
	pollIdle(r)
	require.Equal(t, 1, skipped())
	require.Equal(t, int64(1), metricSum(t, tel, metadata.MetricLinesSkipped, "reason", transcript.SkipBadAgentMeta))
	require.Equal(t, schema.Turn{}, turnOfBash())
	require.NoError(t, r.Shutdown(context.Background()))
}

// agentUnfinished copies the reproduction of an Agent call without its
// result (testdata/repro) into a temporary folder, and returns the folder,
// its sub-agent metadata file and that file's content.
func agentUnfinished(t *testing.T) (root, metaPath string, content []byte) {
	t.Helper()
	root = t.TempDir()
	copyTree(t, filepath.Join(filepath.Dir(transcripttest.LabDir(t)), "repro", "claude-code@2.1.328", "agent-unfinished", "transcript"), root)
	require.NoError(t, filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if strings.HasSuffix(p, ".meta.json") {
			metaPath = p
		}
		return err
	}))
	require.NotEmpty(t, metaPath)
	content, err := os.ReadFile(metaPath)
	require.NoError(t, err)
	return root, metaPath, content
}
