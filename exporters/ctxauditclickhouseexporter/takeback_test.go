package ctxauditclickhouseexporter

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ctxaudit/ctxaudit/collector/otelconv"
	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/schema"
)

// An answer stored by a writer that did not know better — `ctxaudit
// ingest` of a transcript the harness was still writing — is taken back
// when a session span names its message as no answer
// (ctxaudit.session.not_answers): the exporter writes its retraction,
// ranked by the span's analysis. A message named that the store holds no
// answer for, or an answer of another session, is left alone.
func TestNotAnswersTakeBackStoredAnswers(t *testing.T) {
	ctx := context.Background()
	addr, s := chtest.NewDatabase(t)
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	early := schema.Analysis{Done: true, Records: 3}
	stale := schema.Answer{SessionID: "tb-1", MessageID: "m-narration", Timestamp: at, Text: "Let me look at b.go.",
		Risk: schema.RiskNone, Absence: schema.AbsenceNone, Verdict: "fine", Analysis: early}
	kept := stale
	kept.MessageID, kept.Text = "m-answer", "b.go sets the timeout."
	other := stale
	other.SessionID = "tb-2" // the same message id in another session
	if err := s.WriteAnswers(ctx, []schema.Answer{stale, kept, other}); err != nil {
		t.Fatal(err)
	}

	td := ptrace.NewTraces()
	sess := schema.Session{SessionID: "tb-1", Source: schema.HarnessClaudeCode, StartedAt: at, EndedAt: at.Add(time.Minute),
		ToolCalls: 2, Answers: 1, MaxRisk: schema.RiskNone, Analysis: schema.Analysis{Done: true, Records: 6}}
	otelconv.AppendAnalysedSession(td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans(), &sess,
		[]string{"m-narration", "m-never-stored"}, nil, nil)
	exportEach(t, addr, td)

	ids := func(session string) []string {
		t.Helper()
		answers, err := s.Answers(ctx, session)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, a := range answers {
			out = append(out, a.MessageID)
		}
		return out
	}
	if got := ids("tb-1"); !slices.Equal(got, []string{"m-answer"}) {
		t.Errorf("tb-1 answers %v, want m-answer only: m-narration taken back", got)
	}
	if got := ids("tb-2"); !slices.Equal(got, []string{"m-narration"}) {
		t.Errorf("tb-2 answers %v: another session's answer of the same message id was taken back", got)
	}
	var retracted uint64
	if err := s.Conn().QueryRow(ctx, "SELECT count() FROM "+s.Database()+".answers FINAL WHERE retracted = 1").Scan(&retracted); err != nil {
		t.Fatal(err)
	}
	if retracted != 1 {
		t.Errorf("%d retracted rows, want 1: none for the message the store held no answer for", retracted)
	}
}
