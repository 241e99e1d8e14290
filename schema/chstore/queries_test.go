package chstore_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/schema"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
	"github.com/ctxaudit/ctxaudit/schema/chstore/chstoretest"
)

func fullAnswer(session, id string, ts time.Time, risk schema.Risk) schema.Answer {
	return schema.Answer{
		SessionID: session, MessageID: id, Timestamp: ts, Turn: schema.KnownTurn(3), Source: schema.HarnessClaudeCode,
		Model: "claude-opus-4-5", AgentID: "a4d534b", Sidechain: true, Text: "There is no such setting — 沒有。",
		InputCallIDs: []string{"toolu_01", "toolu_02"}, IncompleteInputs: []string{"toolu_01"}, AbsenceClaim: true,
		Absence: schema.AbsenceUnscoped, AbsenceClause: "there is no such setting", AbsenceScope: "",
		Risk: risk, Reasons: []string{schema.ReasonAbsenceClaimOnPartialInput, schema.ReasonSilentTruncation},
		ReasonCalls: map[string][]string{
			schema.ReasonAbsenceClaimOnPartialInput: {"toolu_01"},
			schema.ReasonSilentTruncation:           {"toolu_01"},
		},
		Verdict: "Answer at 21:18:09 says …",
	}
}

// TestReadBackEveryField writes records with every field set (and some
// sizes unknown), rewrites one of them, and reads them back through the
// postmortem reads: every field survives, unknown stays unknown, and the
// rewrite wins over the not-yet-merged original.
func TestReadBackEveryField(t *testing.T) {
	ctx := context.Background()
	s := chtest.NewStore(t)
	ts := time.Date(2026, 1, 19, 21, 18, 2, 285_000_000, time.UTC)
	unknown := fullCall("toolu_02", ts.Add(time.Second))
	unknown.Original = schema.Original{Source: schema.SourceUnknown}
	unknown.Context, unknown.Shown, unknown.Total, unknown.SessionCoverage = schema.Sizes{}, schema.Range{}, schema.Unknown, schema.Ratio{}
	unknown.ShownTail, unknown.ShownTailIsEnd, unknown.RefetchedSource = schema.Range{}, false, false
	unknown.CoverageUpperBound, unknown.CoverageMixedVersions = false, true
	unknown.FollowedUp, unknown.FollowUpUnknown = false, true // stored NULL
	calls := []schema.ToolCall{fullCall("toolu_01", ts), unknown}
	answers := []schema.Answer{fullAnswer(calls[0].SessionID, "msg_02", ts.Add(7*time.Second), schema.RiskHigh)}
	session := schema.Session{
		SessionID: calls[0].SessionID, Source: schema.HarnessClaudeCode, HarnessVersion: "2.1.6", Model: "claude-opus-4-5",
		Project: "-Users-gray-项目", Cwd: "/Users/gray/项目", GitBranch: "main", StartedAt: ts.Add(-time.Minute).Truncate(time.Second),
		EndedAt: ts.Add(time.Minute).Truncate(time.Second), SourceFile: "/data/sess.jsonl", Turns: schema.Known(4), ToolCalls: 2,
		TruncatedCalls: 2, SilentCalls: 2, Answers: 1, RiskyAnswers: 1, MaxRisk: schema.RiskHigh, InputTokens: schema.Known(10), OutputTokens: schema.Known(20),
	}
	if err := s.WriteToolCalls(ctx, calls); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteAnswers(ctx, answers); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteSessions(ctx, []schema.Session{session}); err != nil {
		t.Fatal(err)
	}
	// A re-analysis rewrites the first call; both versions are on disk.
	calls[0].FollowedUp, calls[0].ContinuationOf = false, "re-analysed"
	if err := s.WriteToolCalls(ctx, calls[:1]); err != nil {
		t.Fatal(err)
	}

	sp, err := s.SessionSpan(ctx, session.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if !sp.Found() || !sp.Calls.From.Equal(ts.Truncate(time.Second)) || !sp.Calls.To.Equal(ts.Add(time.Second).Truncate(time.Second)) ||
		sp.Calls.Rows != 3 || sp.Answers.Rows != 1 {
		t.Fatalf("span = %+v", sp)
	}
	gotCalls, err := s.SessionToolCalls(ctx, sp, chstore.CallFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotCalls, calls) {
		t.Errorf("calls differ:\n got %+v\nwant %+v", gotCalls, calls)
	}
	gotAnswers, err := s.SessionAnswers(ctx, sp)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotAnswers, answers) {
		t.Errorf("answers differ:\n got %+v\nwant %+v", gotAnswers, answers)
	}
	gotSession, found, err := s.SessionRow(ctx, session.SessionID)
	if err != nil || !found {
		t.Fatalf("session row: found=%v err=%v", found, err)
	}
	if !reflect.DeepEqual(gotSession, session) {
		t.Errorf("session differs:\n got %+v\nwant %+v", gotSession, session)
	}
}

