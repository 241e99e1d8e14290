package otelconv

import (
	"crypto/sha256"
	"math"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ctxaudit/ctxaudit/collector/forensics"
	"github.com/ctxaudit/ctxaudit/schema"
)

// TraceID derives a session's trace id from its session id.
func TraceID(sessionID string) pcommon.TraceID {
	sum := sha256.Sum256([]byte("ctxaudit/trace/" + sessionID))
	var id pcommon.TraceID
	copy(id[:], sum[:16])
	return id
}

// SpanID derives a span id from the session, the record kind and its id.
func SpanID(sessionID, kind, id string) pcommon.SpanID {
	sum := sha256.Sum256([]byte("ctxaudit/span/" + kind + "/" + sessionID + "/" + id))
	var sid pcommon.SpanID
	copy(sid[:], sum[:8])
	return sid
}

// ts is t as a span's timestamp. The zero time — no time known, which the
// store writes as 1970-01-01 — is 0, OTLP's unset time, read back as
// 1970-01-01 too; converted as it is, it wrapped around to 1754, a time no
// table holds, and the record written through spans was left out where
// `ctxaudit ingest` stored it.
func ts(t time.Time) pcommon.Timestamp {
	if t.IsZero() {
		return 0
	}
	return pcommon.NewTimestampFromTime(t)
}

// AppendToolCall adds an execute_tool span for c, child of its session span.
func AppendToolCall(spans ptrace.SpanSlice, c *schema.ToolCall) ptrace.Span {
	var ids sessionIDs
	return appendToolCall(spans, c, &ids, false)
}

// AppendAnalysedSession adds the spans of one analysed session: its
// invoke_agent span (unless meta is nil), with the messages learned not to
// be answers (AttrSessionNotAnswers), a span per call and one per answer,
// each marked AttrAnalysisUpstream — the emitter analysed the session, so no
// processor downstream does it again. The ids derived from a session are
// computed once for all its spans, and the mark is written with the other
// attributes (marking the spans afterwards looked every one of them up again).
func AppendAnalysedSession(spans ptrace.SpanSlice, meta *schema.Session, notAnswers []string, calls []schema.ToolCall, answers []schema.Answer) {
	var ids sessionIDs
	if meta != nil {
		m := AppendSession(spans, meta).Attributes()
		m.PutBool(AttrAnalysisUpstream, true)
		if len(notAnswers) > 0 {
			putStrings(m, AttrSessionNotAnswers, notAnswers)
		}
	}
	for i := range calls {
		appendToolCall(spans, &calls[i], &ids, true)
	}
	for i := range answers {
		AppendAnswer(spans, &answers[i]).Attributes().PutBool(AttrAnalysisUpstream, true)
	}
}

// sessionIDs remembers the trace and session span ids of the last session
// it derived them for: SHA-256 twice per span otherwise.
type sessionIDs struct {
	session string
	set     bool
	trace   pcommon.TraceID
	parent  pcommon.SpanID
}

func (s *sessionIDs) of(session string) (pcommon.TraceID, pcommon.SpanID) {
	if !s.set || s.session != session {
		s.session, s.set = session, true
		s.trace, s.parent = TraceID(session), SpanID(session, "session", session)
	}
	return s.trace, s.parent
}

func appendToolCall(spans ptrace.SpanSlice, c *schema.ToolCall, ids *sessionIDs, upstream bool) ptrace.Span {
	sp := spans.AppendEmpty()
	sp.SetName(OperationExecuteTool + " " + c.Tool)
	sp.SetKind(ptrace.SpanKindInternal)
	trace, parent := ids.of(c.SessionID)
	sp.SetTraceID(trace)
	sp.SetSpanID(SpanID(c.SessionID, "call", c.CallID))
	sp.SetParentSpanID(parent)
	sp.SetStartTimestamp(ts(c.Timestamp))
	sp.SetEndTimestamp(ts(c.Timestamp))
	if c.IsError {
		sp.Status().SetCode(ptrace.StatusCodeError)
	}
	m := sp.Attributes()
	n := toolCallAttributes(c)
	if upstream {
		m.EnsureCapacity(n + 1)
		m.PutBool(AttrAnalysisUpstream, true)
	} else {
		m.EnsureCapacity(n)
	}
	putToolCall(m, c)
	return sp
}

// toolCallAttributes is how many attributes PutToolCall writes for c, its
// forensics and analysis included: the attribute slice is sized once, and
// exactly — each slot is a key and a value, and an emitted span is built
// for every analysed call (TestToolCallAttributesCount).
func toolCallAttributes(c *schema.ToolCall) int {
	const always = 4 // operation, tool, call and conversation ids
	n := always + forensicsAttributes(&c.Forensics) + oneIf(c.Turn.Known)
	n += trueCount(c.Sidechain, c.IsError, c.FollowedUp, c.FollowUpUnknown, c.FollowUpExact, c.Searched, c.CoverageUpperBound, c.CoverageMixedVersions)
	n += nonEmptyCount(c.Model, c.AgentID, c.Arguments, string(c.Source), c.HarnessVersion, c.Project,
		c.Cwd, c.GitBranch, c.MessageID, c.Target, c.SourceFile, c.ContinuationOf)
	n += oneIf(c.IsError) + oneIf(c.SourceLine > 0) + oneIf(c.SessionCoverage.Known)
	if c.Analysis.Done {
		n += 1 + oneIf(c.Analysis.Partial)
	}
	return n
}

