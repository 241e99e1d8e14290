package chstore_test

// Every query chstore issues, on both engines: the ClickHouse 18.16 server
// with the 18.16 rendering of the schema, written through the real driver,
// and chDB 26.7 with the modern rendering (DateTime64(3), LowCardinality,
// codecs, skipping indices), written as INSERT … FORMAT JSONEachRow. The same
// records go into both, with sub-second times, unknown sizes, rewrites that
// leave duplicates on disk and a session that crosses midnight; every read
// must return the same result from both.

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/collector/analysis"
	"github.com/ctxaudit/ctxaudit/internal/chdbtest"
	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/schema"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

type engines struct{ classic, modern *chstore.Store }

// both returns a migrated store on each engine.
func both(t *testing.T) engines {
	t.Helper()
	e := chdbtest.Open(t)
	return engines{classic: chtest.NewStore(t), modern: e.NewStore(t)}
}

func (en engines) each(t *testing.T, fn func(s *chstore.Store) error) {
	t.Helper()
	for _, s := range []*chstore.Store{en.classic, en.modern} {
		if err := fn(s); err != nil {
			t.Fatalf("%s: %v", engineName(en, s), err)
		}
	}
}

func engineName(en engines, s *chstore.Store) string {
	if s == en.classic {
		return "ClickHouse 18.16"
	}
	return "chDB 26.7"
}

