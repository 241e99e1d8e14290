// Package claudecode parses Claude Code session transcripts
// (~/.claude/projects/<project>/<session>.jsonl and the sub-agent threads in
// <session>/subagents/agent-*.jsonl), one line at a time.
//
// What the model saw of a tool result is the tool_result block of the user
// line; what the tool produced is that line's toolUseResult, and sometimes a
// saved file a notice points to. Both are handed to forensics.Detect together
// with the call's arguments, taken from the assistant line that issued it.
//
// Layout knowledge (which files form one session, where saved outputs live on
// this machine) belongs to the caller; see collector/ingest.
package claudecode

import (
	"strings"
	"time"

	"github.com/ctxaudit/ctxaudit/collector/forensics"
	"github.com/ctxaudit/ctxaudit/collector/internal/jsonscan"
	"github.com/ctxaudit/ctxaudit/collector/transcript"
	"github.com/ctxaudit/ctxaudit/schema"
)

// syntheticModel marks assistant lines Claude Code writes itself (API error
// notices); they are neither the session's model nor answers.
const syntheticModel = "<synthetic>"

// Parser is the stateful parser of one Claude Code transcript file. It is not
// safe for concurrent use.
type Parser struct {
	opts transcript.Options
	// emit is the sink of the Feed or Flush call under way.
	emit   transcript.Emit
	detect func(forensics.Input) schema.Forensics

	sess       schema.Session
	turn       int // -1 until the first prompt is answered
	prompt     *pendingPrompt
	turnCalls  []string // calls of the current turn whose result has arrived
	pending    *transcript.Pending[*pendingCall]
	msg        message // the assistant message being assembled
	usageSeen  map[string]bool
	blocksBuf  [][]byte
	sidechain  bool
	agentID    string
	modelFixed bool // sess.Model came from the main thread
	// sidFromData: the session id came from a line, not the file name.
	sidFromData bool
}

type pendingPrompt struct {
	line int64
	ts   time.Time
}

type pendingCall struct {
	id, name, messageID, model string
	args                       []byte
	line                       int64
	ts                         time.Time
	turn                       int
	agentID                    string
	sidechain                  bool
	cwd, branch                string
}

// message accumulates the lines of one assistant message (lines sharing
// message.id): its text, whether it called a tool, and its latest usage.
type message struct {
	id        string
	line      int64
	ts        time.Time
	model     string
	text      strings.Builder
	toolUse   bool
	synthetic bool
	turn      int
	agentID   string
	sidechain bool
	usageIn   schema.Count
	usageOut  schema.Count
}

// envelope holds the per-line fields shared by user/assistant/system lines.
type envelope struct {
	line      int64
	typ       string
	subtype   string
	ts        time.Time
	sessionID string
	cwd       string
	branch    string
	version   string
	agentID   string
	sidechain bool
	isMeta    bool
	compactSu bool
	apiError  bool
	message   []byte
	result    []byte // toolUseResult
	content   []byte // system line content
	mcMeta    []byte // microcompactMetadata
	cMeta     []byte // compactMetadata
}

// New returns a parser. Its records go to the sink each Feed and Flush
// is given, so one parser can serve callers that route records differently
// from one line to the next.
func New(opts transcript.Options) *Parser {
	opts.ReadSaved = savedContentReader(opts.ReadSaved)
	return &Parser{
		opts:      opts,
		detect:    opts.DetectFunc(),
		turn:      -1,
		pending:   transcript.NewPending[*pendingCall](opts.PendingLimit()),
		usageSeen: make(map[string]bool),
		sess:      transcript.NewSession(schema.HarnessClaudeCode, opts.SourceFile),
	}
}

// Feed parses one line.
func (p *Parser) Feed(lineNo int64, line []byte, emit transcript.Emit) {
	p.emit = emit
	p.feed(lineNo, line)
	p.emit = nil
}

