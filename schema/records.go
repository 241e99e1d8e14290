// Package schema is ctxaudit's data model: the one definition of a tool call,
// an answer, a session and a stored tool output that the parsers, the
// forensics, the collector components, the ClickHouse writer and the CLI share.
//
// The JSON shape of these types is the contract of docs/design.md §8.4 (`ctxaudit
// postmortem --format json`, `ctxaudit ingest --dry-run --format jsonl`):
// field names are fixed and unknown sizes are null, never 0.
//
// This package is pure: no database, no collector imports.
package schema

import (
	"time"
)

// Sizes are the four measures of a text (docs/design.md §4.1). Tokens are an estimate
// (ceil(bytes/4)) unless a source gives a count.
type Sizes struct {
	Bytes  Count `json:"bytes" msg:"bytes,omitempty"`
	Chars  Count `json:"chars" msg:"chars,omitempty"`
	Lines  Count `json:"lines" msg:"lines,omitempty"`
	Tokens Count `json:"tokens" msg:"tokens,omitempty"`
}

// TokenEstimate is the token estimate of docs/design.md §3.3, ceil(bytes/4).
func TokenEstimate(bytes uint64) uint64 { return bytes/4 + min(bytes%4, 1) }

// TokensEstimated reports whether s's token figure is the estimate of its
// bytes rather than a count a source gave (which would, but for a
// coincidence, differ from it). Reports mark such a figure as an estimate.
func (s Sizes) TokensEstimated() bool {
	return s.Tokens.Known && s.Bytes.Known && s.Tokens.N == TokenEstimate(s.Bytes.N)
}

// In is the field of s that measures unit u; Unknown for the units that are
// not text sizes (items, matches, files).
func (s Sizes) In(u Unit) Count {
	switch u {
	case UnitBytes:
		return s.Bytes
	case UnitChars:
		return s.Chars
	case UnitLines:
		return s.Lines
	case UnitTokens:
		return s.Tokens
	}
	return Unknown
}

// SizesIn is Sizes with one known field, n in unit u (none for the units
// that are not text sizes).
func SizesIn(u Unit, n Count) Sizes {
	var s Sizes
	switch u {
	case UnitBytes:
		s.Bytes = n
	case UnitChars:
		s.Chars = n
	case UnitLines:
		s.Lines = n
	case UnitTokens:
		s.Tokens = n
	}
	return s
}

// Original is the size of the complete tool output, where that figure came
// from, and how exact it is. Precision is empty (JSON null) when no size is
// known; otherwise it qualifies the known bytes, chars and lines (a token
// figure is an estimate unless a source counted it: Sizes.TokensEstimated).
type Original struct {
	Sizes
	Source    OriginalSource `json:"source" msg:"source,omitempty"`
	Precision Precision      `json:"precision" msg:"precision,omitempty"`
}

// Range is the part of the original that was shown, in Unit. Lines are
// numbered as the harnesses number them: 1-based, End inclusive (lines
// 1–2000 of 5000). Every other unit is an offset: 0-based, End exclusive
// (chars 0–100000 of 156000). Coverage arithmetic depends on this convention.
type Range struct {
	Start Count `json:"start" msg:"start,omitempty"`
	End   Count `json:"end" msg:"end,omitempty"`
	Unit  Unit  `json:"unit" msg:"unit,omitempty"`
}

// Disclosure says which of the three things a complete truncation notice
// tells were present in what the model saw: where, why, and how to continue.
type Disclosure struct {
	Range  bool `json:"range" msg:"range,omitempty"`
	Reason bool `json:"reason" msg:"reason,omitempty"`
	Next   bool `json:"next" msg:"next,omitempty"`
}

// Score is the number of things disclosed, 0–3.
func (d Disclosure) Score() int {
	n := 0
	for _, b := range [...]bool{d.Range, d.Reason, d.Next} {
		if b {
			n++
		}
	}
	return n
}

