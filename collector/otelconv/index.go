package otelconv

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/ctxaudit/ctxaudit/collector/forensics"
	"github.com/ctxaudit/ctxaudit/schema"
)

// slot names one attribute a tool call is read from.
type slot uint8

const (
	sConversationID slot = iota
	sClaudeCodeSessionID
	sToolCallID
	sClaudeCodeToolUseID
	sToolName
	sClaudeCodeToolName
	sSource
	sHarnessVersion
	sClaudeCodeAppVersion
	sRequestModel
	sResponseModel
	sProject
	sCwd
	sGitBranch
	sAgentID
	sSidechain
	sTurn
	sMessageID
	sToolCallArguments
	sClaudeCodeToolInput
	sClaudeCodeToolParams
	sTarget
	sIsError
	sErrorType
	sClaudeCodeSuccess
	sSourceFile
	sSourceLine
	sFollowedUp
	sFollowUpUnknown
	sFollowUpExact
	sContinuationOf
	sSearched
	sSessionCoverage
	sCoverageUpperBound
	sCoverageMixedVersions
	sOriginalBytes
	sOriginalChars
	sOriginalLines
	sOriginalTokens
	sOriginalSource
	sOriginalPrecision
	sContextBytes
	sContextChars
	sContextLines
	sContextTokens
	sTruncated
	sTruncationKind
	sStrategy
	sPartialByRequest
	sShownStart
	sShownEnd
	sShownUnit
	sTotal
	sShownTailStart
	sShownTailEnd
	sShownTailIsEnd
	sRefetchedSource
	sReason
	sDisclosureRange
	sDisclosureReason
	sDisclosureNext
	sNext
	sSavedRef
	sRefVersion
	sMarker
	sMarkerUnderstated
	sDetector
	sClaudeCodeToolResultSize
	sAnalysisRecords
	sAnalysisPartial
	numSlots
)

// slotKeys is the attribute of each slot (TestSlotsMatchKeys holds slotOf
// to it).
var slotKeys = [numSlots]string{
	sConversationID:           AttrConversationID,
	sClaudeCodeSessionID:      ClaudeCodeSessionID,
	sToolCallID:               AttrToolCallID,
	sClaudeCodeToolUseID:      ClaudeCodeToolUseID,
	sToolName:                 AttrToolName,
	sClaudeCodeToolName:       ClaudeCodeToolName,
	sSource:                   AttrSource,
	sHarnessVersion:           AttrHarnessVersion,
	sClaudeCodeAppVersion:     ClaudeCodeAppVersion,
	sRequestModel:             AttrRequestModel,
	sResponseModel:            AttrResponseModel,
	sProject:                  AttrProject,
	sCwd:                      AttrCwd,
	sGitBranch:                AttrGitBranch,
	sAgentID:                  AttrAgentID,
	sSidechain:                AttrSidechain,
	sTurn:                     AttrTurn,
	sMessageID:                AttrMessageID,
	sToolCallArguments:        AttrToolCallArguments,
	sClaudeCodeToolInput:      ClaudeCodeToolInput,
	sClaudeCodeToolParams:     ClaudeCodeToolParams,
	sTarget:                   AttrTarget,
	sIsError:                  AttrIsError,
	sErrorType:                AttrErrorType,
	sClaudeCodeSuccess:        ClaudeCodeSuccess,
	sSourceFile:               AttrSourceFile,
	sSourceLine:               AttrSourceLine,
	sFollowedUp:               AttrFollowedUp,
	sFollowUpUnknown:          AttrFollowUpUnknown,
	sFollowUpExact:            AttrFollowUpExact,
	sContinuationOf:           AttrContinuationOf,
	sSearched:                 AttrSearched,
	sSessionCoverage:          AttrSessionCoverage,
	sCoverageUpperBound:       AttrCoverageUpperBound,
	sCoverageMixedVersions:    AttrCoverageMixedVersions,
	sOriginalBytes:            forensics.AttrOriginalBytes,
	sOriginalChars:            forensics.AttrOriginalChars,
	sOriginalLines:            forensics.AttrOriginalLines,
	sOriginalTokens:           forensics.AttrOriginalTokens,
	sOriginalSource:           AttrOriginalSource,
	sOriginalPrecision:        forensics.AttrOriginalPrecision,
	sContextBytes:             forensics.AttrContextBytes,
	sContextChars:             forensics.AttrContextChars,
	sContextLines:             forensics.AttrContextLines,
	sContextTokens:            forensics.AttrContextTokens,
	sTruncated:                forensics.AttrTruncated,
	sTruncationKind:           forensics.AttrTruncationKind,
	sStrategy:                 forensics.AttrStrategy,
	sPartialByRequest:         AttrPartialByRequest,
	sShownStart:               forensics.AttrShownStart,
	sShownEnd:                 forensics.AttrShownEnd,
	sShownUnit:                forensics.AttrShownUnit,
	sTotal:                    forensics.AttrTotal,
	sShownTailStart:           forensics.AttrShownTailStart,
	sShownTailEnd:             forensics.AttrShownTailEnd,
	sShownTailIsEnd:           forensics.AttrShownTailIsEnd,
	sRefetchedSource:          forensics.AttrRefetchedSource,
	sReason:                   forensics.AttrReason,
	sDisclosureRange:          AttrDisclosureRange,
	sDisclosureReason:         AttrDisclosureReason,
	sDisclosureNext:           AttrDisclosureNext,
	sNext:                     forensics.AttrNext,
	sSavedRef:                 forensics.AttrSavedRef,
	sRefVersion:               AttrRefVersion,
	sMarker:                   forensics.AttrMarker,
	sMarkerUnderstated:        AttrMarkerUnderstated,
	sDetector:                 AttrDetector,
	sClaudeCodeToolResultSize: forensics.AttrClaudeCodeToolResultSize,
	sAnalysisRecords:          AttrAnalysisRecords,
	sAnalysisPartial:          AttrAnalysisPartial,
}

