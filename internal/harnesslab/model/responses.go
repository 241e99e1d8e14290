package model

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// responsesRequest is the part of a Responses API request the script needs.
type responsesRequest struct {
	Model string `json:"model"`
	Input []struct {
		Type string `json:"type"`
		Role string `json:"role"`
	} `json:"input"`
	Tools []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tools"`
}

// StartResponses serves the OpenAI Responses API (POST /v1/responses,
// streamed as SSE) from script. The step is the number of function calls
// the request's input already carries (one call per step); requests whose
// tools lack mainTool are side calls.
func StartResponses(ctx context.Context, script Script, mainTool, logPath string) (*Server, error) {
	return start(ctx, logPath, func(s *Server) http.Handler {
		mux := http.NewServeMux()
		mux.HandleFunc("/v1/responses", func(w http.ResponseWriter, r *http.Request) {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			var req responsesRequest
			if err := json.Unmarshal(body, &req); err != nil {
				s.log.write(r.URL.Path, body, "bad json")
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			hasMain, n := false, 0
			for _, t := range req.Tools {
				if t.Name == mainTool {
					hasMain = true
				}
			}
			for _, it := range req.Input {
				if it.Type == "function_call" {
					n++
				}
			}
			step, note := Step{Text: script.SideText}, "side"
			if hasMain {
				step, note = pick(script.Steps, n), fmt.Sprintf("main step %d", n)
			}
			s.log.write(r.URL.String(), body, note)
			writeResponsesSSE(w, fmt.Sprintf("resp_lab%06d", s.next()), step, s)
		})
		mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			s.log.write(r.Method+" "+r.URL.String(), body, "unhandled")
			http.NotFound(w, r)
		})
		return mux
	})
}

func writeResponsesSSE(w http.ResponseWriter, id string, step Step, s *Server) {
	e := newSSE(w)
	e.event("response.created", obj{"type": "response.created", "response": obj{"id": id}})
	var items []obj
	if step.Text != "" || len(step.Calls) == 0 {
		items = append(items, obj{"type": "message", "role": "assistant", "id": s.toolID("msg_lab"),
			"content": []any{obj{"type": "output_text", "text": step.Text}}})
	}
	for _, c := range step.Calls {
		args, _ := json.Marshal(c.Input)
		items = append(items, obj{"type": "function_call", "id": s.toolID("fc_lab"), "name": c.Name,
			"arguments": string(args), "call_id": s.toolID("call_lab")})
	}
	for i, it := range items {
		e.event("response.output_item.added", obj{"type": "response.output_item.added", "output_index": i, "item": it})
		if it["type"] == "message" {
			e.event("response.output_text.delta", obj{"type": "response.output_text.delta", "output_index": i, "content_index": 0, "delta": step.Text})
		}
		e.event("response.output_item.done", obj{"type": "response.output_item.done", "output_index": i, "item": it})
	}
	e.event("response.completed", obj{"type": "response.completed", "response": obj{"id": id, "usage": obj{
		"input_tokens": 100, "input_tokens_details": obj{"cached_tokens": 0},
		"output_tokens": 20, "output_tokens_details": obj{"reasoning_tokens": 0}, "total_tokens": 120}}})
}
