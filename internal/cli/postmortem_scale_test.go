package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/internal/report"
	"github.com/ctxaudit/ctxaudit/schema/chstore/chstoretest"
)

// TestPostmortemOfA100kCallSession runs the postmortem of one session of
// 100,000 calls (10,000 turns, each row stored twice as after a
// re-ingestion) among 10,000 ordinary sessions on the same days. It checks
// the result is whole and deduplicated, and that the rows the server read
// grow with the session, not the table: at most a few passes over the
// session's own rows plus a granule or two per part for the key lookups.
// Keyset paging with only a lower bound would read the session ~5 times
// over (quadratic in its size) and fail the bound.
func TestPostmortemOfA100kCallSession(t *testing.T) {
	if testing.Short() {
		t.Skip("fills 700,000 rows")
	}
	ctx := context.Background()
	addr, s := chtest.NewDatabase(t)
	day := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	noise := chstoretest.Options{Calls: 500_000, Start: day}
	big := chstoretest.Options{Calls: 100_000, CallsPerSession: 100_000, FirstSession: 1_000_000, Start: day.Add(6 * time.Hour), CallGap: time.Second}
	for _, o := range []chstoretest.Options{noise, big} {
		if err := chstoretest.Fill(ctx, s, o); err != nil {
			t.Fatal(err)
		}
	}
	session := chstoretest.SessionID(1_000_000)
	if err := chstoretest.Rewrite(ctx, s, session); err != nil {
		t.Fatal(err)
	}

	var read atomic.Uint64
	counted := clickhouse.Context(ctx, clickhouse.WithProgress(func(p *clickhouse.Progress) { read.Add(p.Rows) }))
	var out, errOut bytes.Buffer
	if code := Run(counted, []string{"postmortem", "--clickhouse", addr, "--session", session, "--format", "json"}, &out, &errOut); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var pm report.Postmortem
	if err := json.Unmarshal(out.Bytes(), &pm); err != nil {
		t.Fatal(err)
	}
	if len(pm.ToolCalls) != 100_000 || len(pm.Answers) != 10_000 {
		t.Fatalf("read %d calls and %d answers, want 100,000 and 10,000", len(pm.ToolCalls), len(pm.Answers))
	}
	seen := make(map[string]bool, len(pm.ToolCalls))
	for i, c := range pm.ToolCalls {
		if seen[c.CallID] {
			t.Fatalf("call %s twice", c.CallID)
		}
		seen[c.CallID] = true
		if i > 0 && c.Timestamp.Before(pm.ToolCalls[i-1].Timestamp) {
			t.Fatalf("call %d out of order", i)
		}
	}

	parts := uint64(0)
	if err := s.Conn().QueryRow(ctx, "SELECT count() FROM system.parts WHERE database = ? AND active", s.Database()).Scan(&parts); err != nil {
		t.Fatal(err)
	}
	const granule = 8192
	sessionRows := uint64(2 * (100_000 + 10_000)) // calls and answers, each twice
	bound := 3*sessionRows + 3*granule*parts
	t.Logf("read %d rows for a session of %d stored rows (%d active parts; bound %d)", read.Load(), sessionRows, parts, bound)
	if read.Load() > bound {
		t.Errorf("postmortem read %d rows, more than %d", read.Load(), bound)
	}

	// One answer: only its turn's 10 calls.
	pmOne := postmortemJSON(t, addr, "--session", session, "--answer", pm.Answers[4321].MessageID)
	if len(pmOne.ToolCalls) != 10 || len(pmOne.Answers) != 1 {
		t.Fatalf("--answer: %d calls, %d answers", len(pmOne.ToolCalls), len(pmOne.Answers))
	}
	// The text form of the whole session renders too.
	code, text, errText := run(t, "postmortem", "--clickhouse", addr, "--session", session)
	if code != ExitOK || !strings.Contains(text, "Turn 9999\n") || strings.Count(text, "\n  Answer at ") != 10_000 {
		t.Fatalf("text: exit %d, %s", code, errText)
	}
}