// slotOf is the slot of attribute k; ok is false for one no tool-call
// reader reads. A switch, which the compiler turns into a search over the
// keys' lengths and bytes: BenchmarkToolCallFromAttributes.
func slotOf(k string) (slot, bool) {
	switch k {
	case AttrConversationID:
		return sConversationID, true
	case ClaudeCodeSessionID:
		return sClaudeCodeSessionID, true
	case AttrToolCallID:
		return sToolCallID, true
	case ClaudeCodeToolUseID:
		return sClaudeCodeToolUseID, true
	case AttrToolName:
		return sToolName, true
	case ClaudeCodeToolName:
		return sClaudeCodeToolName, true
	case AttrSource:
		return sSource, true
	case AttrHarnessVersion:
		return sHarnessVersion, true
	case ClaudeCodeAppVersion:
		return sClaudeCodeAppVersion, true
	case AttrRequestModel:
		return sRequestModel, true
	case AttrResponseModel:
		return sResponseModel, true
	case AttrProject:
		return sProject, true
	case AttrCwd:
		return sCwd, true
	case AttrGitBranch:
		return sGitBranch, true
	case AttrAgentID:
		return sAgentID, true
	case AttrSidechain:
		return sSidechain, true
	case AttrTurn:
		return sTurn, true
	case AttrMessageID:
		return sMessageID, true
	case AttrToolCallArguments:
		return sToolCallArguments, true
	case ClaudeCodeToolInput:
		return sClaudeCodeToolInput, true
	case ClaudeCodeToolParams:
		return sClaudeCodeToolParams, true
	case AttrTarget:
		return sTarget, true
	case AttrIsError:
		return sIsError, true
	case AttrErrorType:
		return sErrorType, true
	case ClaudeCodeSuccess:
		return sClaudeCodeSuccess, true
	case AttrSourceFile:
		return sSourceFile, true
	case AttrSourceLine:
		return sSourceLine, true
	case AttrFollowedUp:
		return sFollowedUp, true
	case AttrFollowUpUnknown:
		return sFollowUpUnknown, true
	case AttrFollowUpExact:
		return sFollowUpExact, true
	case AttrContinuationOf:
		return sContinuationOf, true
	case AttrSearched:
		return sSearched, true
	case AttrSessionCoverage:
		return sSessionCoverage, true
	case AttrCoverageUpperBound:
		return sCoverageUpperBound, true
	case AttrCoverageMixedVersions:
		return sCoverageMixedVersions, true
	case forensics.AttrOriginalBytes:
		return sOriginalBytes, true
	case forensics.AttrOriginalChars:
		return sOriginalChars, true
	case forensics.AttrOriginalLines:
		return sOriginalLines, true
	case forensics.AttrOriginalTokens:
		return sOriginalTokens, true
	case AttrOriginalSource:
		return sOriginalSource, true
	case forensics.AttrOriginalPrecision:
		return sOriginalPrecision, true
	case forensics.AttrContextBytes:
		return sContextBytes, true
	case forensics.AttrContextChars:
		return sContextChars, true
	case forensics.AttrContextLines:
		return sContextLines, true
	case forensics.AttrContextTokens:
		return sContextTokens, true
	case forensics.AttrTruncated:
		return sTruncated, true
	case forensics.AttrTruncationKind:
		return sTruncationKind, true
	case forensics.AttrStrategy:
		return sStrategy, true
	case AttrPartialByRequest:
		return sPartialByRequest, true
	case forensics.AttrShownStart:
		return sShownStart, true
	case forensics.AttrShownEnd:
		return sShownEnd, true
	case forensics.AttrShownUnit:
		return sShownUnit, true
	case forensics.AttrTotal:
		return sTotal, true
	case forensics.AttrShownTailStart:
		return sShownTailStart, true
	case forensics.AttrShownTailEnd:
		return sShownTailEnd, true
	case forensics.AttrShownTailIsEnd:
		return sShownTailIsEnd, true
	case forensics.AttrRefetchedSource:
		return sRefetchedSource, true
	case forensics.AttrReason:
		return sReason, true
	case AttrDisclosureRange:
		return sDisclosureRange, true
	case AttrDisclosureReason:
		return sDisclosureReason, true
	case AttrDisclosureNext:
		return sDisclosureNext, true
	case forensics.AttrNext:
		return sNext, true
	case forensics.AttrSavedRef:
		return sSavedRef, true
	case AttrRefVersion:
		return sRefVersion, true
	case forensics.AttrMarker:
		return sMarker, true
	case AttrMarkerUnderstated:
		return sMarkerUnderstated, true
	case AttrDetector:
		return sDetector, true
	case forensics.AttrClaudeCodeToolResultSize:
		return sClaudeCodeToolResultSize, true
	case AttrAnalysisRecords:
		return sAnalysisRecords, true
	case AttrAnalysisPartial:
		return sAnalysisPartial, true
	}
	return 0, false
}