// forensicsAttributes is how many attributes PutForensics writes for f.
func forensicsAttributes(f *schema.Forensics) int {
	const always = 3 // original source, truncated, disclosure score
	n := always + trueCount(f.PartialByRequest, f.ShownTailIsEnd, f.RefetchedSource,
		f.Disclosure.Range, f.Disclosure.Reason, writesDisclosureNext(f), f.MarkerUnderstated)
	for _, c := range []schema.Count{f.Original.Bytes, f.Original.Chars, f.Original.Lines, f.Original.Tokens,
		f.Context.Bytes, f.Context.Chars, f.Context.Lines, f.Context.Tokens,
		f.Shown.Start, f.Shown.End, f.Total, f.ShownTail.Start, f.ShownTail.End} {
		_, stored := c.Stored()
		n += oneIf(stored)
	}
	return n + nonEmptyCount(string(f.Original.Precision), string(f.Kind), string(f.Strategy), string(f.Shown.Unit),
		f.Reason, f.NextHint, f.SavedRef, f.RefVersion, f.Marker, f.Detector)
}

// putTrue writes a flag only when it is set: an absent bool key reads as
// false (docs/attributes.md), and leaving the false ones out spares an
// emitted call a dozen attributes — each one an allocation, and a scan of
// the attributes already written (pcommon.Map.Put looks for the key first).
// ctxaudit.output.truncated is written either way (it is the verdict
// itself), and ctxaudit.output.disclosure.next whenever there is a hint.
func putTrue(m pcommon.Map, k string, v bool) {
	if v {
		m.PutBool(k, true)
	}
}

// writesDisclosureNext: ctxaudit.output.disclosure.next is written when
// true, and false too beside a hint — a hint alone reads as a notice that
// told how to continue (reportedFigures).
func writesDisclosureNext(f *schema.Forensics) bool { return f.Disclosure.Next || f.NextHint != "" }

func trueCount(flags ...bool) int {
	n := 0
	for _, f := range flags {
		n += oneIf(f)
	}
	return n
}

func nonEmptyCount(vals ...string) int {
	n := 0
	for _, v := range vals {
		n += oneIf(v != "")
	}
	return n
}

func oneIf(b bool) int {
	if b {
		return 1
	}
	return 0
}

// PutToolCall writes every field of c as span attributes. Unknown sizes are
// left out, so that absent means unknown on the way back.
func PutToolCall(m pcommon.Map, c *schema.ToolCall) {
	m.EnsureCapacity(m.Len() + toolCallAttributes(c))
	putToolCall(m, c)
}

// putToolCall is PutToolCall into a map that already has room for it: the
// count is taken once per span, not again for its forensics.
func putToolCall(m pcommon.Map, c *schema.ToolCall) {
	m.PutStr(AttrOperationName, OperationExecuteTool)
	m.PutStr(AttrToolName, c.Tool)
	m.PutStr(AttrToolCallID, c.CallID)
	m.PutStr(AttrConversationID, c.SessionID)
	putNonEmpty(m, AttrRequestModel, c.Model)
	putNonEmpty(m, AttrAgentID, c.AgentID)
	putNonEmpty(m, AttrToolCallArguments, c.Arguments)
	if c.IsError {
		m.PutStr(AttrErrorType, "tool_error")
	}
	putNonEmpty(m, AttrSource, string(c.Source))
	putNonEmpty(m, AttrHarnessVersion, c.HarnessVersion)
	putNonEmpty(m, AttrProject, c.Project)
	putNonEmpty(m, AttrCwd, c.Cwd)
	putNonEmpty(m, AttrGitBranch, c.GitBranch)
	putTrue(m, AttrSidechain, c.Sidechain)
	putTurn(m, c.Turn)
	putNonEmpty(m, AttrMessageID, c.MessageID)
	putNonEmpty(m, AttrTarget, c.Target)
	putTrue(m, AttrIsError, c.IsError)
	putNonEmpty(m, AttrSourceFile, c.SourceFile)
	if c.SourceLine > 0 {
		m.PutInt(AttrSourceLine, c.SourceLine)
	}
	putForensics(m, &c.Forensics)
	putTrue(m, AttrFollowedUp, c.FollowedUp)
	putTrue(m, AttrFollowUpUnknown, c.FollowUpUnknown)
	putTrue(m, AttrFollowUpExact, c.FollowUpExact)
	putNonEmpty(m, AttrContinuationOf, c.ContinuationOf)
	if c.SessionCoverage.Known {
		m.PutDouble(AttrSessionCoverage, c.SessionCoverage.V)
	}
	putTrue(m, AttrSearched, c.Searched)
	putTrue(m, AttrCoverageUpperBound, c.CoverageUpperBound)
	putTrue(m, AttrCoverageMixedVersions, c.CoverageMixedVersions)
	putAnalysis(m, c.Analysis)
}

// putAnalysis writes what analysis a record reflects; nothing for a record
// no analysis has filled.
func putAnalysis(m pcommon.Map, a schema.Analysis) {
	if !a.Done {
		return
	}
	m.PutInt(AttrAnalysisRecords, int64(max(a.Records, 0)))
	putTrue(m, AttrAnalysisPartial, a.Partial)
}

// MarkAnalysedUpstream stamps every span of spans with AttrAnalysisUpstream:
// the emitter analyses their sessions, so no processor downstream does it again.
func MarkAnalysedUpstream(spans ptrace.SpanSlice) {
	for i := 0; i < spans.Len(); i++ {
		spans.At(i).Attributes().PutBool(AttrAnalysisUpstream, true)
	}
}

