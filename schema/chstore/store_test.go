package chstore_test

import (
	"context"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/internal/chdbtest"
	"github.com/ctxaudit/ctxaudit/internal/chserver"
	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/schema"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
	"github.com/ctxaudit/ctxaudit/schema/migrations"
)

func TestMain(m *testing.M) { os.Exit(chdbtest.Done(chtest.Run(m))) }

func count(t *testing.T, s *chstore.Store, query string, args ...any) uint64 {
	t.Helper()
	var n uint64
	if err := s.Conn().QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func TestMigrateEmptyThenNoop(t *testing.T) {
	ctx := context.Background()
	s := chtest.OpenStore(t, chtest.Address(t))

	first, err := s.Migrate(ctx)
	if err != nil {
		t.Fatalf("first migrate: %v", err)
	}
	if len(first.Applied) == 0 || first.Current != migrations.Latest() {
		t.Fatalf("first migrate applied %d, current %d; want all up to %d", len(first.Applied), first.Current, migrations.Latest())
	}
	for _, table := range []string{"tool_calls", "answers", "sessions", "tool_outputs", "schema_migrations"} {
		if n := count(t, s, "SELECT count() FROM system.tables WHERE database = ? AND name = ?", s.Database(), table); n != 1 {
			t.Errorf("table %s.%s: found %d, want 1", s.Database(), table, n)
		}
	}

	second, err := s.Migrate(ctx)
	if err != nil {
		t.Fatalf("second migrate: %v", err)
	}
	if len(second.Applied) != 0 || second.Current != first.Current {
		t.Fatalf("second migrate applied %d (current %d); want a no-op at %d", len(second.Applied), second.Current, first.Current)
	}
	if n := count(t, s, "SELECT count() FROM "+s.Database()+".schema_migrations"); n != uint64(len(first.Applied)) {
		t.Fatalf("schema_migrations has %d rows after two runs, want %d", n, len(first.Applied))
	}
	if err := s.CheckSchema(ctx); err != nil {
		t.Fatalf("CheckSchema after migrate: %v", err)
	}
}

func TestRefuseNewerDatabase(t *testing.T) {
	ctx := context.Background()
	s := chtest.NewStore(t)
	future := migrations.Latest() + 1
	batch, err := s.Conn().PrepareBatch(ctx, "INSERT INTO "+s.Database()+".schema_migrations (version, name, checksum, applied_at)")
	if err != nil {
		t.Fatal(err)
	}
	if err := batch.Append(future, "from_the_future", "x", time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := batch.Send(); err != nil {
		t.Fatal(err)
	}
	_, err = s.Migrate(ctx)
	if !errors.Is(err, migrations.ErrDatabaseNewer) {
		t.Fatalf("migrate on a newer database: err = %v, want ErrDatabaseNewer", err)
	}
	if !strings.Contains(err.Error(), "upgrade ctxaudit") {
		t.Errorf("error should tell the user what to do: %v", err)
	}
	if err := s.CheckSchema(ctx); !errors.Is(err, migrations.ErrDatabaseNewer) {
		t.Fatalf("CheckSchema on a newer database: err = %v, want ErrDatabaseNewer", err)
	}
}

func TestCheckSchemaOnEmptyDatabase(t *testing.T) {
	s := chtest.OpenStore(t, chtest.Address(t))
	err := s.CheckSchema(context.Background())
	if err == nil || !strings.Contains(err.Error(), "ctxaudit migrate") {
		t.Fatalf("CheckSchema on an unmigrated database: %v; want advice to run migrate", err)
	}
}

func TestBadAddress(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tc := range []struct {
		name, addr, want string
		usage            bool
	}{
		{"not a url", "localhost:9000", "invalid ClickHouse address", true},
		{"wrong scheme", "postgres://u@h:5432/db", "invalid ClickHouse address", true},
		{"bad database name", "clickhouse://default@127.0.0.1:9000/no-dashes", "invalid database name", true},
		{"password is hidden", "mysql://u:s3cret@h/db", "xxxxx", true},
		{"nothing listening", "clickhouse://default@127.0.0.1:1/ctxaudit", "connect to ClickHouse at 127.0.0.1:1", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := chstore.Open(ctx, tc.addr, chstore.Options{DialTimeout: 2 * time.Second})
			if err == nil {
				t.Fatalf("Open(%q) succeeded", tc.addr)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Open(%q) = %v; want it to mention %q", tc.addr, err, tc.want)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error leaks the password: %v", err)
			}
			if got := errors.Is(err, chstore.ErrBadAddress); got != tc.usage {
				t.Errorf("errors.Is(err, ErrBadAddress) = %v, want %v", got, tc.usage)
			}
		})
	}
}

