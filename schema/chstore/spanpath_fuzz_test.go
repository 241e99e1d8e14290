package chstore

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/tinylib/msgp/msgp"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ctxaudit/ctxaudit/collector/otelconv"
	"github.com/ctxaudit/ctxaudit/schema"
)

// FuzzSpanPathWritesTheSameRows builds records of an analysed session from
// the fuzzer's bytes — any value the tables hold, every enum value, sizes
// from 0 to 2^64-1, odd strings — and requires the rows the collector's path
// writes to be the rows `ctxaudit ingest` writes for the same records.
//
// `ctxaudit ingest` hands its records to the store; the collector's
// processor hands them to its exporter as spans (otelconv.AppendAnalysedSession),
// and the exporter reads them back (otelconv's readers, as its addSpan does)
// before handing them to the store — in one process, or after an OTLP hop
// between two collectors (the spans marshalled and unmarshalled). The row
// values compared are the writer's own (each table's columns), with the
// version each row is written with, which carries what analysis it reflects.
// The calls and answers a processor holds are kept as MessagePack until
// their session is analysed; their rows are compared after that round trip
// too. Only the content links (original_sha256, context_sha256) are left
// out: they are written by `ctxaudit ingest --store-content` alone, and a
// later write without them keeps the stored ones (carryLinks).
func FuzzSpanPathWritesTheSameRows(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f"))
	f.Add([]byte("\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8\xf7\xf6\xf5\xf4\xf3\xf2\xf1\xf0\xef\xee\xed\xec"))
	f.Add([]byte("call reason=x,y answer \x00\x01 session 2106 1969"))
	f.Fuzz(func(t *testing.T, data []byte) {
		g := recordGen(data)
		meta, calls, answers := g.session()
		// Through spans, only what ingest can make: the span path gives a
		// record without ids ids of its own (a call its span's) or drops it
		// (counted).
		spanCalls, spanAnswers := producible(calls), producible(answers)
		if len(producible([]schema.Session{meta})) == 0 {
			meta.SessionID = "s"
		}
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		otelconv.PutEmitterResource(rs.Resource().Attributes(), otelconv.ServiceProcessor, "v0")
		otelconv.AppendAnalysedSession(rs.ScopeSpans().AppendEmpty().Spans(), &meta, nil, spanCalls, spanAnswers)

		hop, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(mustMarshal(t, td))
		if err != nil {
			t.Fatalf("unmarshal the spans of an OTLP hop: %v", err)
		}
		// A call or answer the processor holds is kept as MessagePack until
		// its session is analysed; held, it has no analysis yet.
		heldCalls, heldAnswers := held(t, calls), held(t, answers)
		sameRows(t, "held (MessagePack)", toolCallColumns, withoutAnalysis(calls), heldCalls)
		sameRows(t, "held (MessagePack)", answerColumns, withoutAnalysis(answers), heldAnswers)

		for _, path := range []struct {
			name string
			td   ptrace.Traces
		}{{"in process", td}, {"after an OTLP hop", hop}} {
			gotSessions, gotCalls, gotAnswers := readSpans(path.td)
			sameRows(t, path.name, sessionColumns, []schema.Session{meta}, gotSessions)
			sameRows(t, path.name, toolCallColumns, spanCalls, gotCalls)
			sameRows(t, path.name, answerColumns, spanAnswers, gotAnswers)
		}
	})
}

// held is recs encoded as the processor holds them, and decoded.
func held[T any, P interface {
	*T
	msgp.Marshaler
	msgp.Unmarshaler
}](t *testing.T, recs []T) []T {
	out := make([]T, len(recs))
	for i := range recs {
		b, err := P(&recs[i]).MarshalMsg(nil)
		if err != nil {
			t.Fatalf("encode a held record: %v", err)
		}
		if rest, err := P(&out[i]).UnmarshalMsg(b); err != nil || len(rest) != 0 {
			t.Fatalf("decode a held record: %v (%d bytes left)", err, len(rest))
		}
	}
	return out
}

// withoutAnalysis is recs as held: MessagePack leaves Analysis out.
func withoutAnalysis[T any](recs []T) []T {
	out := slices.Clone(recs)
	for i := range out {
		switch r := any(&out[i]).(type) {
		case *schema.ToolCall:
			r.Analysis = schema.Analysis{}
		case *schema.Answer:
			r.Analysis = schema.Analysis{}
		}
	}
	return out
}

func mustMarshal(t *testing.T, td ptrace.Traces) []byte {
	b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatalf("marshal spans: %v", err)
	}
	return b
}