// AnalysedUpstream reports whether a span's session is analysed by the
// component that emitted it (MarkAnalysedUpstream).
func AnalysedUpstream(m pcommon.Map) bool {
	v, ok := m.Get(AttrAnalysisUpstream)
	return ok && v.Type() == pcommon.ValueTypeBool && v.Bool()
}

// MarkAnalysisPending stamps a span with AttrAnalysisPending: its call's
// row is written later, by the session analysis that holds it.
func MarkAnalysisPending(m pcommon.Map) { m.PutBool(AttrAnalysisPending, true) }

// AnalysisPending reports whether a span's call row comes later
// (MarkAnalysisPending).
func AnalysisPending(m pcommon.Map) bool {
	v, ok := m.Get(AttrAnalysisPending)
	return ok && v.Type() == pcommon.ValueTypeBool && v.Bool()
}

// analysisOf is the inverse of putAnalysis.
func analysisOf(m pcommon.Map) schema.Analysis {
	return analysisFrom(count(m, AttrAnalysisRecords), boolean(m, AttrAnalysisPartial))
}

// analysisFrom is the analysis of a record whose ctxaudit.analysis.records
// and .partial attributes read records and partial.
func analysisFrom(records schema.Count, partial bool) schema.Analysis {
	if !records.Known {
		return schema.Analysis{}
	}
	return schema.Analysis{Done: true, Partial: partial, Records: int(min(records.N, 1<<31-1))}
}

// PutForensics writes the ctxaudit.output.* attributes of f. The texts
// detection quotes (marker, reason, hint, saved path) are usually slices of
// the tool output; they are copied, so that a record read back from the
// attributes (and held, e.g. in a session buffer) does not keep the whole
// output alive.
func PutForensics(m pcommon.Map, f *schema.Forensics) {
	// Room for every attribute below at once, instead of the map growing
	// (and being copied) several times per span.
	m.EnsureCapacity(m.Len() + forensicsAttributes(f))
	putForensics(m, f)
}

// putForensics is PutForensics into a map that already has room for it.
func putForensics(m pcommon.Map, f *schema.Forensics) {
	putCount(m, forensics.AttrOriginalBytes, f.Original.Bytes)
	putCount(m, forensics.AttrOriginalChars, f.Original.Chars)
	putCount(m, forensics.AttrOriginalLines, f.Original.Lines)
	putCount(m, forensics.AttrOriginalTokens, f.Original.Tokens)
	// Always written: absent means the source reported none (see reportedFigures).
	src := f.Original.Source
	if src == "" {
		src = schema.SourceUnknown
	}
	m.PutStr(AttrOriginalSource, string(src))
	putNonEmpty(m, forensics.AttrOriginalPrecision, string(f.Original.Precision))
	putCount(m, forensics.AttrContextBytes, f.Context.Bytes)
	putCount(m, forensics.AttrContextChars, f.Context.Chars)
	putCount(m, forensics.AttrContextLines, f.Context.Lines)
	putCount(m, forensics.AttrContextTokens, f.Context.Tokens)
	m.PutBool(forensics.AttrTruncated, f.Truncated)
	putNonEmpty(m, forensics.AttrTruncationKind, string(f.Kind))
	putNonEmpty(m, forensics.AttrStrategy, string(f.Strategy))
	putTrue(m, AttrPartialByRequest, f.PartialByRequest)
	putCount(m, forensics.AttrShownStart, f.Shown.Start)
	putCount(m, forensics.AttrShownEnd, f.Shown.End)
	putNonEmpty(m, forensics.AttrShownUnit, string(f.Shown.Unit))
	putCount(m, forensics.AttrTotal, f.Total)
	putCount(m, forensics.AttrShownTailStart, f.ShownTail.Start)
	putCount(m, forensics.AttrShownTailEnd, f.ShownTail.End)
	putTrue(m, forensics.AttrShownTailIsEnd, f.ShownTailIsEnd)
	putTrue(m, forensics.AttrRefetchedSource, f.RefetchedSource)
	putNonEmpty(m, forensics.AttrReason, strings.Clone(f.Reason))
	putTrue(m, AttrDisclosureRange, f.Disclosure.Range)
	putTrue(m, AttrDisclosureReason, f.Disclosure.Reason)
	if writesDisclosureNext(f) {
		m.PutBool(AttrDisclosureNext, f.Disclosure.Next)
	}
	m.PutInt(AttrDisclosureScore, int64(f.Disclosure.Score()))
	putNonEmpty(m, forensics.AttrNext, strings.Clone(f.NextHint))
	putNonEmpty(m, forensics.AttrSavedRef, strings.Clone(f.SavedRef))
	putNonEmpty(m, AttrRefVersion, f.RefVersion)
	putNonEmpty(m, forensics.AttrMarker, strings.Clone(f.Marker))
	putTrue(m, AttrMarkerUnderstated, f.MarkerUnderstated)
	putNonEmpty(m, AttrDetector, f.Detector)
}

