// Package report renders postmortems: for one session, or one answer in it,
// the timeline of tool calls with what of each output entered the model's
// context and whether the model was told and went back, each answer's risk
// and reasons, the verdict sentence, and, given the text a right answer
// contained, which calls had it in the part the model never saw.
//
// The package is pure: the CLI reads the records from ClickHouse and hands
// them over; rendering never does I/O beyond the io.Writer it is given. The
// JSON form is the contract of docs/design.md §8.4; every form numbers turns as the
// records do, from 0 (the JSON's "turn"), so "Turn 0" in the text is
// "turn": 0 in the JSON and turn = 0 in SQL; the text form is for terminals and
// the Markdown form is ready to paste into a postmortem document.
package report

import (
	"github.com/ctxaudit/ctxaudit/collector/analysis"
	"github.com/ctxaudit/ctxaudit/schema"
)

// Postmortem is one rendered postmortem. Its JSON encoding is `ctxaudit
// postmortem --format json`: the schema types marshal unknown sizes as null.
type Postmortem struct {
	SessionID string         `json:"session_id"`
	Source    schema.Harness `json:"source"`
	Session   schema.Session `json:"session"`
	// SessionStored is false when the store holds no row for the session
	// yet (the collector writes it with the session's analysis): Session
	// then summarises the records at hand (SessionFromRecords).
	SessionStored bool `json:"session_stored"`
	// SessionRecounted is true when the stored session row counts fewer
	// calls or answers than the store holds for the whole session: a
	// collector that dropped the session's buffer (max_sessions,
	// max_calls_per_session) wrote the row of what it held first, and the
	// later buffer's row, partial, ranks below it (docs/design.md §10.3).
	// Session then counts every stored record instead, by the rules
	// analysis counts by; its turns are at least the row's.
	SessionRecounted bool `json:"session_recounted"`
	// Answer is the message id the postmortem is scoped to (--answer), or
	// empty for the whole session.
	Answer string `json:"answer,omitempty"`
	// Answers are the answers in scope, in time order, each with its
	// verdict sentence rebuilt from the stored rows.
	Answers []schema.Answer `json:"answers"`
	// ToolCalls are the calls in scope (the answer's turn, or the whole
	// session), in call order.
	ToolCalls []schema.ToolCall `json:"tool_calls"`
	// Expect is set with --expect.
	Expect *Expect `json:"expect,omitempty"`
	// Order is what is known of the order of all the session's calls (see
	// Input.Order): with Ordered false, a call's followed_up false means
	// none known, not none, unless its row knows it (FollowUpExact).
	Order analysis.CallOrder `json:"call_order"`
}

// Input is what the caller read for one postmortem.
type Input struct {
	Session schema.Session
	// Calls in call order and Answers in time order, already scoped.
	Calls   []schema.ToolCall
	Answers []schema.Answer
	// AnswerID is the --answer scope, or empty.
	AnswerID string
	// SessionStored: Session is the stored row, not SessionFromRecords'.
	SessionStored bool
	// Order is what is known of the order of all the session's calls, in
	// scope or not (analysis.OrderOf over them): a call outside the scope
	// without a time changes what the verdicts and the follow-ups can say,
	// as it did when the session was analysed. The zero value knows
	// nothing and hedges every follow-up not found that the call's own
	// row does not know (schema.ToolCall.FollowUpExact).
	Order analysis.CallOrder
}

// Build assembles a postmortem and rebuilds each answer's verdict sentence
// with the analysis package's builder, from the stored calls.
func Build(in Input) Postmortem {
	pm := Postmortem{
		SessionID:     in.Session.SessionID,
		Source:        in.Session.Source,
		Session:       in.Session,
		SessionStored: in.SessionStored,
		Answer:        in.AnswerID,
		Order:         in.Order,
		Answers:       make([]schema.Answer, len(in.Answers)),
		ToolCalls:     in.Calls,
	}
	if pm.ToolCalls == nil {
		pm.ToolCalls = []schema.ToolCall{}
	}
	if in.SessionStored && in.AnswerID == "" {
		pm.Session, pm.SessionRecounted = analysis.Recount(in.Session, in.Calls, in.Answers)
	}
	byID := make(map[string]*schema.ToolCall, len(in.Calls))
	for i := range in.Calls {
		byID[in.Calls[i].CallID] = &in.Calls[i]
	}
	for i, a := range in.Answers {
		a.InputCallIDs = nonNil(a.InputCallIDs)
		a.IncompleteInputs = nonNil(a.IncompleteInputs)
		a.Reasons = nonNil(a.Reasons)
		if a.ReasonCalls == nil {
			a.ReasonCalls = map[string][]string{}
		}
		// The verdict only looks up the answer's own inputs; handing it
		// just those keeps a session of many answers and calls linear.
		a.Verdict = analysis.VerdictOf(a, inputsOf(a, byID), in.Order)
		pm.Answers[i] = a
	}
	return pm
}

// inputsOf returns the stored calls an answer names: its inputs and the
// calls behind its reasons.
func inputsOf(a schema.Answer, byID map[string]*schema.ToolCall) []schema.ToolCall {
	seen := map[string]bool{}
	var out []schema.ToolCall
	add := func(ids []string) {
		for _, id := range ids {
			if c, ok := byID[id]; ok && !seen[id] {
				seen[id] = true
				out = append(out, *c)
			}
		}
	}
	add(a.InputCallIDs)
	add(a.IncompleteInputs)
	for _, reason := range a.Reasons {
		add(a.ReasonCalls[reason])
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
