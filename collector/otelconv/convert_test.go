package otelconv

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ctxaudit/ctxaudit/collector/forensics"
	"github.com/ctxaudit/ctxaudit/collector/session"
	"github.com/ctxaudit/ctxaudit/schema"
)

func sampleCall() schema.ToolCall {
	return schema.ToolCall{
		SessionID: "s-1", CallID: "toolu_1", Tool: "WebFetch", Timestamp: time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC),
		Source: schema.HarnessClaudeCode, HarnessVersion: "2.1.6", Model: "claude-opus-4-5", Project: "p", Cwd: "/w",
		GitBranch: "main", AgentID: "a1", Sidechain: true, Turn: schema.KnownTurn(2), MessageID: "msg_1", Arguments: `{"url":"https://x"}`,
		Target: "https://x", IsError: true,
		Forensics: schema.Forensics{
			Original: schema.Original{Sizes: schema.Sizes{Bytes: schema.Known(156000), Tokens: schema.Known(39000)}, Source: schema.SourceHarnessMetadata,
				Precision: schema.PrecisionLowerBound},
			Context:   schema.Sizes{Bytes: schema.Known(900), Chars: schema.Known(880), Lines: schema.Known(12), Tokens: schema.Known(225)},
			Truncated: true, Kind: schema.KindSilent, Strategy: schema.StrategySummary, PartialByRequest: true,
			Shown: schema.Range{Start: schema.Known(0), End: schema.Known(100000), Unit: schema.UnitChars}, Total: schema.Known(156000),
			ShownTail:      schema.Range{Start: schema.Known(150000), End: schema.Known(156000), Unit: schema.UnitChars},
			ShownTailIsEnd: true, RefetchedSource: true,
			Reason: "summarised", Disclosure: schema.Disclosure{Range: true, Next: true}, NextHint: "offset=2", SavedRef: "/x",
			RefVersion: "v1", Marker: "[cut]", MarkerUnderstated: true, Detector: "claude_code.webfetch",
		},
		FollowedUp: true, FollowUpExact: true, ContinuationOf: "toolu_0", SessionCoverage: schema.KnownRatio(0.5), Searched: true,
		CoverageUpperBound: true, CoverageMixedVersions: true,
		SourceFile: "/f.jsonl", SourceLine: 7,
	}
}

func TestToolCallRoundTrip(t *testing.T) {
	want := sampleCall()
	spans := ptrace.NewSpanSlice()
	sp := AppendToolCall(spans, &want)
	if sp.TraceID() != TraceID("s-1") || sp.SpanID() != SpanID("s-1", "call", "toolu_1") {
		t.Fatal("ids are not derived from session and call id")
	}
	got := ToolCallFromAttributes(sp.Attributes(), pcommon.NewMap(), sp.StartTimestamp().AsTime())
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip differs:\n got %+v\nwant %+v", got, want)
	}
	if !HasForensics(sp.Attributes()) {
		t.Fatal("HasForensics = false on a span with a verdict")
	}
}

// TestFollowUpUnknownRoundTrip: a follow-up the analysis could not judge
// reaches the exporter as not known, never as "not followed up", and a span
// that says both is read as not known.
func TestFollowUpUnknownRoundTrip(t *testing.T) {
	want := sampleCall()
	want.FollowedUp, want.FollowUpUnknown = false, true
	spans := ptrace.NewSpanSlice()
	sp := AppendToolCall(spans, &want)
	if v, ok := sp.Attributes().Get(AttrFollowUpUnknown); !ok || !v.Bool() {
		t.Fatalf("%s not set on the span", AttrFollowUpUnknown)
	}
	if _, ok := sp.Attributes().Get(AttrFollowedUp); ok {
		t.Fatalf("%s set on a call whose follow-up is not known", AttrFollowedUp)
	}
	got := ToolCallFromAttributes(sp.Attributes(), pcommon.NewMap(), sp.StartTimestamp().AsTime())
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip differs:\n got %+v\nwant %+v", got, want)
	}
	sp.Attributes().PutBool(AttrFollowedUp, true)
	got = ToolCallFromAttributes(sp.Attributes(), pcommon.NewMap(), sp.StartTimestamp().AsTime())
	if got.FollowedUp || !got.FollowUpUnknown {
		t.Fatalf("a span with both flags read as followed_up %v, unknown %v; want not known", got.FollowedUp, got.FollowUpUnknown)
	}
}

func TestUnknownSizesStayUnknown(t *testing.T) {
	c := sampleCall()
	c.Original = schema.Original{Source: schema.SourceUnknown}
	c.Context = schema.Sizes{}
	c.SessionCoverage = schema.Ratio{}
	spans := ptrace.NewSpanSlice()
	sp := AppendToolCall(spans, &c)
	got := ToolCallFromAttributes(sp.Attributes(), pcommon.NewMap(), c.Timestamp)
	if got.Original.Bytes.Known || got.Context.Chars.Known || got.SessionCoverage.Known {
		t.Fatalf("unknown became known: %+v", got)
	}
}

