package analysis

import (
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/schema"
)

// A session row written by the first of two buffers counts its part; the
// store holds more. Recount counts the stored records by the analysis
// rules, widens the row's span to them in whole seconds, keeps what no
// record carries (tokens), and ranks its analysis over the records it
// counted. A row that counts at least what is stored stays as it is.
func TestRecount(t *testing.T) {
	first := call("c1", "Read", `{"file_path":"/repo/a.go"}`, 0, cut(schema.KindExplicit, schema.StrategyHead, schema.UnitLines, 1, 2000, 5000))
	later := call("c2", "Bash", `{"command":"ls"}`, 7200, cut(schema.KindSilent, schema.StrategyTail, schema.UnitBytes, 0, 99, -1))
	untimed := call("c3", "Read", `{"file_path":"/repo/b.go"}`, 0)
	untimed.Timestamp = time.Time{}
	answer := schema.Answer{SessionID: "s1", MessageID: "m1", Timestamp: at(7300).Add(400 * time.Millisecond), Risk: schema.RiskHigh}
	row := schema.Session{SessionID: "s1", StartedAt: at(0), EndedAt: at(60), ToolCalls: 1, TruncatedCalls: 1,
		MaxRisk: schema.RiskNone, Turns: schema.Known(3), InputTokens: schema.Known(1200),
		Analysis: schema.Analysis{Done: true, Records: 2}}

	same, recounted := Recount(row, []schema.ToolCall{first}, nil)
	if recounted || same != row {
		t.Errorf("a row counting every stored record was recounted: %+v", same)
	}

	got, recounted := Recount(row, []schema.ToolCall{first, later, untimed}, []schema.Answer{answer})
	if !recounted {
		t.Fatal("a row counting 1 of 3 stored calls was not recounted")
	}
	if got.ToolCalls != 3 || got.TruncatedCalls != 2 || got.SilentCalls != 1 || got.Answers != 1 || got.RiskyAnswers != 1 || got.MaxRisk != schema.RiskHigh {
		t.Errorf("counts: %d calls (%d cut, %d silent), %d answers (%d risky, max %s); want 3 (2, 1), 1 (1, high)",
			got.ToolCalls, got.TruncatedCalls, got.SilentCalls, got.Answers, got.RiskyAnswers, got.MaxRisk)
	}
	if !got.StartedAt.Equal(at(0)) || !got.EndedAt.Equal(at(7300)) {
		t.Errorf("span %s to %s; want %s to %s (the last record's second; the untimed call widens nothing)",
			got.StartedAt, got.EndedAt, at(0), at(7300))
	}
	if got.Turns != schema.Known(3) || got.InputTokens != schema.Known(1200) || got.OutputTokens.Known {
		t.Errorf("turns %s, tokens %s/%s; want the row's: 3, 1200/unknown", got.Turns, got.InputTokens, got.OutputTokens)
	}
	if got.Analysis != (schema.Analysis{Done: true, Records: 5}) {
		t.Errorf("analysis %+v; want the row's over its 2 records and the 3 stored ones it did not count", got.Analysis)
	}
	// A row whose analysis saw more than its calls and answers (messages
	// that were no answers) still ranks below its recount, and a recount
	// that finds more ranks higher again.
	row.Analysis.Records = 9
	one, _ := Recount(row, []schema.ToolCall{first, later}, nil)
	two, _ := Recount(one, []schema.ToolCall{first, later, untimed}, nil)
	if one.Analysis.Records != 10 || two.Analysis.Records != 11 {
		t.Errorf("analyses over %d, then %d records; want 10, then 11", one.Analysis.Records, two.Analysis.Records)
	}
}
