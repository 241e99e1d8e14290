package agenttranscriptsreceiver

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/ctxaudit/ctxaudit/collector/ingest"
	"github.com/ctxaudit/ctxaudit/collector/otelconv"
	"github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver/internal/metadata"
	"github.com/ctxaudit/ctxaudit/collector/session"
	"github.com/ctxaudit/ctxaudit/collector/transcript/transcripttest"
	"github.com/ctxaudit/ctxaudit/schema"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

// TestAnswerCutMidMessageIsTakenBack cuts the real 2.1.6 session inside an
// assistant message: line 13 is the text block of msg_01HoxpMDyxfh4Xf3Aoed6f8S,
// line 14 its tool_use block. Paused there for longer than session_idle, the
// session is analysed with that text as its answer, which is all that can be
// known then. Once the rest arrives the message has called a tool, so it was
// never an answer: the later analysis neither counts nor returns it as one,
// sends its retraction, names it as taken back, and ends with what one-shot
// ingest gives for the whole file.
func TestAnswerCutMidMessageIsTakenBack(t *testing.T) {
	const cutAfter, openMessage = 13, "msg_01HoxpMDyxfh4Xf3Aoed6f8S"
	root := t.TempDir()
	project := filepath.Join(root, "projects", "-p")
	copyTree(t, fixture216(t), project)
	main := filepath.Join(project, session216+".jsonl")
	sub := filepath.Join(project, session216, "subagents", "agent-a4d534b.jsonl")
	all, subLines := lines(t, main), lines(t, sub)
	// Both files end with a newline, which lines leaves out.
	all[len(all)-1] = append(all[len(all)-1], '\n')
	subLines[len(subLines)-1] = append(subLines[len(subLines)-1], '\n')
	require.Contains(t, string(all[cutAfter-1]), openMessage)
	require.Contains(t, string(all[cutAfter]), openMessage)
	require.Contains(t, string(all[cutAfter]), `"type":"tool_use"`)
	// The sub-agent runs later in the session (line 21): its file comes with it.
	require.NoError(t, os.Remove(sub))
	writeFile(t, main, all[:cutAfter]...)

	w := &ingestRecorder{}
	_, err := ingest.Run(context.Background(), []string{root}, ingest.Options{}, w)
	require.NoError(t, err)
	require.Len(t, w.answers, 1, "ingest of the cut file takes the open message's text as an answer, as the receiver will")
	require.Equal(t, openMessage, w.answers[0].MessageID)

	core, logs := observer.New(zapcore.InfoLevel)
	set := receivertest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	cfg := testConfig(root)
	cfg.SessionIdle = 50 * time.Millisecond
	sink := new(consumertest.TracesSink)
	startReceiver(t, cfg, sink, nil, &set)
	require.Eventually(t, func() bool {
		_, ok := finalState(sink).answers[openMessage]
		return ok
	}, waitFor, 10*time.Millisecond)
	first := finalState(sink).sessions[session216]
	assert.Equal(t, 1, first.Answers, "the paused session's analysis")

	writeFile(t, sub, subLines...)
	appendFile(t, main, bytes.Join(all[cutAfter:], nil))
	w = &ingestRecorder{}
	_, err = ingest.Run(context.Background(), []string{root}, ingest.Options{}, w)
	require.NoError(t, err)
	require.Len(t, w.sessions, 1)
	want := w.sessions[0]
	require.Equal(t, 3, want.Answers)

	require.Eventually(t, func() bool {
		s := finalState(sink).sessions[session216]
		return s.ToolCalls == want.ToolCalls && s.Answers == want.Answers
	}, waitFor, 10*time.Millisecond, "session %+v, want %d calls, %d answers", finalState(sink).sessions[session216], want.ToolCalls, want.Answers)
	got := finalState(sink)

	for _, a := range w.answers {
		assert.Contains(t, got.answers, a.MessageID)
		assert.NotEqual(t, openMessage, a.MessageID)
	}
	// The later analyses never sent the open message again as an answer:
	// its last chat span takes it back, with the same timestamp (the same
	// row and partition), ranking above every one sent before (the first,
	// and another if the sub-agent file was read on a poll of its own).
	var spans []span
	for _, s := range withOp(spansOf(sink.AllTraces()), otelconv.OperationChat) {
		if s.spanID == otelconv.SpanID(session216, "answer", openMessage) {
			spans = append(spans, s)
		}
	}
	require.GreaterOrEqual(t, len(spans), 2, "chat spans of the open message")
	last := spans[len(spans)-1]
	back := otelconv.AnswerFromAttributes(last.attrs, last.start)
	assert.True(t, back.Retracted, "the last chat span takes the answer back")
	assert.Equal(t, session.RetractedVerdict, back.Verdict)
	for _, sp := range spans[:len(spans)-1] {
		answer := otelconv.AnswerFromAttributes(sp.attrs, sp.start)
		assert.False(t, answer.Retracted)
		assert.True(t, back.Timestamp.Equal(answer.Timestamp), "retraction at %v, answer at %v", back.Timestamp, answer.Timestamp)
		assert.GreaterOrEqual(t, back.Analysis.Records, answer.Analysis.Records, "the retraction's analysis saw at least as much of the session")
	}
	taken := logs.FilterMessage("Answers sent earlier were not answers: their messages went on to call a tool").All()
	require.Len(t, taken, 1)
	assert.Equal(t, session216, taken[0].ContextMap()["session"])
	assert.Equal(t, []any{openMessage}, taken[0].ContextMap()["message_ids"])
	assert.Equal(t, zapcore.WarnLevel, taken[0].Level)
}