func TestSessionSpanOfUnknownSession(t *testing.T) {
	s := chtest.NewStore(t)
	sp, err := s.SessionSpan(context.Background(), "no-such-session")
	if err != nil {
		t.Fatal(err)
	}
	if sp.Found() {
		t.Fatalf("span of a missing session = %+v", sp)
	}
	if calls, err := s.SessionToolCalls(context.Background(), sp, chstore.CallFilter{}); err != nil || calls != nil {
		t.Fatalf("calls of a missing session = %v, %v", calls, err)
	}
	if _, found, err := s.SessionRow(context.Background(), "no-such-session"); err != nil || found {
		t.Fatalf("session row of a missing session: found=%v err=%v", found, err)
	}
}

// TestSessionToolCallsPagesAndFilters reads a session in pages smaller than
// it, and by turn (the unknown turn too) and by id.
func TestSessionToolCallsPagesAndFilters(t *testing.T) {
	ctx := context.Background()
	s := chtest.NewStore(t)
	start := time.Date(2026, 3, 1, 23, 59, 0, 0, time.UTC) // the session crosses midnight: two partitions
	var calls []schema.ToolCall
	for i := range 25 {
		c := fullCall(fmt.Sprintf("toolu_%02d", 24-i), start.Add(time.Duration(i)*5*time.Second)) // ids run against time
		c.Turn = schema.KnownTurn(i / 10)
		if i >= 20 {
			c.Turn = schema.Turn{} // said no turn: stored NULL, read back unknown
		}
		calls = append(calls, c)
	}
	if err := s.WriteToolCalls(ctx, calls); err != nil {
		t.Fatal(err)
	}
	sp, err := s.SessionSpan(ctx, calls[0].SessionID)
	if err != nil {
		t.Fatal(err)
	}
	ids := func(cs []schema.ToolCall) string {
		var out []string
		for _, c := range cs {
			out = append(out, c.CallID+"@"+c.Turn.String())
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct {
		name   string
		filter chstore.CallFilter
		want   []schema.ToolCall
	}{
		{"all in pages of 7", chstore.CallFilter{PageSize: 7}, calls},
		{"page size dividing the session", chstore.CallFilter{PageSize: 5}, calls},
		{"turn 1", chstore.CallFilter{Turns: []schema.Turn{schema.KnownTurn(1)}, PageSize: 3}, calls[10:20]},
		{"turns 0 and 2", chstore.CallFilter{Turns: []schema.Turn{schema.KnownTurn(0), schema.KnownTurn(2)}}, calls[:10]},
		{"turn unknown", chstore.CallFilter{Turns: []schema.Turn{{}}}, calls[20:]},
		{"turn 0 and unknown", chstore.CallFilter{Turns: []schema.Turn{schema.KnownTurn(0), {}}}, append(append([]schema.ToolCall(nil), calls[:10]...), calls[20:]...)},
		{"by id", chstore.CallFilter{CallIDs: []string{"toolu_03", "toolu_20", "toolu_nope"}}, []schema.ToolCall{calls[4], calls[21]}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.SessionToolCalls(ctx, sp, tc.filter)
			if err != nil {
				t.Fatal(err)
			}
			if ids(got) != ids(tc.want) {
				t.Fatalf("got  %s\nwant %s", ids(got), ids(tc.want))
			}
		})
	}
}

// A sub-agent's call is read in its own file's turn and placed in the turn
// that spawned it once analysed: a turn filter reads each call's latest
// version, never the older one that knew less and named another turn.
func TestTurnFilterReadsTheLatestVersion(t *testing.T) {
	ctx := context.Background()
	s := chtest.NewStore(t)
	at := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	asRead := fullCall("toolu_sub", at)
	asRead.Turn, asRead.FollowedUp, asRead.Analysis = schema.KnownTurn(0), false, schema.Analysis{}
	analysed := asRead
	analysed.Turn, analysed.FollowedUp = schema.KnownTurn(5), true
	analysed.Analysis = schema.Analysis{Done: true, Records: 12}
	unknownThenKnown := fullCall("toolu_span", at.Add(time.Second))
	unknownThenKnown.Turn, unknownThenKnown.FollowedUp, unknownThenKnown.Analysis = schema.Turn{}, false, schema.Analysis{}
	placed := unknownThenKnown
	placed.Turn, placed.Analysis = schema.KnownTurn(5), schema.Analysis{Done: true, Records: 12}
	for _, w := range [][]schema.ToolCall{{asRead, unknownThenKnown}, {analysed, placed}} {
		if err := s.WriteToolCalls(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	sp, err := s.SessionSpan(ctx, asRead.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		turns []schema.Turn
		want  string
	}{
		{"the old turn", []schema.Turn{schema.KnownTurn(0)}, ""},
		{"the old unknown turn", []schema.Turn{{}}, ""},
		{"the turn it was placed in", []schema.Turn{schema.KnownTurn(5)}, "toolu_sub@5 followed toolu_span@5"},
		{"both", []schema.Turn{schema.KnownTurn(0), {}, schema.KnownTurn(5)}, "toolu_sub@5 followed toolu_span@5"},
	} {
		for _, page := range []int{0, 1} {
			got, err := s.SessionToolCalls(ctx, sp, chstore.CallFilter{Turns: tc.turns, PageSize: page})
			if err != nil {
				t.Fatal(err)
			}
			var parts []string
			for _, c := range got {
				p := c.CallID + "@" + c.Turn.String()
				if c.FollowedUp {
					p += " followed"
				}
				parts = append(parts, p)
			}
			if g := strings.Join(parts, " "); g != tc.want {
				t.Errorf("%s (page size %d): got %q, want %q", tc.name, page, g, tc.want)
			}
		}
	}
}

// TestSessionReadsPrunePartitions checks the claim the read queries rest on:
// once the span is known, reading a session touches only the partitions of
// its days. The other sessions' rows sit in other day partitions; the
// server's progress reports count every row it read.
func TestSessionReadsPrunePartitions(t *testing.T) {
	ctx := context.Background()
	s := chtest.NewStore(t)
	day := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	// 3 sessions of 2,000 calls on three other days, then the target on its own day.
	if err := chstoretest.Fill(ctx, s, chstoretest.Options{Calls: 6000, CallsPerSession: 2000, Start: day, SessionGap: 24 * time.Hour, CallGap: time.Second}); err != nil {
		t.Fatal(err)
	}
	target := chstoretest.Options{Calls: 40, CallsPerSession: 40, FirstSession: 3, Start: day, SessionGap: 24 * time.Hour, CallGap: time.Second}
	if err := chstoretest.Fill(ctx, s, target); err != nil {
		t.Fatal(err)
	}
	sp, err := s.SessionSpan(ctx, chstoretest.SessionID(3))
	if err != nil {
		t.Fatal(err)
	}
	var read atomic.Uint64
	counted := clickhouse.Context(ctx, clickhouse.WithProgress(func(p *clickhouse.Progress) { read.Add(p.Rows) }))
	calls, err := s.SessionToolCalls(counted, sp, chstore.CallFilter{})
	if err != nil {
		t.Fatal(err)
	}
	answers, err := s.SessionAnswers(counted, sp)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 40 || len(answers) != 4 {
		t.Fatalf("read %d calls and %d answers, want 40 and 4", len(calls), len(answers))
	}
	if n := read.Load(); n > 44 {
		t.Errorf("reading one 40-call session read %d rows; want only its own partition's (44)", n)
	}
}

// TestListSessions filters by activity, source and risk, and sees only the
// latest version of a session.
func TestListSessions(t *testing.T) {
	ctx := context.Background()
	s := chtest.NewStore(t)
	at := time.Date(2026, 5, 10, 12, 0, 0, 0, time.UTC)
	mk := func(id string, src schema.Harness, start time.Time, d time.Duration, risk schema.Risk) schema.Session {
		return schema.Session{SessionID: id, Source: src, StartedAt: start, EndedAt: start.Add(d), MaxRisk: risk, ToolCalls: 3}
	}
	sessions := []schema.Session{
		mk("old-high", schema.HarnessClaudeCode, at.Add(-72*time.Hour), time.Hour, schema.RiskHigh),
		mk("long-running", schema.HarnessCodex, at.Add(-72*time.Hour), 70*time.Hour, schema.RiskMedium),
		mk("recent-low", schema.HarnessPi, at.Add(-time.Hour), time.Minute, schema.RiskLow),
		mk("recent-none", schema.HarnessClaudeCode, at.Add(-2*time.Hour), time.Minute, schema.RiskNone),
		mk("regraded", schema.HarnessClaudeCode, at.Add(-3*time.Hour), time.Minute, schema.RiskHigh),
	}
	if err := s.WriteSessions(ctx, sessions); err != nil {
		t.Fatal(err)
	}
	regraded := sessions[4]
	regraded.MaxRisk = schema.RiskLow // a later analysis lowered it
	// A later version of a session that moved to another day partition
	// (its start was learnt later): FINAL alone would list both versions.
	moved := mk("moved", schema.HarnessPi, at.Add(-100*time.Hour), time.Minute, schema.RiskNone)
	if err := s.WriteSessions(ctx, []schema.Session{regraded, moved}); err != nil {
		t.Fatal(err)
	}
	moved.StartedAt = moved.StartedAt.Add(-48 * time.Hour)
	if err := s.WriteSessions(ctx, []schema.Session{moved}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		filter chstore.SessionFilter
		want   string
	}{
		{"all, most recently active first", chstore.SessionFilter{}, "recent-low recent-none long-running regraded old-high moved"},
		{"active in the last day", chstore.SessionFilter{ActiveSince: at.Add(-24 * time.Hour)}, "recent-low recent-none long-running regraded"},
		{"at least medium", chstore.SessionFilter{MinRisk: schema.RiskMedium}, "long-running old-high"},
		{"high only sees the latest version", chstore.SessionFilter{MinRisk: schema.RiskHigh}, "old-high"},
		{"claude code", chstore.SessionFilter{Source: schema.HarnessClaudeCode}, "recent-none regraded old-high"},
		{"pi", chstore.SessionFilter{Source: schema.HarnessPi}, "recent-low moved"},
		{"limit", chstore.SessionFilter{Limit: 2}, "recent-low recent-none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.ListSessions(ctx, tc.filter)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, g := range got {
				ids = append(ids, g.SessionID)
			}
			if strings.Join(ids, " ") != tc.want {
				t.Fatalf("got %v, want %s", ids, tc.want)
			}
		})
	}
}

func TestSearchToolOutputs(t *testing.T) {
	ctx := context.Background()
	s := chtest.NewStore(t)
	now := time.Date(2026, 1, 15, 9, 0, 0, 0, time.UTC)
	outputs := []schema.ToolOutput{
		{SHA256: "aa", Bytes: 30, Text: "line 1\nUPLOAD_DISABLED=1\nline 3", FirstSeen: now},
		{SHA256: "bb", Bytes: 9000, Text: "a capped prefix", Capped: true, FirstSeen: now},
		{SHA256: "cc", Bytes: 12, Text: "upload_disabled", FirstSeen: now},
	}
	if err := s.WriteToolOutputs(ctx, outputs); err != nil {
		t.Fatal(err)
	}
	// The same content stored again (by another ingest) must not matter.
	if err := s.WriteToolOutputs(ctx, outputs[:1]); err != nil {
		t.Fatal(err)
	}
	got, err := s.SearchToolOutputs(ctx, []string{"aa", "bb", "cc", "aa", "", "missing"}, "UPLOAD_DISABLED")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]chstore.TextMatch{"aa": {Contains: true}, "bb": {Capped: true}, "cc": {}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}

	// More hashes than one IN list takes: the stored ones are found in
	// every chunk the list is cut into, the first, a middle and the last.
	var many []string
	for i := range 2500 {
		many = append(many, fmt.Sprintf("absent-%04d", i))
	}
	many[0], many[1700], many[2499] = "cc", "aa", "bb"
	if got, err = s.SearchToolOutputs(ctx, many, "UPLOAD_DISABLED"); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("over 2,500 hashes: got %+v, want %+v", got, want)
	}
}

// TestFillIDsMatchTheServer pins chstoretest.SessionID to the server's
// UUIDNumToString(MD5(…)), which the generated rows use.
func TestFillIDsMatchTheServer(t *testing.T) {
	s := chtest.NewStore(t)
	var id string
	if err := s.Conn().QueryRow(context.Background(), "SELECT UUIDNumToString(toFixedString(MD5(toString(100000)), 16))").Scan(&id); err != nil {
		t.Fatal(err)
	}
	if got := chstoretest.SessionID(100000); got != id {
		t.Fatalf("SessionID(100000) = %s, server says %s", got, id)
	}
}
