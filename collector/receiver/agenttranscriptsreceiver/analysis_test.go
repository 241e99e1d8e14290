package agenttranscriptsreceiver

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/ctxaudit/ctxaudit/collector/ingest"
	"github.com/ctxaudit/ctxaudit/collector/otelconv"
	"github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver/internal/metadata"
	"github.com/ctxaudit/ctxaudit/collector/transcript/transcripttest"
	"github.com/ctxaudit/ctxaudit/schema"
)

// ingestRecorder is an ingest.Writer keeping what a one-shot run writes.
type ingestRecorder struct {
	sessions []schema.Session
	calls    []schema.ToolCall
	answers  []schema.Answer
}

func (w *ingestRecorder) WriteSessions(_ context.Context, s []schema.Session) error {
	w.sessions = append(w.sessions, s...)
	return nil
}

func (w *ingestRecorder) WriteToolCalls(_ context.Context, c []schema.ToolCall) error {
	w.calls = append(w.calls, c...)
	return nil
}

func (w *ingestRecorder) WriteAnswers(_ context.Context, a []schema.Answer) error {
	w.answers = append(w.answers, a...)
	return nil
}

func (w *ingestRecorder) WriteToolOutputs(context.Context, []schema.ToolOutput) error { return nil }

// final decodes the latest version of every span the sink received.
type final struct {
	sessions map[string]schema.Session
	calls    map[string]schema.ToolCall
	answers  map[string]schema.Answer
}

func finalState(sink *consumertest.TracesSink) final {
	f := final{sessions: map[string]schema.Session{}, calls: map[string]schema.ToolCall{}, answers: map[string]schema.Answer{}}
	for _, s := range latest(spansOf(sink.AllTraces())) {
		switch s.op {
		case otelconv.OperationInvokeAgent:
			m := otelconv.SessionFromAttributes(s.attrs, s.start, s.end)
			f.sessions[m.SessionID] = m
		case otelconv.OperationExecuteTool:
			c := otelconv.ToolCallFromAttributes(s.attrs, pcommon.NewMap(), s.start)
			f.calls[c.CallID] = c
		case otelconv.OperationChat:
			a := otelconv.AnswerFromAttributes(s.attrs, s.start)
			if a.Retracted { // taken back: readers skip it
				delete(f.answers, a.MessageID)
				continue
			}
			f.answers[a.MessageID] = a
		}
	}
	return f
}

func TestSessionAnalysisWhenIdle(t *testing.T) {
	root := t.TempDir()
	copyTree(t, fixture216(t), filepath.Join(root, "projects", "-p"))
	cfg := testConfig(root)
	cfg.SessionIdle = 50 * time.Millisecond
	sink := new(consumertest.TracesSink)
	startReceiver(t, cfg, sink, nil, nil)

	require.Eventually(t, func() bool {
		return len(withOp(spansOf(sink.AllTraces()), otelconv.OperationInvokeAgent)) > 0
	}, waitFor, 10*time.Millisecond)
	time.Sleep(100 * time.Millisecond) // idle: nothing more should come
	all := spansOf(sink.AllTraces())

	sessions := withOp(all, otelconv.OperationInvokeAgent)
	require.Len(t, sessions, 1, "the session is analysed once while it does not grow")
	s := sessions[0]
	assert.Equal(t, otelconv.SpanID(session216, "session", session216), s.spanID)
	assert.Equal(t, int64(26), attrInt(t, s, otelconv.AttrSessionToolCalls))
	assert.Equal(t, int64(3), attrInt(t, s, otelconv.AttrSessionAnswers))
	assert.Equal(t, int64(3), attrInt(t, s, otelconv.AttrSessionTurns))
	assert.Equal(t, int64(1698799+114039), attrInt(t, s, otelconv.AttrUsageInputTokens))
	assert.Equal(t, int64(7154+3062), attrInt(t, s, otelconv.AttrUsageOutputTokens))
	assert.Equal(t, "claude-opus-4-5-20251101", attrStr(s, otelconv.AttrRequestModel))

	chats := withOp(all, otelconv.OperationChat)
	assert.Len(t, chats, 3)
	for _, c := range chats {
		assert.NotEmpty(t, attrStr(c, otelconv.AttrAnswerRisk), "answer %s has no risk", c.spanID)
		assert.Equal(t, s.spanID, c.parent)
	}

	// Calls are re-emitted only when analysis changed them, at most once here.
	for id, n := range countByCallID(all) {
		assert.LessOrEqual(t, n, 2, "call %s", id)
	}
	// Sub-agent calls sit in the turn of the Task that ran them.
	for _, c := range finalState(sink).calls {
		if c.Sidechain {
			assert.Equal(t, schema.KnownTurn(0), c.Turn, "sidechain call %s", c.CallID)
		}
	}
}