// cutSession216 writes the 2.1.6 session under root cut inside the assistant
// message of line 13 (its text block; line 14 is its tool_use block), without
// the sub-agent file, which runs later; rest writes the remainder.
func cutSession216(t *testing.T, root string) (main string, rest func()) {
	t.Helper()
	const cutAfter, openMessage = 13, "msg_01HoxpMDyxfh4Xf3Aoed6f8S"
	project := filepath.Join(root, "projects", "-p")
	copyTree(t, fixture216(t), project)
	main = filepath.Join(project, session216+".jsonl")
	sub := filepath.Join(project, session216, "subagents", "agent-a4d534b.jsonl")
	all, subLines := lines(t, main), lines(t, sub)
	all[len(all)-1] = append(all[len(all)-1], '\n')
	subLines[len(subLines)-1] = append(subLines[len(subLines)-1], '\n')
	require.Contains(t, string(all[cutAfter]), openMessage)
	require.NoError(t, os.Remove(sub))
	writeFile(t, main, all[:cutAfter]...)
	return main, func() {
		writeFile(t, sub, subLines...)
		appendFile(t, main, bytes.Join(all[cutAfter:], nil))
	}
}

// takenBack requires the last chat span sink received for message to take
// its answer back, and the session's last analysis to be one-shot ingest's
// of root.
func takenBack(t *testing.T, sink *consumertest.TracesSink, root, message string) {
	t.Helper()
	w := &ingestRecorder{}
	_, err := ingest.Run(context.Background(), []string{root}, ingest.Options{}, w)
	require.NoError(t, err)
	require.Len(t, w.sessions, 1)
	want := w.sessions[0]
	require.Eventually(t, func() bool {
		s := finalState(sink).sessions[session216]
		return s.ToolCalls == want.ToolCalls && s.Answers == want.Answers
	}, waitFor, 10*time.Millisecond, "session %+v, want %d calls, %d answers", finalState(sink).sessions[session216], want.ToolCalls, want.Answers)
	var chats []schema.Answer
	for _, s := range withOp(spansOf(sink.AllTraces()), otelconv.OperationChat) {
		if s.spanID == otelconv.SpanID(session216, "answer", message) {
			chats = append(chats, otelconv.AnswerFromAttributes(s.attrs, s.start))
		}
	}
	require.NotEmpty(t, chats, "no chat span of %s: its answer, stored before, is never taken back", message)
	back := chats[len(chats)-1]
	assert.True(t, back.Retracted, "the last chat span of %s takes its answer back", message)
	assert.Equal(t, session.RetractedVerdict, back.Verdict)
	// The tables keep the row of highest rank: the retraction must not rank
	// below the answer it takes back.
	backRank, _ := chstore.Rank(&back)
	for _, a := range chats[:len(chats)-1] {
		rank, _ := chstore.Rank(&a)
		assert.GreaterOrEqual(t, backRank, rank, "the retraction (analysis %+v) ranks below the answer (analysis %+v)", back.Analysis, a.Analysis)
	}
}

