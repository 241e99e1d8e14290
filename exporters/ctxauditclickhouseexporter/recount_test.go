package ctxauditclickhouseexporter

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ctxaudit/ctxaudit/collector/otelconv"
	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/schema"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

// A processor that dropped a session's buffer before the session ended
// emits two analyses of it (docs/design.md §10.3): the first buffer's, of
// the session's start, and a partial buffer's, of what came after, whose
// session row ranks below the first's. Whichever of the two pushes lands
// last, the stored row ends up counting every stored record of the
// session: its calls and answers, its cut calls, its riskiest answer and
// its last activity. A session without a partial row keeps the row its
// analysis wrote.
func TestPartialSessionIsRecounted(t *testing.T) {
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	call := func(session, id string, ts time.Time, kind schema.TruncationKind, a schema.Analysis) schema.ToolCall {
		c := schema.ToolCall{SessionID: session, CallID: id, Tool: "Read", Timestamp: ts, Source: schema.HarnessPi, Analysis: a}
		c.Kind, c.Truncated, c.Strategy = kind, kind != schema.KindNone, schema.StrategyNone
		if c.Truncated {
			c.Strategy = schema.StrategyHead
		}
		return c
	}
	// first is what the first buffer held of a session, rest what the
	// partial one held after it, two hours later.
	push := func(session string) (first, rest ptrace.Traces, firstRow schema.Session) {
		whole := schema.Analysis{Done: true, Records: 2}
		later := schema.Analysis{Done: true, Partial: true, Records: 3}
		firstRow = schema.Session{SessionID: session, Source: schema.HarnessPi, StartedAt: at, EndedAt: at.Add(time.Minute),
			ToolCalls: 2, TruncatedCalls: 1, Answers: 0, MaxRisk: schema.RiskNone, Turns: schema.Known(1), Analysis: whole}
		restRow := schema.Session{SessionID: session, Source: schema.HarnessPi, StartedAt: at.Add(2 * time.Hour), EndedAt: at.Add(2*time.Hour + 2*time.Minute),
			ToolCalls: 2, TruncatedCalls: 1, Answers: 1, RiskyAnswers: 1, MaxRisk: schema.RiskHigh, Analysis: later}
		first, rest = ptrace.NewTraces(), ptrace.NewTraces()
		otelconv.AppendAnalysedSession(first.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans(), &firstRow, nil,
			[]schema.ToolCall{
				call(session, "c1", at, schema.KindExplicit, whole),
				call(session, "c2", at.Add(time.Minute), schema.KindNone, whole),
			}, nil)
		otelconv.AppendAnalysedSession(rest.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans(), &restRow, nil,
			[]schema.ToolCall{
				call(session, "c3", at.Add(2*time.Hour), schema.KindSilent, later),
				call(session, "c4", at.Add(2*time.Hour+time.Minute), schema.KindNone, later),
			},
			[]schema.Answer{{SessionID: session, MessageID: "m1", Timestamp: at.Add(2*time.Hour + 2*time.Minute), Text: "done",
				Risk: schema.RiskHigh, Reasons: []string{schema.ReasonSilentTruncation}, Source: schema.HarnessPi, Analysis: later}})
		return first, rest, firstRow
	}
	whole := func(t *testing.T, s *chstore.Store, session string) {
		t.Helper()
		got, found, err := s.Session(context.Background(), session)
		if err != nil || !found {
			t.Fatalf("session %s: found=%v err=%v", session, found, err)
		}
		if got.ToolCalls != 4 || got.TruncatedCalls != 2 || got.SilentCalls != 1 || got.Answers != 1 || got.RiskyAnswers != 1 ||
			got.MaxRisk != schema.RiskHigh || !got.StartedAt.Equal(at) || !got.EndedAt.Equal(at.Add(2*time.Hour+2*time.Minute)) ||
			got.Turns != schema.Known(1) {
			t.Errorf("the stored row of %s: %d calls (%d truncated, %d silent), %d answers (%d risky, max %s), %s to %s, %s turns;"+
				" want 4 (2, 1), 1 (1, high), %s to %s, 1 turn",
				session, got.ToolCalls, got.TruncatedCalls, got.SilentCalls, got.Answers, got.RiskyAnswers, got.MaxRisk,
				got.StartedAt, got.EndedAt, got.Turns, at, at.Add(2*time.Hour+2*time.Minute))
		}
		// It ranks as the first buffer's analysis of the whole session,
		// over every record it counts.
		if got.Analysis.Partial || got.Analysis.Records < 5 {
			t.Errorf("the stored row of %s ranks as %+v; want a complete analysis of at least 5 records", session, got.Analysis)
		}
	}

	ctx := context.Background()
	addr, s := chtest.NewDatabase(t)
	t.Run("partial buffer last", func(t *testing.T) {
		first, rest, _ := push("rc-in-order")
		exportEach(t, addr, first, rest)
		whole(t, s, "rc-in-order")
		// Emitted again with nothing new, the partial buffer changes
		// nothing: the recount counts what is stored, once.
		_, again, _ := push("rc-in-order")
		exportEach(t, addr, again)
		whole(t, s, "rc-in-order")
	})
	t.Run("partial buffer first", func(t *testing.T) {
		first, rest, firstRow := push("rc-reversed")
		exportEach(t, addr, rest)
		// The first buffer's row lands after the partial one and outranks
		// it, and a merge removes the partial row before the first
		// buffer's push is recounted: the recount must not need that row.
		if err := s.WriteSessions(ctx, []schema.Session{firstRow}); err != nil {
			t.Fatal(err)
		}
		if err := s.Conn().Exec(ctx, "OPTIMIZE TABLE "+s.Database()+".sessions FINAL"); err != nil {
			t.Fatal(err)
		}
		exportEach(t, addr, first)
		whole(t, s, "rc-reversed")
	})
	t.Run("no partial buffer", func(t *testing.T) {
		first, _, _ := push("rc-whole")
		exportEach(t, addr, first)
		got, found, err := s.Session(ctx, "rc-whole")
		if err != nil || !found || got.ToolCalls != 2 || got.Answers != 0 || !got.EndedAt.Equal(at.Add(time.Minute)) {
			t.Errorf("a session no partial buffer went on is stored as %+v (found=%v, %v); want its analysis's row", got, found, err)
		}
	})
}