// TestOldSessionsAreAnalysedRightAway: session_idle counts from the files'
// last modification, so a history read at the first start is analysed
// without waiting.
func TestOldSessionsAreAnalysedRightAway(t *testing.T) {
	root := t.TempDir()
	project := filepath.Join(root, "projects", "-p")
	copyTree(t, fixture216(t), project)
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{
		filepath.Join(project, session216+".jsonl"),
		filepath.Join(project, session216, "subagents", "agent-a4d534b.jsonl"),
	} {
		require.NoError(t, os.Chtimes(p, old, old))
	}
	cfg := testConfig(root)
	cfg.SessionIdle = 30 * time.Minute
	sink := new(consumertest.TracesSink)
	startReceiver(t, cfg, sink, nil, nil)
	require.Eventually(t, func() bool {
		return len(withOp(spansOf(sink.AllTraces()), otelconv.OperationInvokeAgent)) == 1
	}, waitFor, 10*time.Millisecond)
}

// TestMatchesOneShotIngest tails the example sessions of every harness
// until they are analysed and checks that the latest span of each record
// equals what `ctxaudit ingest` writes for the same files.
func TestMatchesOneShotIngest(t *testing.T) {
	root := t.TempDir()
	examples := transcripttest.ExamplesDir(t)
	for _, h := range []string{"claude-code", "codex", "pi"} {
		copyTree(t, filepath.Join(examples, h), filepath.Join(root, h))
	}
	copyTree(t, fixture216(t), filepath.Join(root, "claude-code", "-Users-gray"))

	w := &ingestRecorder{}
	_, err := ingest.Run(context.Background(), []string{root}, ingest.Options{}, w)
	require.NoError(t, err)
	require.Len(t, w.sessions, 8, "7 example sessions and the 2.1.6 fixture")
	t.Logf("comparing %d sessions, %d calls, %d answers", len(w.sessions), len(w.calls), len(w.answers))

	cfg := testConfig(root)
	cfg.SessionIdle = 50 * time.Millisecond
	sink := new(consumertest.TracesSink)
	startReceiver(t, cfg, sink, nil, nil)
	require.Eventually(t, func() bool { return len(finalState(sink).sessions) == len(w.sessions) }, waitFor, 10*time.Millisecond)
	got := finalState(sink)

	for _, want := range w.sessions {
		g, ok := got.sessions[want.SessionID]
		if !assert.True(t, ok, "session %s not emitted", want.SessionID) {
			continue
		}
		// Times are compared by instant; the source file is the main thread's.
		assert.True(t, want.StartedAt.Equal(g.StartedAt) && want.EndedAt.Equal(g.EndedAt), "session %s times", want.SessionID)
		g.StartedAt, g.EndedAt = want.StartedAt, want.EndedAt
		assert.Equal(t, want, g, "session %s", want.SessionID)
	}
	assert.Len(t, got.calls, len(w.calls))
	for _, want := range w.calls {
		g, ok := got.calls[want.CallID]
		if !assert.True(t, ok, "call %s not emitted", want.CallID) {
			continue
		}
		assert.True(t, want.Timestamp.Equal(g.Timestamp))
		g.Timestamp = want.Timestamp
		if want.Original.Source == schema.SourceSavedFile {
			// The original was measured from the saved output beside the
			// transcript; this test compares only what does not depend on
			// reading it.
			assert.Equal(t, want.Truncated, g.Truncated, "call %s truncated", want.CallID)
			assert.Equal(t, want.Strategy, g.Strategy, "call %s strategy", want.CallID)
			assert.Equal(t, want.FollowedUp, g.FollowedUp, "call %s followed up", want.CallID)
			continue
		}
		assert.Equal(t, want, g, "call %s", want.CallID)
	}
	assert.Len(t, got.answers, len(w.answers))
	for _, want := range w.answers {
		g, ok := got.answers[want.MessageID]
		if !assert.True(t, ok, "answer %s not emitted", want.MessageID) {
			continue
		}
		assert.Equal(t, want.Risk, g.Risk, "answer %s risk", want.MessageID)
		assert.Equal(t, want.Reasons, g.Reasons, "answer %s reasons", want.MessageID)
		assert.Equal(t, want.AbsenceClaim, g.AbsenceClaim, "answer %s", want.MessageID)
		assert.Equal(t, want.Turn, g.Turn, "answer %s turn", want.MessageID)
		assert.Equal(t, want.Text, g.Text, "answer %s text", want.MessageID)
		assert.ElementsMatch(t, want.InputCallIDs, g.InputCallIDs, "answer %s inputs", want.MessageID)
		assert.ElementsMatch(t, want.IncompleteInputs, g.IncompleteInputs, "answer %s incomplete inputs", want.MessageID)
	}
}