// A span that does not say its turn is in no known turn: not turn 0, the
// first. Nor is one whose ctxaudit.turn no turn column holds. Written back,
// an unknown turn is no attribute at all; a known 0 is one.
func TestUnknownTurnStaysUnknown(t *testing.T) {
	for _, tc := range []struct {
		name string
		put  func(pcommon.Map)
		want schema.Turn
	}{
		{"absent", func(pcommon.Map) {}, schema.Turn{}},
		{"0", func(m pcommon.Map) { m.PutInt(AttrTurn, 0) }, schema.KnownTurn(0)},
		{"4", func(m pcommon.Map) { m.PutInt(AttrTurn, 4) }, schema.KnownTurn(4)},
		{"a string of 4", func(m pcommon.Map) { m.PutStr(AttrTurn, "4") }, schema.KnownTurn(4)},
		{"-1", func(m pcommon.Map) { m.PutInt(AttrTurn, -1) }, schema.Turn{}},
		{"2^32", func(m pcommon.Map) { m.PutInt(AttrTurn, math.MaxUint32+1) }, schema.Turn{}},
		{"2.5", func(m pcommon.Map) { m.PutDouble(AttrTurn, 2.5) }, schema.Turn{}},
	} {
		m := pcommon.NewMap()
		tc.put(m)
		if got := ToolCallFromAttributes(m, pcommon.NewMap(), time.Time{}).Turn; got != tc.want {
			t.Errorf("call, turn %s: read %+v, want %+v", tc.name, got, tc.want)
		}
		if got := AnswerFromAttributes(m, time.Time{}).Turn; got != tc.want {
			t.Errorf("answer, turn %s: read %+v, want %+v", tc.name, got, tc.want)
		}
	}
	spans := ptrace.NewSpanSlice()
	c := sampleCall()
	for _, turn := range []schema.Turn{{}, schema.KnownTurn(0)} {
		c.Turn = turn
		attrs := AppendToolCall(spans, &c).Attributes()
		if _, has := attrs.Get(AttrTurn); has != turn.Known {
			t.Errorf("call of turn %s written with ctxaudit.turn: %v", turn, has)
		}
		if got := ToolCallFromAttributes(attrs, pcommon.NewMap(), c.Timestamp).Turn; got != turn {
			t.Errorf("call of turn %s read back in turn %s", turn, got)
		}
		a := schema.Answer{SessionID: "s", MessageID: "m", Turn: turn}
		attrs = AppendAnswer(spans, &a).Attributes()
		if _, has := attrs.Get(AttrTurn); has != turn.Known {
			t.Errorf("answer of turn %s written with ctxaudit.turn: %v", turn, has)
		}
	}
	s := schema.Session{SessionID: "s"}
	if _, has := AppendSession(spans, &s).Attributes().Get(AttrSessionTurns); has {
		t.Error("a session of unknown turns written with ctxaudit.session.turns")
	}
	if got := SessionFromAttributes(pcommon.NewMap(), time.Time{}, time.Time{}).Turns; got.Known {
		t.Errorf("a session span without ctxaudit.session.turns read as %s turns", got)
	}
}

// A size is a whole number and a coverage a share: a double that is
// neither (3.5 bytes, NaN, 1e300, a coverage of 1.5) reads back as unknown,
// not as the figure converting it would give (3, 2^63).
func TestNumbersThatAreNoCountStayUnknown(t *testing.T) {
	for _, tc := range []struct {
		v     float64
		known bool
	}{{0, true}, {4096, true}, {1 << 52, true}, {math.Copysign(0, -1), true}, {3.5, false}, {-1, false},
		{math.NaN(), false}, {math.Inf(1), false}, {1e300, false}, {1 << 63, false}} {
		m := pcommon.NewMap()
		m.PutDouble(forensics.AttrOriginalBytes, tc.v)
		got := ToolCallFromAttributes(m, pcommon.NewMap(), time.Time{}).Original.Bytes
		if got.Known != tc.known || (tc.known && got.N != uint64(tc.v)) {
			t.Errorf("original bytes %v read as %+v", tc.v, got)
		}
	}
	for _, tc := range []struct {
		v     float64
		known bool
	}{{0, true}, {0.25, true}, {1, true}, {1.5, false}, {-0.1, false}, {math.NaN(), false}, {math.Inf(-1), false}} {
		m := pcommon.NewMap()
		m.PutDouble(AttrSessionCoverage, tc.v)
		got := ToolCallFromAttributes(m, pcommon.NewMap(), time.Time{}).SessionCoverage
		if got.Known != tc.known || (tc.known && got.V != tc.v) {
			t.Errorf("coverage %v read as %+v", tc.v, got)
		}
	}
}

