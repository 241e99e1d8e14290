package model

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// sseData returns the data payloads of an SSE response, in order.
func sseData(t *testing.T, resp *http.Response) []map[string]any {
	t.Helper()
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	var out []map[string]any
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var m map[string]any
			if err := json.Unmarshal([]byte(d), &m); err != nil {
				t.Fatalf("bad event %q: %v", d, err)
			}
			out = append(out, m)
		}
	}
	return out
}

func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

var script = Script{
	Steps: []Step{
		{Calls: []ToolCall{{Name: "Bash", Input: map[string]any{"command": "cat big.txt"}}}},
		{Text: "There is no such line."},
	},
	SideText: "digest",
}

func TestAnthropicPlaysTheScript(t *testing.T) {
	s, err := StartAnthropic(context.Background(), script, "Bash", filepath.Join(t.TempDir(), "req.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// First request of the main loop: the tool call, streamed as JSON deltas.
	ev := sseData(t, post(t, s.URL+"/v1/messages?beta=true", `{"model":"m","stream":true,"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"go"}]}`))
	var input string
	var stop any
	for _, e := range ev {
		if d, ok := e["delta"].(map[string]any); ok {
			if p, ok := d["partial_json"].(string); ok {
				input += p
			}
			if r, ok := d["stop_reason"]; ok {
				stop = r
			}
		}
	}
	if ev[0]["type"] != "message_start" || ev[len(ev)-1]["type"] != "message_stop" {
		t.Fatalf("stream does not start and stop as a message: %v … %v", ev[0]["type"], ev[len(ev)-1]["type"])
	}
	if input != `{"command":"cat big.txt"}` || stop != "tool_use" {
		t.Fatalf("tool input %q, stop %v", input, stop)
	}
	// Second request carries one assistant message: the final answer.
	ev = sseData(t, post(t, s.URL+"/v1/messages", `{"model":"m","stream":true,"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"go"},{"role":"assistant","content":[]},{"role":"user","content":[]}]}`))
	var text string
	for _, e := range ev {
		if d, ok := e["delta"].(map[string]any); ok && d["type"] == "text_delta" {
			text += d["text"].(string)
		}
	}
	if text != "There is no such line." {
		t.Fatalf("answer %q", text)
	}
	// A request without the main tool is a side call (title, digest).
	resp := post(t, s.URL+"/v1/messages", `{"model":"m","messages":[{"role":"user","content":"summarise"}]}`)
	defer resp.Body.Close()
	var msg struct {
		Content []struct{ Text string } `json:"content"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil || len(msg.Content) != 1 || msg.Content[0].Text != "digest" {
		t.Fatalf("side call: %+v %v", msg, err)
	}
}

func TestResponsesPlaysTheScript(t *testing.T) {
	sc := script
	sc.Steps = []Step{{Calls: []ToolCall{{Name: "exec_command", Input: map[string]any{"cmd": "ls"}}}}, {Text: "done"}}
	s, err := StartResponses(context.Background(), sc, "exec_command", "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ev := sseData(t, post(t, s.URL+"/v1/responses", `{"model":"m","tools":[{"type":"function","name":"exec_command"}],"input":[{"type":"message","role":"user"}]}`))
	var call map[string]any
	for _, e := range ev {
		if e["type"] == "response.output_item.done" {
			call = e["item"].(map[string]any)
		}
	}
	if call["type"] != "function_call" || call["name"] != "exec_command" || call["arguments"] != `{"cmd":"ls"}` || call["call_id"] == "" {
		t.Fatalf("function call item %v", call)
	}
	if last := ev[len(ev)-1]; last["type"] != "response.completed" {
		t.Fatalf("last event %v, want response.completed", last["type"])
	}
	ev = sseData(t, post(t, s.URL+"/v1/responses", `{"model":"m","tools":[{"type":"function","name":"exec_command"}],"input":[{"type":"message"},{"type":"function_call"},{"type":"function_call_output"}]}`))
	for _, e := range ev {
		if e["type"] == "response.output_item.done" {
			item := e["item"].(map[string]any)
			content := item["content"].([]any)[0].(map[string]any)
			if item["type"] != "message" || content["text"] != "done" {
				t.Fatalf("final item %v", item)
			}
			return
		}
	}
	t.Fatal("no final message")
}