func (p *Parser) feed(lineNo int64, line []byte) {
	if len(line) == 0 || isBlank(line) {
		return
	}
	raw, err := jsonscan.Value(line)
	if err != nil || raw[0] != '{' {
		p.skip(lineNo, transcript.SkipMalformed, "not a JSON object")
		return
	}
	env := envelope{line: lineNo}
	it := jsonscan.Object(raw)
	for it.Next() {
		k, v := it.Key(), it.Value()
		switch string(k) {
		case "type":
			env.typ = jsonscan.StringOr(v)
		case "subtype":
			env.subtype = jsonscan.StringOr(v)
		case "timestamp":
			env.ts = transcript.ParseTime(jsonscan.StringOr(v))
		case "sessionId":
			env.sessionID = jsonscan.StringOr(v)
		case "cwd":
			env.cwd = jsonscan.StringOr(v)
		case "gitBranch":
			env.branch = jsonscan.StringOr(v)
		case "version":
			env.version = jsonscan.StringOr(v)
		case "agentId":
			env.agentID = jsonscan.StringOr(v)
		case "isSidechain":
			env.sidechain, _ = jsonscan.Bool(v)
		case "isMeta":
			env.isMeta, _ = jsonscan.Bool(v)
		case "isCompactSummary":
			env.compactSu, _ = jsonscan.Bool(v)
		case "isApiErrorMessage":
			env.apiError, _ = jsonscan.Bool(v)
		case "message":
			env.message = v
		case "toolUseResult":
			env.result = v
		case "content":
			env.content = v
		case "microcompactMetadata":
			env.mcMeta = v
		case "compactMetadata":
			env.cMeta = v
		}
	}
	if it.Err() != nil {
		p.skip(lineNo, transcript.SkipMalformed, "truncated or invalid JSON")
		return
	}
	switch env.typ {
	case "assistant", "user", "system":
	default:
		// Snapshots, summaries, progress, queue operations, titles: nothing
		// about tool output in them.
		return
	}
	p.noteEnvelope(&env)
	switch env.typ {
	case "assistant":
		p.assistant(&env)
	case "user":
		p.finishMessage()
		p.user(&env)
	case "system":
		p.system(&env)
	}
}

// noteEnvelope folds the line's metadata into the session.
func (p *Parser) noteEnvelope(env *envelope) {
	s := &p.sess
	if !p.sidFromData && env.sessionID != "" {
		s.SessionID, p.sidFromData = env.sessionID, true
	}
	if s.Cwd == "" && env.cwd != "" {
		s.Cwd = env.cwd
		s.Project = transcript.ProjectFromCwd(env.cwd)
	}
	if env.branch != "" {
		s.GitBranch = env.branch
	}
	if env.version != "" {
		s.HarnessVersion = env.version
	}
	if !env.ts.IsZero() {
		if s.StartedAt.IsZero() || env.ts.Before(s.StartedAt) {
			s.StartedAt = env.ts
		}
		if env.ts.After(s.EndedAt) {
			s.EndedAt = env.ts
		}
	}
	if env.agentID != "" {
		p.agentID = env.agentID
	}
	if env.sidechain {
		p.sidechain = true
	}
}

func (p *Parser) assistant(env *envelope) {
	var id, model string
	var content, usage []byte
	it := jsonscan.Object(env.message)
	for it.Next() {
		switch string(it.Key()) {
		case "id":
			id = jsonscan.StringOr(it.Value())
		case "model":
			model = jsonscan.StringOr(it.Value())
		case "content":
			content = it.Value()
		case "usage":
			usage = it.Value()
		}
	}
	if it.Err() != nil || env.message == nil {
		p.skip(env.line, transcript.SkipBadRecord, "assistant line without a message object")
		return
	}
	if id == "" {
		// Old or synthetic lines without an id are each their own message.
		id = syntheticID(p.sess.SessionID, env.line)
	}
	if id != p.msg.id {
		p.finishMessage()
		if p.prompt != nil {
			p.turn++
			p.turnCalls = p.turnCalls[:0]
			p.emit(&transcript.TurnStart{
				SessionID: p.sess.SessionID, Turn: p.turn, Line: p.prompt.line,
				Timestamp: p.prompt.ts, AgentID: env.agentID, Sidechain: env.sidechain,
			})
			p.sess.Turns = p.sess.Turns.Plus(schema.Known(1))
			p.prompt = nil
		}
		if p.turn < 0 {
			p.turn = 0 // a fragment without its prompt: everything is turn 0
		}
		p.msg = message{
			id: id, line: env.line, ts: env.ts, model: model, turn: p.turn,
			agentID: env.agentID, sidechain: env.sidechain,
			synthetic: model == syntheticModel || env.apiError,
		}
	}
	if model != "" && model != syntheticModel && (!p.modelFixed || p.sess.Model == "") {
		p.sess.Model = model
		p.modelFixed = !env.sidechain
	}
	if usage != nil {
		// Every line of a message repeats its usage as it streamed; the last
		// line's figures are the message's.
		p.msg.usageIn, p.msg.usageOut = readUsage(usage)
	}
	blocks := jsonscan.Array(content)
	for blocks.Next() {
		p.assistantBlock(env, blocks.Value())
	}
	if content != nil && content[0] == '"' { // a plain-string message
		p.appendText(jsonscan.StringOr(content))
	}
}