// Forensics is the verdict of truncation detection on one tool result: how
// complete the output that entered the model's context was (docs/design.md §4).
type Forensics struct {
	Original Original `json:"original" msg:"original,omitempty"`
	Context  Sizes    `json:"context" msg:"context,omitempty"`

	Truncated bool           `json:"truncated" msg:"truncated,omitempty"`
	Kind      TruncationKind `json:"truncation_kind" msg:"truncation_kind,omitempty"`
	Strategy  Strategy       `json:"strategy" msg:"strategy,omitempty"`
	// PartialByRequest marks a call that itself asked for part of its target
	// (Read offset/limit, fetch start_index) and got that part: not truncated,
	// but its Shown range counts toward the target's coverage.
	PartialByRequest bool `json:"partial_by_request" msg:"partial_by_request,omitempty"`

	Shown Range `json:"shown" msg:"shown,omitempty"`
	Total Count `json:"total" msg:"total,omitempty"`
	// ShownTail is the second kept range of a head+tail cut (Shown is then
	// the head), in Shown's unit; its Start and End are unknown when there
	// is no second range.
	ShownTail Range `json:"shown_tail" msg:"shown_tail,omitempty"`
	// ShownTailIsEnd: ShownTail is known to end where the original ends.
	// False when there is no tail, and when the tail is the end of only
	// what the harness received (Claude Code's Bash failure path keeps the
	// tail of the first 30,000 chars, not of the output).
	ShownTailIsEnd bool `json:"shown_tail_is_end" msg:"shown_tail_is_end,omitempty"`
	// RefetchedSource: this call continues an earlier one by fetching its
	// source again (WebFetch with offset, an MCP fetch with start_index)
	// rather than reading a saved copy, so its piece may come from a
	// different version of the source than the earlier pieces.
	RefetchedSource bool `json:"refetched_source" msg:"refetched_source,omitempty"`

	// Reason is a machine word for why the output was cut: cap_bytes,
	// cap_chars, cap_lines, cap_tokens, cap_items, pagination, summarised,
	// too_large, timeout, cleared, unsupported_media.
	Reason     string     `json:"reason" msg:"reason,omitempty"`
	Disclosure Disclosure `json:"disclosure" msg:"disclosure,omitempty"`
	// NextHint is the verbatim "how to continue" text of the notice, if any.
	NextHint string `json:"next_hint" msg:"next_hint,omitempty"`
	// SavedRef is the path or URL of the full output, when the harness kept one.
	SavedRef   string `json:"saved_ref" msg:"saved_ref,omitempty"`
	RefVersion string `json:"ref_version" msg:"ref_version,omitempty"`
	// Marker is the verbatim truncation notice the model saw.
	Marker string `json:"marker" msg:"marker,omitempty"`
	// MarkerUnderstated: the notice claims fewer units dropped than really were.
	MarkerUnderstated bool `json:"marker_understated" msg:"marker_understated,omitempty"`
	// Detector names the rule that decided (e.g. "claude_code.persisted_output"),
	// for debugging and for per-rule dashboards.
	Detector string `json:"detector" msg:"detector,omitempty"`
}

// DisclosureScore is Disclosure.Score, exposed for JSON consumers.
func (f Forensics) DisclosureScore() int { return f.Disclosure.Score() }