// A value ctxaudit does not know, in an attribute whose values it does,
// says nothing: it reads back as unknown (or none reported), never as
// itself, which no table could store. A risk is read as it is: the store
// leaves out the answer, since no risk is not "none".
func TestUnknownEnumValuesReadAsUnknown(t *testing.T) {
	c := sampleCall()
	spans := ptrace.NewSpanSlice()
	a := AppendToolCall(spans, &c).Attributes()
	a.PutStr(forensics.AttrTruncationKind, "Explicit")
	a.PutStr(forensics.AttrStrategy, "middle")
	a.PutInt(AttrOriginalSource, 2)
	a.PutStr(forensics.AttrOriginalPrecision, "~")
	a.PutStr(forensics.AttrShownUnit, "furlongs")
	got := ToolCallFromAttributes(a, pcommon.NewMap(), c.Timestamp)
	if got.Shown.Unit != "" {
		t.Errorf("shown unit read as %q; want none", got.Shown.Unit)
	}
	if got.Kind != schema.KindUnknown || got.Strategy != "" || got.Original.Source != schema.SourceUnknown || got.Original.Precision != schema.PrecisionNone {
		t.Errorf("read kind %q strategy %q source %q precision %q; want unknown, none reported, unknown, none",
			got.Kind, got.Strategy, got.Original.Source, got.Original.Precision)
	}
	if got.Original.Bytes != c.Original.Bytes || got.Truncated != c.Truncated || got.Marker != c.Marker {
		t.Errorf("the rest of the verdict changed: %+v", got.Forensics)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("the call read back cannot be stored: %v", err)
	}

	ans := schema.Answer{SessionID: "s-1", MessageID: "m", Risk: schema.RiskHigh, Absence: schema.AbsenceScoped}
	aa := AppendAnswer(spans, &ans).Attributes()
	aa.PutStr(AttrAnswerAbsence, "somewhat")
	aa.PutStr(AttrAnswerRisk, "severe")
	if got := AnswerFromAttributes(aa, time.Time{}); got.Absence != "" || got.Risk != "severe" {
		t.Errorf("answer read with absence %q and risk %q; want none reported, and the risk as sent", got.Absence, got.Risk)
	}
}

// TestPrecisionAndTailAttributes: the new ctxaudit.output.* keys are what
// the span carries, and their absence reads back as none.
func TestPrecisionAndTailAttributes(t *testing.T) {
	c := sampleCall()
	sp := AppendToolCall(ptrace.NewSpanSlice(), &c)
	m := sp.Attributes()
	for key, want := range map[string]any{
		"ctxaudit.output.original.precision":       "lower_bound",
		"ctxaudit.output.shown_tail.start":         int64(150000),
		"ctxaudit.output.shown_tail.end":           int64(156000),
		"ctxaudit.output.shown_tail.is_end":        true,
		"ctxaudit.output.refetched_source":         true,
		"ctxaudit.session_coverage.upper_bound":    true,
		"ctxaudit.session_coverage.mixed_versions": true,
	} {
		v, ok := m.Get(key)
		if !ok || v.AsRaw() != want {
			t.Errorf("%s = %v (present %v), want %v", key, v.AsRaw(), ok, want)
		}
	}
	c.Original = schema.Original{Source: schema.SourceUnknown}
	c.ShownTail, c.ShownTailIsEnd = schema.Range{}, false
	sp = AppendToolCall(ptrace.NewSpanSlice(), &c)
	if _, ok := sp.Attributes().Get("ctxaudit.output.original.precision"); ok {
		t.Error("precision attribute written for an unknown original")
	}
	got := ToolCallFromAttributes(sp.Attributes(), pcommon.NewMap(), c.Timestamp)
	if got.Original.Precision != schema.PrecisionNone || got.ShownTail != (schema.Range{}) || got.ShownTailIsEnd {
		t.Errorf("absent precision/tail read back as %q, %+v, %v", got.Original.Precision, got.ShownTail, got.ShownTailIsEnd)
	}
}