// producible is recs without those ingest cannot make: every record names
// its session and its own id (a call its tool too), and analysis gives
// every answer a risk.
func producible[T any](recs []T) []T {
	return slices.DeleteFunc(slices.Clone(recs), func(r T) bool {
		switch r := any(&r).(type) {
		case *schema.ToolCall:
			return r.SessionID == "" || r.CallID == "" || r.Tool == ""
		case *schema.Answer:
			return r.SessionID == "" || r.MessageID == "" || r.Risk == "" && !r.Retracted
		case *schema.Session:
			return r.SessionID == ""
		}
		return false
	})
}

// readSpans reads the records back as the exporter does (otelconv.Rows).
func readSpans(td ptrace.Traces) (sessions []schema.Session, calls []schema.ToolCall, answers []schema.Answer) {
	var r otelconv.Rows
	r.AddTraces(td)
	return r.Sessions, r.Calls, r.Answers
}

// sameRows requires want and got to be the same rows of a table, column by
// column, each row valid or invalid alike (the store leaves invalid ones out).
func sameRows[T any](t *testing.T, path string, cols []column[T], want, got []T) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("%s: %d rows read back, %d written", path, len(got), len(want))
	}
	for i := range want {
		wErr, gErr := validate(&want[i]), validate(&got[i])
		if (wErr == nil) != (gErr == nil) {
			t.Fatalf("%s: row %d: ingest's record: %v; the span path's: %v", path, i, wErr, gErr)
		}
		if wErr != nil {
			continue
		}
		for _, c := range cols {
			if c.name == "original_sha256" || c.name == "context_sha256" {
				continue
			}
			w, g := rowValue(c, &want[i]), rowValue(c, &got[i])
			if !reflect.DeepEqual(w, g) {
				t.Fatalf("%s: row %d, column %s: ingest writes %s, the span path %s\ningest's record:    %+v\nthe span path's:    %+v",
					path, i, c.name, show(w), show(g), want[i], got[i])
			}
		}
	}
}

func validate(r any) error {
	switch r := r.(type) {
	case *schema.ToolCall:
		return r.Validate()
	case *schema.Answer:
		return r.Validate()
	case *schema.Session:
		return r.Validate()
	}
	panic(fmt.Sprintf("no validation for %T", r))
}

// rowValue is the value column c writes for r, as the driver stores it: a
// zero time is 1970-01-01 (DateTime holds nothing earlier).
func rowValue[T any](c column[T], r *T) any {
	vals := batchValues{versions: []uint64{versionOf(r)}, redact: func(s string) (string, int) { return s, 0 }}
	v := reflect.ValueOf(c.values([]T{*r}, &vals)).Index(0).Interface()
	switch x := v.(type) {
	case time.Time:
		if x.Before(time.Unix(0, 0)) {
			return time.Unix(0, 0).UTC()
		}
		return x.UTC()
	case *uint64:
		if x == nil {
			return "NULL"
		}
		return *x
	case *float64:
		if x == nil {
			return "NULL"
		}
		return *x
	}
	return v
}

// versionOf is the version r is written with at clock 0: its rank.
func versionOf(r any) uint64 {
	switch r := r.(type) {
	case *schema.ToolCall:
		return version(toolCallRank(r), 0)
	case *schema.Answer:
		return version(answerRank(r), 0)
	case *schema.Session:
		return version(sessionRank(r), 0)
	}
	panic(fmt.Sprintf("no rank for %T", r))
}

func show(v any) string { return fmt.Sprintf("%#v", v) }

// recordGen draws records from fuzz bytes; past the end every draw is zero.
type recordGen []byte

func (g *recordGen) byte() byte {
	if len(*g) == 0 {
		return 0
	}
	b := (*g)[0]
	*g = (*g)[1:]
	return b
}

func (g *recordGen) bool() bool { return g.byte()&1 == 1 }

func (g *recordGen) u64() uint64 {
	var b [8]byte
	for i := range b {
		b[i] = g.byte()
	}
	return binary.LittleEndian.Uint64(b[:])
}

// pick is one of vals.
func pick[V any](g *recordGen, vals ...V) V { return vals[int(g.byte())%len(vals)] }

var genStrings = []string{
	"", "a", "s-1", "toolu_01", "call,with,commas", "reason=with=equals", "ü ✓ 日本", "\x00", "\xff\xfe", "50%", "a%2Cb", "%",
	" spaced ", "0", "unknown", "none", "Bash", "line\nbreak", "ends=",
}

func (g *recordGen) str() string {
	if b := g.byte(); b >= 240 {
		// any short string of the bytes that follow
		n := int(b - 240)
		out := make([]byte, n)
		for i := range out {
			out[i] = g.byte()
		}
		return string(out)
	} else {
		return genStrings[int(b)%len(genStrings)]
	}
}