// TestEvictionRebuildsSessions holds one session at a time: the others are
// evicted (and counted) and still analysed correctly, rebuilt from their
// files; growth of an evicted session re-analyses it in full.
func TestEvictionRebuildsSessions(t *testing.T) {
	root := t.TempDir()
	examples := transcripttest.ExamplesDir(t)
	copyTree(t, filepath.Join(examples, "claude-code"), filepath.Join(root, "claude-code"))
	copyTree(t, fixture216(t), filepath.Join(root, "claude-code", "-Users-gray"))
	w := &ingestRecorder{}
	_, err := ingest.Run(context.Background(), []string{root}, ingest.Options{}, w)
	require.NoError(t, err)

	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := receivertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	cfg := testConfig(root)
	cfg.SessionIdle = 50 * time.Millisecond
	cfg.MaxSessions = 1
	sink := new(consumertest.TracesSink)
	startReceiver(t, cfg, sink, nil, &set)

	require.Eventually(t, func() bool { return len(finalState(sink).sessions) == len(w.sessions) }, waitFor, 10*time.Millisecond)
	assert.GreaterOrEqual(t, metricSum(t, tel, metadata.MetricSessionsEvicted, "", ""), int64(len(w.sessions)-1))
	got := finalState(sink)
	for _, want := range w.sessions {
		g := got.sessions[want.SessionID]
		assert.Equal(t, want.ToolCalls, g.ToolCalls, "session %s", want.SessionID)
		assert.Equal(t, want.Answers, g.Answers, "session %s", want.SessionID)
		assert.Equal(t, want.Turns, g.Turns, "session %s", want.SessionID)
	}

	// The 2.1.6 session, evicted by now, grows by a line: it is re-read,
	// re-analysed, and still has all its calls and answers.
	main := filepath.Join(root, "claude-code", "-Users-gray", session216+".jsonl")
	before := len(withOp(spansOf(sink.AllTraces()), otelconv.OperationInvokeAgent))
	appendFile(t, main, []byte("not json\n"))
	require.Eventually(t, func() bool {
		return len(withOp(spansOf(sink.AllTraces()), otelconv.OperationInvokeAgent)) > before
	}, waitFor, 10*time.Millisecond)
	g := finalState(sink).sessions[session216]
	assert.Equal(t, 26, g.ToolCalls)
	assert.Equal(t, 3, g.Answers)
	for id, n := range countByCallID(spansOf(sink.AllTraces())) {
		assert.LessOrEqual(t, n, 3, "call %s", id)
	}
}

// A session still growing when the collector stops is analysed on the way
// out: Shutdown sends its answers and summary down the pipeline (which the
// collector stops after its receivers), so they are not lost until the next
// start.
func TestShutdownAnalysesOpenSessions(t *testing.T) {
	root := t.TempDir()
	copyTree(t, fixture216(t), filepath.Join(root, "projects", "-p"))
	cfg := testConfig(root)
	cfg.SessionIdle = time.Hour // freshly copied files: never idle in this test
	sink := new(consumertest.TracesSink)
	rcv := startReceiver(t, cfg, sink, nil, nil)

	require.Eventually(t, func() bool { return len(toolSpans(sink)) >= session216Main+session216Sub },
		waitFor, 10*time.Millisecond)
	require.Empty(t, withOp(spansOf(sink.AllTraces()), otelconv.OperationInvokeAgent), "analysed before session_idle")
	require.NoError(t, rcv.Shutdown(context.Background()))

	all := spansOf(sink.AllTraces())
	sessions := withOp(all, otelconv.OperationInvokeAgent)
	require.Len(t, sessions, 1, "the open session is analysed at shutdown")
	assert.Equal(t, int64(26), attrInt(t, sessions[0], otelconv.AttrSessionToolCalls))
	assert.Equal(t, int64(3), attrInt(t, sessions[0], otelconv.AttrSessionAnswers))
	chats := withOp(all, otelconv.OperationChat)
	assert.Len(t, chats, 3)
	for _, c := range chats {
		assert.NotEmpty(t, attrStr(c, otelconv.AttrAnswerRisk), "answer %s has no risk", c.spanID)
	}
}