func TestAnswerAndSessionRoundTrip(t *testing.T) {
	a := schema.Answer{SessionID: "s-1", MessageID: "m1", Timestamp: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Turn: schema.KnownTurn(1),
		Source: schema.HarnessCodex, Model: "gpt", Text: "沒有", InputCallIDs: []string{"c1", "c2"}, IncompleteInputs: []string{"c1"},
		AbsenceClaim: true, Absence: schema.AbsenceUnscoped, AbsenceClause: "there is no such setting", Risk: schema.RiskHigh, Reasons: []string{"silent_truncation", "not_followed_up"},
		ReasonCalls: map[string][]string{"silent_truncation": {"c1"}, "not_followed_up": {}}, Verdict: "v"}
	spans := ptrace.NewSpanSlice()
	sp := AppendAnswer(spans, &a)
	if got := AnswerFromAttributes(sp.Attributes(), a.Timestamp); !reflect.DeepEqual(got, a) {
		t.Fatalf("answer round trip:\n got %+v\nwant %+v", got, a)
	}
	a.InputsUncertain = true
	if got := AnswerFromAttributes(AppendAnswer(spans, &a).Attributes(), a.Timestamp); !reflect.DeepEqual(got, a) {
		t.Fatalf("uncertain inputs round trip:\n got %+v\nwant %+v", got, a)
	}
	a.Retracted = true
	if got := AnswerFromAttributes(AppendAnswer(spans, &a).Attributes(), a.Timestamp); !reflect.DeepEqual(got, a) {
		t.Fatalf("retraction round trip:\n got %+v\nwant %+v", got, a)
	}
	s := schema.Session{SessionID: "s-1", Source: schema.HarnessPi, HarnessVersion: "1", Model: "m", Project: "p", Cwd: "/c",
		GitBranch: "b", StartedAt: a.Timestamp, EndedAt: a.Timestamp.Add(time.Hour), SourceFile: "/f", Turns: schema.Known(2), ToolCalls: 3,
		TruncatedCalls: 1, SilentCalls: 1, Answers: 2, RiskyAnswers: 1, Compactions: schema.Known(1), MaxRisk: schema.RiskHigh, InputTokens: schema.Known(5), OutputTokens: schema.Known(6)}
	sp = AppendSession(spans, &s)
	if got := SessionFromAttributes(sp.Attributes(), sp.StartTimestamp().AsTime(), sp.EndTimestamp().AsTime()); !reflect.DeepEqual(got, s) {
		t.Fatalf("session round trip:\n got %+v\nwant %+v", got, s)
	}
}

// Call ids are the harnesses' and may hold the separators of a
// reason_calls entry: a comma read back as two calls that do not exist.
func TestReasonCallsKeepTheirCallIDs(t *testing.T) {
	ids := []string{"call,1", "50%", "a%2Cb", "call_2|fc_3", "%"}
	a := schema.Answer{SessionID: "s", MessageID: "m", Reasons: []string{schema.ReasonSilentTruncation, schema.ReasonNotFollowedUp},
		ReasonCalls: map[string][]string{schema.ReasonSilentTruncation: ids, schema.ReasonNotFollowedUp: {}}}
	sp := AppendAnswer(ptrace.NewSpanSlice(), &a)
	v, _ := sp.Attributes().Get(AttrAnswerReasonCalls)
	if got, want := v.Slice().At(0).Str(), "silent_truncation=call%2C1,50%25,a%252Cb,call_2|fc_3,%25"; got != want {
		t.Errorf("entry %q, want %q", got, want)
	}
	if got := AnswerFromAttributes(sp.Attributes(), time.Time{}).ReasonCalls; !reflect.DeepEqual(got, a.ReasonCalls) {
		t.Fatalf("reason calls read back %q, want %q", got, a.ReasonCalls)
	}
	// Entries as ctxaudit wrote them before ids were escaped read the same
	// unless an id holds "%25" or "%2C".
	m := pcommon.NewMap()
	m.PutEmptySlice(AttrAnswerReasonCalls).FromRaw([]any{"silent_truncation=toolu_1,a%20b", "not_followed_up="})
	want := map[string][]string{schema.ReasonSilentTruncation: {"toolu_1", "a%20b"}, schema.ReasonNotFollowedUp: {}}
	if got := AnswerFromAttributes(m, time.Time{}).ReasonCalls; !reflect.DeepEqual(got, want) {
		t.Fatalf("plain entries read %q, want %q", got, want)
	}
}

// A record with no time (every timestamp of its transcript malformed) is
// stored at 1970-01-01; through spans it must be too — converted as it is,
// the zero time wrapped around to 1754, a time no table holds, and the row
// was left out where `ctxaudit ingest` stored it.
func TestNoTimeIsTheUnsetTimestamp(t *testing.T) {
	spans := ptrace.NewSpanSlice()
	c := sampleCall()
	c.Timestamp = time.Time{}
	s := schema.Session{SessionID: "s-1"}
	for _, sp := range []ptrace.Span{AppendToolCall(spans, &c), AppendSession(spans, &s), AppendAnswer(spans, &schema.Answer{SessionID: "s-1"})} {
		if sp.StartTimestamp() != 0 || sp.EndTimestamp() != 0 {
			t.Errorf("%s: timestamps %d, %d; want 0, unset", sp.Name(), sp.StartTimestamp(), sp.EndTimestamp())
		}
	}
	got := ToolCallFromAttributes(spans.At(0).Attributes(), pcommon.NewMap(), spans.At(0).StartTimestamp().AsTime())
	if err := got.Validate(); err != nil || !got.Timestamp.Equal(time.Unix(0, 0)) {
		t.Fatalf("call read back at %v (%v), want 1970-01-01, storable", got.Timestamp, err)
	}
}