// ToolCall is one tool invocation and the forensics of its result: one row of
// ctxaudit.tool_calls.
type ToolCall struct {
	SessionID string    `json:"session_id" msg:"session_id,omitempty"`
	CallID    string    `json:"call_id" msg:"call_id,omitempty"`
	Tool      string    `json:"tool" msg:"tool,omitempty"`
	Timestamp time.Time `json:"timestamp"`

	Source         Harness `json:"source" msg:"source,omitempty"`
	HarnessVersion string  `json:"harness_version" msg:"harness_version,omitempty"`
	Model          string  `json:"model" msg:"model,omitempty"`
	Project        string  `json:"project" msg:"project,omitempty"`
	Cwd            string  `json:"cwd" msg:"cwd,omitempty"`
	GitBranch      string  `json:"git_branch" msg:"git_branch,omitempty"`
	// AgentID is set for sub-agent (sidechain) threads.
	AgentID   string `json:"agent_id" msg:"agent_id,omitempty"`
	Sidechain bool   `json:"sidechain" msg:"sidechain,omitempty"`
	// Turn is the 0-based index of the user prompt this call belongs to;
	// unknown when the source did not say (a span without ctxaudit.turn).
	Turn Turn `json:"turn" msg:"turn,omitzero"`
	// MessageID is the assistant message that issued the call.
	MessageID string `json:"message_id" msg:"message_id,omitempty"`

	// Arguments is the call's input as JSON text.
	Arguments string `json:"arguments" msg:"arguments,omitempty"`
	// Target is what the call read: a file path, URL, search, or command.
	Target  string `json:"target" msg:"target,omitempty"`
	IsError bool   `json:"is_error" msg:"is_error,omitempty"`

	Forensics

	// Follow-through, filled by session analysis.
	FollowedUp bool `json:"followed_up" msg:"followed_up,omitempty"`
	// FollowUpUnknown: whether this truncated call was followed up is not
	// known, and FollowedUp is false only because none was found: a call of
	// its session that has no place among the others (no time, no source
	// line) would have continued it had it come after it (docs/design.md
	// §4.12). Stored as a NULL followed_up; its JSON is a null followed_up.
	FollowUpUnknown bool `json:"-" msg:"follow_up_unknown,omitempty"`
	// FollowUpExact: the session analysis that filled this truncated call
	// marks a follow-up it cannot know (FollowUpUnknown), so FollowedUp
	// false with FollowUpUnknown false is a known "not followed up". A call
	// analysed before that rule, or written by a writer that does not know
	// it, leaves it false, and readers then take FollowedUp false in a
	// session with an unordered call as "none known" (docs/design.md
	// §4.12). Stored as followed_up_exact.
	FollowUpExact   bool   `json:"-" msg:"follow_up_exact,omitempty"`
	ContinuationOf  string `json:"continuation_of" msg:"continuation_of,omitempty"`
	SessionCoverage Ratio  `json:"session_coverage" msg:"session_coverage,omitempty"`
	// CoverageUpperBound: SessionCoverage was computed against a
	// lower-bound original, so it is at most the share seen, and it is
	// never 1 (full coverage is never claimed from a lower bound).
	CoverageUpperBound bool `json:"coverage_upper_bound" msg:"coverage_upper_bound,omitempty"`
	// CoverageMixedVersions: the pieces counted in SessionCoverage came
	// from separate fetches of a source that may have changed between them.
	CoverageMixedVersions bool `json:"coverage_mixed_versions" msg:"coverage_mixed_versions,omitempty"`
	// Searched: a later search ran over the whole saved original, so it was
	// searched though not necessarily read.
	Searched bool `json:"searched" msg:"searched,omitempty"`

	// Content hashes (SHA-256, hex) of the stored texts in tool_outputs, empty if not stored.
	OriginalSHA256 string `json:"original_sha256,omitempty" msg:"original_sha256,omitempty"`
	ContextSHA256  string `json:"context_sha256,omitempty" msg:"context_sha256,omitempty"`

	// Where the call was read from, for error reports and re-ingestion.
	SourceFile string `json:"source_file,omitempty" msg:"source_file,omitempty"`
	SourceLine int64  `json:"source_line,omitempty" msg:"source_line,omitempty"`

	// Analysis is what session analysis this row reflects (see Analysis).
	Analysis Analysis `json:"-"`
}

