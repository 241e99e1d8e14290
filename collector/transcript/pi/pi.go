// Package pi parses pi coding-agent sessions
// (~/.pi/agent/sessions/--<cwd>--/<time>_<uuid>.jsonl), one line at a time.
//
// A session starts with a {"type":"session"} header; each message entry holds
// an agent message: assistant messages carry toolCall blocks, toolResult
// messages carry what the model saw (content) and, for read/bash/grep/find/ls,
// details.truncation — pi's own exact original-versus-delivered figures,
// which forensics reads.
package pi

import (
	"strings"
	"time"

	"github.com/ctxaudit/ctxaudit/collector/forensics"
	"github.com/ctxaudit/ctxaudit/collector/internal/jsonscan"
	"github.com/ctxaudit/ctxaudit/collector/transcript"
	"github.com/ctxaudit/ctxaudit/schema"
)

// Parser is the stateful parser of one pi session file. It is not safe for
// concurrent use.
type Parser struct {
	opts transcript.Options
	// emit is the sink of the Feed or Flush call under way.
	emit   transcript.Emit
	detect func(forensics.Input) schema.Forensics

	sess      schema.Session
	model     string
	turn      int // number of prompts seen
	turnCalls []string
	pending   *transcript.Pending[*pendingCall]
}

type pendingCall struct {
	id, name, messageID, model string
	args                       []byte
	line                       int64
	ts                         time.Time
	turn                       int
}

// New returns a parser. Its records go to the sink each Feed and Flush
// is given, so one parser can serve callers that route records differently
// from one line to the next.
func New(opts transcript.Options) *Parser {
	return &Parser{
		opts:    opts,
		detect:  opts.DetectFunc(),
		pending: transcript.NewPending[*pendingCall](opts.PendingLimit()),
		sess:    transcript.NewSession(schema.HarnessPi, opts.SourceFile),
	}
}

// entry holds the fields of one line that the parser reads.
type entry struct {
	line    int64
	typ     string
	id      string
	ts      time.Time
	message []byte
	raw     []byte
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
	e := entry{line: lineNo, raw: raw}
	it := jsonscan.Object(raw)
	for it.Next() {
		switch string(it.Key()) {
		case "type":
			e.typ = jsonscan.StringOr(it.Value())
		case "id":
			e.id = jsonscan.StringOr(it.Value())
		case "timestamp":
			e.ts = transcript.ParseTime(jsonscan.StringOr(it.Value()))
		case "message":
			e.message = it.Value()
		}
	}
	if it.Err() != nil {
		p.skip(lineNo, transcript.SkipMalformed, "truncated or invalid JSON")
		return
	}
	p.noteTime(e.ts)
	switch e.typ {
	case "session":
		p.header(&e)
	case "model_change":
		if m := jsonscan.StringOr(jsonscan.Get(raw, "modelId")); m != "" {
			p.model = m
		}
	case "compaction":
		c := &transcript.Compaction{
			SessionID: p.sess.SessionID, Kind: transcript.CompactionFull,
			Line: lineNo, Timestamp: e.ts,
		}
		if n, ok := jsonscan.Uint(jsonscan.Get(raw, "tokensBefore")); ok {
			c.PreTokens = schema.Known(n)
		}
		if b, ok := jsonscan.Bool(jsonscan.Get(raw, "fromHook")); ok && b {
			c.Trigger = "hook"
		}
		p.sess.Compactions = p.sess.Compactions.Plus(schema.Known(1))
		p.emit(c)
	case "message":
		p.message(&e)
	}
}