func (p *Parser) assistantBlock(env *envelope, block []byte) {
	var typ, text, id, name string
	var input []byte
	it := jsonscan.Object(block)
	for it.Next() {
		switch string(it.Key()) {
		case "type":
			typ = jsonscan.StringOr(it.Value())
		case "text":
			text = jsonscan.StringOr(it.Value())
		case "id":
			id = jsonscan.StringOr(it.Value())
		case "name":
			name = jsonscan.StringOr(it.Value())
		case "input":
			input = it.Value()
		}
	}
	switch typ {
	case "text":
		p.appendText(text)
	case "tool_use", "server_tool_use":
		if !p.msg.toolUse && p.msg.text.Len() > 0 {
			// Its text came on an earlier line: a reader that flushed in
			// between took the message for an answer.
			p.emit(&transcript.NotAnswer{SessionID: p.sess.SessionID, MessageID: p.msg.id, Line: env.line})
		}
		p.msg.toolUse = true
		if id == "" {
			p.skip(env.line, transcript.SkipBadRecord, "tool_use without id")
			return
		}
		p.addPending(&pendingCall{
			id: id, name: name, messageID: p.msg.id, model: p.msg.model,
			args: append([]byte(nil), input...), line: env.line, ts: env.ts,
			turn: p.turn, agentID: env.agentID, sidechain: env.sidechain,
			cwd: env.cwd, branch: env.branch,
		})
	}
}

func (p *Parser) appendText(s string) {
	if strings.TrimSpace(s) == "" {
		return
	}
	if p.msg.text.Len() > 0 {
		p.msg.text.WriteString("\n")
	}
	p.msg.text.WriteString(s)
}

// finishMessage closes the assistant message being assembled: its usage is
// counted once, and if it ended an agent step with text it is an answer.
func (p *Parser) finishMessage() {
	m := &p.msg
	if m.id == "" {
		return
	}
	if !p.usageSeen[m.id] {
		p.usageSeen[m.id] = true
		p.sess.InputTokens = schema.SumTokens(p.sess.InputTokens, m.usageIn)
		p.sess.OutputTokens = schema.SumTokens(p.sess.OutputTokens, m.usageOut)
	}
	if m.text.Len() > 0 && !m.toolUse && !m.synthetic && len(p.turnCalls) > 0 {
		p.emit(&transcript.Answer{Line: m.line, Answer: schema.Answer{
			SessionID: p.sess.SessionID, MessageID: m.id, Timestamp: m.ts,
			Turn: sessionTurn(m.turn, m.agentID, m.sidechain), Source: schema.HarnessClaudeCode, Model: m.model,
			AgentID: m.agentID, Sidechain: m.sidechain, Text: m.text.String(),
			InputCallIDs: append([]string(nil), p.turnCalls...),
		}})
	}
	p.msg = message{}
}

func (p *Parser) user(env *envelope) {
	var content []byte
	it := jsonscan.Object(env.message)
	for it.Next() {
		if it.KeyIs("content") {
			content = it.Value()
		}
	}
	if len(content) == 0 {
		return
	}
	if content[0] == '"' {
		if text, _ := jsonscan.String(content); isPrompt(env, text) {
			p.prompt = &pendingPrompt{line: env.line, ts: env.ts}
		}
		return
	}
	// Content blocks: tool results, or a prompt made of text (and images).
	p.blocksBuf = p.blocksBuf[:0]
	promptText := ""
	blocks := jsonscan.Array(content)
	for blocks.Next() {
		b := blocks.Value()
		switch jsonscan.StringOr(jsonscan.Get(b, "type")) {
		case "tool_result":
			p.blocksBuf = append(p.blocksBuf, b)
		case "text":
			if promptText == "" {
				promptText = jsonscan.StringOr(jsonscan.Get(b, "text"))
			}
		}
	}
	if len(p.blocksBuf) == 0 {
		if isPrompt(env, promptText) {
			p.prompt = &pendingPrompt{line: env.line, ts: env.ts}
		}
		return
	}
	// toolUseResult describes the line's result; with several results on one
	// line it cannot be attributed, so it is withheld rather than misapplied.
	result := env.result
	if len(p.blocksBuf) > 1 || jsonscan.IsNull(result) {
		result = nil
	}
	for _, b := range p.blocksBuf {
		p.toolResult(env, b, result)
	}
}

