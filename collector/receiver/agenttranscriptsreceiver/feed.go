package agenttranscriptsreceiver // import "github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver"

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/ctxaudit/ctxaudit/collector/ingest"
	"github.com/ctxaudit/ctxaudit/collector/session"
	"github.com/ctxaudit/ctxaudit/collector/transcript"
)

// A parser's records go to the sink its Feed or Flush call is given; which
// sink says what the records are, so nothing about them is kept between
// calls.

// rebuildSink takes the records of lines read before (in this process or
// the previous one), fed again to rebuild a parser: they reach the session
// but are not emitted again, and their skips were counted when first read.
func (r *agentReceiver) rebuildSink(f *trackedFile) transcript.Emit {
	return r.sessionSink(f, nil, nil, false)
}

// readSink takes the records of new lines: calls are emitted into b as
// read, and skipped lines are counted and logged.
func (r *agentReceiver) readSink(f *trackedFile, b *batch) transcript.Emit {
	return r.sessionSink(f, b, r.skipped, false)
}

// flushSink takes what a parser flushed because its session went idle: its
// calls are new and emitted into b, but its skips (calls still waiting for
// a result) are not final and are not counted. Its answer is the file's
// last message's, which a later line may still prove no answer: it is kept
// as f.flushed.
func (r *agentReceiver) flushSink(f *trackedFile, b *batch) transcript.Emit {
	return r.sessionSink(f, b, nil, true)
}

// sessionSink hands calls and answers to their session, emits the calls
// into b when there is one, and gives skips to onSkip when there is one.
func (r *agentReceiver) sessionSink(f *trackedFile, b *batch, onSkip func(*trackedFile, *transcript.Skip), flush bool) transcript.Emit {
	return func(rec transcript.Record) {
		switch v := rec.(type) {
		case *transcript.Call:
			r.addCall(f, v, b)
		case *transcript.NotAnswer:
			r.notAnswer(f, v)
		case *transcript.Unpaired:
			r.unpaired(f, v)
		case *transcript.Answer:
			r.addAnswer(f, v)
			if flush {
				a := session.Retractable(v.Answer)
				f.flushed = &a
			}
		case *transcript.Skip:
			if onSkip != nil {
				onSkip(f, v)
			}
		}
	}
}

// addCall gives a call to its session and, with a batch, emits it as read.
func (r *agentReceiver) addCall(f *trackedFile, v *transcript.Call, b *batch) {
	if v.Call.SessionID == "" {
		v.Call.SessionID = transcript.SessionIDFromPath(f.Path)
	}
	s := r.session(v.Call.SessionID)
	c := s.AddCall(v.Call, v.SpawnedAgentID, b != nil)
	if b != nil {
		b.addCall(c)
		r.tel.ToolCall(context.Background(), string(c.Kind), string(f.format))
	}
}

// notAnswer takes back an answer the session holds, or returned, for a
// message a later line showed to call a tool.
func (r *agentReceiver) notAnswer(f *trackedFile, v *transcript.NotAnswer) {
	if v.SessionID == "" {
		v.SessionID = transcript.SessionIDFromPath(f.Path)
	}
	r.session(v.SessionID).NotAnswer(v.MessageID)
}

// unpaired tells the session of a call read without its result, whose turn
// places a sub-agent whose metadata names the call.
func (r *agentReceiver) unpaired(f *trackedFile, v *transcript.Unpaired) {
	if v.SessionID == "" {
		v.SessionID = transcript.SessionIDFromPath(f.Path)
	}
	r.session(v.SessionID).Unpaired(v)
}

func (r *agentReceiver) addAnswer(f *trackedFile, v *transcript.Answer) {
	if v.Answer.SessionID == "" {
		v.Answer.SessionID = transcript.SessionIDFromPath(f.Path)
	}
	r.session(v.Answer.SessionID).AddAnswer(v.Answer)
}

// skipped counts and logs a line that gave no record. Logged at Warn so the
// default level names file:line; the collector's log sampling
// (service.telemetry.logs.sampling) bounds how many of these a flood of bad
// lines writes.
func (r *agentReceiver) skipped(f *trackedFile, v *transcript.Skip) {
	r.tel.LineSkipped(context.Background(), v.Reason)
	r.logger.Warn("Skipped transcript line", zap.String("at", fmt.Sprintf("%s:%d", f.Path, v.Line)),
		zap.String("path", f.Path), zap.Int64("line", v.Line),
		zap.String("reason", v.Reason), zap.String("detail", v.Detail))
}

// snapshot records the file's session metadata and the session it belongs to.
func (r *agentReceiver) snapshot(f *trackedFile) {
	if f.parser == nil {
		return
	}
	f.meta = f.parser.Session()
	if a, ok := f.parser.(interface{ AgentID() string }); ok {
		f.agentID = a.AgentID()
	}
	sid := f.meta.SessionID
	if sid == "" {
		sid = transcript.SessionIDFromPath(f.Path)
	}
	r.setSession(f, sid)
}

// savedRefused reports a saved output of f that the resolver would not read
// (a symlink, a FIFO, a file outside the session's tool-results folder):
// counted and logged when its line is read for the first time.
func (r *agentReceiver) savedRefused(f *trackedFile) func(*ingest.RefusalError) {
	return func(e *ingest.RefusalError) {
		// Lines up to the checkpoint were read (and reported) before a
		// restart; a line is reported once however often it is re-parsed.
		line := f.Read.Line + 1
		if line <= f.Committed.Line || line <= f.refusedUpTo {
			return
		}
		f.refusedUpTo = line
		r.tel.SavedRefused(context.Background(), e.Reason)
		r.logger.Warn("Refused to read a saved tool output", zap.String("at", fmt.Sprintf("%s:%d", f.Path, line)),
			zap.String("path", f.Path), zap.Int64("line", line),
			zap.String("ref", e.Ref), zap.String("reason", e.Reason), zap.String("detail", e.Detail))
	}
}