// A Claude Code claude_code.tool_result log record names the session in
// session.id and the tool in tool_name; those must map like the GenAI keys.
func TestClaudeCodeLogAttributes(t *testing.T) {
	m := pcommon.NewMap()
	m.PutStr("tool_name", "Read")
	m.PutStr("tool_use_id", "toolu_9")
	res := pcommon.NewMap()
	res.PutStr("session.id", "cc-session")
	c := ToolCallFromAttributes(m, res, time.Unix(0, 0))
	if c.SessionID != "cc-session" || c.Tool != "Read" || c.CallID != "toolu_9" {
		t.Fatalf("got session %q tool %q call %q", c.SessionID, c.Tool, c.CallID)
	}
}

// A call the source reports failed is never stored as a success: Claude
// Code's events say so with success "false", an instrumentation of the
// semantic conventions with error.type or only with the span's status.
func TestAFailedCallIsNeverASuccess(t *testing.T) {
	for _, tc := range []struct {
		name   string
		put    func(pcommon.Map)
		failed bool
	}{
		{"nothing said", func(pcommon.Map) {}, false},
		{"success false (Claude Code)", func(m pcommon.Map) { m.PutStr(ClaudeCodeSuccess, "false") }, true},
		{"success true", func(m pcommon.Map) { m.PutStr(ClaudeCodeSuccess, "true") }, false},
		{"success as a bool false", func(m pcommon.Map) { m.PutBool(ClaudeCodeSuccess, false) }, true},
		{"success unreadable", func(m pcommon.Map) { m.PutStr(ClaudeCodeSuccess, "partly") }, false},
		{"success as a number", func(m pcommon.Map) { m.PutInt(ClaudeCodeSuccess, 0) }, false},
		{"error.type", func(m pcommon.Map) { m.PutStr(AttrErrorType, "timeout") }, true},
		{"ctxaudit.is_error", func(m pcommon.Map) { m.PutBool(AttrIsError, true) }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := pcommon.NewMap()
			m.PutStr("tool_name", "Bash")
			m.PutStr("tool_use_id", "toolu_1")
			m.PutStr("session.id", "cc-session")
			tc.put(m)
			if c := ToolCallFromAttributes(m, pcommon.NewMap(), time.Unix(0, 0)); c.IsError != tc.failed {
				t.Errorf("log record: is_error %v, want %v", c.IsError, tc.failed)
			}
		})
	}

	for _, tc := range []struct {
		status ptrace.StatusCode
		failed bool
	}{
		{ptrace.StatusCodeUnset, false},
		{ptrace.StatusCodeOk, false},
		{ptrace.StatusCodeError, true},
	} {
		td := ptrace.NewTraces()
		sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		sp.Status().SetCode(tc.status)
		a := sp.Attributes()
		a.PutStr(AttrOperationName, OperationExecuteTool)
		a.PutStr(AttrToolName, "shell")
		a.PutStr(AttrToolCallID, "c1")
		a.PutStr(AttrConversationID, "s1")
		var r Rows
		r.AddTraces(td)
		if len(r.Calls) != 1 || r.Calls[0].IsError != tc.failed {
			t.Errorf("span of status %v: calls %+v, want one with is_error %v", tc.status, r.Calls, tc.failed)
		}
	}

	// What the processor emits for a failed call reads back failed.
	c := sampleCall()
	c.IsError = true
	td := ptrace.NewTraces()
	AppendToolCall(td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans(), &c)
	var r Rows
	r.AddTraces(td)
	if len(r.Calls) != 1 || !r.Calls[0].IsError {
		t.Errorf("emitted failed call read back as %+v", r.Calls)
	}
}

// A source that reports how its output was cut without the verdict itself
// reported a cut: the row says truncated, as detection would have read it.
func TestReportedKindWithoutVerdict(t *testing.T) {
	for kind, want := range map[schema.TruncationKind]bool{
		schema.KindExplicit: true, schema.KindSilent: true, schema.KindSuspected: true,
		schema.KindNone: false, schema.KindUnknown: false,
	} {
		m := pcommon.NewMap()
		m.PutStr(AttrOperationName, OperationExecuteTool)
		m.PutStr(forensics.AttrTruncationKind, string(kind))
		if !HasForensics(m) {
			t.Fatalf("kind %s: not read as reported forensics", kind)
		}
		if got := ToolCallFromAttributes(m, pcommon.NewMap(), time.Unix(0, 0)); got.Truncated != want || got.Kind != kind {
			t.Errorf("kind %s alone: truncated %v kind %s, want %v %s", kind, got.Truncated, got.Kind, want, kind)
		}
		// Said outright, the verdict stands as said.
		m.PutBool(forensics.AttrTruncated, false)
		if got := ToolCallFromAttributes(m, pcommon.NewMap(), time.Unix(0, 0)); got.Truncated {
			t.Errorf("kind %s with truncated false: read truncated", kind)
		}
	}
}