// same runs read on both engines and requires equal results.
func same[T any](t *testing.T, en engines, what string, read func(s *chstore.Store) (T, error)) T {
	t.Helper()
	a, err := read(en.classic)
	if err != nil {
		t.Fatalf("%s on ClickHouse 18.16: %v", what, err)
	}
	b, err := read(en.modern)
	if err != nil {
		t.Fatalf("%s on chDB 26.7: %v", what, err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("%s differs between engines:\n18.16: %+v\n26.7:  %+v", what, a, b)
	}
	return a
}

// crossData is what loadCross wrote.
type crossData struct {
	sessions []string
	big      string // a session of more calls than the page size used below
	hashes   []string
}

func loadCross(t *testing.T, en engines) crossData {
	t.Helper()
	ctx := context.Background()
	// 23:59:58.4 on 19 Jan: the midnight session's calls land in two day partitions.
	base := time.Date(2026, 1, 19, 23, 59, 58, 400_000_000, time.UTC)
	d := crossData{big: "sess-big"}
	var calls []schema.ToolCall
	var answers []schema.Answer
	var sessions []schema.Session
	kinds := []schema.TruncationKind{schema.KindNone, schema.KindExplicit, schema.KindSilent, schema.KindSuspected, schema.KindUnknown}
	for k, id := range []string{"sess-ünïcode-会话", "sess-midnight", "sess-big", "sess-o'brien"} {
		d.sessions = append(d.sessions, id)
		n := 5
		if id == d.big {
			n = 23
		}
		for i := range n {
			c := fullCall(fmt.Sprintf("toolu_%02d_%02d", k, i), base.Add(time.Duration(i*700+k*37)*time.Millisecond+time.Duration(i*131)*time.Microsecond))
			c.SessionID, c.Turn, c.SourceLine = id, schema.KnownTurn(i/4), int64(i+1)
			if i%7 == 6 {
				c.Turn = schema.Turn{} // a span that did not say
			}
			c.Kind = kinds[i%len(kinds)]
			c.Truncated = c.Kind != schema.KindNone
			c.FollowedUp = i%3 == 0
			c.Tool = []string{"Read", "Bash", "WebFetch"}[i%3]
			if i%4 == 1 {
				c.Original = schema.Original{Source: schema.SourceUnknown}
				c.Context, c.Total, c.SessionCoverage = schema.Sizes{}, schema.Unknown, schema.Ratio{}
			}
			c.OriginalSHA256 = fmt.Sprintf("%064d", k*100+i)
			calls = append(calls, c)
		}
		for turn := range 3 {
			a := fullAnswer(id, fmt.Sprintf("msg_%d_%d", k, turn), base.Add(time.Duration(turn)*1500*time.Millisecond+999*time.Millisecond), []schema.Risk{schema.RiskNone, schema.RiskMedium, schema.RiskHigh}[turn])
			a.Turn = schema.KnownTurn(turn)
			answers = append(answers, a)
		}
		sessions = append(sessions, schema.Session{
			SessionID: id, Source: []schema.Harness{schema.HarnessClaudeCode, schema.HarnessCodex, schema.HarnessPi}[k%3],
			HarnessVersion: "2.1.6", Model: "claude-opus-4-5", Project: "p'" + id, Cwd: "/w", GitBranch: "main",
			StartedAt: base.Add(-time.Minute).Truncate(time.Second), EndedAt: base.Add(time.Duration(k) * time.Hour).Truncate(time.Second),
			SourceFile: "/data/" + id + ".jsonl", Turns: schema.Known(3), ToolCalls: n, Answers: 3, MaxRisk: []schema.Risk{schema.RiskLow, schema.RiskHigh}[k%2],
		})
	}
	outputs := []schema.ToolOutput{
		{SHA256: "aa", Bytes: 30, Text: "line 1\nUPLOAD_DISABLED=1\nline 3", FirstSeen: base},
		{SHA256: "bb", Bytes: 9000, Text: "a capped prefix", Capped: true, FirstSeen: base},
		{SHA256: "cc", Bytes: 12, Text: "upload_disabled — 省略", Redactions: 2, FirstSeen: base.Add(-48 * time.Hour)},
	}
	d.hashes = []string{"aa", "bb", "cc", "missing", ""}
	// A later version of some rows: re-analysis changed them, both versions
	// are on disk until a merge, and every read must see only the later one.
	rewritten := append([]schema.ToolCall(nil), calls[:3]...)
	for i := range rewritten {
		rewritten[i].FollowedUp, rewritten[i].ContinuationOf = !rewritten[i].FollowedUp, "re-analysed"
	}
	// One moves to another turn, as a sub-agent's call does once analysed:
	// the turn filters must read its later version on both engines.
	rewritten[1].Turn = schema.KnownTurn(2) // it was read in turn 0
	reSession := sessions[0]
	reSession.MaxRisk, reSession.RiskyAnswers = schema.RiskMedium, 1
	reAnswer := answers[0]
	reAnswer.Risk, reAnswer.Verdict = schema.RiskLow, "re-graded"
	en.each(t, func(s *chstore.Store) error {
		for _, w := range []func() error{
			func() error { return s.WriteToolCalls(ctx, calls) },
			func() error { return s.WriteAnswers(ctx, answers) },
			func() error { return s.WriteSessions(ctx, sessions) },
			func() error { return s.WriteToolOutputs(ctx, outputs) },
			func() error { return s.WriteToolOutputs(ctx, outputs[:1]) },
			func() error { return s.WriteToolCalls(ctx, rewritten) },
			func() error { return s.WriteSessions(ctx, []schema.Session{reSession}) },
			func() error { return s.WriteAnswers(ctx, []schema.Answer{reAnswer}) },
		} {
			if err := w(); err != nil {
				return err
			}
		}
		return nil
	})
	return d
}

func TestEveryQueryOnBothEngines(t *testing.T) {
	ctx := context.Background()
	en := both(t)
	d := loadCross(t, en)
	for _, id := range append(d.sessions, "no-such-session") {
		sp := same(t, en, "SessionSpan "+id, func(s *chstore.Store) (chstore.SessionSpan, error) { return s.SessionSpan(ctx, id) })
		same(t, en, "SessionRow "+id, func(s *chstore.Store) (any, error) {
			sess, ok, err := s.SessionRow(ctx, id)
			return []any{sess, ok}, err
		})
		same(t, en, "Session "+id, func(s *chstore.Store) (any, error) {
			sess, ok, err := s.Session(ctx, id)
			return []any{sess, ok}, err
		})
		for name, f := range map[string]chstore.CallFilter{
			"all":         {},
			"turns":       {Turns: []schema.Turn{schema.KnownTurn(0), schema.KnownTurn(2)}},
			"unknown":     {Turns: []schema.Turn{{}}},
			"and unknown": {Turns: []schema.Turn{schema.KnownTurn(1), {}}},
			"call ids":    {CallIDs: []string{"toolu_00_01", "toolu_02_07", "toolu_02_22", "toolu_01_00", "nope"}},
			"paged":       {PageSize: 4},
			"paged ids":   {PageSize: 2, CallIDs: []string{"toolu_02_03", "toolu_02_04", "toolu_02_05", "toolu_02_06"}, Turns: []schema.Turn{schema.KnownTurn(1)}},
		} {
			calls := same(t, en, "SessionToolCalls "+id+" "+name, func(s *chstore.Store) ([]schema.ToolCall, error) {
				return s.SessionToolCalls(ctx, sp, f)
			})
			// FINAL must deduplicate the same way LIMIT 1 BY does.
			final := same(t, en, "SessionToolCalls FINAL "+id+" "+name, func(s *chstore.Store) ([]schema.ToolCall, error) {
				return s.SessionToolCallsShaped(ctx, sp, f, chstore.ReadShape{Final: true})
			})
			if !reflect.DeepEqual(calls, final) {
				t.Errorf("%s %s: FINAL and LIMIT 1 BY disagree", id, name)
			}
		}
		// The places of the calls are those of the calls read whole, at
		// their latest versions, and nothing else.
		places := same(t, en, "SessionCallPlaces "+id, func(s *chstore.Store) ([]schema.ToolCall, error) { return s.SessionCallPlaces(ctx, sp) })
		all, err := en.classic.SessionToolCalls(ctx, sp, chstore.CallFilter{})
		if err != nil {
			t.Fatal(err)
		}
		var want []schema.ToolCall
		for _, c := range all {
			want = append(want, schema.ToolCall{CallID: c.CallID, Timestamp: c.Timestamp, SourceFile: c.SourceFile, SourceLine: c.SourceLine})
		}
		slices.SortFunc(want, func(a, b schema.ToolCall) int { return strings.Compare(a.CallID, b.CallID) })
		if !reflect.DeepEqual(places, want) {
			t.Errorf("SessionCallPlaces %s:\n%+v\nwant the places of the calls read whole\n%+v", id, places, want)
		}
		same(t, en, "ToolCalls "+id, func(s *chstore.Store) ([]schema.ToolCall, error) { return s.ToolCalls(ctx, id) })
		same(t, en, "SessionAnswers "+id, func(s *chstore.Store) ([]schema.Answer, error) { return s.SessionAnswers(ctx, sp) })
		same(t, en, "Answers "+id, func(s *chstore.Store) ([]schema.Answer, error) { return s.Answers(ctx, id) })
	}
	// The rewritten rows read back at their later version, and the times
	// keep their nanoseconds on both renderings.
	calls := same(t, en, "ToolCalls first", func(s *chstore.Store) ([]schema.ToolCall, error) { return s.ToolCalls(ctx, d.sessions[0]) })
	if len(calls) != 5 || calls[0].ContinuationOf != "re-analysed" || calls[3].ContinuationOf == "re-analysed" || calls[1].Timestamp.Nanosecond() == 0 {
		t.Errorf("first session's calls: %+v", calls)
	}
	big := same(t, en, "ToolCalls big", func(s *chstore.Store) ([]schema.ToolCall, error) { return s.ToolCalls(ctx, d.big) })
	if len(big) != 23 {
		t.Errorf("big session: %d calls, want 23", len(big))
	}
	for name, f := range map[string]chstore.SessionFilter{
		"all":          {},
		"limit":        {Limit: 2},
		"source":       {Source: schema.HarnessCodex},
		"risk":         {MinRisk: schema.RiskHigh},
		"risk medium":  {MinRisk: schema.RiskMedium},
		"active since": {ActiveSince: time.Date(2026, 1, 20, 1, 0, 0, 0, time.UTC)},
	} {
		got := same(t, en, "ListSessions "+name, func(s *chstore.Store) ([]schema.Session, error) { return s.ListSessions(ctx, f) })
		// Matches is the filter ListSessions applies, in Go.
		all, err := en.classic.ListSessions(ctx, chstore.SessionFilter{Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, r := range all {
			if f.Matches(&r) && (f.Limit == 0 || len(want) < f.Limit) {
				want = append(want, r.SessionID)
			}
		}
		var ids []string
		for _, r := range got {
			ids = append(ids, r.SessionID)
		}
		if !slices.Equal(ids, want) {
			t.Errorf("ListSessions %s: %v; the rows Matches keeps: %v", name, ids, want)
		}
	}
	for _, needle := range []string{"UPLOAD_DISABLED", "省略", "a capped", "absent", "it's"} {
		same(t, en, "SearchToolOutputs "+needle, func(s *chstore.Store) (map[string]chstore.TextMatch, error) {
			return s.SearchToolOutputs(ctx, d.hashes, needle)
		})
	}
	// FINAL over whole tables counts each record once on both.
	for _, table := range []string{"tool_calls", "answers", "sessions", "tool_outputs"} {
		same(t, en, "count FINAL "+table, func(s *chstore.Store) (uint64, error) {
			var n uint64
			err := s.Conn().QueryRow(ctx, "SELECT count() FROM "+s.Database()+"."+table+" FINAL").Scan(&n)
			return n, err
		})
	}
	same(t, en, "SchemaVersion", func(s *chstore.Store) (uint32, error) { return s.SchemaVersion(ctx) })
	en.each(t, func(s *chstore.Store) error { return s.CheckSchema(ctx) })
}

func TestPruneOnBothEngines(t *testing.T) {
	ctx := context.Background()
	en := both(t)
	loadCross(t, en)
	cutoff := time.Date(2026, 1, 20, 0, 0, 0, 0, time.UTC)
	planned := same(t, en, "Prune dry run", func(s *chstore.Store) ([]chstore.Dropped, error) { return s.Prune(ctx, cutoff, true) })
	if len(planned) == 0 {
		t.Fatal("nothing to prune before 20 Jan")
	}
	// Rows counts stored rows: merges may differ, so compare partitions only.
	parts := func(ds []chstore.Dropped) []string {
		var out []string
		for _, d := range ds {
			out = append(out, d.Table+"/"+d.Partition)
		}
		return out
	}
	same(t, en, "Prune", func(s *chstore.Store) ([]string, error) {
		ds, err := s.Prune(ctx, cutoff, false)
		return parts(ds), err
	})
	for _, table := range []string{"tool_calls", "answers", "sessions", "tool_outputs"} {
		same(t, en, "after prune "+table, func(s *chstore.Store) (uint64, error) {
			var n uint64
			err := s.Conn().QueryRow(ctx, "SELECT count() FROM "+s.Database()+"."+table+" FINAL").Scan(&n)
			return n, err
		})
	}
	same(t, en, "Prune again", func(s *chstore.Store) ([]chstore.Dropped, error) { return s.Prune(ctx, cutoff, true) })
}

// The modern rendering is what chDB created: the column types read back.
func TestModernRenderingOnChDB(t *testing.T) {
	ctx := context.Background()
	s := chdbtest.Open(t).NewStore(t)
	types := map[string]string{}
	rows, err := s.Conn().Query(ctx, "SELECT concat(table, '.', name), type FROM system.columns WHERE database = ?", s.Database())
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var col, typ string
		if err := rows.Scan(&col, &typ); err != nil {
			t.Fatal(err)
		}
		types[col] = typ
	}
	for col, want := range map[string]string{
		"tool_calls.ts": "DateTime64(3)", "tool_calls.tool": "LowCardinality(String)", "tool_calls.source": "LowCardinality(String)",
		"tool_calls.model": "LowCardinality(String)", "tool_calls.harness_version": "LowCardinality(String)",
		"tool_calls.shown_unit": "LowCardinality(String)", "answers.ts": "DateTime64(3)", "sessions.source": "LowCardinality(String)",
		"tool_calls.marker": "String", "tool_outputs.text": "String", "tool_calls.original_bytes": "Nullable(UInt64)",
	} {
		if types[col] != want {
			t.Errorf("%s is %q, want %q", col, types[col], want)
		}
	}
	codecs := map[string]string{}
	rows, err = s.Conn().Query(ctx, "SELECT concat(table, '.', name), compression_codec FROM system.columns WHERE database = ?", s.Database())
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var col, codec string
		if err := rows.Scan(&col, &codec); err != nil {
			t.Fatal(err)
		}
		codecs[col] = codec
	}
	for col, want := range map[string]string{"tool_calls.marker": "CODEC(ZSTD(3))", "tool_calls.arguments": "CODEC(ZSTD(3))", "tool_outputs.text": "CODEC(ZSTD(3))", "tool_calls.ts": "CODEC(Delta(8), LZ4)", "tool_calls.original_bytes": "CODEC(T64, LZ4)", "tool_calls.target": "CODEC(ZSTD(1))"} {
		if codecs[col] != want {
			t.Errorf("%s codec is %q, want %q", col, codecs[col], want)
		}
	}
	var indices []string
	rows, err = s.Conn().Query(ctx, "SELECT concat(table, '.', name, ' ', type) FROM system.data_skipping_indices WHERE database = ? ORDER BY table, name", s.Database())
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var ix string
		if err := rows.Scan(&ix); err != nil {
			t.Fatal(err)
		}
		indices = append(indices, ix)
	}
	if got := strings.Join(indices, ", "); got != "tool_calls.idx_call_id bloom_filter, tool_calls.idx_saved_ref bloom_filter, tool_calls.idx_target bloom_filter" {
		t.Errorf("skipping indices: %s", got)
	}
}