func (g *recordGen) strs() []string {
	switch n := int(g.byte() % 5); n {
	case 0:
		return nil
	case 1:
		return []string{}
	default:
		out := make([]string, n-1)
		for i := range out {
			out[i] = g.str()
		}
		return out
	}
}

func (g *recordGen) count() schema.Count {
	switch g.byte() % 8 {
	case 0, 1:
		return schema.Unknown
	case 2:
		return schema.Known(0)
	case 3:
		return schema.Known(uint64(g.byte()))
	case 4:
		return schema.Known(1<<63 - 1)
	case 5:
		return schema.Known(1 << 63)
	case 6:
		return schema.Known(math.MaxUint64)
	default:
		return schema.Known(g.u64())
	}
}

func (g *recordGen) turn() schema.Turn {
	return pick(g, schema.Turn{}, schema.KnownTurn(0), schema.KnownTurn(1), schema.KnownTurn(7),
		schema.Turn{N: math.MaxUint32, Known: true}, schema.Turn{N: uint32(g.u64()), Known: true},
		schema.Turn{N: 5}) // the last unknown, built without KnownTurn
}

func (g *recordGen) integer() int {
	return pick(g, 0, 1, 7, -1, math.MaxUint32, math.MaxUint32+1, math.MaxInt64, math.MinInt64, int(int32(g.u64())))
}

func (g *recordGen) time() time.Time {
	switch g.byte() % 6 {
	case 0:
		return time.Time{}
	case 1:
		return time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC)
	case 2:
		return time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))
	case 3:
		return time.Unix(0, 0).UTC()
	case 4:
		return time.Date(2106, 2, 7, 6, 28, 15, 999_999_999, time.UTC)
	default:
		return time.Unix(int64(g.u64()%(1<<33)), int64(g.u64()%1e9)).UTC()
	}
}

func (g *recordGen) ratio() schema.Ratio {
	switch g.byte() % 5 {
	case 0:
		return schema.Ratio{}
	case 1:
		return schema.KnownRatio(0)
	case 2:
		return schema.KnownRatio(1)
	case 3:
		return schema.KnownRatio(float64(g.byte()) / 255)
	default:
		return schema.KnownRatio(math.Float64frombits(g.u64()))
	}
}

func (g *recordGen) rangeOf() schema.Range {
	return schema.Range{Start: g.count(), End: g.count(), Unit: pick(g, schema.UnitNone, schema.UnitBytes, schema.UnitChars,
		schema.UnitLines, schema.UnitTokens, schema.UnitItems, schema.UnitMatches, schema.UnitFiles)}
}

func (g *recordGen) analysis() schema.Analysis {
	if !g.bool() {
		return schema.Analysis{}
	}
	return schema.Analysis{Done: true, Partial: g.bool(), Records: pick(g, 0, 1, 5, 1<<20, math.MaxInt32+1)}
}

func (g *recordGen) harness() schema.Harness {
	return pick(g, append([]schema.Harness{""}, schema.Harnesses...)...)
}

func (g *recordGen) session() (schema.Session, []schema.ToolCall, []schema.Answer) {
	id := pick(g, "s-1", "00000000-0000-4000-8000-000000000001", "ü", "")
	meta := schema.Session{
		SessionID: id, Source: g.harness(), HarnessVersion: g.str(), Model: g.str(), Project: g.str(), Cwd: g.str(),
		GitBranch: g.str(), StartedAt: g.time(), EndedAt: g.time(), SourceFile: g.str(),
		Turns: g.count(), ToolCalls: g.integer(), TruncatedCalls: g.integer(), SilentCalls: g.integer(),
		Answers: g.integer(), RiskyAnswers: g.integer(), Compactions: g.count(),
		MaxRisk: pick(g, append([]schema.Risk{""}, schema.Risks...)...), InputTokens: g.count(), OutputTokens: g.count(),
		Analysis: g.analysis(),
	}
	calls := make([]schema.ToolCall, int(g.byte()%4))
	for i := range calls {
		calls[i] = g.call(id, i)
	}
	answers := make([]schema.Answer, int(g.byte()%3))
	for i := range answers {
		answers[i] = g.answer(id, i)
	}
	return meta, calls, answers
}

