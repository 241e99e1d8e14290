package schema

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

func TestValidateNamesTheValueATableCannotHold(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string // "" for valid
	}{
		{"call, every known value", (&ToolCall{Forensics: Forensics{Kind: KindSilent, Strategy: StrategyResized,
			Original: Original{Source: SourceEstimate, Precision: PrecisionLowerBound}}}).Validate(), ""},
		{"call, nothing known", (&ToolCall{}).Validate(), ""},
		{"call, kind", (&ToolCall{Forensics: Forensics{Kind: "cut"}}).Validate(), `truncation kind "cut"`},
		{"call, strategy", (&ToolCall{Forensics: Forensics{Kind: KindExplicit, Strategy: "middle"}}).Validate(), `strategy "middle"`},
		{"call, source", (&ToolCall{Forensics: Forensics{Original: Original{Source: "guess"}}}).Validate(), `original source "guess"`},
		{"call, precision", (&ToolCall{Forensics: Forensics{Original: Original{Precision: "rough"}}}).Validate(), `original precision "rough"`},
		{"call, a kind's case", (&ToolCall{Forensics: Forensics{Kind: "Silent"}}).Validate(), `truncation kind "Silent"`},
		{"answer, every known value", (&Answer{Risk: RiskHigh, Absence: AbsenceScoped}).Validate(), ""},
		{"answer, nothing known", (&Answer{}).Validate(), ""},
		{"answer, risk", (&Answer{Risk: "severe"}).Validate(), `risk "severe"`},
		{"answer, absence", (&Answer{Risk: RiskLow, Absence: "partial"}).Validate(), `absence "partial"`},
		{"session, max risk", (&Session{MaxRisk: RiskMedium}).Validate(), ""},
		{"session, bad max risk", (&Session{MaxRisk: "3"}).Validate(), `max risk "3"`},
		{"call, the epoch", (&ToolCall{Timestamp: time.Unix(0, 0)}).Validate(), ""},
		{"call, the last second", (&ToolCall{Timestamp: time.Unix(math.MaxUint32, 999)}).Validate(), ""},
		{"call, past the last second", (&ToolCall{Timestamp: time.Unix(math.MaxUint32+1, 0)}).Validate(), "timestamp 2106-02-07T06:28:16Z is outside"},
		{"call, before the epoch", (&ToolCall{Timestamp: time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)}).Validate(), "timestamp 1900-01-01T00:00:00Z"},
		{"answer, year 2300", (&Answer{Timestamp: time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)}).Validate(), "timestamp 2300-01-01T00:00:00Z"},
		{"session, no times", (&Session{}).Validate(), ""},
		{"call, the largest turn", (&ToolCall{Turn: KnownTurn(math.MaxUint32)}).Validate(), ""},
		{"call, turn unknown", (&ToolCall{Turn: KnownTurn(math.MaxUint32 + 1)}).Validate(), ""},
		{"session, turns unknown", (&Session{Turns: Unknown}).Validate(), ""},
		{"session, the most turns", (&Session{Turns: Known(math.MaxUint32)}).Validate(), ""},
		{"session, turns past UInt32", (&Session{Turns: Known(math.MaxUint32 + 1)}).Validate(), "turns 4294967296 is more than"},
		{"session, calls past UInt32", (&Session{Turns: Known(3), ToolCalls: 1 << 33}).Validate(), "tool calls 8589934592"},
		{"session, compactions past UInt32", (&Session{Compactions: Known(1 << 32)}).Validate(), "compactions 4294967296"},
		{"session, risky answers on uncertain inputs past UInt32", (&Session{RiskyAnswersUncertain: Known(1 << 32)}).Validate(), "uncertain inputs 4294967296"},
		{"session, end", (&Session{StartedAt: time.Unix(1, 0), EndedAt: time.Unix(-1, 0)}).Validate(), "end 1969-12-31T23:59:59Z"},
	} {
		switch {
		case tc.want == "" && tc.err != nil:
			t.Errorf("%s: %v, want valid", tc.name, tc.err)
		case tc.want != "" && (tc.err == nil || !strings.Contains(tc.err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error naming %s", tc.name, tc.err, tc.want)
		}
	}
}

// A count given as a double is known only when it is one.
func TestKnownFloat(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want Count
	}{
		{0, Known(0)}, {4096, Known(4096)}, {1<<63 - 1024, Known(1<<63 - 1024)},
		{3.5, Unknown}, {-1, Unknown}, {1 << 63, Unknown}, {1e300, Unknown},
		{math.NaN(), Unknown}, {math.Inf(1), Unknown}, {math.Inf(-1), Unknown},
	} {
		if got := KnownFloat(tc.f); got != tc.want {
			t.Errorf("KnownFloat(%v) = %+v, want %+v", tc.f, got, tc.want)
		}
	}
}