// Retention is a TTL where the server has one, and prune's job on 18.16.
func TestSetRetentionOnBothEngines(t *testing.T) {
	ctx := context.Background()
	en := both(t)
	for _, s := range []*chstore.Store{en.classic, en.modern} {
		set, err := s.SetRetention(ctx, 30*24*time.Hour)
		if err != nil {
			t.Fatalf("%s: %v", engineName(en, s), err)
		}
		if want := s == en.modern; set != want {
			t.Errorf("%s: SetRetention set a TTL: %v, want %v", engineName(en, s), set, want)
		}
	}
	var engine string
	if err := en.modern.Conn().QueryRow(ctx, "SELECT engine_full FROM system.tables WHERE database = ? AND name = 'answers'", en.modern.Database()).Scan(&engine); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(engine, "TTL toDateTime(toDate(ts) + 1) + toIntervalDay(30)") {
		t.Errorf("answers on chDB: %s", engine)
	}
	// The same retention, by TTL on one and by prune on the other, leaves
	// the same rows: the cross data is from January 2026, months older.
	loadCross(t, en)
	recent := fullCall("toolu_recent", time.Now().UTC().Add(-time.Hour))
	// A call older than the cut-off in the day the cut-off falls in: prune
	// keeps its day, which has not ended before the cut-off, and so must the
	// TTL (one on the call's own time would drop its part).
	cutoff := time.Now().Add(-30 * 24 * time.Hour).UTC()
	// The start of the cut-off's day in the servers' zone, which their day
	// partitions are computed in (both must agree: the cross data is
	// compared day by day).
	var startSec [2]uint32
	for i, s := range []*chstore.Store{en.classic, en.modern} {
		if err := s.Conn().QueryRow(ctx, "SELECT toUInt32(toStartOfDay(toDateTime(?)))", cutoff.Unix()).Scan(&startSec[i]); err != nil {
			t.Fatalf("%s: %v", engineName(en, s), err)
		}
	}
	if startSec[0] != startSec[1] {
		t.Fatalf("the engines start the cut-off's day at different times (%d, %d): different time zones", startSec[0], startSec[1])
	}
	dayStart := time.Unix(int64(startSec[0]), 0).UTC()
	if cutoff.Sub(dayStart) < time.Minute {
		cutoff = cutoff.Add(time.Minute) // keep the call before the cut-off and in its day
	}
	edge := fullCall("toolu_edge", dayStart.Add(time.Second))
	edge.SessionID = "sess-edge"
	en.each(t, func(s *chstore.Store) error {
		if err := s.WriteToolCalls(ctx, []schema.ToolCall{recent, edge}); err != nil {
			return err
		}
		_, err := s.RefreshRollups(ctx)
		return err
	})
	var rolledDays uint64
	// On 18.16, which keeps every day until pruned (chDB may have applied
	// its TTL already).
	if err := en.classic.Conn().QueryRow(ctx, "SELECT uniqExact(day) FROM "+en.classic.Database()+".tool_call_rollup_days").Scan(&rolledDays); err != nil || rolledDays < 4 {
		t.Fatalf("rollup days before retention on 18.16: %d, %v; want the two January days, the cut-off's and today's", rolledDays, err)
	}
	if _, err := en.classic.Prune(ctx, cutoff, false); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"tool_calls", "answers", "sessions", "tool_outputs", "tool_call_rollup", "tool_call_rollup_days"} {
		// TTL is applied as parts merge; OPTIMIZE makes that happen now.
		if err := en.modern.Conn().Exec(ctx, "OPTIMIZE TABLE "+en.modern.Database()+"."+table+" FINAL"); err != nil {
			t.Fatal(err)
		}
		same(t, en, "rows after retention "+table, func(s *chstore.Store) (uint64, error) {
			var n uint64
			err := s.Conn().QueryRow(ctx, "SELECT count() FROM "+s.Database()+"."+table+" FINAL").Scan(&n)
			return n, err
		})
	}
	same(t, en, "rollup days after retention", func(s *chstore.Store) ([]uint32, error) {
		var days []uint32
		err := s.Conn().QueryRow(ctx, "SELECT arraySort(groupUniqArray(day)) FROM "+s.Database()+".tool_call_rollup_days").Scan(&days)
		return days, err
	})
	if got := same(t, en, "edge call after retention", func(s *chstore.Store) ([]schema.ToolCall, error) {
		return s.ToolCalls(ctx, edge.SessionID)
	}); len(got) != 1 {
		t.Errorf("the call in the cut-off's day: %d rows after retention, want 1 (its day has not ended before the cut-off)", len(got))
	}
	calls := same(t, en, "ToolCalls after retention", func(s *chstore.Store) ([]schema.ToolCall, error) {
		return s.ToolCalls(ctx, recent.SessionID)
	})
	if len(calls) != 1 || calls[0].CallID != recent.CallID {
		t.Errorf("after retention: %+v, want only the recent call", calls)
	}
}

