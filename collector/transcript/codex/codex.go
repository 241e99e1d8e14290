// Package codex parses OpenAI Codex CLI rollouts
// (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl), one line at a time.
//
// Every line is {"timestamp","type","payload"}. Tool calls are response items
// (function_call, custom_tool_call, local_shell_call) paired with their
// *_output by call_id; what the model saw is the output text. Codex does not
// record the raw output size, so the original comes from the markers in that
// text (forensics) or, in versions that persist it, from exec_command_end.
package codex

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/ctxaudit/ctxaudit/collector/forensics"
	"github.com/ctxaudit/ctxaudit/collector/internal/jsonscan"
	"github.com/ctxaudit/ctxaudit/collector/transcript"
	"github.com/ctxaudit/ctxaudit/schema"
)

// maxExecOutputs bounds exec_command_end outputs kept for calls whose
// function_call_output has not arrived yet.
const maxExecOutputs = 64

// Parser is the stateful parser of one Codex rollout file. It is not safe for
// concurrent use.
type Parser struct {
	opts transcript.Options
	// emit is the sink of the Feed or Flush call under way.
	emit   transcript.Emit
	detect func(forensics.Input) schema.Forensics

	sess        schema.Session
	sidFromMeta bool
	model       string
	turn        int
	turnCalls   []string
	pending     *transcript.Pending[*pendingCall]
	execOut     map[string]string
	execOrder   []string
	answer      *transcript.Answer // assistant message awaiting the end of its response
}

type pendingCall struct {
	id, name string
	args     []byte
	line     int64
	ts       time.Time
	turn     int
	model    string
	cwd      string
}

// New returns a parser. Its records go to the sink each Feed and Flush
// is given, so one parser can serve callers that route records differently
// from one line to the next.
func New(opts transcript.Options) *Parser {
	return &Parser{
		opts:    opts,
		detect:  opts.DetectFunc(),
		pending: transcript.NewPending[*pendingCall](opts.PendingLimit()),
		execOut: make(map[string]string),
		sess:    transcript.NewSession(schema.HarnessCodex, opts.SourceFile),
	}
}

// Feed parses one line.
func (p *Parser) Feed(lineNo int64, line []byte, emit transcript.Emit) {
	p.emit = emit
	p.feed(lineNo, line)
	p.emit = nil
}

func (p *Parser) feed(lineNo int64, line []byte) {
	raw, err := jsonscan.Value(line)
	if err != nil {
		if !isBlank(line) {
			p.skip(lineNo, transcript.SkipMalformed, "not a JSON object")
		}
		return
	}
	var typ string
	var ts time.Time
	var payload []byte
	it := jsonscan.Object(raw)
	for it.Next() {
		switch string(it.Key()) {
		case "type":
			typ = jsonscan.StringOr(it.Value())
		case "timestamp":
			ts = transcript.ParseTime(jsonscan.StringOr(it.Value()))
		case "payload":
			payload = it.Value()
		}
	}
	if it.Err() != nil {
		p.skip(lineNo, transcript.SkipMalformed, "truncated or invalid JSON")
		return
	}
	p.noteTime(ts)
	if typ != "response_item" {
		// Response items of one model response are written together after
		// its events; any other line closes the response.
		p.finishAnswer()
	}
	switch typ {
	case "session_meta":
		p.sessionMeta(payload)
	case "turn_context":
		if m := jsonscan.StringOr(jsonscan.Get(payload, "model")); m != "" {
			p.model = m
			if p.sess.Model == "" {
				p.sess.Model = m
			}
		}
		if c := jsonscan.StringOr(jsonscan.Get(payload, "cwd")); c != "" && p.sess.Cwd == "" {
			p.setCwd(c)
		}
	case "response_item":
		p.responseItem(lineNo, ts, payload)
	case "event_msg":
		p.event(lineNo, ts, payload)
	case "compacted":
		p.sess.Compactions = p.sess.Compactions.Plus(schema.Known(1))
		p.emit(&transcript.Compaction{
			SessionID: p.sess.SessionID, Kind: transcript.CompactionFull,
			Line: lineNo, Timestamp: ts,
		})
	}
}

func (p *Parser) sessionMeta(payload []byte) {
	it := jsonscan.Object(payload)
	for it.Next() {
		v := it.Value()
		switch string(it.Key()) {
		case "id":
			if id := jsonscan.StringOr(v); id != "" && !p.sidFromMeta {
				p.sess.SessionID, p.sidFromMeta = id, true
			}
		case "cwd":
			if c := jsonscan.StringOr(v); c != "" {
				p.setCwd(c)
			}
		case "cli_version":
			p.sess.HarnessVersion = jsonscan.StringOr(v)
		case "git":
			if b := jsonscan.StringOr(jsonscan.Get(v, "branch")); b != "" {
				p.sess.GitBranch = b
			}
		case "timestamp":
			p.noteTime(transcript.ParseTime(jsonscan.StringOr(v)))
		}
	}
}

func (p *Parser) setCwd(c string) {
	p.sess.Cwd = c
	p.sess.Project = transcript.ProjectFromCwd(c)
}

