package model

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Server is a scripted model server on a loopback port.
type Server struct {
	URL string

	srv *http.Server
	ln  net.Listener
	log *requestLog
	wg  sync.WaitGroup
	mu  sync.Mutex
	seq int
}

// Close stops the server and closes its request log.
func (s *Server) Close() error {
	err := s.srv.Close()
	s.wg.Wait()
	if lerr := s.log.close(); err == nil {
		err = lerr
	}
	return err
}

func (s *Server) next() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return s.seq
}

func start(ctx context.Context, logPath string, h func(s *Server) http.Handler) (*Server, error) {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("model server: %w", err)
	}
	l, err := openRequestLog(logPath)
	if err != nil {
		ln.Close()
		return nil, err
	}
	s := &Server{URL: "http://" + ln.Addr().String(), ln: ln, log: l}
	s.srv = &http.Server{Handler: h(s)}
	s.wg.Add(1)
	go func() { defer s.wg.Done(); _ = s.srv.Serve(ln) }()
	return s, nil
}

// anthropicRequest is the part of a Messages API request the script needs.
type anthropicRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

// StartAnthropic serves the Anthropic Messages API (POST /v1/messages,
// streaming or not) from script on a free loopback port. mainTool names a
// tool only the main agent loop offers (e.g. "Bash"); requests without it
// are side calls.
func StartAnthropic(ctx context.Context, script Script, mainTool, logPath string) (*Server, error) {
	return start(ctx, logPath, func(s *Server) http.Handler {
		mux := http.NewServeMux()
		mux.HandleFunc("/v1/messages", func(w http.ResponseWriter, r *http.Request) {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			var req anthropicRequest
			if err := json.Unmarshal(body, &req); err != nil {
				s.log.write(r.URL.Path, body, "bad json")
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			step, note := anthropicStep(script, req, mainTool)
			s.log.write(r.URL.String(), body, note)
			if step.Delay > 0 {
				select {
				case <-time.After(step.Delay):
				case <-r.Context().Done():
					return
				}
			}
			id := fmt.Sprintf("msg_lab%06d", s.next())
			if req.Stream {
				writeAnthropicSSE(w, id, req.Model, step, s)
				return
			}
			writeAnthropicJSON(w, id, req.Model, step, s)
		})
		mux.HandleFunc("/v1/messages/count_tokens", func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			s.log.write(r.URL.Path, body, "count_tokens")
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"input_tokens":1000}`)
		})
		mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			s.log.write(r.Method+" "+r.URL.String(), body, "unhandled")
			http.NotFound(w, r)
		})
		return mux
	})
}

func anthropicStep(script Script, req anthropicRequest, mainTool string) (Step, string) {
	hasMain := false
	for _, t := range req.Tools {
		if t.Name == mainTool {
			hasMain = true
		}
	}
	if !hasMain {
		return Step{Text: script.SideText}, "side"
	}
	n := 0
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			n++
		}
	}
	if script.SubMarker != "" && len(req.Messages) > 0 && strings.Contains(string(req.Messages[0].Content), script.SubMarker) {
		return pick(script.SubSteps, n), fmt.Sprintf("sub step %d", n)
	}
	return pick(script.Steps, n), fmt.Sprintf("main step %d", n)
}

type sseWriter struct {
	w  http.ResponseWriter
	fl http.Flusher
}

func (e sseWriter) event(name string, data any) {
	b, _ := json.Marshal(data)
	if name != "" {
		fmt.Fprintf(e.w, "event: %s\n", name)
	}
	fmt.Fprintf(e.w, "data: %s\n\n", b)
	if e.fl != nil {
		e.fl.Flush()
	}
}

func newSSE(w http.ResponseWriter) sseWriter {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	return sseWriter{w: w, fl: fl}
}

type obj = map[string]any

func (s *Server) toolID(prefix string) string { return fmt.Sprintf("%s%06d", prefix, s.next()) }

func anthropicBlocks(step Step, s *Server) []obj {
	var blocks []obj
	if step.Text != "" || len(step.Calls) == 0 {
		blocks = append(blocks, obj{"type": "text", "text": step.Text})
	}
	for _, c := range step.Calls {
		in := c.Input
		if in == nil {
			in = obj{}
		}
		blocks = append(blocks, obj{"type": "tool_use", "id": s.toolID("toolu_lab"), "name": c.Name, "input": in})
	}
	return blocks
}

func stopReason(step Step) string {
	if len(step.Calls) > 0 {
		return "tool_use"
	}
	return "end_turn"
}

func writeAnthropicSSE(w http.ResponseWriter, id, model string, step Step, s *Server) {
	e := newSSE(w)
	usage := obj{"input_tokens": step.inputTokens(), "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	e.event("message_start", obj{"type": "message_start", "message": obj{
		"id": id, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": usage}})
	for i, b := range anthropicBlocks(step, s) {
		switch b["type"] {
		case "text":
			e.event("content_block_start", obj{"type": "content_block_start", "index": i, "content_block": obj{"type": "text", "text": ""}})
			e.event("content_block_delta", obj{"type": "content_block_delta", "index": i, "delta": obj{"type": "text_delta", "text": b["text"]}})
		case "tool_use":
			in, _ := json.Marshal(b["input"])
			e.event("content_block_start", obj{"type": "content_block_start", "index": i, "content_block": obj{"type": "tool_use", "id": b["id"], "name": b["name"], "input": obj{}}})
			e.event("content_block_delta", obj{"type": "content_block_delta", "index": i, "delta": obj{"type": "input_json_delta", "partial_json": string(in)}})
		}
		e.event("content_block_stop", obj{"type": "content_block_stop", "index": i})
	}
	e.event("message_delta", obj{"type": "message_delta", "delta": obj{"stop_reason": stopReason(step), "stop_sequence": nil}, "usage": obj{"output_tokens": 20}})
	e.event("message_stop", obj{"type": "message_stop"})
}

func writeAnthropicJSON(w http.ResponseWriter, id, model string, step Step, s *Server) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(obj{
		"id": id, "type": "message", "role": "assistant", "model": model,
		"content": anthropicBlocks(step, s), "stop_reason": stopReason(step), "stop_sequence": nil,
		"usage": obj{"input_tokens": step.inputTokens(), "output_tokens": 20},
	})
}
