package ctxauditprocessor

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/ctxaudit/ctxaudit/collector/forensics"
	"github.com/ctxaudit/ctxaudit/collector/otelconv"
	"github.com/ctxaudit/ctxaudit/collector/processor/ctxauditprocessor/internal/metadata"
	"github.com/ctxaudit/ctxaudit/schema"
)

// FuzzAnyTelemetry sends the processor what any OTLP sender could: spans and
// log records with the keys the processor and the exporter read, holding
// values of every type (strings of any bytes, numbers out of range, NaN,
// lists, maps). It requires that
//   - nothing panics, in the processor or in the exporter's readers
//     (otelconv's ToolCallFromAttributes & co.) of what it passes on;
//   - every tool call the processor holds leaves it exactly once, analysed —
//     never lost, never written twice (docs/design.md, `forward_held_spans`);
//   - every call passed on is one its table can hold (schema's Validate),
//     but for a turn past UInt32: a sender's unknown verdict is read as
//     unknown, not stored as sent;
//   - the same input gives the same output, twice over.
func FuzzAnyTelemetry(f *testing.F) {
	f.Add([]byte{4, 0, 1, 1, 3, 0, 7, 2, 5, 0, 9, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Add([]byte{2, 1, 0, 2, 4, 1, 3, 0, 200, 6, 2, 2, 1, 0, 4, 5, 1, 1, 1, 1, 1, 1, 1, 1})
	f.Add([]byte{7, 0, 0, 0, 2, 9, 2, 4, 3, 30, 5, 8, 1, 1, 0, 40, 0, 0, 60, 3, 1, 2, 255, 255, 255, 255, 255, 255, 255, 127})
	f.Fuzz(func(t *testing.T, data []byte) {
		td, ld := fuzzTelemetry(data, fuzzKeys)
		held := heldCallKeys(td)

		out, outLogs := runFuzzProcessor(t, td, ld)
		seen := map[string]int{}
		for _, r := range readBack(out) {
			if r.op != otelconv.OperationExecuteTool {
				continue
			}
			if err := r.call.Validate(); err != nil {
				t.Fatalf("call %s passed on as a row its table cannot hold: %v", r.key, err)
			}
			if r.held {
				seen[r.key]++
			}
		}
		for k := range held {
			if seen[k] != 1 {
				t.Fatalf("held call %s passed on analysed %d times, want once", k, seen[k])
			}
		}
		for k, n := range seen {
			if _, ok := held[k]; !ok {
				t.Fatalf("call %s passed on analysed %d times but never held", k, n)
			}
		}

		again, againLogs := runFuzzProcessor(t, td, ld)
		if a, b := readBack(out), readBack(again); !reflect.DeepEqual(a, b) {
			t.Fatalf("the same spans, processed twice, gave different records:\n%+v\n%+v", a, b)
		}
		if a, b := logRecords(outLogs), logRecords(againLogs); !reflect.DeepEqual(a, b) {
			t.Fatalf("the same log records, processed twice, gave different records:\n%+v\n%+v", a, b)
		}
	})
}

// fuzzKeys are the attribute keys the fuzzer draws from: every key of
// docs/design.md §6 the processor and the exporter read or write (forensics'
// and otelconv's constants), the keys of Claude Code's events, and one no
// reader knows.
var fuzzKeys = []string{
	forensics.AttrClaudeCodeToolResultSize, forensics.AttrContextBytes, forensics.AttrContextChars,
	forensics.AttrContextLines, forensics.AttrContextTokens, forensics.AttrMarker, forensics.AttrNext,
	forensics.AttrOriginalBytes, forensics.AttrOriginalChars, forensics.AttrOriginalLines,
	forensics.AttrOriginalPrecision, forensics.AttrOriginalTokens, forensics.AttrReason,
	forensics.AttrRefetchedSource, forensics.AttrSavedRef, forensics.AttrShownEnd,
	forensics.AttrShownStart, forensics.AttrShownTailEnd, forensics.AttrShownTailIsEnd,
	forensics.AttrShownTailStart, forensics.AttrShownUnit, forensics.AttrStrategy,
	forensics.AttrTotal, forensics.AttrTruncated, forensics.AttrTruncationKind,
	otelconv.AttrAgentID, otelconv.AttrAnalysisPartial, otelconv.AttrAnalysisPending,
	otelconv.AttrAnalysisRecords, otelconv.AttrAnalysisUpstream, otelconv.AttrAnswerAbsence,
	otelconv.AttrAnswerAbsenceClaim, otelconv.AttrAnswerAbsenceClause,
	otelconv.AttrAnswerAbsenceScope, otelconv.AttrAnswerIncomplete, otelconv.AttrAnswerInputs,
	otelconv.AttrAnswerInputsUncertain,
	otelconv.AttrAnswerReasonCalls, otelconv.AttrAnswerReasons, otelconv.AttrAnswerRetracted,
	otelconv.AttrAnswerRisk, otelconv.AttrAnswerText, otelconv.AttrAnswerVerdict,
	otelconv.AttrContinuationOf, otelconv.AttrConversationID, otelconv.AttrCoverageMixedVersions,
	otelconv.AttrCoverageUpperBound, otelconv.AttrCwd, otelconv.AttrDetector,
	otelconv.AttrDisclosureNext, otelconv.AttrDisclosureRange, otelconv.AttrDisclosureReason,
	otelconv.AttrDisclosureScore, otelconv.AttrErrorType, otelconv.AttrFollowedUp,
	otelconv.AttrGitBranch, otelconv.AttrHarnessVersion, otelconv.AttrIsError,
	otelconv.AttrMarkerUnderstated, otelconv.AttrMessageID, otelconv.AttrOperationName,
	otelconv.AttrOriginalSource, otelconv.AttrOutputMessages, otelconv.AttrPartialByRequest,
	otelconv.AttrProject, otelconv.AttrProviderName, otelconv.AttrRefVersion,
	otelconv.AttrRequestModel, otelconv.AttrResponseID, otelconv.AttrResponseModel,
	otelconv.AttrSearched, otelconv.AttrSessionAnswers, otelconv.AttrSessionCompactions,
	otelconv.AttrSessionCoverage, otelconv.AttrSessionMaxRisk, otelconv.AttrSessionRiskyAnswers,
	otelconv.AttrSessionSilentCalls, otelconv.AttrSessionToolCalls,
	otelconv.AttrSessionTruncatedCalls, otelconv.AttrSessionTurns, otelconv.AttrSidechain,
	otelconv.AttrSource, otelconv.AttrSourceFile, otelconv.AttrSourceLine, otelconv.AttrTarget,
	otelconv.AttrToolCallArguments, otelconv.AttrToolCallID, otelconv.AttrToolCallResult,
	otelconv.AttrToolName, otelconv.AttrToolType, otelconv.AttrTurn, otelconv.AttrUsageInputTokens,
	otelconv.AttrUsageOutputTokens, otelconv.ClaudeCodeSessionID, otelconv.ClaudeCodeToolName,
	otelconv.ClaudeCodeToolUseID, otelconv.ClaudeCodeSuccess, otelconv.ClaudeCodeToolInput,
	otelconv.ClaudeCodeToolParams, otelconv.ClaudeCodeAppVersion, otelconv.ClaudeCodeEventName,
	"tool_result_size_bytes", "event.sequence", "prompt.id", "event.timestamp", "other.key",
}

// fuzzBytes reads the fuzzer's input as a stream of choices; past its end
// every choice is zero.
type fuzzBytes struct{ b []byte }

func (r *fuzzBytes) next() byte {
	if len(r.b) == 0 {
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *fuzzBytes) bytes(n int) []byte {
	n = min(n, len(r.b))
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *fuzzBytes) u64() uint64 {
	var w [8]byte
	copy(w[:], r.bytes(8))
	return binary.LittleEndian.Uint64(w[:])
}

// fuzzStrings are values that steer the processor into its paths: the
// operations, harnesses and units it knows, notices it detects, numbers as
// text.
var fuzzStrings = []string{
	otelconv.OperationExecuteTool, otelconv.OperationChat, otelconv.OperationInvokeAgent,
	"codex", "claude_code", "pi", "gemini", "Bash", "Read", "shell_command", "tool_result",
	codexCut, "head\n[12 characters truncated]\ntail", "… [output truncated: 40 more lines]", "83.7KB",
	"exact", "approximate", "lower_bound", "lines", "chars", "bytes", "head", "tail", "head_tail",
	"explicit", "silent", "none", "unknown", "high", "-1", "0", "18446744073709551616", "1e309", "NaN",
	`[{"role":"assistant","parts":[{"type":"text","content":"There is no such file."}]}]`,
	`{"command":"cat a | head -n 5"}`, `{"file_path":"/x","offset":3,"limit":2}`,
}

func (r *fuzzBytes) str() string {
	c := r.next()
	if c%2 == 0 {
		return fuzzStrings[int(c/2)%len(fuzzStrings)]
	}
	return string(r.bytes(int(c / 8)))
}

// putValue writes one value of a type the input chooses.
func (r *fuzzBytes) putValue(m pcommon.Map, key string, depth int) {
	switch c := r.next(); c % 9 {
	case 0, 1:
		m.PutStr(key, r.str())
	case 2:
		m.PutInt(key, int64(r.u64()))
	case 3:
		m.PutInt(key, int64(int8(r.next())))
	case 4:
		d := []float64{math.NaN(), math.Inf(1), math.Inf(-1), -0.5, 3.5, 1e300, math.Float64frombits(r.u64())}
		m.PutDouble(key, d[int(c/9)%len(d)])
	case 5:
		m.PutBool(key, c&0x80 != 0)
	case 6:
		m.PutEmptyBytes(key).FromRaw(r.bytes(int(r.next() % 16)))
	case 7:
		s := m.PutEmptySlice(key)
		for range r.next() % 3 {
			s.AppendEmpty().SetStr(r.str())
		}
	case 8:
		if depth > 0 {
			m.PutEmpty(key)
			return
		}
		sub := m.PutEmptyMap(key)
		for range r.next() % 3 {
			r.putValue(sub, r.str(), depth+1)
		}
	}
}

// fuzzTelemetry builds up to 8 spans and 4 log records from data: each in one
// of two sessions (or none), with one of three call ids (or none), an
// operation, and attributes of the keys given.
func fuzzTelemetry(data []byte, keys []string) (ptrace.Traces, plog.Logs) {
	r := &fuzzBytes{b: data}
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	ids := func(attrs pcommon.Map, sessionKey string) {
		if s := r.next() % 3; s < 2 {
			attrs.PutStr(sessionKey, fmt.Sprintf("s%d", s))
		}
		if c := r.next() % 4; c < 3 {
			attrs.PutStr(otelconv.AttrToolCallID, fmt.Sprintf("c%d", c))
		}
	}
	attributes := func(attrs pcommon.Map) {
		for range r.next() % 12 {
			r.putValue(attrs, keys[int(r.next())%len(keys)], 0)
		}
	}

	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	attributes(rs.Resource().Attributes())
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	for i := range r.next()%8 + 1 {
		sp := spans.AppendEmpty()
		ops := []string{otelconv.OperationExecuteTool, otelconv.OperationExecuteTool, otelconv.OperationChat, otelconv.OperationInvokeAgent, "", "other"}
		op := ops[int(r.next())%len(ops)]
		sp.SetName(op)
		sp.SetSpanID(pcommon.SpanID{byte(i + 1), r.next()})
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(at.Add(time.Duration(r.next()) * time.Second)))
		sp.SetEndTimestamp(sp.StartTimestamp())
		a := sp.Attributes()
		if op != "" {
			a.PutStr(otelconv.AttrOperationName, op)
		}
		ids(a, otelconv.AttrConversationID)
		if op == otelconv.OperationExecuteTool {
			a.PutStr(otelconv.AttrToolName, "Bash")
			a.PutStr(otelconv.AttrToolCallResult, r.str())
		}
		attributes(a)
	}

	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	attributes(rl.Resource().Attributes())
	records := rl.ScopeLogs().AppendEmpty().LogRecords()
	for range r.next() % 5 {
		lr := records.AppendEmpty()
		lr.SetTimestamp(pcommon.NewTimestampFromTime(at.Add(time.Duration(r.next()) * time.Second)))
		lr.Body().SetStr(otelconv.ClaudeCodeToolResult)
		lr.Attributes().PutStr(otelconv.ClaudeCodeEventName, otelconv.ClaudeCodeToolResultEvt)
		ids(lr.Attributes(), otelconv.ClaudeCodeSessionID)
		attributes(lr.Attributes())
	}
	return td, ld
}

// heldCallKeys are the calls of td the processor holds for session analysis:
// execute_tool spans of a session that no component upstream analysed, by
// session and call id as the exporter reads them.
func heldCallKeys(td ptrace.Traces) map[string]bool {
	held := map[string]bool{}
	otelconv.EachSpan(td, func(res pcommon.Map, _ string, sp ptrace.Span) {
		a := sp.Attributes()
		if otelconv.Operation(a) != otelconv.OperationExecuteTool || otelconv.AnalysedUpstream(a) {
			return
		}
		c := otelconv.ToolCallFromAttributes(a, res, sp.StartTimestamp().AsTime())
		if c.SessionID == "" {
			return
		}
		held[callKey(c, sp)] = true
	})
	return held
}

func callKey(c schema.ToolCall, sp ptrace.Span) string {
	id := c.CallID
	if id == "" {
		id = sp.SpanID().String()
	}
	return c.SessionID + "/" + id
}

// runFuzzProcessor passes td and ld through a new processor with the
// default configuration and shuts it down, which emits every session it
// holds; it returns all the spans and log records passed on.
func runFuzzProcessor(tb testing.TB, td ptrace.Traces, ld plog.Logs) (ptrace.Traces, plog.Logs) {
	tb.Helper()
	ctx := context.Background()
	cfg := createDefaultConfig().(*Config)
	cfg.SessionIdle = time.Hour // emitted by the shutdown, not by a timer
	spans, logs := new(consumertest.TracesSink), new(consumertest.LogsSink)
	set := processortest.NewNopSettings(metadata.Type)
	tp, err := NewFactory().CreateTraces(ctx, set, cfg, spans)
	if err != nil {
		tb.Fatal(err)
	}
	lp, err := NewFactory().CreateLogs(ctx, set, cfg, logs)
	if err != nil {
		tb.Fatal(err)
	}
	host := componenttest.NewNopHost()
	if err := tp.Start(ctx, host); err != nil {
		tb.Fatal(err)
	}
	if err := lp.Start(ctx, host); err != nil {
		tb.Fatal(err)
	}
	// Copies: the processor changes what it is given.
	tdc, ldc := ptrace.NewTraces(), plog.NewLogs()
	td.CopyTo(tdc)
	ld.CopyTo(ldc)
	if err := tp.ConsumeTraces(ctx, tdc); err != nil {
		tb.Fatalf("spans refused: %v", err)
	}
	if err := lp.ConsumeLogs(ctx, ldc); err != nil {
		tb.Fatalf("log records refused: %v", err)
	}
	if err := tp.Shutdown(ctx); err != nil {
		tb.Fatal(err)
	}
	if err := lp.Shutdown(ctx); err != nil {
		tb.Fatal(err)
	}
	out := ptrace.NewTraces()
	for _, t := range spans.AllTraces() {
		t.ResourceSpans().MoveAndAppendTo(out.ResourceSpans())
	}
	outLogs := plog.NewLogs()
	for _, l := range logs.AllLogs() {
		l.ResourceLogs().MoveAndAppendTo(outLogs.ResourceLogs())
	}
	return out, outLogs
}

// readRecord is one span passed on, as the exporter reads it.
type readRecord struct {
	op, key string
	held    bool // an execute_tool span's analysed record, not a pending one
	call    schema.ToolCall
	answer  schema.Answer
	session schema.Session
}

// readBack reads every span of td as the exporter does.
func readBack(td ptrace.Traces) []readRecord {
	var out []readRecord
	otelconv.EachSpan(td, func(res pcommon.Map, scope string, sp ptrace.Span) {
		a := sp.Attributes()
		start, end := sp.StartTimestamp().AsTime(), sp.EndTimestamp().AsTime()
		r := readRecord{op: otelconv.Operation(a)}
		switch r.op {
		case otelconv.OperationExecuteTool:
			r.call = otelconv.ToolCallFromAttributes(a, res, start)
			r.key = callKey(r.call, sp)
			r.held = scope == ScopeName && !otelconv.AnalysisPending(a)
		case otelconv.OperationChat:
			r.answer = otelconv.AnswerFromAttributes(a, start)
		case otelconv.OperationInvokeAgent:
			r.session = otelconv.SessionFromAttributes(a, start, end)
		}
		out = append(out, r)
	})
	return out
}

func logRecords(ld plog.Logs) []schema.ToolCall {
	var out []schema.ToolCall
	otelconv.EachLogRecord(ld, func(res pcommon.Map, lr plog.LogRecord) {
		out = append(out, otelconv.ToolCallFromAttributes(lr.Attributes(), res, lr.Timestamp().AsTime()))
	})
	return out
}
