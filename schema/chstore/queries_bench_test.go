package chstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/schema/chstore"
	"github.com/ctxaudit/ctxaudit/schema/chstore/chstoretest"
)

// BenchmarkSessionRead reads one 50-call session (two versions of each row
// on disk) from a table of 10 million calls over 58 days, in the shape
// queries.go uses and in the alternatives it was chosen over: FINAL instead
// of LIMIT 1 BY, and either without the ts bound that prunes partitions.
// Set CTXAUDIT_BENCH_TOOL_CALLS for a smaller table and
// CTXAUDIT_BENCH_CLICKHOUSE to keep the filled table between runs.
func BenchmarkSessionRead(b *testing.B) {
	ctx := context.Background()
	s, session := chstoretest.BenchStore(b, chstoretest.BenchOptions(b))
	b.Run("span", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.SessionSpan(ctx, session); err != nil {
				b.Fatal(err)
			}
		}
	})
	sp, err := s.SessionSpan(ctx, session)
	if err != nil {
		b.Fatal(err)
	}
	for _, shape := range []struct {
		name  string
		shape chstore.ReadShape
	}{
		{"limit1by+span", chstore.ReadShape{}},
		{"final+span", chstore.ReadShape{Final: true}},
		{"limit1by", chstore.ReadShape{NoSpan: true}},
		{"final", chstore.ReadShape{Final: true, NoSpan: true}},
	} {
		b.Run("calls/"+shape.name, func(b *testing.B) {
			for b.Loop() {
				calls, err := s.SessionToolCallsShaped(ctx, sp, chstore.CallFilter{}, shape.shape)
				if err != nil {
					b.Fatal(err)
				}
				if len(calls) != 50 {
					b.Fatalf("read %d calls, want 50", len(calls))
				}
			}
		})
	}
	b.Run("answers", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.SessionAnswers(ctx, sp); err != nil {
				b.Fatal(err)
			}
		}
	})
	// What one batch of a re-ingest asks (ingest.AnswerReader): 1,000
	// messages known not to be answers, 25 in each of 40 sessions — all but
	// the target's stored as answers by nobody, as in a real transcript,
	// where messages that called tools are most messages.
	asked := map[string][]string{}
	for k := range 40 {
		id := chstoretest.SessionID(chstoretest.BenchOptions(b).Sessions()/2 - 20 + k)
		for m := range 25 {
			asked[id] = append(asked[id], fmt.Sprintf("msg_%d_%d", k, m))
		}
	}
	b.Run("standing-answers", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.StandingAnswers(ctx, asked); err != nil {
				b.Fatal(err)
			}
		}
	})
	// `ctxaudit sessions`: the 100 most recently active sessions, then
	// what is stored of each of them (StoredRecordCounts, bounded by the
	// earliest start among them), which finds a row that undercounts.
	listed, err := s.ListSessions(ctx, chstore.SessionFilter{Limit: 100})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("list-sessions", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.ListSessions(ctx, chstore.SessionFilter{Limit: 100}); err != nil {
				b.Fatal(err)
			}
		}
	})
	ids := make([]string, len(listed))
	since := listed[0].StartedAt
	for i, l := range listed {
		ids[i] = l.SessionID
		if l.StartedAt.Before(since) {
			since = l.StartedAt
		}
	}
	b.Run("list-stored-counts", func(b *testing.B) {
		for b.Loop() {
			n, err := s.StoredRecordCounts(ctx, ids, since)
			if err != nil {
				b.Fatal(err)
			}
			if len(n) != len(ids) {
				b.Fatalf("counted %d sessions, want %d", len(n), len(ids))
			}
		}
	})
	// What `ctxaudit sessions` adds to find sessions that went on after a
	// dropped buffer: a scan of version and ts over the period (none of
	// the table's rows is from a partial buffer, as in most stores).
	last := listed[0].LastActive()
	for name, since := range map[string]time.Time{"all": {}, "24h": last.Add(-24 * time.Hour)} {
		b.Run("list-continued/"+name, func(b *testing.B) {
			for b.Loop() {
				if _, err := s.ContinuedSessions(ctx, since, "", 1001); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("session-row", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := s.SessionRow(ctx, session); err != nil {
				b.Fatal(err)
			}
		}
	})
}