// The round trips carry the analysis a record reflects, which the store
// ranks writes by; a call as read carries none.
func TestAnalysisRoundTrip(t *testing.T) {
	c := sampleCall()
	c.Analysis = schema.Analysis{Done: true, Partial: true, Records: 42}
	spans := ptrace.NewSpanSlice()
	sp := AppendToolCall(spans, &c)
	if got := ToolCallFromAttributes(sp.Attributes(), pcommon.NewMap(), c.Timestamp); got.Analysis != c.Analysis {
		t.Errorf("analysis %+v, want %+v", got.Analysis, c.Analysis)
	}
	c.Analysis = schema.Analysis{}
	sp = AppendToolCall(spans, &c)
	if _, ok := sp.Attributes().Get(AttrAnalysisRecords); ok {
		t.Error("a call as read carries ctxaudit.analysis.records")
	}
}

// Figures an instrumented harness reports (examples/harness, call read-1:
// exact sizes, a verdict and a "how to continue" hint, no original source,
// no disclosure flags) are used as reported and credited to the attribute.
func TestReportedFiguresKeepTheirMeaning(t *testing.T) {
	m := pcommon.NewMap()
	m.PutInt("ctxaudit.output.original.bytes", 120_000)
	m.PutInt("ctxaudit.output.original.lines", 5000)
	m.PutInt("ctxaudit.output.context.bytes", 48_000)
	m.PutStr("ctxaudit.output.truncation.kind", "explicit")
	m.PutStr("ctxaudit.output.next", "Read with offset=2001 to continue")
	f := ForensicsFromAttributes(m)
	if f.Original.Source != schema.SourceOTelAttribute || f.Original.Bytes != schema.Known(120_000) {
		t.Errorf("original = %+v, want 120000 bytes from otel_attribute", f.Original)
	}
	if !f.Disclosure.Next || f.NextHint == "" {
		t.Errorf("disclosure = %+v hint %q: a reported hint tells how to continue", f.Disclosure, f.NextHint)
	}
	// A source that says so explicitly is not overridden.
	m.PutStr(AttrOriginalSource, "sdk")
	m.PutBool(AttrDisclosureNext, false)
	f = ForensicsFromAttributes(m)
	if f.Original.Source != schema.SourceSDK || f.Disclosure.Next {
		t.Errorf("explicit source/disclosure overridden: %s, next %v", f.Original.Source, f.Disclosure.Next)
	}
	// Nothing reported: unknown, never credited.
	if f := ForensicsFromAttributes(pcommon.NewMap()); f.Original.Source != schema.SourceUnknown || f.Disclosure.Next || f.Context.Bytes.Known {
		t.Errorf("nothing reported gave %+v", f)
	}
}

// Claude Code's tool_result_size_bytes is what entered the context, in
// bytes; on an event with no text it decides no truncation.
func TestClaudeCodeResultSize(t *testing.T) {
	m := pcommon.NewMap()
	m.PutStr("tool_name", "Bash")
	m.PutStr("tool_result_size_bytes", "2048")
	f, ok := ClaudeCodeEventForensics(m)
	if !ok {
		t.Fatal("an event without text or verdict should get the event verdict")
	}
	if f.Context != (schema.Sizes{Bytes: schema.Known(2048)}) || f.Original.Sizes != (schema.Sizes{}) || f.Kind != schema.KindUnknown || f.Truncated {
		t.Errorf("event verdict = %+v", f)
	}
	// Read back without the processor, the exporter gets the same sizes.
	if got := ForensicsFromAttributes(m); got.Context != f.Context || got.Original.Sizes != f.Original.Sizes {
		t.Errorf("without the processor: context %+v original %+v", got.Context, got.Original)
	}
	m.PutStr(AttrToolCallResult, "text")
	if _, ok := ClaudeCodeEventForensics(m); ok {
		t.Error("an event with text is for detection")
	}
}

// TestPutForensicsCopiesQuotedText: the texts detection quotes from the tool
// output are stored as copies, so a record read back from the attributes and
// held (the processor's session buffer holds thousands) does not pin the
// whole output in memory.
func TestPutForensicsCopiesQuotedText(t *testing.T) {
	output := strings.Repeat("x", 4096) + "\n... [20000 characters truncated] ...\n" + strings.Repeat("y", 4096) + " see /tmp/saved.txt offset=2 too long"
	slice := func(s string) string {
		i := strings.Index(output, s)
		if i < 0 {
			t.Fatalf("%q not in output", s)
		}
		return output[i : i+len(s)]
	}
	f := schema.Forensics{Marker: slice("[20000 characters truncated]"), Reason: slice("too long"),
		NextHint: slice("offset=2"), SavedRef: slice("/tmp/saved.txt")}
	m := pcommon.NewMap()
	PutForensics(m, &f)
	got := ForensicsFromAttributes(m)
	start := uintptr(unsafe.Pointer(unsafe.StringData(output)))
	for name, s := range map[string]string{"marker": got.Marker, "reason": got.Reason, "next": got.NextHint, "saved_ref": got.SavedRef} {
		if s == "" {
			t.Fatalf("%s lost", name)
		}
		if p := uintptr(unsafe.Pointer(unsafe.StringData(s))); p >= start && p < start+uintptr(len(output)) {
			t.Errorf("%s %q still points into the tool output", name, s)
		}
	}
	if got.Marker != f.Marker || got.Reason != f.Reason || got.NextHint != f.NextHint || got.SavedRef != f.SavedRef {
		t.Errorf("round trip changed the texts: %+v", got)
	}
}

