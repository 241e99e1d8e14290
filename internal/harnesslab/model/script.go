// Package model holds the scripted model servers of the harness lab: HTTP
// servers on loopback that speak a model provider's streaming wire protocol
// (Anthropic Messages SSE, OpenAI Responses SSE) and answer each request of a
// harness's agent loop with the next step of a scenario's script, so a real
// harness runs real tools on a deterministic conversation.
package model

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"
)

// ToolCall is one tool call the scripted model makes: the harness's own tool
// name and its input object.
type ToolCall struct {
	Name  string         `json:"name"`
	Input map[string]any `json:"input"`
}

// Step is one assistant message of the main conversation: tool calls, or
// (when Calls is empty) the final answer Text.
type Step struct {
	Text  string     `json:"text,omitempty"`
	Calls []ToolCall `json:"calls,omitempty"`
	// Delay holds the answer back, for a harness that prints how long a
	// step took: a duration of a fixed number of digits keeps the length
	// of the text it is printed in, and so the recording, the same.
	Delay time.Duration `json:"delay,omitempty"`
	// InputTokens is the prompt size the answer's usage reports (default
	// 100): how full the harness believes its context is.
	InputTokens int `json:"input_tokens,omitempty"`
}

func (s Step) inputTokens() int {
	if s.InputTokens > 0 {
		return s.InputTokens
	}
	return 100
}

// Script is what the model says. Steps are played in order: the n-th request
// of the main agent loop (counted by the assistant messages it already
// carries) gets Steps[n]; past the end it gets the last step's text.
// SideText answers every request that is not the main loop (title
// generation, a WebFetch digest, summaries): the harnesses make such calls
// without tools.
type Script struct {
	Steps    []Step `json:"steps"`
	SideText string `json:"side_text"`
	// SubSteps, when set, play a sub-agent's loop: a request whose first
	// user message contains SubMarker gets SubSteps by the same counting.
	SubMarker string `json:"sub_marker,omitempty"`
	SubSteps  []Step `json:"sub_steps,omitempty"`
}

// step returns the step for a request that already carries n assistant
// messages.
func pick(steps []Step, n int) Step {
	if len(steps) == 0 {
		return Step{Text: "done"}
	}
	if n < len(steps) {
		return steps[n]
	}
	return Step{Text: steps[len(steps)-1].Text, InputTokens: steps[len(steps)-1].InputTokens}
}

// requestLog appends every request body the server received to a JSONL file,
// so a scenario's wire traffic can be inspected after a run.
type requestLog struct {
	mu sync.Mutex
	f  *os.File
}

func openRequestLog(path string) (*requestLog, error) {
	if path == "" {
		return &requestLog{}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("request log: %w", err)
	}
	return &requestLog{f: f}, nil
}

func (l *requestLog) write(path string, body []byte, note string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return
	}
	raw := json.RawMessage(body)
	if !json.Valid(body) {
		raw, _ = json.Marshal(string(body))
	}
	line, _ := json.Marshal(struct {
		Path string          `json:"path"`
		Note string          `json:"note"`
		Body json.RawMessage `json:"body"`
	}{path, note, raw})
	_, _ = l.f.Write(append(line, '\n'))
}

func (l *requestLog) close() error {
	if l.f == nil {
		return nil
	}
	return l.f.Close()
}