// AppendAnswer adds a chat span for a.
func AppendAnswer(spans ptrace.SpanSlice, a *schema.Answer) ptrace.Span {
	sp := spans.AppendEmpty()
	sp.SetName(OperationChat)
	sp.SetKind(ptrace.SpanKindInternal)
	sp.SetTraceID(TraceID(a.SessionID))
	sp.SetSpanID(SpanID(a.SessionID, "answer", a.MessageID))
	sp.SetParentSpanID(SpanID(a.SessionID, "session", a.SessionID))
	sp.SetStartTimestamp(ts(a.Timestamp))
	sp.SetEndTimestamp(ts(a.Timestamp))
	m := sp.Attributes()
	m.PutStr(AttrOperationName, OperationChat)
	m.PutStr(AttrConversationID, a.SessionID)
	m.PutStr(AttrResponseID, a.MessageID)
	putNonEmpty(m, AttrResponseModel, a.Model)
	putNonEmpty(m, AttrAgentID, a.AgentID)
	putNonEmpty(m, AttrSource, string(a.Source))
	putTrue(m, AttrSidechain, a.Sidechain)
	putTurn(m, a.Turn)
	m.PutStr(AttrMessageID, a.MessageID)
	m.PutStr(AttrAnswerText, a.Text)
	putStrings(m, AttrAnswerInputs, a.InputCallIDs)
	putTrue(m, AttrAnswerInputsUncertain, a.InputsUncertain)
	putStrings(m, AttrAnswerIncomplete, a.IncompleteInputs)
	putTrue(m, AttrAnswerAbsenceClaim, a.AbsenceClaim)
	putNonEmpty(m, AttrAnswerAbsence, string(a.Absence))
	putNonEmpty(m, AttrAnswerAbsenceClause, a.AbsenceClause)
	putNonEmpty(m, AttrAnswerAbsenceScope, a.AbsenceScope)
	putNonEmpty(m, AttrAnswerRisk, string(a.Risk))
	putStrings(m, AttrAnswerReasons, a.Reasons)
	rc := make([]string, 0, len(a.Reasons))
	for _, r := range a.Reasons {
		rc = append(rc, reasonCallsEntry(r, a.ReasonCalls[r]))
	}
	putStrings(m, AttrAnswerReasonCalls, rc)
	putNonEmpty(m, AttrAnswerVerdict, a.Verdict)
	if a.Retracted {
		m.PutBool(AttrAnswerRetracted, true)
	}
	putAnalysis(m, a.Analysis)
	return sp
}

// AppendSession adds the invoke_agent span for s.
func AppendSession(spans ptrace.SpanSlice, s *schema.Session) ptrace.Span {
	sp := spans.AppendEmpty()
	sp.SetName(OperationInvokeAgent)
	sp.SetKind(ptrace.SpanKindInternal)
	sp.SetTraceID(TraceID(s.SessionID))
	sp.SetSpanID(SpanID(s.SessionID, "session", s.SessionID))
	sp.SetStartTimestamp(ts(s.StartedAt))
	sp.SetEndTimestamp(ts(s.EndedAt))
	m := sp.Attributes()
	m.PutStr(AttrOperationName, OperationInvokeAgent)
	m.PutStr(AttrConversationID, s.SessionID)
	putNonEmpty(m, AttrRequestModel, s.Model)
	putNonEmpty(m, AttrSource, string(s.Source))
	putNonEmpty(m, AttrHarnessVersion, s.HarnessVersion)
	putNonEmpty(m, AttrProject, s.Project)
	putNonEmpty(m, AttrCwd, s.Cwd)
	putNonEmpty(m, AttrGitBranch, s.GitBranch)
	putNonEmpty(m, AttrSourceFile, s.SourceFile)
	putCount(m, AttrSessionTurns, s.Turns)
	m.PutInt(AttrSessionToolCalls, int64(s.ToolCalls))
	m.PutInt(AttrSessionTruncatedCalls, int64(s.TruncatedCalls))
	m.PutInt(AttrSessionSilentCalls, int64(s.SilentCalls))
	m.PutInt(AttrSessionAnswers, int64(s.Answers))
	m.PutInt(AttrSessionRiskyAnswers, int64(s.RiskyAnswers))
	putCount(m, AttrSessionRiskyAnswersUncertain, s.RiskyAnswersUncertain)
	putCount(m, AttrSessionCompactions, s.Compactions)
	putNonEmpty(m, AttrSessionMaxRisk, string(s.MaxRisk))
	putCount(m, AttrUsageInputTokens, s.InputTokens)
	putCount(m, AttrUsageOutputTokens, s.OutputTokens)
	putAnalysis(m, s.Analysis)
	return sp
}

func putNonEmpty(m pcommon.Map, k, v string) {
	if v != "" {
		m.PutStr(k, v)
	}
}

// putCount writes a known count. One past schema.MaxCount, which no int
// attribute holds, is no count (Count.Stored) and is left out like an
// unknown one, where clamping it stated a figure nothing measured.
func putCount(m pcommon.Map, k string, c schema.Count) {
	if n, ok := c.Stored(); ok {
		m.PutInt(k, int64(n))
	}
}

func putStrings(m pcommon.Map, k string, vals []string) {
	s := m.PutEmptySlice(k)
	s.EnsureCapacity(len(vals))
	for _, v := range vals {
		s.AppendEmpty().SetStr(v)
	}
}

// ---- reading back

// Operation returns the span's gen_ai.operation.name.
func Operation(m pcommon.Map) string { return str(m, AttrOperationName) }

func str(m pcommon.Map, k string) string { return strValue(m.Get(k)) }

// strValue is the text of an attribute value (v, present).
func strValue(v pcommon.Value, present bool) string {
	if !present {
		return ""
	}
	if v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	return v.AsString()
}

// first returns the first non-empty string among keys.
func first(m pcommon.Map, keys ...string) string {
	for _, k := range keys {
		if s := str(m, k); s != "" {
			return s
		}
	}
	return ""
}