// A count past MaxCount, a share outside [0, 1] and a token total that
// overflowed are none: known, they would be stored by `ctxaudit ingest` and
// come back changed (or not at all) through spans, whose int attributes are
// signed (FuzzSpanPathWritesTheSameRows in schema/chstore).
func TestFiguresNoPathCarriesAreUnknown(t *testing.T) {
	for _, tc := range []struct {
		n    uint64
		want Count
	}{{0, Count{0, true}}, {MaxCount, Count{MaxCount, true}}, {MaxCount + 1, Unknown}, {math.MaxUint64, Unknown}} {
		if got := Known(tc.n); got != tc.want {
			t.Errorf("Known(%d) = %+v, want %+v", tc.n, got, tc.want)
		}
		// A Count built without Known (a decoded one) is stored as Known
		// would have made it.
		if n, stored := (Count{N: tc.n, Known: true}).Stored(); stored != tc.want.Known || stored && n != tc.n {
			t.Errorf("Count{%d, known}.Stored() = %d, %v; want known %v", tc.n, n, stored, tc.want.Known)
		}
	}
	for _, tc := range []struct {
		v     float64
		known bool
	}{{0, true}, {0.5, true}, {1, true}, {-0.01, false}, {1.01, false}, {1e6, false}, {math.NaN(), false}, {math.Inf(1), false}} {
		if got := KnownRatio(tc.v); got.Known != tc.known || tc.known && got.V != tc.v {
			t.Errorf("KnownRatio(%v) = %+v, known should be %v", tc.v, got, tc.known)
		}
		if _, stored := (Ratio{V: tc.v, Known: true}).Stored(); stored != tc.known {
			t.Errorf("Ratio{%v, known}.Stored() known = %v, want %v", tc.v, stored, tc.known)
		}
	}
	for _, tc := range []struct {
		a    Count
		b    uint64
		want Count
	}{
		{Unknown, 0, Known(0)}, // a message reported usage: 0 is a figure
		{Unknown, 7, Known(7)},
		{Known(1), 2, Known(3)},
		{Known(MaxCount - 1), 1, Known(MaxCount)},
		{Known(MaxCount), 1, tokensPast},
		// 2^63 + 2^63 wrapped around to 0; 1e19 + 1e19 to 1.55e18, a plausible, wrong figure
		{Known(1 << 62), 1 << 63, tokensPast},
		{Known(1), 1e19, tokensPast},
		{tokensPast, 5, tokensPast},
		{Unknown, math.MaxUint64, tokensPast},
	} {
		got := AddTokens(tc.a, tc.b)
		if got != tc.want {
			t.Errorf("AddTokens(%+v, %d) = %+v, want %+v", tc.a, tc.b, got, tc.want)
		}
		if _, stored := got.Stored(); stored != (tc.want != tokensPast) {
			t.Errorf("AddTokens(%+v, %d) stored: %v", tc.a, tc.b, stored)
		}
	}
	for _, tc := range []struct{ a, b, want Count }{
		{Unknown, Unknown, Unknown},
		{Unknown, Known(4), Known(4)},
		{Known(4), Unknown, Known(4)},
		{Known(4), Known(0), Known(4)},
		{Known(MaxCount), Known(1), tokensPast},
		{tokensPast, Unknown, tokensPast},
		{Unknown, tokensPast, tokensPast},
		{tokensPast, Known(1), tokensPast},
	} {
		if got := SumTokens(tc.a, tc.b); got != tc.want {
			t.Errorf("SumTokens(%+v, %+v) = %+v, want %+v", tc.a, tc.b, got, tc.want)
		}
	}
	if Tokens(5) != Known(5) || Tokens(0) != Known(0) || Tokens(math.MaxUint64) != tokensPast {
		t.Errorf("Tokens: 5 → %+v, 0 → %+v, 2^64-1 → %+v", Tokens(5), Tokens(0), Tokens(math.MaxUint64))
	}
	if b, _ := tokensPast.MarshalJSON(); string(b) != "null" {
		t.Errorf("a token total past MaxCount is %s in JSON, want null", b)
	}
}

func TestTimeKnown(t *testing.T) {
	for _, tc := range []struct {
		t    time.Time
		want bool
	}{
		{time.Time{}, false},
		{time.Unix(0, 0), false},
		{time.Unix(0, 0).UTC(), false},
		{time.Unix(0, 1), true},
		{time.Unix(1, 0), true},
		{time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC), true},
	} {
		if got := TimeKnown(tc.t); got != tc.want {
			t.Errorf("TimeKnown(%s) = %v; want %v", tc.t, got, tc.want)
		}
	}
}

// The records' JSON gives a time not known as null, never as 1970 or year 1;
// a known time as RFC 3339, and every other field as before.
func TestRecordJSONSaysUnknownTimeIsNull(t *testing.T) {
	at := time.Date(2026, 12, 6, 10, 0, 0, 5, time.UTC)
	for _, tc := range []struct {
		name   string
		v      any
		fields map[string]string
	}{
		{"call, no time", ToolCall{CallID: "c1", Timestamp: time.Unix(0, 0).UTC()}, map[string]string{"timestamp": "null", "call_id": `"c1"`}},
		{"call, timed", &ToolCall{CallID: "c1", Timestamp: at}, map[string]string{"timestamp": `"2026-12-06T10:00:00.000000005Z"`}},
		{"answer, no time", Answer{MessageID: "m1"}, map[string]string{"timestamp": "null", "message_id": `"m1"`}},
		{"session, no end", Session{SessionID: "s", StartedAt: at}, map[string]string{"started_at": `"2026-12-06T10:00:00.000000005Z"`, "ended_at": "null", "session_id": `"s"`}},
	} {
		b, err := json.Marshal(tc.v)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var got map[string]json.RawMessage
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for k, want := range tc.fields {
			if string(got[k]) != want {
				t.Errorf("%s: %s = %s, want %s", tc.name, k, got[k], want)
			}
		}
		if strings.Count(string(b), `"timestamp"`)+strings.Count(string(b), `"started_at"`) > 1 {
			t.Errorf("%s: a time field twice: %s", tc.name, b)
		}
	}
	var back ToolCall
	if err := json.Unmarshal([]byte(`{"call_id":"c1","timestamp":null}`), &back); err != nil || back.CallID != "c1" || TimeKnown(back.Timestamp) {
		t.Errorf("read back %+v (%v): want c1 with no time", back, err)
	}
}
