package report

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/ctxaudit/ctxaudit/schema"
)

// WriteJSON renders pm as one indented JSON object (docs/design.md §8.4). HTML
// characters stay as written: the texts are tool output, read by tools.
func WriteJSON(w io.Writer, pm *Postmortem) error {
	view := postmortemJSON{Postmortem: pm, ToolCalls: make([]callJSON, len(pm.ToolCalls))}
	for i := range pm.ToolCalls {
		view.ToolCalls[i] = newCallJSON(&pm.ToolCalls[i])
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
// (a call as read says nothing about what the model did later). Its fields
// hide the embedded call's of the same name.
type callJSON struct {
	*schema.ToolCall
	Analysed   bool  `json:"analysed"`
	FollowedUp *bool `json:"followed_up"`
	Searched   *bool `json:"searched"`
}

func newCallJSON(c *schema.ToolCall) callJSON {
	out := callJSON{ToolCall: c, Analysed: c.Analysis.Done}
	if c.Analysis.Done {
		out.FollowedUp, out.Searched = &c.FollowedUp, &c.Searched
	}
	return out
}