func count(m pcommon.Map, k string) schema.Count { return countValue(m.Get(k)) }

// countValue is a size read from an attribute value (v, present): an
// integer, a whole double below 2^63 or a decimal string; anything else, or
// a negative number, is unknown.
func countValue(v pcommon.Value, present bool) schema.Count {
	if !present {
		return schema.Unknown
	}
	switch v.Type() {
	case pcommon.ValueTypeInt:
		if v.Int() < 0 {
			return schema.Unknown
		}
		return schema.Known(uint64(v.Int()))
	case pcommon.ValueTypeDouble:
		return schema.KnownFloat(v.Double())
	case pcommon.ValueTypeStr:
		n, err := strconv.ParseUint(strings.TrimSpace(v.Str()), 10, 64)
		if err != nil {
			return schema.Unknown
		}
		return schema.Known(n)
	}
	return schema.Unknown
}

func boolean(m pcommon.Map, k string) bool { return boolValue(m.Get(k)) }

// ReportsFailure reads an outcome flag such as Claude Code's success
// ("true"/"false", a string in its events): an explicit false is a failed
// call; absent or unreadable says nothing.
func ReportsFailure(v pcommon.Value) bool { return failure(v, true) }

func failure(v pcommon.Value, present bool) bool {
	if !present {
		return false
	}
	switch v.Type() {
	case pcommon.ValueTypeBool:
		return !v.Bool()
	case pcommon.ValueTypeStr:
		ok, err := strconv.ParseBool(v.Str())
		return err == nil && !ok
	}
	return false
}

// SpanFailed reports whether an execute_tool span's status says its call
// failed: the semantic conventions mark a failed operation with status
// Error as well as error.type, and an instrumentation may set only the
// status. A call's row must not call such a call a success.
func SpanFailed(sp ptrace.Span) bool { return sp.Status().Code() == ptrace.StatusCodeError }

// boolValue is a flag read from an attribute value (v, present).
func boolValue(v pcommon.Value, present bool) bool {
	if !present {
		return false
	}
	switch v.Type() {
	case pcommon.ValueTypeBool:
		return v.Bool()
	case pcommon.ValueTypeStr:
		b, _ := strconv.ParseBool(v.Str())
		return b
	case pcommon.ValueTypeInt:
		return v.Int() != 0
	}
	return false
}

func integer(m pcommon.Map, k string) int64 { return integerOf(count(m, k)) }

// turnOf is a turn read as a count (countValue: absent, negative or
// fractional is unknown): unknown too past a turn's range, never turn 0
// (docs/attributes.md, ctxaudit.turn).
func turnOf(c schema.Count) schema.Turn {
	if !c.Known || c.N > math.MaxUint32 {
		return schema.Turn{}
	}
	return schema.Turn{N: uint32(c.N), Known: true}
}

// putTurn writes ctxaudit.turn when the turn is known.
func putTurn(m pcommon.Map, t schema.Turn) {
	if t.Known {
		m.PutInt(AttrTurn, int64(t.N))
	}
}

// integerOf is c as an int64, 0 when unknown.
func integerOf(c schema.Count) int64 {
	if !c.Known {
		return 0
	}
	return int64(min(c.N, 1<<63-1))
}

func stringSlice(m pcommon.Map, k string) []string {
	v, ok := m.Get(k)
	if !ok {
		return nil
	}
	if v.Type() != pcommon.ValueTypeSlice {
		if s := v.AsString(); s != "" {
			return []string{s}
		}
		return nil
	}
	out := make([]string, 0, v.Slice().Len())
	for i := 0; i < v.Slice().Len(); i++ {
		out = append(out, v.Slice().At(i).AsString())
	}
	return out
}

// ToolCallFromAttributes rebuilds a tool call from execute_tool attributes
// (span or log record) and the record's time. The session id falls back to
// Claude Code's session.id, found on the record or its resource.
func ToolCallFromAttributes(m, resource pcommon.Map, t time.Time) schema.ToolCall {
	var x callAttrs
	x.index(m)
	c := toolCallFields(&x, resource, t)
	c.Forensics = forensicsOf(&x)
	c.Analysis = x.analysis()
	return c
}

// ToolCallWithVerdict is what ToolCallFromAttributes reads from m once
// PutVerdict(m, f, source) has been written on it, without writing it: the
// processor builds the record of a span it holds and drops this way, and the
// record is the same as that of a span it passes on (TestHeldRecordIsTheRoundTrip).
// f's quoted texts are copied, as PutForensics copies them.
func ToolCallWithVerdict(m, resource pcommon.Map, t time.Time, f *schema.Forensics, source schema.Harness) schema.ToolCall {
	var x callAttrs
	x.index(m)
	c := toolCallFields(&x, resource, t)
	if !x.has(sSource) {
		c.Source = source
	}
	c.Forensics = settledForensics(&x, f)
	c.Analysis = x.analysis()
	return c
}

// PutVerdict writes detection's verdict f on the attributes of the call it
// judged: the ctxaudit.output.* attributes of f in place of any the source
// reported (detection read those already, and one it rejected must not
// outlive its verdict), and the harness it judged as, unless the source
// named one.
func PutVerdict(m pcommon.Map, f *schema.Forensics, source schema.Harness) {
	// Every ctxaudit.output.* key is one of PutForensics'.
	m.RemoveIf(func(k string, _ pcommon.Value) bool { return strings.HasPrefix(k, "ctxaudit.output.") })
	PutForensics(m, f)
	if _, ok := m.Get(AttrSource); !ok {
		m.PutStr(AttrSource, string(source))
	}
}

