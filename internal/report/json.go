package report

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/ctxaudit/ctxaudit/collector/analysis"
	"github.com/ctxaudit/ctxaudit/schema"
)

// WriteJSON renders pm as one indented JSON object (docs/design.md §8.4). HTML
// characters stay as written: the texts are tool output, read by tools.
func WriteJSON(w io.Writer, pm *Postmortem) error {
	view := postmortemJSON{Postmortem: pm, ToolCalls: make([]callJSON, len(pm.ToolCalls))}
	for i := range pm.ToolCalls {
		view.ToolCalls[i] = newCallJSON(&pm.ToolCalls[i], pm.Order)
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(view); err != nil {
		return fmt.Errorf("write postmortem JSON: %w", err)
	}
	return nil
}

// postmortemJSON is pm with each call as callJSON; its tool_calls hides
// the embedded Postmortem's.
type postmortemJSON struct {
	*Postmortem
	ToolCalls []callJSON `json:"tool_calls"`
}

// callJSON is a call as the postmortem JSON gives it: with analysed, and
// followed_up and searched null until session analysis has judged the call
// (a call as read says nothing about what the model did later), followed_up
// null too where it is not known — the analysis found it not known
// (FollowUpUnknown), or the session has a call nothing orders and the row
// does not know its "not followed up" (analysis.CallOrder.NeverFollowedUp)
// — and its timestamp null when not known, as schema.ToolCall's own JSON
// gives it. Its fields hide the embedded call's of the same name; the call is
// embedded as plainCall, whose JSON is its fields', so that ToolCall's
// MarshalJSON is not promoted over these.
type callJSON struct {
	*plainCall
	Timestamp  *time.Time `json:"timestamp"`
	Analysed   bool       `json:"analysed"`
	FollowedUp *bool      `json:"followed_up"`
	Searched   *bool      `json:"searched"`
}

type plainCall schema.ToolCall

func newCallJSON(c *schema.ToolCall, order analysis.CallOrder) callJSON {
	out := callJSON{plainCall: (*plainCall)(c), Timestamp: schema.TimeOrNil(c.Timestamp), Analysed: c.Analysis.Done}
	if c.Analysis.Done {
		out.FollowedUp, out.Searched = c.FollowedUpOrNil(), &c.Searched
		if !c.FollowedUp && analysis.Truncated(c) && !order.NeverFollowedUp(c) {
			out.FollowedUp = nil
		}
	}
	return out
}