// An answer the receiver sent before a restart, whose message's tool call
// is read after it, is taken back by the next receiver: the file's
// checkpoint keeps the answer its last analysis returned for its last
// message. Rebuilt from the file alone, the session never held the answer
// again (the parser merges the message with its tool call), and the answer
// row stayed.
func TestAnswerTakenBackAfterARestart(t *testing.T) {
	const openMessage = "msg_01HoxpMDyxfh4Xf3Aoed6f8S"
	root := t.TempDir()
	main, rest := cutSession216(t, root)
	cfg := testConfig(root)
	h, store := withMemoryStorage(cfg)
	cfg.SessionIdle = 50 * time.Millisecond

	first := new(consumertest.TracesSink)
	runUntil(t, cfg, h, first, func() bool {
		cp, ok := store.checkpoint(t, main)
		return ok && cp.AnalyzedLine == cp.Line && cp.OpenAnswer != nil
	})
	cp, _ := store.checkpoint(t, main)
	require.Equal(t, openMessage, cp.OpenAnswer.MessageID)
	require.Contains(t, finalState(first).answers, openMessage, "the paused session's analysis sent the open message as an answer")

	rest()
	second := new(consumertest.TracesSink)
	startReceiver(t, cfg, second, h, nil)
	takenBack(t, second, root, openMessage)
	require.Eventually(t, func() bool {
		cp, _ := store.checkpoint(t, main)
		return cp.OpenAnswer == nil || cp.OpenAnswer.MessageID != openMessage
	}, waitFor, 10*time.Millisecond, "the checkpoint still keeps the answer taken back")
}

// So is an answer of a session evicted (max_sessions) after it was sent,
// when the session grows again.
func TestAnswerTakenBackAfterEviction(t *testing.T) {
	const openMessage = "msg_01HoxpMDyxfh4Xf3Aoed6f8S"
	root := t.TempDir()
	_, rest := cutSession216(t, root)
	cfg := testConfig(root)
	cfg.SessionIdle = 50 * time.Millisecond
	cfg.MaxSessions = 1
	sink := new(consumertest.TracesSink)
	startReceiver(t, cfg, sink, nil, nil)
	require.Eventually(t, func() bool {
		_, ok := finalState(sink).answers[openMessage]
		return ok
	}, waitFor, 10*time.Millisecond)

	// Another session is read: the paused one is evicted.
	other := filepath.Join(root, "projects", "-q", "11111111-0001-4001-8001-000000000001.jsonl")
	writeFile(t, other, lines(t, filepath.Join(transcripttest.ExamplesDir(t), "claude-code", "-Users-dev-acme", filepath.Base(other)))...)
	require.Eventually(t, func() bool {
		_, ok := finalState(sink).sessions["11111111-0001-4001-8001-000000000001"]
		return ok
	}, waitFor, 10*time.Millisecond)

	rest()
	require.NoError(t, os.Remove(other)) // one-shot ingest of root is then the paused session's
	takenBack(t, sink, root, openMessage)
}

// An answer is taken back when its message's tool call is read even if the
// call never gets its result (the harness stopped; or the result's line is
// too long to read): the tool_use line itself says the message was no
// answer. Line 20 of the 2.1.6 session is the text block of
// msg_019SiiKuPg4TsXVmQ7fDS7Ln, line 21 its tool_use; line 22, its result,
// never comes.
func TestAnswerTakenBackWhenItsCallNeverReturns(t *testing.T) {
	const message = "msg_019SiiKuPg4TsXVmQ7fDS7Ln"
	root := t.TempDir()
	project := filepath.Join(root, "projects", "-p")
	main := filepath.Join(project, session216+".jsonl")
	all := lines(t, filepath.Join(fixture216(t), session216+".jsonl"))
	require.Contains(t, string(all[19]), message)
	require.Contains(t, string(all[20]), `"type":"tool_use"`)
	writeFile(t, main, all[:20]...)

	cfg := testConfig(root)
	cfg.SessionIdle = 50 * time.Millisecond
	sink := new(consumertest.TracesSink)
	startReceiver(t, cfg, sink, nil, nil)
	require.Eventually(t, func() bool {
		_, ok := finalState(sink).answers[message]
		return ok
	}, waitFor, 10*time.Millisecond, "the paused session's analysis sends the text as an answer")

	appendFile(t, main, all[20])
	takenBack(t, sink, root, message)
}