func (p *Parser) header(e *entry) {
	it := jsonscan.Object(e.raw)
	for it.Next() {
		v := it.Value()
		switch string(it.Key()) {
		case "id":
			if id := jsonscan.StringOr(v); id != "" {
				p.sess.SessionID = id
			}
		case "cwd":
			if c := jsonscan.StringOr(v); c != "" {
				p.sess.Cwd = c
				p.sess.Project = transcript.ProjectFromCwd(c)
			}
		case "modelId":
			if m := jsonscan.StringOr(v); m != "" {
				p.model = m
			}
		case "version":
			// The session file format version, not pi's release: pi does
			// not record its own version.
		}
	}
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

func (p *Parser) message(e *entry) {
	var role, model, toolCallID, toolName string
	var content, usage, details []byte
	isError := false
	it := jsonscan.Object(e.message)
	for it.Next() {
		v := it.Value()
		switch string(it.Key()) {
		case "role":
			role = jsonscan.StringOr(v)
		case "model":
			model = jsonscan.StringOr(v)
		case "content":
			content = v
		case "usage":
			usage = v
		case "toolCallId":
			toolCallID = jsonscan.StringOr(v)
		case "toolName":
			toolName = jsonscan.StringOr(v)
		case "details":
			details = v
		case "isError":
			isError, _ = jsonscan.Bool(v)
		}
	}
	if it.Err() != nil {
		p.skip(e.line, transcript.SkipBadRecord, "message entry without a message object")
		return
	}
	switch role {
	case "user":
		if strings.TrimSpace(transcript.TextBlocks(content)) == "" {
			return
		}
		p.turn++
		p.turnCalls = p.turnCalls[:0]
		p.sess.Turns = p.sess.Turns.Plus(schema.Known(1))
		p.emit(&transcript.TurnStart{
			SessionID: p.sess.SessionID, Turn: p.turnIndex(), Line: e.line, Timestamp: e.ts,
		})
	case "assistant":
		p.assistant(e, model, content, usage)
	case "toolResult":
		p.toolResult(e, toolCallID, toolName, content, details, isError)
	}
	// bashExecution (a user "!" command) is not a model tool call.
}

func (p *Parser) turnIndex() int {
	if p.turn <= 0 {
		return 0
	}
	return p.turn - 1
}

func (p *Parser) assistant(e *entry, model string, content, usage []byte) {
	if model != "" {
		p.model = model
		if p.sess.Model == "" {
			p.sess.Model = model
		}
	}
	id := e.id
	if id == "" {
		id = transcript.LineID(p.sess.SessionID, e.line)
	}
	var text strings.Builder
	calls := false
	blocks := jsonscan.Array(content)
	for blocks.Next() {
		var typ, t, cid, name string
		var args []byte
		bi := jsonscan.Object(blocks.Value())
		for bi.Next() {
			v := bi.Value()
			switch string(bi.Key()) {
			case "type":
				typ = jsonscan.StringOr(v)
			case "text":
				t = jsonscan.StringOr(v)
			case "id":
				cid = jsonscan.StringOr(v)
			case "name":
				name = jsonscan.StringOr(v)
			case "arguments":
				args = v
			}
		}
		switch typ {
		case "text":
			if strings.TrimSpace(t) == "" {
				continue
			}
			if text.Len() > 0 {
				text.WriteByte('\n')
			}
			text.WriteString(t)
		case "toolCall":
			calls = true
			if cid == "" {
				p.skip(e.line, transcript.SkipBadRecord, "toolCall without id")
				continue
			}
			p.addPending(&pendingCall{
				id: cid, name: name, messageID: id, model: p.model,
				args: append([]byte(nil), args...), line: e.line, ts: e.ts, turn: p.turnIndex(),
			})
		}
	}
	// Each pi assistant entry is one API response with its own usage.
	it := jsonscan.Object(usage)
	for it.Next() {
		n, ok := jsonscan.Uint(it.Value())
		if !ok {
			continue // not a figure: no usage reported
		}
		switch string(it.Key()) {
		case "input", "cacheRead", "cacheWrite":
			p.sess.InputTokens = schema.AddTokens(p.sess.InputTokens, n)
		case "output":
			p.sess.OutputTokens = schema.AddTokens(p.sess.OutputTokens, n)
		}
	}
	if text.Len() > 0 && !calls && len(p.turnCalls) > 0 {
		p.emit(&transcript.Answer{Line: e.line, Answer: schema.Answer{
			SessionID: p.sess.SessionID, MessageID: id, Timestamp: e.ts, Turn: schema.KnownTurn(p.turnIndex()),
			Source: schema.HarnessPi, Model: p.model, Text: text.String(),
			InputCallIDs: append([]string(nil), p.turnCalls...),
		}})
	}
}

func (p *Parser) addPending(pc *pendingCall) {
	for _, o := range p.pending.Put(pc.id, pc) {
		p.skip(o.line, transcript.SkipUnpairedToolUse, o.name+" "+o.id+": evicted, too many calls awaiting results")
	}
}

// toolResult completes a call. A pi result names its tool, so even a result
// whose toolCall is not in this file (a copied or cut session) is a usable
// record; only its arguments are then unknown.
func (p *Parser) toolResult(e *entry, callID, toolName string, content, details []byte, isError bool) {
	if callID == "" {
		p.skip(e.line, transcript.SkipBadRecord, "toolResult without toolCallId")
		return
	}
	pc, ok := p.pending.Take(callID)
	if !ok {
		pc = &pendingCall{id: callID, name: toolName, ts: e.ts, turn: p.turnIndex(), model: p.model}
	}
	if pc.name == "" {
		pc.name = toolName
	}
	if jsonscan.IsNull(details) {
		details = nil
	}
	text, nonText := transcript.ContentText(content)
	in := forensics.Input{
		Harness:   schema.HarnessPi,
		Tool:      pc.name,
		Arguments: pc.args,
		Context:   text,
		NonText:   nonText,
		IsError:   isError,
		Details:   details,
	}
	rec := transcript.BuildCall(p.opts, p.detect, schema.ToolCall{
		SessionID:  p.sess.SessionID,
		CallID:     callID,
		Tool:       pc.name,
		Timestamp:  pc.ts,
		Source:     schema.HarnessPi,
		Model:      pc.model,
		Project:    p.sess.Project,
		Cwd:        p.sess.Cwd,
		Turn:       schema.KnownTurn(pc.turn),
		MessageID:  pc.messageID,
		IsError:    isError,
		SourceLine: e.line,
	}, in)
	if pc.turn == p.turnIndex() {
		p.turnCalls = append(p.turnCalls, callID)
	}
	p.emit(rec)
}

// Flush reports calls that never got a result.
func (p *Parser) Flush(emit transcript.Emit) {
	p.emit = emit
	p.flush()
	p.emit = nil
}

func (p *Parser) flush() {
	for _, pc := range p.pending.Drain() {
		p.skip(pc.line, transcript.SkipUnpairedToolUse, pc.name+" "+pc.id+" has no toolResult")
	}
}

// Session returns the session metadata gathered so far.
func (p *Parser) Session() schema.Session {
	s := p.sess
	if s.Model == "" {
		s.Model = p.model
	}
	return s
}

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
