// Package otelconv maps ctxaudit's records to OpenTelemetry spans and back,
// in the GenAI semantic conventions plus the ctxaudit.* namespace of docs/design.md §6.
//
// A session becomes one trace: an `invoke_agent` span for the session, an
// `execute_tool` span per tool call and a `chat` span per answer. Trace and
// span ids are derived from the session, call and message ids, so the same
// record always maps to the same span (re-reading a transcript, or two
// collectors reading the same file, produce identical ids).
//
// The receiver uses ToolCallSpan & co. to emit; the exporter uses
// ToolCallFromAttributes & co. to store; the processor uses both.
package otelconv

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/ctxaudit/ctxaudit/collector/forensics"
)

// GenAI semantic-convention keys, from go.opentelemetry.io/otel/semconv
// v1.41.0 (the newest there that still defines gen_ai.*).
const (
	AttrOperationName     = string(semconv.GenAIOperationNameKey)
	AttrToolName          = string(semconv.GenAIToolNameKey)
	AttrToolCallID        = string(semconv.GenAIToolCallIDKey)
	AttrToolType          = string(semconv.GenAIToolTypeKey)
	AttrToolCallArguments = string(semconv.GenAIToolCallArgumentsKey)
	AttrToolCallResult    = forensics.AttrGenAIToolCallResult
	AttrConversationID    = string(semconv.GenAIConversationIDKey)
	AttrRequestModel      = string(semconv.GenAIRequestModelKey)
	AttrResponseModel     = string(semconv.GenAIResponseModelKey)
	AttrResponseID        = string(semconv.GenAIResponseIDKey)
	AttrAgentID           = string(semconv.GenAIAgentIDKey)
	AttrProviderName      = string(semconv.GenAIProviderNameKey)
	AttrUsageInputTokens  = string(semconv.GenAIUsageInputTokensKey)
	AttrUsageOutputTokens = string(semconv.GenAIUsageOutputTokensKey)
	AttrOutputMessages    = string(semconv.GenAIOutputMessagesKey)
	AttrErrorType         = string(semconv.ErrorTypeKey)

	// Values of gen_ai.operation.name. semconv declares them as
	// attribute.KeyValue variables, not constants; a test checks these
	// against semconv.GenAIOperationName*.
	OperationExecuteTool = "execute_tool"
	OperationChat        = "chat"
	OperationInvokeAgent = "invoke_agent"

	// Claude Code's own telemetry keys (its claude_code.* log events), which
	// no semantic convention defines.
	ClaudeCodeSessionID     = "session.id"
	ClaudeCodeToolName      = "tool_name"
	ClaudeCodeToolUseID     = "tool_use_id"
	ClaudeCodeSuccess       = "success"
	ClaudeCodeToolInput     = "tool_input"
	ClaudeCodeToolParams    = "tool_parameters"
	ClaudeCodeAppVersion    = "app.version"
	ClaudeCodeEventName     = "event.name"
	ClaudeCodeToolResult    = "claude_code.tool_result"
	ClaudeCodeToolResultEvt = "tool_result"
)

