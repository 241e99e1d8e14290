// Package agentsim is an example instrumented agent harness: it reports its
// tool calls as OpenTelemetry GenAI execute_tool spans carrying the ctxaudit.*
// attributes (docs/design.md §6.3), the way a harness author would instrument their
// own agent with go.opentelemetry.io/otel. It doubles as the test client of
// the collector's OTLP path.
package agentsim

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	otellog "go.opentelemetry.io/otel/log"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// Attribute keys a harness sets: the GenAI ones from the semantic
// conventions, the ctxaudit.* ones (docs/attributes.md) and Claude Code's
// written out, so the example reads on its own.
const (
	attrToolName      = semconv.GenAIToolNameKey
	attrToolCallID    = semconv.GenAIToolCallIDKey
	attrConversation  = semconv.GenAIConversationIDKey
	attrArguments     = semconv.GenAIToolCallArgumentsKey
	attrResult        = semconv.GenAIToolCallResultKey
	attrOutputMsgs    = semconv.GenAIOutputMessagesKey
	attrModel         = semconv.GenAIRequestModelKey
	attrSource        = "ctxaudit.source"
	attrTurn          = "ctxaudit.turn"
	attrOrigBytes     = "ctxaudit.output.original.bytes"
	attrOrigLines     = "ctxaudit.output.original.lines"
	attrCtxBytes      = "ctxaudit.output.context.bytes"
	attrCtxLines      = "ctxaudit.output.context.lines"
	attrTruncated     = "ctxaudit.output.truncated"
	attrKind          = "ctxaudit.output.truncation.kind"
	attrStrategy      = "ctxaudit.output.strategy"
	attrShownStart    = "ctxaudit.output.shown.start"
	attrShownEnd      = "ctxaudit.output.shown.end"
	attrShownUnit     = "ctxaudit.output.shown.unit"
	attrTotal         = "ctxaudit.output.total"
	attrReason        = "ctxaudit.output.reason"
	attrNext          = "ctxaudit.output.next"
	attrSavedRef      = "ctxaudit.output.saved_ref"
	attrEventName     = "event.name"
	attrCCSession     = "session.id"
	attrCCToolName    = "tool_name"
	attrCCResultBytes = "tool_result_size_bytes"
)

// Call is one tool call the simulated agent makes.
type Call struct {
	ID    string
	Tool  string
	Args  string
	Attrs []attribute.KeyValue
}

// Session is what one run emits.
type Session struct {
	ID     string
	Source string // harness name
	Model  string
	Calls  []Call
	Answer string
}

// Scenario returns a session of four calls that exercise every path:
//   - read-1: a Read the harness itself reports exactly (ctxaudit.* figures):
//     the first 2,000 of 5,000 lines, explicitly paginated;
//   - shell-1: a Codex-style shell output carrying only
//     gen_ai.tool.call.result, whose head+tail notice the collector must detect;
//   - grep-1: a complete search result (nothing cut);
//   - fetch-1: a web fetch summarised from 156,000 bytes, silently.
//
// then an answer that claims something does not exist.
func Scenario(sessionID string) Session {
	var body strings.Builder
	body.WriteString("Exit code: 0\nWall time: 0.4 seconds\nTotal output lines: 500\nOutput:\n")
	for i := 1; i <= 128; i++ {
		fmt.Fprintf(&body, "line %d\n", i)
	}
	body.WriteString("[... omitted 244 of 500 lines ...]\n\n")
	for i := 373; i <= 500; i++ {
		fmt.Fprintf(&body, "line %d\n", i)
	}
	return Session{
		ID: sessionID, Source: "generic", Model: "example-model-1",
		Calls: []Call{
			{ID: "read-1", Tool: "Read", Args: `{"file_path":"/srv/app/config.md"}`, Attrs: []attribute.KeyValue{
				attribute.Int64(attrOrigBytes, 120_000), attribute.Int64(attrOrigLines, 5000),
				attribute.Int64(attrCtxBytes, 48_000), attribute.Int64(attrCtxLines, 2000),
				attribute.Bool(attrTruncated, true), attribute.String(attrKind, "explicit"),
				attribute.String(attrStrategy, "paginated"), attribute.Int64(attrShownStart, 1),
				attribute.Int64(attrShownEnd, 2000), attribute.String(attrShownUnit, "lines"),
				attribute.Int64(attrTotal, 5000), attribute.String(attrReason, "cap_lines"),
				attribute.String(attrNext, "Read with offset=2001 to continue"),
			}},
			{ID: "shell-1", Tool: "shell_command", Args: `{"command":"seq 500"}`, Attrs: []attribute.KeyValue{
				attribute.String(attrSource, "codex"), attrResult.String(body.String()),
			}},
			{ID: "grep-1", Tool: "Grep", Args: `{"pattern":"timeout","path":"/srv/app"}`, Attrs: []attribute.KeyValue{
				attribute.Int64(attrOrigBytes, 42), attribute.Int64(attrCtxBytes, 42),
				attribute.Bool(attrTruncated, false), attribute.String(attrKind, "none"), attribute.String(attrStrategy, "none"),
			}},
			{ID: "fetch-1", Tool: "WebFetch", Args: `{"url":"https://docs.example.com/settings"}`, Attrs: []attribute.KeyValue{
				attribute.Int64(attrOrigBytes, 156_000), attribute.Int64(attrCtxBytes, 900),
				attribute.Bool(attrTruncated, true), attribute.String(attrKind, "silent"), attribute.String(attrStrategy, "summary"),
				attribute.Int64(attrShownStart, 0), attribute.Int64(attrShownEnd, 100_000), attribute.String(attrShownUnit, "chars"),
				attribute.Int64(attrTotal, 156_000), attribute.String(attrReason, "summarised"),
			}},
		},
		Answer: "There is no such setting: the documentation does not mention a retry timeout.",
	}
}