// callAttrs is a record's attributes read in one pass: the value of every
// key a tool call is read from, by slot. Reading a call looks up about 70
// keys, most of them absent on a given record; each lookup in the map
// compares the key with every attribute (an analysed call carries 30–60,
// many sharing a long "ctxaudit.output." prefix), while one pass asks the
// switch once per attribute.
type callAttrs struct {
	vals [numSlots]pcommon.Value
	set  [(numSlots + 63) / 64]uint64
}

// index fills x from m. As with pcommon.Map.Get, the first of two
// attributes with one key is the one read.
func (x *callAttrs) index(m pcommon.Map) {
	for k, v := range m.All() {
		s, ok := slotOf(k)
		if !ok || x.has(s) {
			continue
		}
		x.set[s>>6] |= 1 << (s & 63)
		x.vals[s] = v
	}
}

func (x *callAttrs) has(s slot) bool { return x.set[s>>6]&(1<<(s&63)) != 0 }

// get is m.Get of slot s's key.
func (x *callAttrs) get(s slot) (pcommon.Value, bool) {
	if !x.has(s) {
		return pcommon.Value{}, false
	}
	return x.vals[s], true
}

func (x *callAttrs) str(s slot) string         { return strValue(x.get(s)) }
func (x *callAttrs) count(s slot) schema.Count { return countValue(x.get(s)) }
func (x *callAttrs) boolean(s slot) bool       { return boolValue(x.get(s)) }
func (x *callAttrs) integer(s slot) int64      { return integerOf(x.count(s)) }
func (x *callAttrs) analysis() schema.Analysis {
	return analysisFrom(x.count(sAnalysisRecords), x.boolean(sAnalysisPartial))
}
func (x *callAttrs) first(slots ...slot) string {
	for _, s := range slots {
		if v := x.str(s); v != "" {
			return v
		}
	}
	return ""
}
