package chstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/schema"
	"github.com/ctxaudit/ctxaudit/schema/migrations"
)

// TestAnswerAbsenceMigration upgrades a database that holds an answer written
// before migration 0003: the row reads absence 'unknown' (never judged, not
// 'none'), and a 0003 interrupted after its ALTERs but before it was recorded
// can simply be run again on a server without ADD COLUMN IF NOT EXISTS.
func TestAnswerAbsenceMigration(t *testing.T) {
	ctx := context.Background()
	s := chtest.OpenStore(t, chtest.Address(t))
	all, err := migrations.All()
	if err != nil {
		t.Fatal(err)
	}
	var v3 migrations.Migration
	for _, m := range all {
		if m.Version == 3 {
			v3 = m
		}
	}
	if v3.Name != "answer_absence" {
		t.Fatalf("migration 0003 is %q, want answer_absence", v3.Name)
	}
	// Schema as of before 0003: apply 0001 by hand (and nothing newer).
	conn := s.Conn()
	if err := conn.Exec(ctx, "CREATE DATABASE IF NOT EXISTS "+migrations.QuoteIdent(s.Database())); err != nil {
		t.Fatal(err)
	}
	stmts, err := all[0].Statements(s.Database())
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range stmts {
		if err := conn.Exec(ctx, st); err != nil {
			t.Fatalf("0001: %v", err)
		}
	}
	old := "INSERT INTO " + migrations.QuoteIdent(s.Database()) + ".answers (session_id, message_id, ts, ts_ns, turn, source, model, agent_id, sidechain, text, input_call_ids, incomplete_inputs, absence_claim, risk, reasons, reason_calls, verdict, version) " +
		"SELECT 'old', 'msg_old', toDateTime('2026-01-19 21:30:00'), 0, 0, 'codex', 'gpt-5.1', '', 0, 'There is no such setting.', ['c1'], ['c1'], 1, 'high', ['absence_claim_on_partial_input'], [['c1']], 'v', 1"
	if err := conn.Exec(ctx, old); err != nil {
		t.Fatal(err)
	}
	// An interrupted run of 0003: its statements ran, its version was not recorded.
	stmts3, err := v3.Statements(s.Database())
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range stmts3 {
		// As the migrator runs it on 18.16, which has no IF NOT EXISTS here.
		st = strings.Replace(st, " IF NOT EXISTS", "", 1)
		if err := conn.Exec(ctx, st); err != nil {
			t.Fatalf("0003 on %s: %v", s.Database(), err)
		}
	}
	res, err := s.Migrate(ctx)
	if err != nil {
		t.Fatalf("migrate after an interrupted 0003: %v", err)
	}
	if res.Current != migrations.Latest() {
		t.Fatalf("schema at %d after migrate, want %d", res.Current, migrations.Latest())
	}
	got, err := s.Answers(ctx, "old")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Absence != schema.AbsenceUnknown || !got[0].AbsenceClaim || got[0].AbsenceClause != "" {
		t.Fatalf("pre-0003 answer read back as %+v; want absence unknown, absence_claim kept", got)
	}
}