// StoredRecordCounts counts each call and answer once whatever its
// versions, leaves out an answer taken back, keeps calls without a time
// whatever the bound, and skips records before the bound — the same on
// both engines, and equal to what the sessions' reads return.
func TestStoredRecordCountsOnBothEngines(t *testing.T) {
	ctx := context.Background()
	en := both(t)
	d := loadCross(t, en)
	at := time.Date(2026, 1, 20, 9, 0, 0, 0, time.UTC)
	const extra = "sess-recount"
	calls := []schema.ToolCall{fullCall("toolu_r1", at), fullCall("toolu_r2", at.Add(time.Second)), fullCall("toolu_untimed", time.Time{}),
		fullCall("toolu_early", at.Add(-30*24*time.Hour))}
	answers := []schema.Answer{fullAnswer(extra, "msg_r1", at.Add(2*time.Second), schema.RiskHigh), fullAnswer(extra, "msg_r2", at.Add(3*time.Second), schema.RiskLow)}
	for i := range calls {
		calls[i].SessionID = extra
	}
	back := answers[1]
	back.Retracted, back.Verdict, back.Analysis.Records = true, "taken back", back.Analysis.Records+5
	en.each(t, func(s *chstore.Store) error {
		for _, w := range []func() error{
			func() error { return s.WriteToolCalls(ctx, calls) },
			func() error { return s.WriteToolCalls(ctx, calls[:2]) }, // a second version of two
			func() error { return s.WriteAnswers(ctx, answers) },
			func() error { return s.WriteAnswers(ctx, []schema.Answer{back}) },
		} {
			if err := w(); err != nil {
				return err
			}
		}
		return nil
	})
	ids := append(append([]string(nil), d.sessions...), extra, "no-such-session")
	all := same(t, en, "StoredRecordCounts", func(s *chstore.Store) (map[string]chstore.RecordCounts, error) {
		return s.StoredRecordCounts(ctx, ids, time.Time{})
	})
	for _, id := range ids {
		calls, err := en.classic.ToolCalls(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		answers, err := en.classic.Answers(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if want := (chstore.RecordCounts{Calls: len(calls), Answers: len(answers)}); all[id] != want {
			t.Errorf("%s: counted %+v, the reads return %+v", id, all[id], want)
		}
	}
	if got := all[extra]; got != (chstore.RecordCounts{Calls: 4, Answers: 1}) {
		t.Errorf("%s: %+v, want 4 calls and 1 answer (the other taken back)", extra, got)
	}
	if _, ok := all["no-such-session"]; ok || len(all) != len(d.sessions)+1 {
		t.Errorf("counts for %d sessions (%v); want one per stored session", len(all), all)
	}
	since := same(t, en, "StoredRecordCounts since", func(s *chstore.Store) (map[string]chstore.RecordCounts, error) {
		return s.StoredRecordCounts(ctx, []string{extra}, at.Add(-time.Hour))
	})
	if got := since[extra]; got != (chstore.RecordCounts{Calls: 3, Answers: 1}) {
		t.Errorf("since %s: %+v, want 3 calls (not the one a month before, the untimed one kept) and 1 answer", at.Add(-time.Hour), got)
	}
}

// ContinuedSessions finds the sessions with a call or an answer analysed by
// a partial buffer — not those analysed whole, nor calls as read — the
// most recently active first, bounded by since (untimed records always
// count), source and limit; SessionRows reads the latest row of each
// session asked for. Both the same on both engines.
func TestContinuedSessionsOnBothEngines(t *testing.T) {
	ctx := context.Background()
	en := both(t)
	d := loadCross(t, en)
	at := time.Date(2026, 2, 3, 9, 0, 0, 0, time.UTC)
	partial := schema.Analysis{Done: true, Partial: true, Records: 4}
	call := func(session, id string, ts time.Time, a schema.Analysis, src schema.Harness) schema.ToolCall {
		c := fullCall(id, ts)
		c.SessionID, c.Analysis, c.Source = session, a, src
		return c
	}
	answer := fullAnswer("went-on-answer", "msg_p", at.Add(3*time.Hour), schema.RiskHigh)
	answer.Analysis = partial
	calls := []schema.ToolCall{
		call("went-on-early", "toolu_p1", at, partial, schema.HarnessClaudeCode),
		call("went-on-late", "toolu_p2", at.Add(2*time.Hour), partial, schema.HarnessClaudeCode),
		call("went-on-late", "toolu_p3", at.Add(-48*time.Hour), partial, schema.HarnessClaudeCode),
		call("went-on-codex", "toolu_p4", at.Add(time.Hour), partial, schema.HarnessCodex),
		call("went-on-untimed", "toolu_p5", time.Time{}, partial, schema.HarnessClaudeCode),
		call("whole", "toolu_w1", at.Add(4*time.Hour), schema.Analysis{Done: true, Records: 4}, schema.HarnessClaudeCode),
		call("as-read", "toolu_r1", at.Add(4*time.Hour), schema.Analysis{}, schema.HarnessClaudeCode),
	}
	en.each(t, func(s *chstore.Store) error {
		if err := s.WriteToolCalls(ctx, calls); err != nil {
			return err
		}
		return s.WriteAnswers(ctx, []schema.Answer{answer})
	})
	ours := func(ids []string) []string {
		return slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return slices.Contains(d.sessions, id) })
	}
	for _, c := range []struct {
		name   string
		since  time.Time
		source schema.Harness
		limit  int
		want   []string
	}{
		{"all", time.Time{}, "", 100, []string{"went-on-answer", "went-on-late", "went-on-codex", "went-on-early", "went-on-untimed"}},
		{"since", at.Add(30 * time.Minute), "", 100, []string{"went-on-answer", "went-on-late", "went-on-codex", "went-on-untimed"}},
		{"source", time.Time{}, schema.HarnessCodex, 100, []string{"went-on-codex"}},
		{"limit", at.Add(30 * time.Minute), "", 2, []string{"went-on-answer", "went-on-late"}},
	} {
		got := same(t, en, "ContinuedSessions "+c.name, func(s *chstore.Store) ([]string, error) {
			return s.ContinuedSessions(ctx, c.since, c.source, c.limit)
		})
		if !slices.Equal(ours(got), c.want) {
			t.Errorf("%s: %v; want %v", c.name, ours(got), c.want)
		}
	}

	first := schema.Session{SessionID: "went-on-late", Source: schema.HarnessClaudeCode, StartedAt: at.Add(-48 * time.Hour),
		EndedAt: at.Add(-47 * time.Hour), ToolCalls: 1, Analysis: schema.Analysis{Done: true, Records: 1}}
	later := first
	later.StartedAt, later.EndedAt, later.Analysis = at.Add(2*time.Hour), at.Add(2*time.Hour), partial
	en.each(t, func(s *chstore.Store) error {
		if err := s.WriteSessions(ctx, []schema.Session{first}); err != nil {
			return err
		}
		return s.WriteSessions(ctx, []schema.Session{later})
	})
	ids := append([]string{"went-on-late", "no-such-session"}, d.sessions...)
	rows := same(t, en, "SessionRows", func(s *chstore.Store) ([]schema.Session, error) {
		rows, err := s.SessionRows(ctx, ids)
		slices.SortFunc(rows, func(a, b schema.Session) int { return strings.Compare(a.SessionID, b.SessionID) })
		return rows, err
	})
	if len(rows) != len(d.sessions)+1 {
		t.Fatalf("SessionRows: %d rows; want one per stored session asked for (%d)", len(rows), len(d.sessions)+1)
	}
	for _, r := range rows {
		want, ok, err := en.classic.SessionRow(ctx, r.SessionID)
		if err != nil || !ok || !reflect.DeepEqual(r, want) {
			t.Errorf("SessionRows %s: %+v; SessionRow reads %+v (%v)", r.SessionID, r, want, err)
		}
		if r.SessionID == "went-on-late" && !r.StartedAt.Equal(first.StartedAt) {
			t.Errorf("went-on-late: the row starting %s; want the whole buffer's, which outranks the partial one", r.StartedAt)
		}
	}
	// The sessions asked about with a partial call or answer in the period,
	// or untimed; not one whose records are all whole or not analysed.
	for _, c := range []struct {
		name  string
		since time.Time
		want  []string
	}{
		{"all", time.Time{}, []string{"went-on-answer", "went-on-early", "went-on-late", "went-on-untimed"}},
		{"since", at.Add(30 * time.Minute), []string{"went-on-answer", "went-on-late", "went-on-untimed"}},
		{"later", at.Add(5 * time.Hour), []string{"went-on-untimed"}},
	} {
		got := same(t, en, "PartialSessions "+c.name, func(s *chstore.Store) ([]string, error) {
			ids, err := s.PartialSessions(ctx, append([]string{"went-on-early", "went-on-answer", "went-on-untimed", "whole", "as-read"}, ids...), c.since)
			slices.Sort(ids)
			return ids, err
		})
		if !slices.Equal(got, c.want) {
			t.Errorf("PartialSessions %s: %v; want %v", c.name, got, c.want)
		}
	}
	// The records of several sessions read together for counting are each
	// session's records as its own reads return them, in the same order,
	// with what counting reads of them; and counted, they count as the
	// whole records do.
	recordIDs := []string{"went-on-late", "went-on-answer", d.sessions[0], d.sessions[1], "no-such-session"}
	batch := same(t, en, "CountedRecords", func(s *chstore.Store) (map[string]chstore.StoredRecords, error) {
		return s.CountedRecords(ctx, recordIDs, time.Time{})
	})
	if _, ok := batch["no-such-session"]; ok || len(batch) != len(recordIDs)-1 {
		t.Errorf("CountedRecords: records of %d sessions; want the %d stored", len(batch), len(recordIDs)-1)
	}
	for _, id := range recordIDs {
		whole := same(t, en, "the records of "+id, func(s *chstore.Store) (chstore.StoredRecords, error) {
			sp, err := s.SessionSpan(ctx, id)
			if err != nil {
				return chstore.StoredRecords{}, err
			}
			calls, err := s.SessionToolCalls(ctx, sp, chstore.CallFilter{})
			if err != nil {
				return chstore.StoredRecords{}, err
			}
			answers, err := s.SessionAnswers(ctx, sp)
			return chstore.StoredRecords{Calls: calls, Answers: answers}, err
		})
		want := chstore.StoredRecords{Calls: mapSlice(whole.Calls, countedCall), Answers: mapSlice(whole.Answers, countedAnswer)}
		if !reflect.DeepEqual(want, batch[id]) {
			t.Errorf("CountedRecords %s:\n%+v\nwant what counting reads of SessionToolCalls and SessionAnswers:\n%+v", id, batch[id], want)
		}
		if len(whole.Calls)+len(whole.Answers) == 0 {
			continue
		}
		// A row that counts nothing is recounted from every record.
		row := schema.Session{SessionID: id, Analysis: schema.Analysis{Done: true}}
		fromWhole, ok1 := analysis.Recount(row, whole.Calls, whole.Answers)
		fromCounted, ok2 := analysis.Recount(row, batch[id].Calls, batch[id].Answers)
		if !ok1 || !ok2 || !reflect.DeepEqual(fromWhole, fromCounted) {
			t.Errorf("%s: recounted from CountedRecords (%v)\n%+v\nwant the recount of the whole records (%v)\n%+v", id, ok2, fromCounted, ok1, fromWhole)
		}
	}
	// Bounded: went-on-late's call of two days before is left out.
	bounded := same(t, en, "CountedRecords since", func(s *chstore.Store) (map[string]chstore.StoredRecords, error) {
		return s.CountedRecords(ctx, []string{"went-on-late"}, at)
	})
	if calls := bounded["went-on-late"].Calls; len(calls) != 1 || calls[0].CallID != "toolu_p2" {
		t.Errorf("CountedRecords since %s: %d calls; want toolu_p2 alone", at, len(calls))
	}
}

// countedCall and countedAnswer are what CountedRecords reads of a record.
func countedCall(c schema.ToolCall) schema.ToolCall {
	r := schema.ToolCall{SessionID: c.SessionID, CallID: c.CallID, Timestamp: c.Timestamp, SourceLine: c.SourceLine, Turn: c.Turn}
	r.Truncated, r.PartialByRequest, r.Kind, r.Strategy = c.Truncated, c.PartialByRequest, c.Kind, c.Strategy
	return r
}

func countedAnswer(a schema.Answer) schema.Answer {
	return schema.Answer{SessionID: a.SessionID, MessageID: a.MessageID, Timestamp: a.Timestamp, Turn: a.Turn,
		Risk: a.Risk, InputsUncertain: a.InputsUncertain}
}

func mapSlice[T any](in []T, f func(T) T) []T {
	if in == nil {
		return nil
	}
	out := make([]T, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}
