package analysis

import (
	"reflect"
	"testing"

	"github.com/ctxaudit/ctxaudit/schema"
)

// TestAbsenceRisk: an unscoped claim on an incomplete input is high; a
// scoped one is judged by whether its scope lies within what was delivered.
func TestAbsenceRisk(t *testing.T) {
	const scopedReason = schema.ReasonScopedAbsence
	readHead := func(kind schema.TruncationKind) schema.ToolCall {
		return call("r1", "Read", `{"file_path":"/repo/uploader.ts"}`, 0,
			cut(kind, schema.StrategyHead, schema.UnitLines, 1, 2000, 3100))
	}
	headTail := call("c1", "shell_command", `{"command":"go test ./..."}`, 0, func(c *schema.ToolCall) {
		c.Truncated, c.Kind, c.Strategy = true, schema.KindExplicit, schema.StrategyHeadTail
		c.Total = schema.KnownInt(3000)
	})
	// Codex's head+tail of 3,000 lines: lines 1–128 and 2,873–3,000, the end.
	headTailEnd := call("c2", "shell_command", `{"command":"go test ./..."}`, 0,
		cut(schema.KindExplicit, schema.StrategyHeadTail, schema.UnitLines, 1, 128, 3000), tail(2873, 3000, true))
	// The first 100 lines of an output of unknown length.
	headHeadOnly := call("c3", "shell_command", `{"command":"go test ./..."}`, 0,
		cut(schema.KindExplicit, schema.StrategyHead, schema.UnitLines, 1, 100, -1))
	tests := []struct {
		name    string
		call    schema.ToolCall
		text    string
		absence schema.Absence
		risk    schema.Risk
		reasons []string
		scope   string
	}{
		{"Codex: no failing tests, unscoped, on a head+tail cut", headTail,
			"The suite ran; no failing tests were found in the output, every package reports ok.",
			schema.AbsenceUnscoped, schema.RiskHigh, []string{absence, explicit, notFollowed}, ""},
		{"scoped to the lines seen", readHead(schema.KindExplicit),
			"In the first 2,000 lines there is no retryUpload.",
			schema.AbsenceScoped, schema.RiskMedium, []string{scopedReason, explicit, notFollowed}, "the first 2,000 lines"},
		{"scoped to a range inside what was seen", readHead(schema.KindExplicit),
			"第 100 到 1500 行沒有 retryUpload。",
			schema.AbsenceScoped, schema.RiskMedium, []string{scopedReason, explicit, notFollowed}, "第 100 到 1500 行"},
		{"scoped past what was seen is not honest", readHead(schema.KindExplicit),
			"In the first 3,000 lines there is no retryUpload.",
			schema.AbsenceScoped, schema.RiskHigh, []string{absence, explicit, notFollowed}, "the first 3,000 lines"},
		// "The last N" lie where the output ends: lines 2,601–3,100 of a
		// 3,100-line file of which lines 1–2,000 were shown.
		{"scoped to the last lines, never shown, is not honest", readHead(schema.KindExplicit),
			"In the last 500 lines there is no retryUpload.",
			schema.AbsenceScoped, schema.RiskHigh, []string{absence, explicit, notFollowed}, "the last 500 lines"},
		{"scoped to the last lines of a kept tail that ends the output", headTailEnd,
			"In the last 100 lines there is no failing test.",
			schema.AbsenceScoped, schema.RiskMedium, []string{scopedReason, explicit, notFollowed}, "the last 100 lines"},
		{"scoped past the kept tail is not honest", headTailEnd,
			"In the last 500 lines there is no failing test.",
			schema.AbsenceScoped, schema.RiskHigh, []string{absence, explicit, notFollowed}, "the last 500 lines"},
		{"scoped to the last lines of an output whose end nothing places is not honest", headHeadOnly,
			"In the last 100 lines there is no failing test.",
			schema.AbsenceScoped, schema.RiskHigh, []string{absence, explicit, notFollowed}, "the last 100 lines"},
		{"scoped to what was read, on a silent cut: capped at medium", readHead(schema.KindSilent),
			"目前讀到的內容裡沒有 retryUpload。",
			schema.AbsenceScoped, schema.RiskMedium, []string{scopedReason, silent, notFollowed}, "讀到的"},
		{"a range in a unit nothing measured is taken at its word", headTail,
			"The first 100 results contain no failing test.",
			schema.AbsenceScoped, schema.RiskMedium, []string{scopedReason, explicit, notFollowed}, "The first 100 results"},
		{"no claim on an incomplete input stays medium", headTail,
			"Every package reports ok.",
			schema.AbsenceNone, schema.RiskMedium, []string{explicit, notFollowed}, ""},
		{"an unscoped claim on complete input is no risk", call("r2", "Read", `{"file_path":"/repo/a.go"}`, 0),
			"There is no retryUpload in a.go.",
			schema.AbsenceUnscoped, schema.RiskNone, []string{}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &Session{Calls: []schema.ToolCall{tc.call}, Answers: []schema.Answer{answer("a1", 10, tc.text, tc.call.CallID)}}
			Analyze(s)
			a := s.Answers[0]
			if a.Absence != tc.absence || a.AbsenceClaim != tc.absence.IsClaim() || a.Risk != tc.risk ||
				!reflect.DeepEqual(a.Reasons, tc.reasons) || a.AbsenceScope != tc.scope {
				t.Fatalf("got absence %s (claim %v) scope %q risk %s reasons %v; want %s scope %q risk %s reasons %v",
					a.Absence, a.AbsenceClaim, a.AbsenceScope, a.Risk, a.Reasons, tc.absence, tc.scope, tc.risk, tc.reasons)
			}
			if a.Absence.IsClaim() && a.AbsenceClause == "" {
				t.Errorf("claim without its clause")
			}
			for _, r := range a.Reasons {
				if ids := a.ReasonCalls[r]; len(ids) != 1 || ids[0] != tc.call.CallID {
					t.Errorf("reason %s names calls %v, want [%s]", r, ids, tc.call.CallID)
				}
			}
		})
	}
}