// settledForensics is ForensicsFromAttributes of m after PutVerdict(m, f, …):
// f as the attributes carry it.
func settledForensics(x *callAttrs, f *schema.Forensics) schema.Forensics {
	out := *f
	for _, c := range []*schema.Count{&out.Original.Bytes, &out.Original.Chars, &out.Original.Lines, &out.Original.Tokens,
		&out.Context.Bytes, &out.Context.Chars, &out.Context.Lines, &out.Context.Tokens,
		&out.Shown.Start, &out.Shown.End, &out.Total, &out.ShownTail.Start, &out.ShownTail.End} {
		if c.Known {
			*c = schema.Known(min(c.N, 1<<63-1))
		} else {
			*c = schema.Unknown
		}
	}
	if out.Original.Source == "" {
		out.Original.Source = schema.SourceUnknown
	}
	if out.ShownTail.Start.Known || out.ShownTail.End.Known {
		out.ShownTail.Unit = out.Shown.Unit
	} else {
		out.ShownTail = schema.Range{}
	}
	out.Reason, out.NextHint = strings.Clone(out.Reason), strings.Clone(out.NextHint)
	out.SavedRef, out.Marker = strings.Clone(out.SavedRef), strings.Clone(out.Marker)
	// What reportedFigures still adds once every attribute above is set.
	c := &out.Context
	if !c.Bytes.Known && !c.Chars.Known && !c.Lines.Known && !c.Tokens.Known {
		c.Bytes = x.count(sClaudeCodeToolResultSize)
	}
	return out
}

// toolCallFields is what ToolCallFromAttributes reads besides the verdict
// and the analysis.
func toolCallFields(x *callAttrs, resource pcommon.Map, t time.Time) schema.ToolCall {
	c := schema.ToolCall{
		SessionID:      x.first(sConversationID, sClaudeCodeSessionID),
		CallID:         x.first(sToolCallID, sClaudeCodeToolUseID),
		Tool:           x.first(sToolName, sClaudeCodeToolName),
		Timestamp:      t.UTC(),
		Source:         schema.Harness(x.str(sSource)),
		HarnessVersion: x.first(sHarnessVersion, sClaudeCodeAppVersion),
		Model:          x.first(sRequestModel, sResponseModel),
		Project:        x.str(sProject),
		Cwd:            x.str(sCwd),
		GitBranch:      x.str(sGitBranch),
		AgentID:        x.str(sAgentID),
		Sidechain:      x.boolean(sSidechain),
		Turn:           turnOf(x.count(sTurn)),
		MessageID:      x.str(sMessageID),
		Arguments:      x.first(sToolCallArguments, sClaudeCodeToolInput, sClaudeCodeToolParams),
		Target:         x.str(sTarget),
		IsError:        x.boolean(sIsError) || x.str(sErrorType) != "" || failure(x.get(sClaudeCodeSuccess)),
		SourceFile:     x.str(sSourceFile),
		SourceLine:     x.integer(sSourceLine),
		FollowedUp:     x.boolean(sFollowedUp),
		ContinuationOf: x.str(sContinuationOf),
		Searched:       x.boolean(sSearched),
	}
	if c.SessionID == "" {
		c.SessionID = first(resource, AttrConversationID, ClaudeCodeSessionID)
	}
	if c.Source == "" {
		c.Source = schema.Harness(first(resource, AttrSource))
	}
	// A coverage is a share, 0 to 1; anything else (NaN included) says none
	// (KnownRatio).
	if v, ok := x.get(sSessionCoverage); ok && v.Type() == pcommon.ValueTypeDouble {
		c.SessionCoverage = schema.KnownRatio(v.Double())
	}
	c.CoverageUpperBound = x.boolean(sCoverageUpperBound)
	c.CoverageMixedVersions = x.boolean(sCoverageMixedVersions)
	// Not known is never read as followed up.
	if c.FollowUpUnknown = x.boolean(sFollowUpUnknown); c.FollowUpUnknown {
		c.FollowedUp = false
	}
	c.FollowUpExact = x.boolean(sFollowUpExact)
	return c
}

// ForensicsFromAttributes reads the ctxaudit.output.* attributes.
func ForensicsFromAttributes(m pcommon.Map) schema.Forensics {
	var x callAttrs
	x.index(m)
	return forensicsOf(&x)
}