func (g *recordGen) call(session string, i int) schema.ToolCall {
	c := schema.ToolCall{
		SessionID: session, CallID: pick(g, fmt.Sprintf("toolu_%d", i), fmt.Sprintf("call,%d", i), ""), Tool: g.str(),
		Timestamp: g.time(), Source: g.harness(), HarnessVersion: g.str(), Model: g.str(), Project: g.str(), Cwd: g.str(),
		GitBranch: g.str(), AgentID: g.str(), Sidechain: g.bool(), Turn: g.turn(), MessageID: g.str(),
		Arguments: g.str(), Target: g.str(), IsError: g.bool(),
		Forensics: schema.Forensics{
			Original: schema.Original{
				Sizes:     schema.Sizes{Bytes: g.count(), Chars: g.count(), Lines: g.count(), Tokens: g.count()},
				Source:    pick(g, append([]schema.OriginalSource{""}, schema.OriginalSources...)...),
				Precision: pick(g, append([]schema.Precision{schema.PrecisionNone}, schema.Precisions...)...),
			},
			Context:          schema.Sizes{Bytes: g.count(), Chars: g.count(), Lines: g.count(), Tokens: g.count()},
			Truncated:        g.bool(),
			Kind:             pick(g, append([]schema.TruncationKind{""}, schema.TruncationKinds...)...),
			Strategy:         pick(g, append([]schema.Strategy{""}, schema.Strategies...)...),
			PartialByRequest: g.bool(),
			Shown:            g.rangeOf(), Total: g.count(), ShownTail: g.rangeOf(), ShownTailIsEnd: g.bool(),
			RefetchedSource: g.bool(), Reason: g.str(),
			Disclosure: schema.Disclosure{Range: g.bool(), Reason: g.bool(), Next: g.bool()},
			NextHint:   g.str(), SavedRef: g.str(), RefVersion: g.str(), Marker: g.str(), MarkerUnderstated: g.bool(),
			Detector: g.str(),
		},
		FollowedUp: g.bool(), ContinuationOf: g.str(), SessionCoverage: g.ratio(), CoverageUpperBound: g.bool(),
		CoverageMixedVersions: g.bool(), Searched: g.bool(), SourceFile: g.str(),
		SourceLine: pick(g, int64(0), 1, 42, -1, math.MaxInt64), Analysis: g.analysis(),
	}
	c.Forensics = detected(c.Forensics)
	return c
}

// detected keeps f within what detection makes (FuzzDetect checks each): a
// known original size has a precision and only then; a kept tail is in the
// head's unit and has a position, and ends the original only where its end
// is known.
func detected(f schema.Forensics) schema.Forensics {
	o := &f.Original
	if o.Bytes.Known || o.Chars.Known || o.Lines.Known || o.Tokens.Known {
		if !o.Precision.Valid() {
			o.Precision = schema.PrecisionExact
		}
	} else {
		o.Precision = schema.PrecisionNone
	}
	if f.ShownTail.Start.Known || f.ShownTail.End.Known {
		f.ShownTail.Unit = f.Shown.Unit
	} else {
		f.ShownTail = schema.Range{}
	}
	f.ShownTailIsEnd = f.ShownTailIsEnd && f.ShownTail.End.Known
	return f
}

func (g *recordGen) answer(session string, i int) schema.Answer {
	a := schema.Answer{
		SessionID: session, MessageID: pick(g, fmt.Sprintf("msg_%d", i), ""), Timestamp: g.time(), Turn: g.turn(),
		Source: g.harness(), Model: g.str(), AgentID: g.str(), Sidechain: g.bool(), Text: g.str(),
		InputCallIDs: g.strs(), InputsUncertain: g.bool(), IncompleteInputs: g.strs(), AbsenceClaim: g.bool(),
		Absence:       pick(g, append([]schema.Absence{""}, schema.Absences...)...),
		AbsenceClause: g.str(), AbsenceScope: g.str(),
		Risk:    pick(g, append([]schema.Risk{""}, schema.Risks...)...),
		Verdict: g.str(), Retracted: g.bool(), Analysis: g.analysis(),
	}
	// Reasons are analysis' machine words; the calls behind each are call
	// ids, never empty (a call without one is no row), of any other text.
	if n := int(g.byte() % 4); n > 0 || g.bool() {
		a.Reasons, a.ReasonCalls = []string{}, map[string][]string{}
		for range n {
			r := pick(g, schema.ReasonSilentTruncation, schema.ReasonNotFollowedUp, schema.ReasonRecovered)
			if _, dup := a.ReasonCalls[r]; dup {
				continue
			}
			ids := []string{}
			for range int(g.byte() % 4) {
				if id := g.str(); id != "" {
					ids = append(ids, id)
				}
			}
			a.Reasons, a.ReasonCalls[r] = append(a.Reasons, r), ids
		}
	}
	return a
}