// EmitTraces reports the session as spans: one execute_tool span per call and
// a chat span holding the final answer, all in one trace.
func EmitTraces(ctx context.Context, tp trace.TracerProvider, s Session, start time.Time) {
	tr := tp.Tracer("github.com/ctxaudit/ctxaudit/examples/harness")
	ctx, root := tr.Start(ctx, "invoke_agent example", trace.WithTimestamp(start),
		trace.WithAttributes(semconv.GenAIOperationNameInvokeAgent, attrConversation.String(s.ID)))
	at := start
	for _, c := range s.Calls {
		at = at.Add(time.Second)
		attrs := append([]attribute.KeyValue{
			semconv.GenAIOperationNameExecuteTool, attrToolName.String(c.Tool),
			attrToolCallID.String(c.ID), attrConversation.String(s.ID),
			attrArguments.String(c.Args), attrModel.String(s.Model), attribute.Int(attrTurn, 0),
		}, c.Attrs...)
		if !hasKey(c.Attrs, attrSource) {
			attrs = append(attrs, attribute.String(attrSource, s.Source))
		}
		_, sp := tr.Start(ctx, "execute_tool "+c.Tool, trace.WithTimestamp(at), trace.WithAttributes(attrs...))
		sp.End(trace.WithTimestamp(at.Add(200 * time.Millisecond)))
	}
	if s.Answer != "" {
		at = at.Add(time.Second)
		msgs := fmt.Sprintf(`[{"role":"assistant","parts":[{"type":"text","content":%q}]}]`, s.Answer)
		_, sp := tr.Start(ctx, "chat "+s.Model, trace.WithTimestamp(at), trace.WithAttributes(
			semconv.GenAIOperationNameChat, attrConversation.String(s.ID),
			attrModel.String(s.Model), attribute.String(attrSource, s.Source),
			attribute.Int(attrTurn, 0), attrOutputMsgs.String(msgs)))
		sp.End(trace.WithTimestamp(at.Add(time.Second)))
	}
	root.End(trace.WithTimestamp(at.Add(2 * time.Second)))
}

// EmitClaudeCodeToolResult reports a tool result the way Claude Code's OTel
// logging does: a claude_code.tool_result event with tool_result_size_bytes.
func EmitClaudeCodeToolResult(ctx context.Context, lp otellog.LoggerProvider, sessionID, tool string, size int64, at time.Time) {
	l := lp.Logger("com.anthropic.claude_code.events")
	var r otellog.Record
	r.SetTimestamp(at)
	r.SetEventName("claude_code.tool_result")
	r.SetBody(attribute.StringValue("claude_code.tool_result"))
	r.AddAttributes(
		attribute.String(attrEventName, "tool_result"),
		attribute.String(attrCCSession, sessionID),
		attribute.String(attrCCToolName, tool),
		attribute.String("success", "true"),
		attribute.String(attrCCResultBytes, fmt.Sprint(size)),
		attribute.String("event.sequence", "1"),
	)
	l.Emit(ctx, r)
}

func hasKey(attrs []attribute.KeyValue, k string) bool {
	for _, a := range attrs {
		if string(a.Key) == k {
			return true
		}
	}
	return false
}