// isPrompt reports whether a user line is a real prompt: typed by a person
// (or a slash command expanding into one), not meta text Claude Code injects.
// Local commands (/context, /exit) look like prompts but get no model
// response; the turn only starts when an assistant line follows.
func isPrompt(env *envelope, text string) bool {
	if env.isMeta || env.compactSu {
		return false
	}
	t := strings.TrimSpace(text)
	switch {
	case t == "":
		return false
	case strings.HasPrefix(t, "<local-command-stdout>"),
		strings.HasPrefix(t, "<local-command-stderr>"),
		strings.HasPrefix(t, "<local-command-caveat>"),
		strings.HasPrefix(t, "[Request interrupted by user"):
		return false
	}
	return true
}

func (p *Parser) toolResult(env *envelope, block, result []byte) {
	var id string
	var content []byte
	isError := false
	it := jsonscan.Object(block)
	for it.Next() {
		switch string(it.Key()) {
		case "tool_use_id":
			id = jsonscan.StringOr(it.Value())
		case "content":
			content = it.Value()
		case "is_error":
			isError, _ = jsonscan.Bool(it.Value())
		}
	}
	if id == "" {
		p.skip(env.line, transcript.SkipBadRecord, "tool_result without tool_use_id")
		return
	}
	pc, ok := p.pending.Take(id)
	if !ok {
		p.skip(env.line, transcript.SkipOrphanResult, "tool_result "+id+" has no tool_use in this file")
		return
	}

	text, nonText := transcript.ContentText(content)
	in := forensics.Input{
		Harness:        schema.HarnessClaudeCode,
		HarnessVersion: p.sess.HarnessVersion,
		Tool:           pc.name,
		Arguments:      pc.args,
		Context:        text,
		NonText:        nonText,
		IsError:        isError,
		ToolUseResult:  result,
	}
	rec := transcript.BuildCall(p.opts, p.detect, schema.ToolCall{
		SessionID:      p.sess.SessionID,
		CallID:         id,
		Tool:           pc.name,
		Timestamp:      pc.ts,
		Source:         schema.HarnessClaudeCode,
		HarnessVersion: p.sess.HarnessVersion,
		Model:          pc.model,
		Project:        p.sess.Project,
		Cwd:            firstNonEmpty(pc.cwd, p.sess.Cwd),
		GitBranch:      firstNonEmpty(pc.branch, p.sess.GitBranch),
		AgentID:        pc.agentID,
		Sidechain:      pc.sidechain,
		Turn:           sessionTurn(pc.turn, pc.agentID, pc.sidechain),
		MessageID:      pc.messageID,
		IsError:        isError,
		SourceLine:     env.line,
	}, in)
	if result != nil && result[0] == '{' {
		rec.SpawnedAgentID = jsonscan.StringOr(jsonscan.Get(result, "agentId"))
		if p.opts.KeepOriginalText && rec.Call.Truncated && rec.SavedText == nil {
			rec.OriginalText = metadataOriginal(result, rec.Call.Original)
		}
	}
	if pc.turn == p.turn {
		p.turnCalls = append(p.turnCalls, id)
	}
	p.emit(rec)
}

// originalFields are the toolUseResult fields that hold a tool's complete
// output (Grep content, Bash stdout); which one applies is decided by the
// size forensics measured, not by the tool's name.
var originalFields = [...]string{"content", "stdout"}

// metadataOriginal returns the toolUseResult text whose size is exactly the
// original forensics measured, so a stored "original" is never a preview.
// An original that is not exact (a Grep page's lower bound) has no text: the
// one of its size is a page, not the output.
func metadataOriginal(result []byte, o schema.Original) string {
	orig := o.Sizes
	if o.Precision != schema.PrecisionExact || !orig.Bytes.Known && !orig.Chars.Known {
		return ""
	}
	for _, field := range originalFields {
		raw := jsonscan.Get(result, field)
		if len(raw) == 0 || raw[0] != '"' {
			continue
		}
		text := jsonscan.StringOr(raw)
		m := forensics.Measure(text)
		if (!orig.Bytes.Known || m.Bytes == orig.Bytes) && (!orig.Chars.Known || m.Chars == orig.Chars) {
			return text
		}
	}
	return ""
}