// TestToolCallAttributesCount: the attribute slice of an emitted call is
// sized once, exactly, so the counts must be what PutToolCall and
// PutForensics write — for a call with everything set, one with nothing,
// and each field set alone.
func TestToolCallAttributesCount(t *testing.T) {
	full := sampleCall()
	full.Analysis = schema.Analysis{Done: true, Records: 3}
	calls := map[string]schema.ToolCall{"everything": full, "nothing": {}}
	// Each top-level and forensics field alone, set as in the full call.
	for _, v := range []struct {
		name string
		set  func(c *schema.ToolCall)
	}{
		{"model", func(c *schema.ToolCall) { c.Model = full.Model }},
		{"is_error", func(c *schema.ToolCall) { c.IsError = true }},
		{"source_line", func(c *schema.ToolCall) { c.SourceLine = 3 }},
		{"coverage", func(c *schema.ToolCall) { c.SessionCoverage = full.SessionCoverage }},
		{"analysis", func(c *schema.ToolCall) { c.Analysis = full.Analysis }},
		{"continuation", func(c *schema.ToolCall) { c.ContinuationOf = full.ContinuationOf }},
		{"original", func(c *schema.ToolCall) { c.Original = full.Original }},
		{"context", func(c *schema.ToolCall) { c.Context = full.Context }},
		{"shown", func(c *schema.ToolCall) { c.Shown, c.ShownTail, c.Total = full.Shown, full.ShownTail, full.Total }},
		{"texts", func(c *schema.ToolCall) {
			c.Reason, c.NextHint, c.SavedRef, c.RefVersion, c.Marker, c.Detector = full.Reason, full.NextHint, full.SavedRef, full.RefVersion, full.Marker, full.Detector
		}},
		{"kind", func(c *schema.ToolCall) { c.Kind, c.Strategy = full.Kind, full.Strategy }},
		{"hint alone", func(c *schema.ToolCall) { c.NextHint = full.NextHint }},
		{"follow-up unknown", func(c *schema.ToolCall) { c.Truncated, c.FollowUpUnknown = true, true }},
		{"flags", func(c *schema.ToolCall) {
			c.Sidechain, c.FollowedUp, c.FollowUpExact, c.Searched, c.CoverageUpperBound, c.CoverageMixedVersions = true, true, true, true, true, true
			c.PartialByRequest, c.ShownTailIsEnd, c.RefetchedSource, c.MarkerUnderstated = true, true, true, true
			c.Disclosure = schema.Disclosure{Range: true, Reason: true, Next: true}
			c.Analysis = schema.Analysis{Done: true, Partial: true, Records: 2}
		}},
	} {
		var c schema.ToolCall
		v.set(&c)
		calls[v.name] = c
	}
	for name, c := range calls {
		m := pcommon.NewMap()
		PutToolCall(m, &c)
		if got, want := toolCallAttributes(&c), m.Len(); got != want {
			t.Errorf("%s: toolCallAttributes = %d, PutToolCall wrote %d", name, got, want)
		}
		f := pcommon.NewMap()
		PutForensics(f, &c.Forensics)
		if got, want := forensicsAttributes(&c.Forensics), f.Len(); got != want {
			t.Errorf("%s: forensicsAttributes = %d, PutForensics wrote %d", name, got, want)
		}
	}
}

// TestFlagsWrittenWhenTrue: a false flag is left out and reads back as
// false — except the verdict (truncated) and disclosure.next beside a hint,
// where absence would read as "told how to continue".
func TestFlagsWrittenWhenTrue(t *testing.T) {
	c := schema.ToolCall{SessionID: "s", CallID: "c", Tool: "Read",
		Forensics: schema.Forensics{Kind: schema.KindSilent, NextHint: "use offset"}}
	m := pcommon.NewMap()
	PutToolCall(m, &c)
	var bools []string
	for k, v := range m.All() {
		if v.Type() == pcommon.ValueTypeBool {
			bools = append(bools, k+"="+v.AsString())
		}
	}
	slices.Sort(bools)
	if want := []string{"ctxaudit.output.disclosure.next=false", "ctxaudit.output.truncated=false"}; !slices.Equal(bools, want) {
		t.Errorf("bool attributes %v, want %v", bools, want)
	}
	back := ToolCallFromAttributes(m, pcommon.NewMap(), c.Timestamp)
	if back.Disclosure.Next || back.Sidechain || back.IsError || back.PartialByRequest {
		t.Errorf("flags read back set: %+v", back.Forensics.Disclosure)
	}
	if back.NextHint != c.NextHint || back.Kind != c.Kind {
		t.Errorf("read back %q %q, want %q %q", back.NextHint, back.Kind, c.NextHint, c.Kind)
	}
}

