package otelconv

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ctxaudit/ctxaudit/collector/session"
	"github.com/ctxaudit/ctxaudit/schema"
)

// Rows are the records a batch of telemetry carries for the ctxaudit
// tables, read by the rules the exporter stores them by. Kept in one place
// so that tests of every path (ingest against spans, the receiver against
// ingest) read spans exactly as the exporter does.
type Rows struct {
	Sessions []schema.Session
	Calls    []schema.ToolCall
	Answers  []schema.Answer
	// NotAnswers are the messages the sessions' emitters learned not to be
	// answers (AttrSessionNotAnswers), with the analysis that learned it:
	// an answer stored for one is to be taken back, ranked by it.
	NotAnswers []session.NotAnswers
	// Dropped counts records that name no session, call or message and
	// cannot be stored.
	Dropped int
}

// AddSpan reads sp, with its resource's attributes, into r: an execute_tool
// span is a call (unless a processor holds it for its session's analysis,
// which writes the row), a chat span an answer only with a ctxaudit verdict
// or retraction, an invoke_agent span a session only with its counts.
func (r *Rows) AddSpan(sp ptrace.Span, res pcommon.Map) {
	attrs := sp.Attributes()
	switch Operation(attrs) {
	case OperationExecuteTool:
		if AnalysisPending(attrs) {
			// A processor holds the call: its row comes with the session's
			// analysis, written once. The span carries nothing else stored.
			return
		}
		c := ToolCallFromAttributes(attrs, res, sp.StartTimestamp().AsTime())
		c.IsError = c.IsError || SpanFailed(sp)
		if c.CallID == "" {
			c.CallID = sp.SpanID().String()
		}
		r.AddCall(c)
	case OperationChat:
		// Only chat spans that carry a ctxaudit answer verdict (or take an
		// answer back) are answers; plain model-call spans from other
		// instrumentation are not.
		_, verdict := attrs.Get(AttrAnswerRisk)
		_, retraction := attrs.Get(AttrAnswerRetracted)
		if !verdict && !retraction {
			return
		}
		a := AnswerFromAttributes(attrs, sp.StartTimestamp().AsTime())
		if a.SessionID == "" || a.MessageID == "" {
			r.Dropped++
			return
		}
		r.Answers = append(r.Answers, a)
	case OperationInvokeAgent:
		if _, ok := attrs.Get(AttrSessionToolCalls); !ok {
			return
		}
		s := SessionFromAttributes(attrs, sp.StartTimestamp().AsTime(), sp.EndTimestamp().AsTime())
		if s.SessionID == "" {
			r.Dropped++
			return
		}
		r.Sessions = append(r.Sessions, s)
		if ids := stringSlice(attrs, AttrSessionNotAnswers); len(ids) > 0 {
			r.NotAnswers = append(r.NotAnswers, session.NotAnswers{SessionID: s.SessionID, MessageIDs: ids, By: s.Analysis})
		}
	}
}

// AddTraces reads every span of td into r.
func (r *Rows) AddTraces(td ptrace.Traces) {
	EachSpan(td, func(res pcommon.Map, _ string, sp ptrace.Span) { r.AddSpan(sp, res) })
}

// AddCall adds a call record, or counts it dropped when it names no
// session, call or tool.
func (r *Rows) AddCall(c schema.ToolCall) {
	if c.SessionID == "" || c.CallID == "" || c.Tool == "" {
		r.Dropped++
		return
	}
	if c.Kind == "" {
		// Not analysed (no ctxaudit processor in the pipeline): store what is
		// known and say so, rather than claiming "none".
		c.Kind = schema.KindUnknown
	}
	r.Calls = append(r.Calls, c)
}