func (p *Parser) system(env *envelope) {
	var c transcript.Compaction
	switch env.subtype {
	case "compact_boundary":
		c.Kind = transcript.CompactionFull
		c.Trigger = jsonscan.StringOr(jsonscan.Get(env.cMeta, "trigger"))
		if n, ok := jsonscan.Uint(jsonscan.Get(env.cMeta, "preTokens")); ok {
			c.PreTokens = schema.Known(n)
		}
	case "microcompact_boundary":
		c.Kind = transcript.CompactionMicro
		c.Trigger = jsonscan.StringOr(jsonscan.Get(env.mcMeta, "trigger"))
		if n, ok := jsonscan.Uint(jsonscan.Get(env.mcMeta, "preTokens")); ok {
			c.PreTokens = schema.Known(n)
		}
		ids := jsonscan.Array(jsonscan.Get(env.mcMeta, "compactedToolIds"))
		for ids.Next() {
			if s, ok := jsonscan.String(ids.Value()); ok {
				c.ClearedCallIDs = append(c.ClearedCallIDs, s)
			}
		}
	default:
		return
	}
	c.SessionID = p.sess.SessionID
	c.Line = env.line
	c.Timestamp = env.ts
	c.AgentID = env.agentID
	c.Sidechain = env.sidechain
	p.sess.Compactions = p.sess.Compactions.Plus(schema.Known(1))
	p.emit(&c)
}

// addPending records a tool call awaiting its result, evicting the oldest
// when too many are waiting.
func (p *Parser) addPending(pc *pendingCall) {
	for _, o := range p.pending.Put(pc.id, pc) {
		p.unpaired(o)
		p.skip(o.line, transcript.SkipUnpairedToolUse, o.name+" "+o.id+": evicted, too many calls awaiting results")
	}
}

// Flush emits the last answer and reports calls that never got a result.
func (p *Parser) Flush(emit transcript.Emit) {
	p.emit = emit
	p.flush()
	p.emit = nil
}

func (p *Parser) flush() {
	p.finishMessage()
	for _, pc := range p.pending.Drain() {
		p.unpaired(pc)
		p.skip(pc.line, transcript.SkipUnpairedToolUse, pc.name+" "+pc.id+" has no tool_result")
	}
}

// unpaired names a call that has no result (yet), with its turn: a
// sub-agent whose metadata names it as its spawning call is placed there.
func (p *Parser) unpaired(pc *pendingCall) {
	p.emit(&transcript.Unpaired{
		SessionID: p.sess.SessionID, CallID: pc.id, Tool: pc.name, Line: pc.line,
		Turn: sessionTurn(pc.turn, pc.agentID, pc.sidechain), AgentID: pc.agentID, Sidechain: pc.sidechain,
	})
}

// Session returns the session metadata gathered so far.
func (p *Parser) Session() schema.Session {
	s := p.sess
	if m := &p.msg; m.id != "" && !p.usageSeen[m.id] {
		s.InputTokens = schema.SumTokens(s.InputTokens, m.usageIn)
		s.OutputTokens = schema.SumTokens(s.OutputTokens, m.usageOut)
	}
	return s
}

// sessionTurn is the session turn of a record in turn n of its file. A
// sub-agent's file (its records carry the agent id) numbers the sub-agent's
// own prompts, not the session's: its records' turn is unknown until the
// call that spawned the agent places them in its turn (transcript.PlaceCall):
// the call's result names the agent (agentId), or the agent's metadata file
// names the call (AgentMeta), which also places the records of an agent
// whose Agent call was interrupted before its result.
func sessionTurn(n int, agentID string, sidechain bool) schema.Turn {
	if sidechain && agentID != "" {
		return schema.Turn{}
	}
	return schema.KnownTurn(n)
}

// AgentID is the sub-agent id of a sidechain file ("" for a main thread).
func (p *Parser) AgentID() string {
	if !p.sidechain {
		return ""
	}
	return p.agentID
}

func (p *Parser) skip(line int64, reason, detail string) {
	p.emit(&transcript.Skip{Line: line, Reason: reason, Detail: detail})
}

// readUsage returns input tokens (fresh + cache writes + cache reads: all
// the prompt the model processed) and output tokens.
// readUsage reads a message's usage: each figure unknown unless the usage
// reports it.
func readUsage(u []byte) (in, out schema.Count) {
	it := jsonscan.Object(u)
	for it.Next() {
		n, ok := jsonscan.Uint(it.Value())
		if !ok {
			continue
		}
		switch string(it.Key()) {
		case "input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens":
			in = schema.AddTokens(in, n)
		case "output_tokens":
			out = schema.Tokens(n)
		}
	}
	return in, out
}

func syntheticID(session string, line int64) string {
	return transcript.LineID(session, line)
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}
