// Package transcript defines what the per-harness transcript parsers
// (claudecode, codex, pi) produce, and the pieces they share: the record
// types, a bounded line reader and format detection.
//
// A parser is stateful per file and fed one line at a time, so the same code
// serves a one-shot import of a finished file and a collector that tails a
// growing one. Parsers are pure: they never touch the file system. The one
// thing they may need from it, the full output a harness spilled to a file,
// comes through an injected ReadSaved function.
package transcript

import (
	"strconv"
	"strings"
	"time"

	"github.com/ctxaudit/ctxaudit/collector/forensics"
	"github.com/ctxaudit/ctxaudit/schema"
)

// Parser turns the lines of one transcript file into records.
type Parser interface {
	// Feed parses one line (without its newline) and sends the records it
	// completes to emit. lineNo is 1-based and is what skipped-line reports
	// and SourceLine carry. Bad lines are reported as Skip records, never as
	// errors: a transcript is data, not code.
	Feed(lineNo int64, line []byte, emit Emit)
	// Flush ends the stream: it sends emit what was waiting for a later line
	// (the last answer, tool calls that never got a result) and must be the
	// last call.
	Flush(emit Emit)
	// Session is the session metadata gathered so far (ids, harness version,
	// model, cwd, branch, time span, turns, compactions, usage summed once
	// per assistant message). Counts that need analysis are left zero.
	Session() schema.Session
}

// Emit receives records in source order. The record, and everything it
// points to, belongs to the receiver.
type Emit func(Record)

// Record is one of *Call, *Answer, *NotAnswer, *TurnStart, *Unpaired,
// *Compaction or *Skip.
type Record interface{ isRecord() }

// Call is a completed tool call: the issuing line paired with its result line.
type Call struct {
	// Call has Forensics filled by forensics.Detect and SourceFile/SourceLine
	// set to the line that carried the result.
	Call schema.ToolCall
	// ContextText is the text that entered the model's context.
	ContextText string
	// SavedText is the saved full output read through ReadSaved while
	// detecting, or nil when no saved file was read. A file the harness cut
	// before saving it holds only the output's first part: then the call's
	// original is not measured from it (not saved_file, or a lower bound).
	SavedText []byte
	// OriginalText is the full output of a truncated call as the harness's
	// own metadata carries it (e.g. Claude Code toolUseResult.content of a
	// Grep), when it is exactly the original forensics measured; "" otherwise.
	OriginalText string
	// SpawnedAgentID is set on a Claude Code Task/Agent call: the agent id of
	// the sub-agent thread it ran, so that thread can be placed in this turn.
	SpawnedAgentID string
}

// Answer is an answer candidate: assistant text that ends an agent step
// (a message with text and no tool call) after at least one tool result in
// its turn. Risk, reasons and verdicts are left to analysis.
type Answer struct {
	// Answer has SessionID, MessageID, Timestamp, Turn, Source, Model,
	// AgentID, Sidechain, Text and InputCallIDs set.
	Answer schema.Answer
	Line   int64
}

// NotAnswer names an assistant message with text that a later line showed
// to call a tool: a Claude Code message whose tool_use block follows its
// text block, a Codex message followed in its response by a function call.
// Such a message is no answer, whether or not its call ever gets a result.
// The parser that reads both lines never offers the message as an answer;
// a reader that flushed the parser between them (a collector analysing a
// session that paused there) has already seen it as one and must take it
// back. It is sent on the line that shows it, not with the call, which may
// never complete (no result, or a result line skipped).
type NotAnswer struct {
	SessionID string
	MessageID string
	Line      int64
}

// TurnStart marks a real user prompt (not a tool result, meta line or local
// command) that the model answered.
type TurnStart struct {
	SessionID string
	Turn      int
	Line      int64
	Timestamp time.Time
	AgentID   string
	Sidechain bool
}

// Unpaired is a tool call whose result its file has not shown: sent with
// the SkipUnpairedToolUse skip of the call (at Flush, or when it was
// evicted), it says which turn the call was issued in. A Claude Code
// sub-agent's metadata names the call that spawned it (toolUseId); when that
// call was interrupted before its result, this is all that places the
// sub-agent's records in the call's turn. A later line may still bring the
// result (a collector flushes a parser whose file is still growing): the
// Call then says the same of the call.
type Unpaired struct {
	SessionID string
	CallID    string
	Tool      string
	// Turn is the call's turn in the session, unknown in a sub-agent's file
	// (which numbers only the sub-agent's own prompts).
	Turn      schema.Turn
	Line      int64
	AgentID   string
	Sidechain bool
}

// Compaction kinds.
const (
	// CompactionFull: the conversation was summarised and replaced.
	CompactionFull = "compact"
	// CompactionMicro: individual old tool results were cleared.
	CompactionMicro = "microcompact"
)