// fullCall sets every field of a tool call, with non-ASCII text and a mix of
// known and unknown sizes, so a round trip proves each column maps both ways.
func fullCall(id string, ts time.Time) schema.ToolCall {
	return schema.ToolCall{
		SessionID: "sess-ünïcode-会话", CallID: id, Tool: "WebFetch", Timestamp: ts,
		Source: schema.HarnessClaudeCode, HarnessVersion: "2.1.6", Model: "claude-opus-4-5",
		Project: "-Users-gray-项目", Cwd: "/Users/gray/项目", GitBranch: "main", AgentID: "a4d534b",
		Sidechain: true, Turn: schema.KnownTurn(3), MessageID: "msg_01", Arguments: `{"url":"https://example.com/文档"}`,
		Target: "https://example.com/文档", IsError: true,
		Forensics: schema.Forensics{
			Original: schema.Original{Sizes: schema.Sizes{Bytes: schema.Known(156000), Chars: schema.Unknown,
				Lines: schema.Known(0), Tokens: schema.Known(39000)}, Source: schema.SourceHarnessMetadata,
				Precision: schema.PrecisionApproximate},
			Context:   schema.Sizes{Bytes: schema.Known(2153), Chars: schema.Known(2100), Lines: schema.Unknown, Tokens: schema.Known(539)},
			Truncated: true, Kind: schema.KindSilent, Strategy: schema.StrategySummary, PartialByRequest: true,
			Shown: schema.Range{Start: schema.Known(0), End: schema.Known(100000), Unit: schema.UnitChars},
			Total: schema.Known(156000), Reason: "summarised",
			ShownTail: schema.Range{Start: schema.Known(150000), End: schema.Known(156000), Unit: schema.UnitChars}, ShownTailIsEnd: true, RefetchedSource: true,
			Disclosure: schema.Disclosure{Range: true, Reason: false, Next: true},
			NextHint:   "Use offset=2001 to continue", SavedRef: "/tmp/tool-results/x.txt", RefVersion: "2026-01-19T21:18:02Z",
			Marker: "[Showing lines 1-2000 of 5000 — 省略]", MarkerUnderstated: true, Detector: "claude_code.webfetch",
		},
		FollowedUp: true, FollowUpExact: true, ContinuationOf: "toolu_00", SessionCoverage: schema.KnownRatio(0.641), Searched: true,
		CoverageUpperBound: true, CoverageMixedVersions: false,
		OriginalSHA256: strings.Repeat("a", 64), ContextSHA256: strings.Repeat("b", 64),
		SourceFile: "/data/sess.jsonl", SourceLine: 52,
	}
}

func TestToolCallRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := chtest.NewStore(t)
	ts := time.Date(2026, 1, 19, 21, 18, 2, 285_000_000, time.UTC)
	unknown := fullCall("toolu_02", ts.Add(time.Second))
	// A call with every size unknown must come back unknown (NULL), never 0.
	unknown.Original = schema.Original{Source: schema.SourceUnknown}
	unknown.Context = schema.Sizes{}
	unknown.Shown = schema.Range{}
	unknown.Total = schema.Unknown
	unknown.SessionCoverage = schema.Ratio{}
	// The booleans flipped, so a swapped column cannot round-trip.
	unknown.ShownTail, unknown.ShownTailIsEnd, unknown.RefetchedSource = schema.Range{}, false, false
	unknown.CoverageUpperBound, unknown.CoverageMixedVersions = false, true
	want := []schema.ToolCall{fullCall("toolu_01", ts), unknown}

	if err := s.WriteToolCalls(ctx, want); err != nil {
		t.Fatalf("write: %v", err)
	}
	got, err := s.ToolCalls(ctx, want[0].SessionID)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if len(got) != len(want) {
		t.Fatalf("read %d calls, want %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("call %d round trip differs:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
	if n := count(t, s, "SELECT count() FROM "+s.Database()+".tool_calls WHERE original_bytes IS NULL AND context_bytes IS NULL AND session_coverage IS NULL"); n != 1 {
		t.Errorf("rows with NULL sizes = %d, want 1 (unknown must be NULL, not 0)", n)
	}
}

func TestAnswerAndSessionRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := chtest.NewStore(t)
	ts := time.Date(2026, 1, 19, 21, 30, 0, 123_456_789, time.UTC)
	ans := schema.Answer{
		SessionID: "s1", MessageID: "msg_9", Timestamp: ts, Turn: schema.KnownTurn(2), Source: schema.HarnessCodex, Model: "gpt-5.1",
		AgentID: "", Sidechain: false, Text: "沒有這個設定 — there is no such setting",
		InputCallIDs: []string{"c1", "c2"}, InputsUncertain: true, IncompleteInputs: []string{"c1"}, AbsenceClaim: true, Risk: schema.RiskHigh,
		Absence: schema.AbsenceScoped, AbsenceClause: "in the first 2,000 lines there is no such setting", AbsenceScope: "in the first 2,000 lines",
		Reasons:     []string{schema.ReasonAbsenceClaimOnPartialInput, schema.ReasonSilentTruncation},
		ReasonCalls: map[string][]string{schema.ReasonAbsenceClaimOnPartialInput: {"c1"}, schema.ReasonSilentTruncation: {"c1"}},
		Verdict:     "Answer at 21:30:00 says no such setting exists.",
	}
	if err := s.WriteAnswers(ctx, []schema.Answer{ans}); err != nil {
		t.Fatal(err)
	}
	gotAns, err := s.Answers(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(gotAns) != 1 || !reflect.DeepEqual(gotAns[0], ans) {
		t.Fatalf("answer round trip:\n got %+v\nwant %+v", gotAns, ans)
	}

	sess := schema.Session{
		SessionID: "s1", Source: schema.HarnessCodex, HarnessVersion: "0.60.1", Model: "gpt-5.1", Project: "rtchess",
		Cwd: "/w/rtchess", GitBranch: "main", StartedAt: ts.Truncate(time.Second), EndedAt: ts.Add(time.Hour).Truncate(time.Second),
		SourceFile: "/x/rollout.jsonl", Turns: schema.Known(3), ToolCalls: 10, TruncatedCalls: 2, SilentCalls: 1, Answers: 4,
		RiskyAnswers: 1, Compactions: schema.Known(1), MaxRisk: schema.RiskHigh, InputTokens: schema.Known(12345), OutputTokens: schema.Known(678),
	}
	if err := s.WriteSessions(ctx, []schema.Session{sess}); err != nil {
		t.Fatal(err)
	}
	got, found, err := s.Session(ctx, "s1")
	if err != nil || !found {
		t.Fatalf("read session: found=%v err=%v", found, err)
	}
	if !reflect.DeepEqual(got, sess) {
		t.Fatalf("session round trip:\n got %+v\nwant %+v", got, sess)
	}
	if _, found, err := s.Session(ctx, "nope"); err != nil || found {
		t.Fatalf("missing session: found=%v err=%v", found, err)
	}
}

// An answer taken back: its retraction, written later for the same message
// and timestamp, replaces its row, and no reader returns it; the stored row
// says retracted = 1, so FINAL keeps the retraction.
func TestRetractedAnswerIsNotRead(t *testing.T) {
	ctx := context.Background()
	s := chtest.NewStore(t)
	ts := time.Date(2026, 1, 19, 21, 30, 0, 0, time.UTC)
	keep := schema.Answer{SessionID: "s1", MessageID: "msg_1", Timestamp: ts, Risk: schema.RiskLow, Verdict: "fine",
		Analysis: schema.Analysis{Done: true, Records: 4}}
	open := schema.Answer{SessionID: "s1", MessageID: "msg_2", Timestamp: ts.Add(time.Second), Risk: schema.RiskHigh,
		Text: "There is no such setting.", Verdict: "rests on a cut read", Analysis: schema.Analysis{Done: true, Records: 4}}
	if err := s.WriteAnswers(ctx, []schema.Answer{keep, open}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Answers(ctx, "s1"); err != nil || len(got) != 2 {
		t.Fatalf("before the retraction: %d answers, %v; want 2", len(got), err)
	}
	back := schema.Answer{SessionID: "s1", MessageID: "msg_2", Timestamp: open.Timestamp, Risk: schema.RiskNone,
		Verdict: "taken back", Retracted: true, Analysis: schema.Analysis{Done: true, Records: 9}}
	if err := s.WriteAnswers(ctx, []schema.Answer{back}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Answers(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].MessageID != "msg_1" {
		t.Fatalf("after the retraction: %+v; want msg_1 only", got)
	}
	q := "SELECT toUInt64(count()), toUInt64(sum(retracted)) FROM " + s.Database() + ".answers FINAL WHERE session_id = 's1'"
	var rows, retracted uint64
	if err := s.Conn().QueryRow(ctx, q).Scan(&rows, &retracted); err != nil {
		t.Fatal(err)
	}
	if rows != 2 || retracted != 1 {
		t.Errorf("FINAL keeps %d rows, %d retracted; want 2 and 1", rows, retracted)
	}
}

func TestReingestCountsOnce(t *testing.T) {
	ctx := context.Background()
	s := chtest.NewStore(t)
	ts := time.Date(2026, 2, 1, 10, 0, 0, 0, time.UTC)
	batch := []schema.ToolCall{fullCall("a", ts), fullCall("b", ts.Add(time.Minute)), fullCall("c", ts.Add(2*time.Minute))}
	for i := 0; i < 2; i++ {
		if err := s.WriteToolCalls(ctx, batch); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if raw := count(t, s, "SELECT count() FROM "+s.Database()+".tool_calls"); raw != 6 {
		t.Logf("raw rows before merge: %d (duplicates are expected until a merge)", raw)
	}
	if n := count(t, s, "SELECT count() FROM "+s.Database()+".tool_calls FINAL"); n != 3 {
		t.Fatalf("FINAL count after writing the same batch twice = %d, want 3", n)
	}
	got, err := s.ToolCalls(ctx, batch[0].SessionID)
	if err != nil || len(got) != 3 {
		t.Fatalf("ToolCalls after re-ingest: %d rows, err %v; want 3", len(got), err)
	}

	// A later write of the same id replaces the earlier one (re-analysis sets followed_up).
	updated := batch[0]
	updated.FollowedUp = false
	updated.ContinuationOf = "re-analysed"
	if err := s.WriteToolCalls(ctx, []schema.ToolCall{updated}); err != nil {
		t.Fatal(err)
	}
	got, err = s.ToolCalls(ctx, batch[0].SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].ContinuationOf != "re-analysed" || got[0].FollowedUp {
		t.Fatalf("after update: %d rows, first continuation_of=%q followed_up=%v; want the update to win", len(got), got[0].ContinuationOf, got[0].FollowedUp)
	}
}

func TestWriteHonoursCancellation(t *testing.T) {
	s := chtest.NewStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := s.WriteToolCalls(ctx, []schema.ToolCall{fullCall("x", time.Now())})
	if err == nil {
		t.Fatal("write with a cancelled context succeeded")
	}
}

func TestPrune(t *testing.T) {
	ctx := context.Background()
	s := chtest.NewStore(t)
	old := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	recent := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	if err := s.WriteToolCalls(ctx, []schema.ToolCall{fullCall("old", old), fullCall("new", recent)}); err != nil {
		t.Fatal(err)
	}
	cutoff := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

	planned, err := s.Prune(ctx, cutoff, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(planned) != 1 || planned[0].Partition != "20250101" || planned[0].Table != "tool_calls" {
		t.Fatalf("dry run plans %+v; want the 20250101 partition of tool_calls", planned)
	}
	if n := count(t, s, "SELECT count() FROM "+s.Database()+".tool_calls"); n != 2 {
		t.Fatalf("dry run dropped rows: %d left", n)
	}
	if _, err := s.Prune(ctx, cutoff, false); err != nil {
		t.Fatal(err)
	}
	if n := count(t, s, "SELECT count() FROM "+s.Database()+".tool_calls WHERE call_id = 'new'"); n != 1 {
		t.Fatalf("recent row lost: %d", n)
	}
	if n := count(t, s, "SELECT count() FROM "+s.Database()+".tool_calls WHERE call_id = 'old'"); n != 0 {
		t.Fatalf("old row kept: %d", n)
	}
}

// The partitions are days of the server's time zone, and so is the cut-off
// day: on a server west of UTC the cut-off's UTC date is a day later than
// its own, and a day that has not ended before the cut-off must stay.
func TestPruneInTheServersTimeZone(t *testing.T) {
	ctx := context.Background()
	srv := chtest.StartServer(t, chserver.Options{Timezone: "America/Los_Angeles"})
	s := chtest.OpenStore(t, srv.DSN("ctxaudit_prune_tz"))
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	la, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Fatal(err)
	}
	// 03:00 UTC on 20 Nov is 19:00 on 19 Nov in Los Angeles.
	cutoff := time.Date(2026, 11, 20, 3, 0, 0, 0, time.UTC)
	ended := fullCall("ended", time.Date(2026, 11, 18, 12, 0, 0, 0, la)) // its day ended 19 Nov 08:00 UTC
	open := fullCall("open", time.Date(2026, 11, 19, 20, 0, 0, 0, la))   // 20 Nov 04:00 UTC: younger than the cut-off
	if err := s.WriteToolCalls(ctx, []schema.ToolCall{ended, open}); err != nil {
		t.Fatal(err)
	}
	planned, err := s.Prune(ctx, cutoff, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(planned) != 1 || planned[0].Partition != "20261118" || planned[0].Table != "tool_calls" {
		t.Fatalf("prune plans %+v; want only 20261118 of tool_calls (19 Nov, Los Angeles time, ends after the cut-off)", planned)
	}
	if _, err := s.Prune(ctx, cutoff, false); err != nil {
		t.Fatal(err)
	}
	if n := count(t, s, "SELECT count() FROM "+s.Database()+".tool_calls WHERE call_id = 'open'"); n != 1 {
		t.Errorf("the call younger than the cut-off: %d rows after prune, want 1", n)
	}
	if n := count(t, s, "SELECT count() FROM "+s.Database()+".tool_calls WHERE call_id = 'ended'"); n != 0 {
		t.Errorf("the call of a day that ended before the cut-off: %d rows after prune, want 0", n)
	}
}

func TestParseRetention(t *testing.T) {
	for in, want := range map[string]time.Duration{"30d": 30 * 24 * time.Hour, "2w": 14 * 24 * time.Hour, "36h": 36 * time.Hour} {
		got, err := chstore.ParseRetention(in)
		if err != nil || got != want {
			t.Errorf("ParseRetention(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "d", "0d", "-3d", "soon", "-1h"} {
		if _, err := chstore.ParseRetention(bad); err == nil {
			t.Errorf("ParseRetention(%q) accepted", bad)
		}
	}
}