// The ctxaudit.* namespace. The output measurements (ctxaudit.output.*) are
// defined next to the forensics that reads them; these complete a record.
const (
	// Call identity and context.
	AttrSource         = "ctxaudit.source" // harness: claude_code, codex, pi, …
	AttrHarnessVersion = "ctxaudit.harness.version"
	AttrProject        = "ctxaudit.project"
	AttrCwd            = "ctxaudit.cwd"
	AttrGitBranch      = "ctxaudit.git.branch"
	AttrSidechain      = "ctxaudit.sidechain"
	AttrTurn           = "ctxaudit.turn"
	AttrMessageID      = "ctxaudit.message.id"
	AttrTarget         = "ctxaudit.target"
	AttrIsError        = "ctxaudit.is_error"
	AttrSourceFile     = "ctxaudit.source.file"
	AttrSourceLine     = "ctxaudit.source.line"

	// Output measurements not covered by forensics' keys.
	AttrOriginalSource    = "ctxaudit.output.original.source"
	AttrPartialByRequest  = "ctxaudit.output.partial_by_request"
	AttrDisclosureRange   = "ctxaudit.output.disclosure.range"
	AttrDisclosureReason  = "ctxaudit.output.disclosure.reason"
	AttrDisclosureNext    = "ctxaudit.output.disclosure.next"
	AttrDisclosureScore   = "ctxaudit.output.disclosure.score"
	AttrRefVersion        = "ctxaudit.output.ref_version"
	AttrMarkerUnderstated = "ctxaudit.output.marker_understated"
	AttrDetector          = "ctxaudit.output.detector"

	// Follow-through (session analysis).
	AttrFollowedUp = "ctxaudit.followed_up"
	// AttrFollowUpUnknown: whether the cut call was followed up is not
	// known (ctxaudit.followed_up is then absent): a call of the session
	// that has no place among the others would have continued it had it
	// come after it.
	AttrFollowUpUnknown = "ctxaudit.followed_up.unknown"
	// AttrFollowUpExact: the analysis that filled the cut call marks every
	// follow-up it cannot know (ctxaudit.followed_up.unknown), so an absent
	// ctxaudit.followed_up is a known "not followed up" even in a session
	// with a call nothing orders (schema.ToolCall.FollowUpExact).
	AttrFollowUpExact   = "ctxaudit.followed_up.exact"
	AttrContinuationOf  = "ctxaudit.continuation_of"
	AttrSessionCoverage = "ctxaudit.session_coverage"
	// AttrCoverageUpperBound: session_coverage is a share of a lower-bound
	// original, so at most the share seen.
	AttrCoverageUpperBound = "ctxaudit.session_coverage.upper_bound"
	// AttrCoverageMixedVersions: the pieces behind session_coverage came
	// from separate fetches of a source that may have changed between them.
	AttrCoverageMixedVersions = "ctxaudit.session_coverage.mixed_versions"
	AttrSearched              = "ctxaudit.searched"

	// What session analysis a record reflects (schema.Analysis): set on
	// analysed calls, answers and sessions, absent on a call as read. The
	// store ranks writes of one record by them.
	AttrAnalysisRecords = "ctxaudit.analysis.records"
	AttrAnalysisPartial = "ctxaudit.analysis.partial"
	// AttrAnalysisUpstream marks a span whose session its emitter analyses
	// itself (the transcript receiver's spans, calls as read included, and
	// the processor's analysis output): a processor downstream leaves it out
	// of its own session analysis.
	AttrAnalysisUpstream = "ctxaudit.analysis.upstream"
	// AttrAnalysisPending marks an execute_tool span whose call a processor
	// holds for session analysis: its tool_calls row comes later, written
	// once with the analysis, so a writer stores everything else of the
	// span but not that row.
	AttrAnalysisPending = "ctxaudit.analysis.pending"

	// Answers (chat spans).
	AttrAnswerText   = "ctxaudit.answer.text"
	AttrAnswerInputs = "ctxaudit.answer.inputs"
	// AttrAnswerInputsUncertain: the inputs are the calls the answer may
	// rest on, not calls known to be its inputs (schema.Answer).
	AttrAnswerInputsUncertain = "ctxaudit.answer.inputs_uncertain"
	AttrAnswerIncomplete      = "ctxaudit.answer.incomplete_inputs"
	AttrAnswerAbsenceClaim    = "ctxaudit.answer.absence_claim"
	// AttrAnswerAbsence is none, scoped or unscoped (schema.Absence).
	AttrAnswerAbsence       = "ctxaudit.answer.absence"
	AttrAnswerAbsenceClause = "ctxaudit.answer.absence_clause"
	AttrAnswerAbsenceScope  = "ctxaudit.answer.absence_scope"
	AttrAnswerRisk          = "ctxaudit.answer.risk"
	AttrAnswerReasons       = "ctxaudit.answer.reasons"
	// AttrAnswerReasonCalls holds "reason=id1,id2" entries, one per reason.
	AttrAnswerReasonCalls = "ctxaudit.answer.reason_calls"
	AttrAnswerVerdict     = "ctxaudit.answer.verdict"
	// AttrAnswerRetracted marks a chat span that takes back an answer an
	// earlier analysis sent: its message went on to call a tool.
	AttrAnswerRetracted = "ctxaudit.answer.retracted"

	// Sessions (invoke_agent spans).
	AttrSessionTurns          = "ctxaudit.session.turns"
	AttrSessionToolCalls      = "ctxaudit.session.tool_calls"
	AttrSessionTruncatedCalls = "ctxaudit.session.truncated_calls"
	AttrSessionSilentCalls    = "ctxaudit.session.silent_calls"
	AttrSessionAnswers        = "ctxaudit.session.answers"
	AttrSessionRiskyAnswers   = "ctxaudit.session.risky_answers"
	// AttrSessionRiskyAnswersUncertain counts the risky answers whose inputs
	// are uncertain; absent when not counted.
	AttrSessionRiskyAnswersUncertain = "ctxaudit.session.risky_answers_uncertain"
	AttrSessionCompactions           = "ctxaudit.session.compactions"
	AttrSessionMaxRisk               = "ctxaudit.session.max_risk"
	// AttrSessionNotAnswers lists the message ids the emitter learned, since
	// its last emission of the session, not to be answers (they called a
	// tool): a store that holds one of them as an answer — written by a
	// process or a path that did not know — takes it back. Absent when none.
	AttrSessionNotAnswers = "ctxaudit.session.not_answers"
)

// Instrumentation scope names of ctxaudit's own components. They identify
// the emitter only; whether a span is already analysed is said by
// AttrAnalysisUpstream on the span, never inferred from its scope.
const (
	ScopeTranscriptReceiver = "github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver"
	ScopeProcessor          = "github.com/ctxaudit/ctxaudit/collector/processor/ctxauditprocessor"
)

// service.name of the resource under which each component emits its own
// spans ("ctxaudit" and the component). The harness a span comes from is
// ctxaudit.source on the span, not the service.
const (
	ServiceTranscriptReceiver = "ctxaudit-agenttranscripts"
	ServiceProcessor          = "ctxaudit-processor"
)

// PutEmitterResource writes the resource of spans a ctxaudit component
// emits: service.name, and service.version when the build knows it.
func PutEmitterResource(res pcommon.Map, service, version string) {
	res.PutStr(string(semconv.ServiceNameKey), service)
	if version != "" {
		res.PutStr(string(semconv.ServiceVersionKey), version)
	}
}