// TestAnalysedSessionSpans: every span of an analysed session is marked
// as analysed upstream and carries what the single-record appenders write.
func TestAnalysedSessionSpans(t *testing.T) {
	c := sampleCall()
	other := sampleCall()
	other.SessionID, other.CallID = "s-2", "toolu_2" // ids are per record, not per batch
	meta := schema.Session{SessionID: "s-1", ToolCalls: 1}
	answer := schema.Answer{SessionID: "s-1", MessageID: "msg_9", Risk: schema.RiskLow}
	spans := ptrace.NewSpanSlice()
	notAnswers := []string{"msg_1", "msg_2"}
	AppendAnalysedSession(spans, &meta, notAnswers, []schema.ToolCall{c, other}, []schema.Answer{answer})
	if spans.Len() != 4 {
		t.Fatalf("%d spans, want 4", spans.Len())
	}
	want := ptrace.NewSpanSlice()
	putStrings(AppendSession(want, &meta).Attributes(), AttrSessionNotAnswers, notAnswers)
	AppendToolCall(want, &c)
	AppendToolCall(want, &other)
	AppendAnswer(want, &answer)
	MarkAnalysedUpstream(want)
	for i := 0; i < spans.Len(); i++ {
		got, exp := spans.At(i), want.At(i)
		if got.TraceID() != exp.TraceID() || got.SpanID() != exp.SpanID() || got.ParentSpanID() != exp.ParentSpanID() {
			t.Errorf("span %d: ids %v/%v/%v, want %v/%v/%v", i, got.TraceID(), got.SpanID(), got.ParentSpanID(),
				exp.TraceID(), exp.SpanID(), exp.ParentSpanID())
		}
		if !reflect.DeepEqual(got.Attributes().AsRaw(), exp.Attributes().AsRaw()) {
			t.Errorf("span %d attributes differ:\n got %v\nwant %v", i, got.Attributes().AsRaw(), exp.Attributes().AsRaw())
		}
	}
	if sp := spans.At(2); sp.TraceID() != TraceID("s-2") || sp.ParentSpanID() != SpanID("s-2", "session", "s-2") {
		t.Error("a call of another session got the first session's trace or parent id")
	}
	// The exporter reads the messages back with the session's analysis.
	var rows Rows
	for i := 0; i < spans.Len(); i++ {
		rows.AddSpan(spans.At(i), pcommon.NewMap())
	}
	if got, want := rows.NotAnswers, []session.NotAnswers{{SessionID: "s-1", MessageIDs: notAnswers, By: meta.Analysis}}; !reflect.DeepEqual(got, want) {
		t.Errorf("rows.NotAnswers = %+v, want %+v", got, want)
	}
	// None learned, none written.
	spans = ptrace.NewSpanSlice()
	AppendAnalysedSession(spans, &meta, nil, nil, nil)
	if _, ok := spans.At(0).Attributes().Get(AttrSessionNotAnswers); ok {
		t.Error("a session span without messages learned not to be answers carries the attribute")
	}
}

// BenchmarkAppendToolCall is the cost of turning an analysed call into the
// span the processor emits, once per call (toolCallAttributes).
func BenchmarkAppendToolCall(b *testing.B) {
	c := sampleCall()
	b.ReportAllocs()
	for b.Loop() {
		AppendToolCall(ptrace.NewSpanSlice(), &c)
	}
}

// BenchmarkToolCallFromAttributes is the exporter's side of an emitted
// call: reading the record back from its span.
func BenchmarkToolCallFromAttributes(b *testing.B) {
	c := sampleCall()
	sp := AppendToolCall(ptrace.NewSpanSlice(), &c)
	res := pcommon.NewMap()
	b.ReportAllocs()
	for b.Loop() {
		ToolCallFromAttributes(sp.Attributes(), res, sp.StartTimestamp().AsTime())
	}
}

// A count no int attribute holds (a record decoded from storage may carry
// one; schema.Known makes none) is left out, read back unknown as the store
// writes it — it was clamped to 2^63-1, a figure nothing measured.
func TestCountPastMaxCountIsLeftOut(t *testing.T) {
	c := sampleCall()
	c.Original.Bytes = schema.Count{N: 1 << 63, Known: true}
	sp := AppendToolCall(ptrace.NewSpanSlice(), &c)
	if v, ok := sp.Attributes().Get(forensics.AttrOriginalBytes); ok {
		t.Fatalf("%s = %s, want no attribute", forensics.AttrOriginalBytes, v.AsString())
	}
	if got := ToolCallFromAttributes(sp.Attributes(), pcommon.NewMap(), c.Timestamp); got.Original.Bytes.Known {
		t.Fatalf("original bytes read back %+v, want unknown", got.Original.Bytes)
	}
}
