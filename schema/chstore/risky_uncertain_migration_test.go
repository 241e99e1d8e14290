package chstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/schema"
	"github.com/ctxaudit/ctxaudit/schema/migrations"
)

// TestRiskyUncertainMigration upgrades a database at version 9 holding a
// session with two risky answers. Nobody counted how many of them rest on
// uncertain inputs: after 0010 — interrupted once, then run by the
// migrator — the row reads that count as unknown, not 0, and sessions
// written since read back their counts, 0 included.
func TestRiskyUncertainMigration(t *testing.T) {
	ctx := context.Background()
	s := chtest.OpenStore(t, chtest.Address(t))
	all, run := atVersion(t, s, 9, "session_risky_uncertain")

	ts := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	// The session as version 9 stored it, analysed over 3 records.
	if err := s.Conn().Exec(ctx, "INSERT INTO "+migrations.QuoteIdent(s.Database())+".sessions (session_id, started_at, ended_at, tool_calls, answers, risky_answers, max_risk, version) SELECT 'before', toDateTime(?), toDateTime(?), 1, 2, 2, 'high', toUInt64(?)",
		ts.Unix(), ts.Unix(), uint64(1)<<63|uint64(3)<<46|1); err != nil {
		t.Fatalf("write a session at version 9: %v", err)
	}

	resumeAfter(t, s, run, all[9])

	before, found, err := s.SessionRow(ctx, "before")
	if err != nil || !found {
		t.Fatalf("session written before: found %v, %v", found, err)
	}
	if before.RiskyAnswers != 2 || before.RiskyAnswersUncertain.Known {
		t.Errorf("session written before: %d risky answers, %s of them on uncertain inputs; want 2, unknown", before.RiskyAnswers, before.RiskyAnswersUncertain)
	}

	written := []schema.Session{
		{SessionID: "some", StartedAt: ts, EndedAt: ts, Answers: 3, RiskyAnswers: 2, RiskyAnswersUncertain: schema.Known(1), MaxRisk: schema.RiskHigh,
			Analysis: schema.Analysis{Done: true, Records: 4}},
		{SessionID: "none", StartedAt: ts, EndedAt: ts, Answers: 3, RiskyAnswers: 2, RiskyAnswersUncertain: schema.Known(0), MaxRisk: schema.RiskHigh,
			Analysis: schema.Analysis{Done: true, Records: 4}},
	}
	if err := s.WriteSessions(ctx, written); err != nil {
		t.Fatal(err)
	}
	for _, w := range written {
		got, found, err := s.SessionRow(ctx, w.SessionID)
		if err != nil || !found {
			t.Fatalf("%s: found %v, %v", w.SessionID, found, err)
		}
		if got.RiskyAnswersUncertain != w.RiskyAnswersUncertain {
			t.Errorf("%s: %s risky answers on uncertain inputs read back, want %s", w.SessionID, got.RiskyAnswersUncertain, w.RiskyAnswersUncertain)
		}
	}
}