func forensicsOf(x *callAttrs) schema.Forensics {
	f := schema.Forensics{
		Original: schema.Original{Sizes: schema.Sizes{
			Bytes: x.count(sOriginalBytes), Chars: x.count(sOriginalChars),
			Lines: x.count(sOriginalLines), Tokens: x.count(sOriginalTokens),
		}, Source: known(schema.OriginalSource(x.str(sOriginalSource)), ""),
			Precision: known(schema.Precision(x.str(sOriginalPrecision)), schema.PrecisionNone)},
		Context: schema.Sizes{
			Bytes: x.count(sContextBytes), Chars: x.count(sContextChars),
			Lines: x.count(sContextLines), Tokens: x.count(sContextTokens),
		},
		Truncated:        x.boolean(sTruncated),
		Kind:             known(schema.TruncationKind(x.str(sTruncationKind)), schema.KindUnknown),
		Strategy:         known(schema.Strategy(x.str(sStrategy)), ""),
		PartialByRequest: x.boolean(sPartialByRequest),
		Shown: schema.Range{Start: x.count(sShownStart), End: x.count(sShownEnd),
			Unit: known(schema.Unit(x.str(sShownUnit)), "")},
		Total:  x.count(sTotal),
		Reason: x.str(sReason),
		Disclosure: schema.Disclosure{Range: x.boolean(sDisclosureRange), Reason: x.boolean(sDisclosureReason),
			Next: x.boolean(sDisclosureNext)},
		NextHint:          x.str(sNext),
		SavedRef:          x.str(sSavedRef),
		RefVersion:        x.str(sRefVersion),
		Marker:            x.str(sMarker),
		MarkerUnderstated: x.boolean(sMarkerUnderstated),
		Detector:          x.str(sDetector),
	}
	f.ShownTailIsEnd = x.boolean(sShownTailIsEnd)
	f.RefetchedSource = x.boolean(sRefetchedSource)
	// The tail is in the shown unit; a tail is recorded only with positions.
	if start, end := x.count(sShownTailStart), x.count(sShownTailEnd); start.Known || end.Known {
		f.ShownTail = schema.Range{Start: start, End: end, Unit: f.Shown.Unit}
	}
	reportedFigures(x, &f)
	return f
}

// reportedFigures gives figures a source reported without saying everything
// about them their meaning: original sizes it reported are credited to the
// attribute, a "how to continue" hint it reported means the model was told
// how to continue, and Claude Code's tool_result_size_bytes is the size of
// what entered the context (for a spilled output, the preview), never the
// original. Attributes the source set explicitly are left as they are.
func reportedFigures(x *callAttrs, f *schema.Forensics) {
	// A cut kind reported without the verdict says the output was cut, as
	// detection reads the two (forensics' attributes); ctxaudit writes both.
	if !x.has(sTruncated) {
		switch f.Kind {
		case schema.KindExplicit, schema.KindSilent, schema.KindSuspected:
			f.Truncated = true
		}
	}
	o := &f.Original
	if o.Source == "" || o.Source == schema.SourceUnknown {
		o.Source = schema.SourceUnknown
		if !x.has(sOriginalSource) && (o.Bytes.Known || o.Chars.Known || o.Lines.Known || o.Tokens.Known) {
			o.Source = schema.SourceOTelAttribute
		}
	}
	if !x.has(sDisclosureNext) && f.NextHint != "" {
		f.Disclosure.Next = true
	}
	c := &f.Context
	if !c.Bytes.Known && !c.Chars.Known && !c.Lines.Known && !c.Tokens.Known {
		c.Bytes = x.count(sClaudeCodeToolResultSize)
	}
}

// known is v when it is empty or a value ctxaudit knows, else unknown: a
// sender's value ctxaudit does not know says nothing it can store (and an
// Enum8 column would refuse it, with every row written beside it). The
// stored empty kind, strategy, source and absence are unknown, none,
// unknown and unknown; a unit ctxaudit does not know is none, as detection
// reads it (forensics). A risk is not read this way: "none" would claim an
// answer safe; a row with an unknown risk is left out by the store
// (schema's Validate), and counted.
func known[T interface {
	~string
	Valid() bool
}](v, unknown T) T {
	if v == "" || v.Valid() {
		return v
	}
	return unknown
}

// ClaudeCodeEventForensics is the verdict on a claude_code.tool_result log
// event that carries no output text: the event reports the size of what
// entered the context in bytes and nothing else, so every other size and the
// original are unknown, and size alone decides no truncation. ok is false
// when the record carries text or a verdict, which detection then reads.
func ClaudeCodeEventForensics(m pcommon.Map) (f schema.Forensics, ok bool) {
	if HasForensics(m) {
		return f, false
	}
	if _, text := m.Get(AttrToolCallResult); text {
		return f, false
	}
	return schema.Forensics{
		Original: schema.Original{Source: schema.SourceUnknown},
		Context:  schema.Sizes{Bytes: count(m, forensics.AttrClaudeCodeToolResultSize)},
		Kind:     schema.KindUnknown,
		Strategy: schema.StrategyNone,
		Detector: "claude_code.tool_result_event",
	}, true
}

// HasForensics reports whether the attributes already carry a verdict, so
// the processor need not run detection again.
func HasForensics(m pcommon.Map) bool {
	_, ok := m.Get(forensics.AttrTruncationKind)
	return ok
}

// AnswerFromAttributes rebuilds an answer from a chat span's attributes.
func AnswerFromAttributes(m pcommon.Map, t time.Time) schema.Answer {
	a := schema.Answer{
		SessionID:        str(m, AttrConversationID),
		MessageID:        first(m, AttrMessageID, AttrResponseID),
		Timestamp:        t.UTC(),
		Turn:             turnOf(count(m, AttrTurn)),
		Source:           schema.Harness(str(m, AttrSource)),
		Model:            first(m, AttrResponseModel, AttrRequestModel),
		AgentID:          str(m, AttrAgentID),
		Sidechain:        boolean(m, AttrSidechain),
		Text:             str(m, AttrAnswerText),
		InputCallIDs:     stringSlice(m, AttrAnswerInputs),
		InputsUncertain:  boolean(m, AttrAnswerInputsUncertain),
		IncompleteInputs: stringSlice(m, AttrAnswerIncomplete),
		AbsenceClaim:     boolean(m, AttrAnswerAbsenceClaim),
		Absence:          known(schema.Absence(str(m, AttrAnswerAbsence)), ""),
		AbsenceClause:    str(m, AttrAnswerAbsenceClause),
		AbsenceScope:     str(m, AttrAnswerAbsenceScope),
		Risk:             schema.Risk(str(m, AttrAnswerRisk)),
		Reasons:          stringSlice(m, AttrAnswerReasons),
		Verdict:          str(m, AttrAnswerVerdict),
		Retracted:        boolean(m, AttrAnswerRetracted),
		Analysis:         analysisOf(m),
	}
	a.ReasonCalls = map[string][]string{}
	for _, rc := range stringSlice(m, AttrAnswerReasonCalls) {
		reason, ids := readReasonCalls(rc)
		a.ReasonCalls[reason] = ids
	}
	return a
}