// Answer is assistant text that follows tool results inside a turn, judged by
// the completeness of its inputs (docs/design.md §5): one row of ctxaudit.answers.
type Answer struct {
	SessionID string    `json:"session_id"`
	MessageID string    `json:"message_id"`
	Timestamp time.Time `json:"timestamp"`
	Turn      Turn      `json:"turn"`
	Source    Harness   `json:"source"`
	Model     string    `json:"model"`
	AgentID   string    `json:"agent_id"`
	Sidechain bool      `json:"sidechain"`
	Text      string    `json:"text"`

	// InputCallIDs are the calls of the turn before this answer.
	InputCallIDs []string `json:"input_call_ids"`
	// InputsUncertain: InputCallIDs are the calls the answer may rest on,
	// not calls known to be its inputs. No source named its inputs, and
	// its turn or one of theirs is unknown, so session analysis took every
	// call that may be of its turn (docs/design.md §5.1).
	InputsUncertain bool `json:"inputs_uncertain" msg:"inputs_uncertain,omitempty"`
	// IncompleteInputs are the inputs truncated and not recovered at answer time.
	IncompleteInputs []string `json:"incomplete_inputs"`
	// AbsenceClaim is Absence.IsClaim(): the answer claims, scoped or not,
	// that something is missing.
	AbsenceClaim bool `json:"absence_claim"`
	// Absence is the strongest absence claim the answer makes; AbsenceClause
	// is the clause that makes it, as written (code spans and quotes
	// blanked), and AbsenceScope the scope phrase of a scoped claim.
	Absence       Absence `json:"absence"`
	AbsenceClause string  `json:"absence_clause"`
	AbsenceScope  string  `json:"absence_scope"`
	Risk          Risk    `json:"risk"`
	// Reasons are machine words; ReasonCalls maps each to the call ids
	// behind it. (Its msg tag keeps a nil map nil in MessagePack, as in JSON.)
	Reasons     []string            `json:"reasons"`
	ReasonCalls map[string][]string `json:"reason_calls" msg:"reason_calls,allownil"`
	Verdict     string              `json:"verdict"`
	// Retracted: the message proved not to be an answer (it went on to call
	// a tool) after an analysis had returned it as one. Its row replaces
	// the answer's; readers skip it (ctxaudit.answers.retracted).
	Retracted bool `json:"retracted,omitempty"`

	Analysis Analysis `json:"-"`
}

// Session summarises one agent session: one row of ctxaudit.sessions.
type Session struct {
	SessionID      string    `json:"session_id"`
	Source         Harness   `json:"source"`
	HarnessVersion string    `json:"harness_version"`
	Model          string    `json:"model"`
	Project        string    `json:"project"`
	Cwd            string    `json:"cwd"`
	GitBranch      string    `json:"git_branch"`
	StartedAt      time.Time `json:"started_at"`
	EndedAt        time.Time `json:"ended_at"`
	SourceFile     string    `json:"source_file,omitempty"`

	// Turns is how many user turns the session had; unknown when a call
	// or answer's turn is.
	Turns          Count `json:"turns"`
	ToolCalls      int   `json:"tool_calls"`
	TruncatedCalls int   `json:"truncated_calls"`
	SilentCalls    int   `json:"silent_calls"`
	Answers        int   `json:"answers"`
	RiskyAnswers   int   `json:"risky_answers"`
	// RiskyAnswersUncertain is how many of RiskyAnswers rest on inputs that
	// are only the calls they may rest on (Answer.InputsUncertain): graded
	// at their worst, not known to be that risky. Unknown for a session
	// row stored before it was counted.
	RiskyAnswersUncertain Count `json:"risky_answers_uncertain"`
	// Compactions counts compaction / micro-compaction boundaries: results the
	// model saw were later cleared from its context. Unknown when the
	// source does not show them (spans do not).
	Compactions Count `json:"compactions"`
	MaxRisk     Risk  `json:"max_risk"`
	// Usage, summed once per assistant message (AddTokens); unknown when
	// no message reported any.
	InputTokens  Count `json:"input_tokens"`
	OutputTokens Count `json:"output_tokens"`

	Analysis Analysis `json:"-"`
}

// LastActive is when the session was last active: the later of its start
// and end (an end unknown, stored as the epoch, is before any start).
func (s *Session) LastActive() time.Time {
	if s.StartedAt.After(s.EndedAt) {
		return s.StartedAt
	}
	return s.EndedAt
}

// EarliestStart is the earliest start of the sessions, before which none of
// their records lies — a bound that lets a read of their records skip the
// days before it; zero, no bound, if one's start is not known.
func EarliestStart(sessions []Session) time.Time {
	var since time.Time
	for i := range sessions {
		start := sessions[i].StartedAt
		if !TimeKnown(start) {
			return time.Time{}
		}
		if i == 0 || start.Before(since) {
			since = start
		}
	}
	return since
}

// ToolOutput is a stored tool output text, content-addressed by the SHA-256 of
// the full text before capping and redaction: one row of ctxaudit.tool_outputs.
type ToolOutput struct {
	SHA256 string `json:"sha256"`
	// Bytes is the size of the full text; Text may be shorter when capped.
	Bytes      uint64    `json:"bytes"`
	Text       string    `json:"text"`
	Capped     bool      `json:"capped"`
	Redactions int       `json:"redactions"`
	FirstSeen  time.Time `json:"first_seen"`
}
