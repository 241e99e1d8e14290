package chstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/schema"
	"github.com/ctxaudit/ctxaudit/schema/migrations"
)

// TestUnknownIsNullMigration upgrades a database at version 6 that holds a
// call, an answer and a session: their turns, compactions and token totals
// read the same after 0007; records whose figures are unknown can then be
// written and read back as unknown, not 0. 0007 interrupted after its
// statements but before it was recorded runs again as the migrator runs it
// on 18.16 (MODIFY COLUMN to the type the column already has).
func TestUnknownIsNullMigration(t *testing.T) {
	ctx := context.Background()
	s := chtest.OpenStore(t, chtest.Address(t))
	all, run := atVersion(t, s, 6, "unknown_is_null")
	conn := s.Conn()

	// Written at version 6, where turn is a plain UInt32.
	ts := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	old := fullCall("toolu_old", ts)
	old.SessionID, old.Turn = "turn-upgrade", schema.KnownTurn(2)
	writeCallsAt(t, s, 6, []schema.ToolCall{old})
	// The answer as version 6 stored it: written with its columns, since
	// the writer now also writes those later migrations added. Its version
	// ranks it analysed, over 2 records (schema/chstore/version.go).
	if err := conn.Exec(ctx, "INSERT INTO "+migrations.QuoteIdent(s.Database())+".answers (session_id, message_id, ts, ts_ns, turn, risk, version) SELECT ?, ?, toDateTime(?), 0, 2, 'none', toUInt64(?)",
		old.SessionID, "msg_old", ts.Add(time.Second).Unix(), uint64(1)<<63|uint64(2)<<46|1); err != nil {
		t.Fatalf("write an answer at version 6: %v", err)
	}
	// Likewise the session: 3 turns, 1 call, 2 compactions, 1,200/0 tokens,
	// analysed over 1 record.
	oldSession := schema.Session{SessionID: "old-session"}
	if err := conn.Exec(ctx, "INSERT INTO "+migrations.QuoteIdent(s.Database())+".sessions (session_id, started_at, ended_at, turns, tool_calls, compactions, max_risk, input_tokens, output_tokens, version) SELECT ?, toDateTime(?), toDateTime(?), 3, 1, 2, 'none', 1200, 0, toUInt64(?)",
		oldSession.SessionID, ts.Unix(), ts.Unix(), uint64(1)<<63|uint64(1)<<46|1); err != nil {
		t.Fatalf("write a session at version 6: %v", err)
	}

	resumeAfter(t, s, run, all[6])

	unknown := fullCall("toolu_unknown", ts.Add(2*time.Second))
	unknown.SessionID, unknown.Turn = old.SessionID, schema.Turn{}
	if err := s.WriteToolCalls(ctx, []schema.ToolCall{unknown}); err != nil {
		t.Fatalf("write a call of unknown turn: %v", err)
	}
	newAnswer := schema.Answer{SessionID: old.SessionID, MessageID: "msg_unknown", Timestamp: ts.Add(3 * time.Second),
		Risk: schema.RiskNone, Analysis: schema.Analysis{Done: true, Records: 4}}
	if err := s.WriteAnswers(ctx, []schema.Answer{newAnswer}); err != nil {
		t.Fatalf("write an answer of unknown turn: %v", err)
	}
	sess := schema.Session{SessionID: old.SessionID, StartedAt: ts, EndedAt: ts.Add(3 * time.Second), ToolCalls: 2, Answers: 2,
		MaxRisk: schema.RiskNone, Analysis: schema.Analysis{Done: true, Records: 4}}
	if err := s.WriteSessions(ctx, []schema.Session{sess}); err != nil {
		t.Fatalf("write a session of unknown turns: %v", err)
	}

	calls, err := s.ToolCalls(ctx, old.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	turns := map[string]schema.Turn{}
	for _, c := range calls {
		turns[c.CallID] = c.Turn
	}
	if len(calls) != 2 || turns["toolu_old"] != schema.KnownTurn(2) || turns["toolu_unknown"] != (schema.Turn{}) {
		t.Fatalf("calls read back with turns %v, want toolu_old in turn 2 and toolu_unknown in none known", turns)
	}
	sp, err := s.SessionSpan(ctx, old.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	answers, err := s.SessionAnswers(ctx, sp)
	if err != nil {
		t.Fatal(err)
	}
	if len(answers) != 2 || answers[0].Turn != schema.KnownTurn(2) || answers[1].Turn != (schema.Turn{}) {
		t.Fatalf("answers read back %+v, want msg_old in turn 2, msg_unknown in none known", answers)
	}
	got, found, err := s.SessionRow(ctx, old.SessionID)
	if err != nil || !found {
		t.Fatalf("session row: found %v, %v", found, err)
	}
	if got.Turns.Known || got.Compactions.Known || got.InputTokens.Known || got.OutputTokens.Known {
		t.Fatalf("session read back with %s turns, %s compactions, %s/%s tokens; want all unknown", got.Turns, got.Compactions, got.InputTokens, got.OutputTokens)
	}
	got, found, err = s.SessionRow(ctx, oldSession.SessionID)
	if err != nil || !found {
		t.Fatalf("session row written before: found %v, %v", found, err)
	}
	if got.Turns != schema.Known(3) || got.Compactions != schema.Known(2) || got.InputTokens != schema.Known(1200) || got.OutputTokens != schema.Known(0) {
		t.Fatalf("session written before read back with %s turns, %s compactions, %s/%s tokens; want 3, 2, 1200/0", got.Turns, got.Compactions, got.InputTokens, got.OutputTokens)
	}
	var nulls uint64
	q := "SELECT countIf(isNull(turn)) FROM " + migrations.QuoteIdent(s.Database()) + ".tool_calls WHERE session_id = 'turn-upgrade'"
	if err := conn.QueryRow(ctx, q).Scan(&nulls); err != nil {
		t.Fatal(err)
	}
	if nulls != 1 {
		t.Fatalf("%d calls stored with a NULL turn, want 1", nulls)
	}
}