// idEscaper escapes what separates the call ids of a reason_calls entry,
// idUnescaper undoes it. Call ids are the harnesses' (any string): one with
// a comma read back as two calls that do not exist.
var (
	idEscaper   = strings.NewReplacer("%", "%25", ",", "%2C")
	idUnescaper = strings.NewReplacer("%25", "%", "%2C", ",")
)

// reasonCallsEntry is the reason_calls entry of reason and its call ids:
// reason=id1,id2 (docs/attributes.md), each id's "%" and "," escaped as
// %25 and %2C. Reasons are machine words (docs/design.md §5.4), with
// neither "=" nor ",".
func reasonCallsEntry(reason string, ids []string) string {
	var b strings.Builder
	b.WriteString(reason)
	b.WriteByte('=')
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		idEscaper.WriteString(&b, id)
	}
	return b.String()
}

// readReasonCalls is the inverse of reasonCallsEntry. An entry without "="
// is a reason without calls.
func readReasonCalls(entry string) (reason string, ids []string) {
	reason, list, _ := strings.Cut(entry, "=")
	if list == "" {
		return reason, []string{}
	}
	ids = strings.Split(list, ",")
	for i, id := range ids {
		ids[i] = idUnescaper.Replace(id)
	}
	return reason, ids
}

// SessionFromAttributes rebuilds a session from an invoke_agent span.
func SessionFromAttributes(m pcommon.Map, start, end time.Time) schema.Session {
	return schema.Session{
		SessionID:             str(m, AttrConversationID),
		Source:                schema.Harness(str(m, AttrSource)),
		HarnessVersion:        str(m, AttrHarnessVersion),
		Model:                 str(m, AttrRequestModel),
		Project:               str(m, AttrProject),
		Cwd:                   str(m, AttrCwd),
		GitBranch:             str(m, AttrGitBranch),
		StartedAt:             start.UTC(),
		EndedAt:               end.UTC(),
		SourceFile:            str(m, AttrSourceFile),
		Turns:                 count(m, AttrSessionTurns),
		ToolCalls:             int(integer(m, AttrSessionToolCalls)),
		TruncatedCalls:        int(integer(m, AttrSessionTruncatedCalls)),
		SilentCalls:           int(integer(m, AttrSessionSilentCalls)),
		Answers:               int(integer(m, AttrSessionAnswers)),
		RiskyAnswers:          int(integer(m, AttrSessionRiskyAnswers)),
		RiskyAnswersUncertain: count(m, AttrSessionRiskyAnswersUncertain),
		Compactions:           count(m, AttrSessionCompactions),
		MaxRisk:               schema.Risk(str(m, AttrSessionMaxRisk)),
		InputTokens:           count(m, AttrUsageInputTokens),
		OutputTokens:          count(m, AttrUsageOutputTokens),
		Analysis:              analysisOf(m),
	}
}

// AttributesAsMap returns the attributes as native Go values, the form
// forensics.Input.Attributes takes.
func AttributesAsMap(m pcommon.Map) map[string]any { return m.AsRaw() }

// IsClaudeCodeToolResult recognizes Claude Code's claude_code.tool_result
// event, by event name, event.name attribute, or body (versions differ).
func IsClaudeCodeToolResult(lr plog.LogRecord) bool {
	if v, ok := lr.Attributes().Get(ClaudeCodeEventName); ok {
		if name := v.AsString(); name == ClaudeCodeToolResultEvt || name == ClaudeCodeToolResult {
			return true
		}
	}
	return lr.EventName() == ClaudeCodeToolResult || lr.Body().AsString() == ClaudeCodeToolResult
}

// IsToolResultLog recognizes a log record that reports one tool result: a
// Claude Code tool_result event or any record marked as an execute_tool operation.
func IsToolResultLog(lr plog.LogRecord) bool {
	return IsClaudeCodeToolResult(lr) || Operation(lr.Attributes()) == OperationExecuteTool
}

// EachSpan calls fn for every span of td with its resource attributes and
// instrumentation scope name.
func EachSpan(td ptrace.Traces, fn func(res pcommon.Map, scope string, sp ptrace.Span)) {
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			ss := sss.At(j)
			spans := ss.Spans()
			for k := 0; k < spans.Len(); k++ {
				fn(rs.Resource().Attributes(), ss.Scope().Name(), spans.At(k))
			}
		}
	}
}

// EachLogRecord calls fn for every log record of ld with its resource attributes.
func EachLogRecord(ld plog.Logs, fn func(res pcommon.Map, lr plog.LogRecord)) {
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			logs := sls.At(j).LogRecords()
			for k := 0; k < logs.Len(); k++ {
				fn(rl.Resource().Attributes(), logs.At(k))
			}
		}
	}
}