func (p *Parser) noteTime(ts time.Time) {
	if ts.IsZero() {
		return
	}
	if p.sess.StartedAt.IsZero() || ts.Before(p.sess.StartedAt) {
		p.sess.StartedAt = ts
	}
	if ts.After(p.sess.EndedAt) {
		p.sess.EndedAt = ts
	}
}

func (p *Parser) responseItem(lineNo int64, ts time.Time, payload []byte) {
	var typ, role, name, callID, id string
	var args, input, output, content, action []byte
	it := jsonscan.Object(payload)
	for it.Next() {
		v := it.Value()
		switch string(it.Key()) {
		case "type":
			typ = jsonscan.StringOr(v)
		case "role":
			role = jsonscan.StringOr(v)
		case "name":
			name = jsonscan.StringOr(v)
		case "call_id":
			callID = jsonscan.StringOr(v)
		case "id":
			id = jsonscan.StringOr(v)
		case "arguments":
			args = v
		case "input":
			input = v
		case "output":
			output = v
		case "content":
			content = v
		case "action":
			action = v
		}
	}
	if it.Err() != nil {
		p.skip(lineNo, transcript.SkipBadRecord, "response_item payload is not an object")
		return
	}
	switch typ {
	case "message":
		if role == "assistant" {
			p.assistantMessage(lineNo, ts, id, content)
		}
	case "function_call":
		// arguments is JSON text inside a JSON string.
		a := []byte(jsonscan.StringOr(args))
		if len(args) > 0 && args[0] == '{' {
			a = append([]byte(nil), args...)
		}
		p.call(lineNo, ts, callID, name, a)
	case "custom_tool_call":
		// Freeform input (an apply_patch body) is kept as a JSON string.
		a, _ := json.Marshal(jsonscan.StringOr(input))
		p.call(lineNo, ts, callID, name, a)
	case "local_shell_call":
		p.call(lineNo, ts, callID, "local_shell", append([]byte(nil), action...))
	case "function_call_output", "custom_tool_call_output":
		p.output(lineNo, callID, output)
	}
}

func (p *Parser) assistantMessage(lineNo int64, ts time.Time, id string, content []byte) {
	var b strings.Builder
	it := jsonscan.Array(content)
	for it.Next() {
		blk := it.Value()
		switch jsonscan.StringOr(jsonscan.Get(blk, "type")) {
		case "output_text", "text":
			t := jsonscan.StringOr(jsonscan.Get(blk, "text"))
			if strings.TrimSpace(t) == "" {
				continue
			}
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(t)
		}
	}
	p.finishAnswer()
	if b.Len() == 0 || len(p.turnCalls) == 0 {
		return
	}
	if id == "" {
		id = transcript.LineID(p.sess.SessionID, lineNo)
	}
	p.answer = &transcript.Answer{Line: lineNo, Answer: schema.Answer{
		SessionID: p.sess.SessionID, MessageID: id, Timestamp: ts, Turn: schema.KnownTurn(p.turnIndex()),
		Source: schema.HarnessCodex, Model: p.model, Text: b.String(),
		InputCallIDs: append([]string(nil), p.turnCalls...),
	}}
}

// finishAnswer emits the assistant message held back to see whether its
// response also called a tool (then it was narration, not an answer).
func (p *Parser) finishAnswer() {
	if p.answer != nil {
		p.emit(p.answer)
		p.answer = nil
	}
}

func (p *Parser) turnIndex() int {
	if p.turn <= 0 {
		return 0
	}
	return p.turn - 1
}

func (p *Parser) call(lineNo int64, ts time.Time, callID, name string, args []byte) {
	if p.answer != nil {
		// The message before it in this response was narration.
		p.emit(&transcript.NotAnswer{SessionID: p.answer.Answer.SessionID, MessageID: p.answer.Answer.MessageID, Line: lineNo})
		p.answer = nil
	}
	if callID == "" {
		p.skip(lineNo, transcript.SkipBadRecord, name+" call without call_id")
		return
	}
	pc := &pendingCall{
		id: callID, name: name, args: args, line: lineNo, ts: ts,
		turn: p.turnIndex(), model: p.model, cwd: p.sess.Cwd,
	}
	for _, o := range p.pending.Put(callID, pc) {
		p.skip(o.line, transcript.SkipUnpairedToolUse, o.name+" "+o.id+": evicted, too many calls awaiting output")
	}
}