// Compaction records that results the model had seen were later cleared from
// its context (Claude Code compact_boundary / microcompact_boundary, Codex
// compacted, pi compaction).
type Compaction struct {
	SessionID string
	Kind      string
	Trigger   string
	Line      int64
	Timestamp time.Time
	// PreTokens is the context size before compaction, when recorded.
	PreTokens schema.Count
	// ClearedCallIDs are the tool calls whose results were cleared, when the
	// harness lists them (Claude Code microcompact).
	ClearedCallIDs []string
	AgentID        string
	Sidechain      bool
}

// Skip reports a line (or a call) that could not be used. Reason is a stable
// machine word; Line is the line to look at.
type Skip struct {
	Line   int64
	Reason string
	Detail string
}

// Skip reasons.
const (
	// SkipMalformed: the line is not a JSON object.
	SkipMalformed = "malformed_json"
	// SkipTooLong: the line exceeds the configured maximum size.
	SkipTooLong = "line_too_long"
	// SkipUnpairedToolUse: a tool call never got a result (at Flush, or
	// evicted when too many calls were waiting).
	SkipUnpairedToolUse = "unpaired_tool_use"
	// SkipOrphanResult: a result whose call was never seen.
	SkipOrphanResult = "orphan_tool_result"
	// SkipBadRecord: valid JSON, but not a record this format defines
	// (e.g. a tool result without an id).
	SkipBadRecord = "bad_record"
	// SkipBadAgentMeta: a Claude Code sub-agent's metadata file
	// (agent-<id>.meta.json) could not be read or is not the object Claude
	// Code writes; the sub-agent's records are kept, placed as if the file
	// were absent. The Skip names the metadata file, line 0 (the whole file).
	SkipBadAgentMeta = "bad_agent_meta"
)

func (*Call) isRecord()       {}
func (*Answer) isRecord()     {}
func (*NotAnswer) isRecord()  {}
func (*TurnStart) isRecord()  {}
func (*Unpaired) isRecord()   {}
func (*Compaction) isRecord() {}
func (*Skip) isRecord()       {}

// Options are what every parser needs from its caller.
type Options struct {
	// SourceFile is the path stored in ToolCall.SourceFile and Session.SourceFile.
	SourceFile string
	// ReadSaved reads a saved full output named by a truncation notice; nil
	// when saved files are not readable (see forensics.Input.ReadSaved).
	ReadSaved func(ref string) ([]byte, error)
	// Detect runs forensics on one result; nil means forensics.Detect. It
	// exists so benchmarks can separate parsing from detection.
	Detect func(forensics.Input) schema.Forensics
	// MaxPending bounds the tool calls waiting for their result; beyond it
	// the oldest is reported as unpaired. Zero means DefaultMaxPending.
	MaxPending int
	// KeepOriginalText fills Call.OriginalText. It costs a decode of the
	// full output of every truncated call, so only callers that store
	// originals ask for it.
	KeepOriginalText bool
}

// DefaultMaxPending is far above the widest parallel fan-out a harness
// issues (tens of calls), yet keeps a file of results-less calls from
// growing memory without bound.
const DefaultMaxPending = 4096

// DetectFunc returns o.Detect or forensics.Detect.
func (o Options) DetectFunc() func(forensics.Input) schema.Forensics {
	if o.Detect != nil {
		return o.Detect
	}
	return forensics.Detect
}

// PendingLimit returns o.MaxPending or DefaultMaxPending.
func (o Options) PendingLimit() int {
	if o.MaxPending > 0 {
		return o.MaxPending
	}
	return DefaultMaxPending
}

// ParseTime parses the ISO-8601 timestamps transcripts use; the zero time
// when s is empty or malformed, or names a time no DateTime column holds
// (before 1970 or after 2106, schema.StorableTime), which the store would
// refuse.
func ParseTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || !schema.StorableTime(t) {
		return time.Time{}
	}
	return t.UTC()
}

// LineID is the stable id of a record that has none of its own (a Codex
// answer, a pi v1 message): the session id and the 1-based line it was read
// from. Transcripts are append-only, so re-reading a file yields the same ids.
func LineID(sessionID string, line int64) string {
	return sessionID + ":" + strconv.FormatInt(line, 10)
}

// NewSession is the metadata a parser of file gathers into, before its
// first line: a transcript shows its turns and compactions, so both are
// known from the start — none yet.
func NewSession(source schema.Harness, file string) schema.Session {
	return schema.Session{
		SessionID: SessionIDFromPath(file), Source: source, SourceFile: file,
		Turns: schema.Known(0), Compactions: schema.Known(0),
	}
}

// SessionIDFromPath derives a session id from a transcript file name, for
// files whose lines do not carry one: the UUID at the end of a Codex
// rollout-<time>-<uuid>.jsonl or a pi <time>_<uuid>.jsonl, else the base name.
func SessionIDFromPath(p string) string {
	if p == "" {
		return ""
	}
	base := p
	if i := strings.LastIndexAny(base, `/\`); i >= 0 {
		base = base[i+1:]
	}
	base = strings.TrimSuffix(base, ".jsonl")
	const uuidLen = 36
	if len(base) > uuidLen {
		if tail := base[len(base)-uuidLen:]; isUUID(tail) {
			return tail
		}
	}
	return base
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}
