package chstore_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/schema"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

// A row with a value its Enum8 or DateTime column cannot hold is left out,
// named in a *RejectedRowsError, and every other row of the write is stored —
// even a valid row of the same id, sent in the same batch with less to say.
func TestRowsATableCannotHoldAreLeftOut(t *testing.T) {
	ctx := context.Background()
	s := chtest.NewStore(t)
	at := time.Date(2026, 4, 1, 8, 0, 0, 0, time.UTC)
	call := func(id string, kind schema.TruncationKind, ctxBytes schema.Count) schema.ToolCall {
		return schema.ToolCall{SessionID: "rej", CallID: id, Tool: "Bash", Timestamp: at,
			Forensics: schema.Forensics{Kind: kind, Context: schema.Sizes{Bytes: ctxBytes}}}
	}
	err := s.WriteToolCalls(ctx, []schema.ToolCall{
		call("a", schema.KindNone, schema.Known(10)),
		call("b", "cut", schema.Known(20)),
		call("c", schema.KindSilent, schema.Known(30)),
		call("c", "Silent", schema.Known(31)), // knows no less than the row before it
		// The driver would store these as 2036 and 2027.
		{SessionID: "rej", CallID: "d", Tool: "Bash", Timestamp: time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)},
		{SessionID: "rej", CallID: "e", Tool: "Bash", Timestamp: time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)},
	})
	var rejected *chstore.RejectedRowsError
	if !errors.As(err, &rejected) || rejected.Table != "tool_calls" || rejected.Rows != 4 ||
		rejected.First != `rej/b: truncation kind "cut" is not one ctxaudit knows` {
		t.Fatalf("WriteToolCalls = %v (%+v); want 4 rows rejected, the first rej/b for its kind", err, rejected)
	}
	calls, err := s.ToolCalls(ctx, "rej")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range calls {
		got[c.CallID] = fmt.Sprintf("%s %d", c.Kind, c.Context.Bytes.N)
	}
	if want := map[string]string{"a": "none 10", "c": "silent 30"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("stored %v, want %v", got, want)
	}

	err = s.WriteAnswers(ctx, []schema.Answer{
		{SessionID: "rej", MessageID: "m1", Timestamp: at, Risk: schema.RiskHigh},
		{SessionID: "rej", MessageID: "m2", Timestamp: at, Risk: "severe"},
		{SessionID: "rej", MessageID: "m3", Timestamp: at, Risk: schema.RiskLow, Absence: "partly"},
	})
	if !errors.As(err, &rejected) || rejected.Table != "answers" || rejected.Rows != 2 {
		t.Fatalf("WriteAnswers = %v; want 2 answers rejected", err)
	}
	if answers, err := s.Answers(ctx, "rej"); err != nil || len(answers) != 1 || answers[0].MessageID != "m1" {
		t.Fatalf("answers %+v, %v; want m1 only", answers, err)
	}

	err = s.WriteSessions(ctx, []schema.Session{{SessionID: "rej", StartedAt: at, EndedAt: at, MaxRisk: "4"}})
	if !errors.As(err, &rejected) || rejected.Table != "sessions" || rejected.Rows != 1 {
		t.Fatalf("WriteSessions = %v; want the session rejected", err)
	}
	if err := s.WriteSessions(ctx, []schema.Session{{SessionID: "rej", StartedAt: at, EndedAt: at, MaxRisk: schema.RiskHigh}}); err != nil {
		t.Fatalf("a valid session: %v", err)
	}
}

// The values schema's Valid accepts are exactly those of the Enum8 columns
// the migrations create, in their order.
func TestEnumValuesAreTheColumns(t *testing.T) {
	ctx := context.Background()
	s := chtest.NewStore(t)
	strs := func(vs ...string) []string { return vs }
	precisions := strs("unknown")
	for _, p := range schema.Precisions {
		precisions = append(precisions, string(p))
	}
	for _, c := range []struct {
		table, column string
		want          []string
	}{
		{"tool_calls", "truncation_kind", names(schema.TruncationKinds)},
		{"tool_calls", "strategy", names(schema.Strategies)},
		{"tool_calls", "original_source", names(schema.OriginalSources)},
		{"tool_calls", "original_precision", precisions},
		{"answers", "risk", names(schema.Risks)},
		{"answers", "absence", names(schema.Absences)},
		{"sessions", "max_risk", names(schema.Risks)},
	} {
		var typ string
		if err := s.Conn().QueryRow(ctx, "SELECT type FROM system.columns WHERE database = ? AND table = ? AND name = ?",
			s.Database(), c.table, c.column).Scan(&typ); err != nil {
			t.Fatalf("%s.%s: %v", c.table, c.column, err)
		}
		if got := enumValues(t, typ); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s.%s is %s: values %v, schema's %v", c.table, c.column, typ, got, c.want)
		}
	}
}

func names[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// enumValues are the names of an Enum8 type, ordered by their numbers.
func enumValues(t *testing.T, typ string) []string {
	t.Helper()
	ms := regexp.MustCompile(`'([^']*)' = (-?\d+)`).FindAllStringSubmatch(typ, -1)
	if len(ms) == 0 {
		t.Fatalf("%s is not an Enum8", typ)
	}
	byNumber := map[int]string{}
	lo, hi := 1<<30, -1<<30
	for _, m := range ms {
		n, _ := strconv.Atoi(m[2])
		byNumber[n] = m[1]
		lo, hi = min(lo, n), max(hi, n)
	}
	var out []string
	for n := lo; n <= hi; n++ {
		if v, ok := byNumber[n]; ok {
			out = append(out, v)
		}
	}
	return out
}