func (p *Parser) output(lineNo int64, callID string, output []byte) {
	if callID == "" {
		p.skip(lineNo, transcript.SkipBadRecord, "tool output without call_id")
		return
	}
	pc, ok := p.pending.Take(callID)
	if !ok {
		p.skip(lineNo, transcript.SkipOrphanResult, "output "+callID+" has no call in this file")
		return
	}

	in := forensics.Input{
		Harness:        schema.HarnessCodex,
		HarnessVersion: p.sess.HarnessVersion,
		Tool:           pc.name,
		Arguments:      pc.args,
	}
	in.Context, in.NonText = outputText(output)
	if full, ok := p.execOut[callID]; ok {
		delete(p.execOut, callID)
		in.OriginalText = &full
	}
	rec := transcript.BuildCall(p.opts, p.detect, schema.ToolCall{
		SessionID:      p.sess.SessionID,
		CallID:         callID,
		Tool:           pc.name,
		Timestamp:      pc.ts,
		Source:         schema.HarnessCodex,
		HarnessVersion: p.sess.HarnessVersion,
		Model:          pc.model,
		Project:        p.sess.Project,
		Cwd:            pc.cwd,
		GitBranch:      p.sess.GitBranch,
		Turn:           schema.KnownTurn(pc.turn),
		SourceLine:     lineNo,
	}, in)
	rec.Call.IsError = failed(rec.ContextText, output)
	if pc.turn == p.turnIndex() {
		p.turnCalls = append(p.turnCalls, callID)
	}
	p.emit(rec)
}

// failed is Codex's own word on whether a call failed (docs/design.md §3.2):
// the exit status its wrapper states, non-zero, or the older
// {"content","success"} output's success false. Nothing else establishes it.
func failed(context string, output []byte) bool {
	if code, ok := forensics.CodexExitCode(context); ok {
		return code != 0
	}
	if len(output) > 0 && output[0] == '{' {
		ok, known := jsonscan.Bool(jsonscan.Get(output, "success"))
		return known && !ok
	}
	return false
}

// outputText is the tool output as the model saw it: the string, the text
// items of a content-item array, or the content of an older
// {"content","success"} object — and what an array carried besides text
// (input_image items), which no text size measures.
func outputText(output []byte) (string, forensics.NonText) {
	if len(output) == 0 || jsonscan.IsNull(output) {
		return "", forensics.NonTextNone
	}
	switch output[0] {
	case '"':
		return jsonscan.StringOr(output), forensics.NonTextNone
	case '{':
		return jsonscan.StringOr(jsonscan.Get(output, "content")), forensics.NonTextNone
	case '[':
		var b strings.Builder
		other := forensics.NonTextNone
		it := jsonscan.Array(output)
		for it.Next() {
			blk := it.Value()
			switch jsonscan.StringOr(jsonscan.Get(blk, "type")) {
			case "input_text", "output_text", "text":
				if b.Len() > 0 {
					b.WriteByte('\n')
				}
				b.WriteString(jsonscan.StringOr(jsonscan.Get(blk, "text")))
			default:
				other = forensics.NonTextMedia
			}
		}
		return b.String(), other
	}
	return "", forensics.NonTextNone
}

func (p *Parser) event(lineNo int64, ts time.Time, payload []byte) {
	typ := jsonscan.StringOr(jsonscan.Get(payload, "type"))
	switch typ {
	case "user_message":
		p.turn++
		p.turnCalls = p.turnCalls[:0]
		p.sess.Turns = p.sess.Turns.Plus(schema.Known(1))
		p.emit(&transcript.TurnStart{
			SessionID: p.sess.SessionID, Turn: p.turnIndex(), Line: lineNo, Timestamp: ts,
		})
	case "token_count":
		// total_token_usage is cumulative: the last one is the session's.
		tot := jsonscan.Get(payload, "info", "total_token_usage")
		if in, ok := jsonscan.Uint(jsonscan.Get(tot, "input_tokens")); ok {
			p.sess.InputTokens = schema.Tokens(in)
		}
		if out, ok := jsonscan.Uint(jsonscan.Get(tot, "output_tokens")); ok {
			p.sess.OutputTokens = schema.Tokens(out)
		}
	case "exec_command_end":
		id := jsonscan.StringOr(jsonscan.Get(payload, "call_id"))
		full, ok := jsonscan.String(jsonscan.Get(payload, "aggregated_output"))
		if id == "" || !ok {
			return
		}
		if _, known := p.execOut[id]; !known {
			p.execOrder = append(p.execOrder, id)
		}
		p.execOut[id] = full
		for len(p.execOut) > maxExecOutputs && len(p.execOrder) > 0 {
			delete(p.execOut, p.execOrder[0])
			p.execOrder = p.execOrder[1:]
		}
		if len(p.execOrder) > 4*maxExecOutputs {
			q := p.execOrder[:0]
			for _, id := range p.execOrder {
				if _, ok := p.execOut[id]; ok {
					q = append(q, id)
				}
			}
			p.execOrder = q
		}
	}
}

// Flush emits the last answer and reports calls that never got an output.
func (p *Parser) Flush(emit transcript.Emit) {
	p.emit = emit
	p.flush()
	p.emit = nil
}

func (p *Parser) flush() {
	p.finishAnswer()
	for _, pc := range p.pending.Drain() {
		p.skip(pc.line, transcript.SkipUnpairedToolUse, pc.name+" "+pc.id+" has no output")
	}
}

// Session returns the session metadata gathered so far.
func (p *Parser) Session() schema.Session { return p.sess }

func (p *Parser) skip(line int64, reason, detail string) {
	p.emit(&transcript.Skip{Line: line, Reason: reason, Detail: detail})
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}
