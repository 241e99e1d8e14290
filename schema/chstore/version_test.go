package chstore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/schema"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

// survivors reads, for every id of table, what FINAL, argMax(…, version) and
// LIMIT 1 BY each keep of column col, and fails unless all three agree.
func survivors(t *testing.T, s *chstore.Store, table, key, col string) map[string]string {
	t.Helper()
	ctx := context.Background()
	db := s.Database()
	read := func(query string) map[string]string {
		rows, err := s.Conn().Query(ctx, query)
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		defer rows.Close()
		out := map[string]string{}
		for rows.Next() {
			var k, v string
			if err := rows.Scan(&k, &v); err != nil {
				t.Fatal(err)
			}
			out[k] = v
		}
		return out
	}
	colText := "toString(" + col + ")"
	final := read(fmt.Sprintf("SELECT toString(%s), %s FROM %s.%s FINAL", key, colText, db, table))
	argMax := read(fmt.Sprintf("SELECT toString(%s), argMax(%s, version) FROM %s.%s GROUP BY %s", key, colText, db, table, key))
	limit := read(fmt.Sprintf("SELECT toString(%s), %s FROM %s.%s ORDER BY %s, version DESC LIMIT 1 BY %s", key, colText, db, table, key, key))
	for k, v := range final {
		if argMax[k] != v || limit[k] != v {
			t.Errorf("%s %s: FINAL keeps %q, argMax %q, LIMIT 1 BY %q", table, k, v, argMax[k], limit[k])
		}
	}
	if len(final) != len(argMax) || len(final) != len(limit) {
		t.Errorf("%s: FINAL %d ids, argMax %d, LIMIT 1 BY %d", table, len(final), len(argMax), len(limit))
	}
	if n := count(t, s, fmt.Sprintf("SELECT count() FROM (SELECT %s, version, count() AS n FROM %s.%s GROUP BY %s, version HAVING n > 1)", key, db, table, key)); n != 0 {
		t.Errorf("%s: %d ids have two rows of one version", table, n)
	}
	return final
}

// asReadOther is a call of another session, as read, without links.
func asReadOther(c schema.ToolCall) schema.ToolCall {
	c.SessionID, c.CallID = c.SessionID+"-other", c.CallID+"-other"
	c.OriginalSHA256, c.ContextSHA256, c.Analysis = "", "", schema.Analysis{}
	return c
}

func TestPoorerWriteNeverWins(t *testing.T) {
	ctx := context.Background()
	s := chtest.NewStore(t)
	ts := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

	// What `ctxaudit ingest --store-content all` writes: analysed, with links.
	rich := fullCall("c1", ts)
	rich.Analysis = schema.Analysis{Done: true, Records: 5}
	// What a collector re-reading the same file writes later: the call as
	// read (not analysed, no links), then the same analysis without links.
	asRead := rich
	asRead.Analysis = schema.Analysis{}
	asRead.OriginalSHA256, asRead.ContextSHA256 = "", ""
	asRead.FollowedUp, asRead.ContinuationOf = false, "as-read"
	analysedNoLinks := rich
	analysedNoLinks.OriginalSHA256, analysedNoLinks.ContextSHA256 = "", ""
	analysedNoLinks.ContinuationOf = "no-links"

	// A call written while the store holds no text: there is no link to
	// look for, and that answer must not outlive the texts' arrival.
	if err := s.WriteToolCalls(ctx, []schema.ToolCall{asReadOther(rich)}); err != nil {
		t.Fatal(err)
	}
	// The ingest writes the texts, then the calls that link to them.
	if err := s.WriteToolOutputs(ctx, []schema.ToolOutput{
		{SHA256: rich.OriginalSHA256, Bytes: 156000, Text: "the original", FirstSeen: ts},
		{SHA256: rich.ContextSHA256, Bytes: 2153, Text: "what the model saw", FirstSeen: ts},
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteToolCalls(ctx, []schema.ToolCall{rich}); err != nil {
		t.Fatal(err)
	}
	// The as-read and analysed rows of one call in one INSERT, as the
	// transcript path sends them, analysed row first.
	if err := s.WriteToolCalls(ctx, []schema.ToolCall{analysedNoLinks, asRead}); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteToolCalls(ctx, []schema.ToolCall{asRead}); err != nil {
		t.Fatal(err)
	}
	got := survivors(t, s, "tool_calls", "call_id", "original_sha256")
	if got["c1"] != rich.OriginalSHA256 {
		t.Errorf("original_sha256 after poorer writes = %q, want the ingested link %q", got["c1"], rich.OriginalSHA256)
	}

	// An analysis that saw more of the session does replace it, and keeps
	// the links it did not know; one of equal knowledge written later
	// replaces it too.
	grown := analysedNoLinks
	grown.Analysis.Records = 9
	grown.ContinuationOf = "grown"
	if err := s.WriteToolCalls(ctx, []schema.ToolCall{grown}); err != nil {
		t.Fatal(err)
	}
	if got := survivors(t, s, "tool_calls", "call_id", "continuation_of"); got["c1"] != "grown" {
		t.Errorf("continuation_of after a fuller analysis = %q, want grown", got["c1"])
	}
	if got := survivors(t, s, "tool_calls", "call_id", "concat(original_sha256, context_sha256)"); got["c1"] != rich.OriginalSHA256+rich.ContextSHA256 {
		t.Errorf("links after a fuller analysis without them = %q, want the stored ones carried over", got["c1"])
	}
	again := grown
	again.ContinuationOf = "again"
	if err := s.WriteToolCalls(ctx, []schema.ToolCall{again}); err != nil {
		t.Fatal(err)
	}
	if got := survivors(t, s, "tool_calls", "call_id", "continuation_of"); got["c1"] != "again" {
		t.Errorf("continuation_of after an equal, later write = %q, want again", got["c1"])
	}
	calls, err := s.ToolCalls(ctx, rich.SessionID)
	if err != nil || len(calls) != 1 {
		t.Fatalf("ToolCalls: %d rows, %v", len(calls), err)
	}
	if calls[0].Analysis != (schema.Analysis{Done: true, Records: 9}) {
		t.Errorf("analysis read back from the version = %+v", calls[0].Analysis)
	}
}

// TestRankIsWhatTheTablesKeep writes one call again and again, each time
// knowing more or less, and requires the row the tables keep after each
// write to be the one Rank picks: the highest rank, the later write of
// equals. Tests of paths that do not write through a Store model the tables
// with Rank.
func TestRankIsWhatTheTablesKeep(t *testing.T) {
	ctx := context.Background()
	s := chtest.NewStore(t)
	base := fullCall("c1", time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	base.OriginalSHA256, base.ContextSHA256 = "", "" // no texts stored: nothing to carry over
	variant := func(label string, a schema.Analysis, sizes bool) schema.ToolCall {
		c := base
		c.ContinuationOf, c.Analysis = label, a
		if !sizes {
			c.Original.Bytes, c.Context.Bytes = schema.Unknown, schema.Unknown
		}
		return c
	}
	writes := []schema.ToolCall{
		variant("as read", schema.Analysis{}, true),
		variant("as read, fewer sizes", schema.Analysis{}, false),
		variant("analysed, 5", schema.Analysis{Done: true, Records: 5}, true),
		variant("as read again", schema.Analysis{}, true),
		variant("analysed, 5, later", schema.Analysis{Done: true, Records: 5}, true),
		variant("analysed, 3", schema.Analysis{Done: true, Records: 3}, true),
		variant("analysed from the middle, 9", schema.Analysis{Done: true, Partial: true, Records: 9}, true),
		variant("analysed, 4", schema.Analysis{Done: true, Records: 4}, true),
		variant("analysed, 6, fewer sizes", schema.Analysis{Done: true, Records: 6}, false),
	}
	var kept string
	var keptRank uint64
	for i, c := range writes {
		if err := s.WriteToolCalls(ctx, []schema.ToolCall{c}); err != nil {
			t.Fatal(err)
		}
		rank, ok := chstore.Rank(&c)
		if !ok {
			t.Fatalf("no rank for a tool call")
		}
		if i == 0 || rank >= keptRank {
			kept, keptRank = c.ContinuationOf, rank
		}
		if got := survivors(t, s, "tool_calls", "call_id", "continuation_of")["c1"]; got != kept {
			t.Errorf("after writing %q the tables keep %q, Rank picks %q", c.ContinuationOf, got, kept)
		}
	}
	if kept != "analysed, 6, fewer sizes" {
		t.Errorf("Rank picks %q, want the complete analysis that saw most", kept)
	}
	if _, ok := chstore.Rank(&schema.ToolOutput{}); ok {
		t.Errorf("Rank of a tool output: tool outputs rank by their own rule")
	}
}

func TestPartialSessionNeverReplacesComplete(t *testing.T) {
	ctx := context.Background()
	s := chtest.NewStore(t)
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	whole := schema.Session{SessionID: "s", Source: schema.HarnessGeneric, StartedAt: start, EndedAt: start.Add(time.Hour),
		ToolCalls: 100, Answers: 3, MaxRisk: schema.RiskHigh, Analysis: schema.Analysis{Done: true, Records: 103}}
	// A processor buffer restarted past max_calls_per_session: it saw more
	// records than the first analysis, but not from the session's start.
	partial := whole
	partial.ToolCalls, partial.Answers, partial.MaxRisk = 150, 0, schema.RiskNone
	partial.Analysis = schema.Analysis{Done: true, Partial: true, Records: 150}
	// A restart that analyses fewer records without knowing it is partial.
	fewer := whole
	fewer.ToolCalls, fewer.Answers, fewer.MaxRisk = 2, 0, schema.RiskNone
	fewer.Analysis = schema.Analysis{Done: true, Records: 2}
	for _, row := range []schema.Session{whole, partial, fewer} {
		if err := s.WriteSessions(ctx, []schema.Session{row}); err != nil {
			t.Fatal(err)
		}
	}
	if got := survivors(t, s, "sessions", "session_id", "tool_calls"); got["s"] != "100" {
		t.Errorf("tool_calls kept = %s, want the complete session's 100", got["s"])
	}
	sess, _, err := s.Session(ctx, "s")
	if err != nil || sess.MaxRisk != schema.RiskHigh {
		t.Errorf("Session: max_risk %s, %v; want high", sess.MaxRisk, err)
	}

	// Answers: the same rule.
	a := schema.Answer{SessionID: "s", MessageID: "m", Timestamp: start, Risk: schema.RiskHigh, Text: "x",
		Analysis: schema.Analysis{Done: true, Records: 103}}
	b := a
	b.Risk, b.Analysis = schema.RiskNone, schema.Analysis{Done: true, Partial: true, Records: 150}
	if err := s.WriteAnswers(ctx, []schema.Answer{a, b}); err != nil {
		t.Fatal(err)
	}
	if got := survivors(t, s, "answers", "message_id", "risk"); got["m"] != "high" {
		t.Errorf("answer risk kept = %s, want high", got["m"])
	}
}

func TestNoTwoRowsShareAVersion(t *testing.T) {
	ctx := context.Background()
	s := chtest.NewStore(t)
	ts := time.Date(2026, 3, 3, 9, 0, 0, 0, time.UTC)
	// Many writes of the same ids, of equal knowledge, as fast as possible.
	var rows []schema.ToolCall
	for i := range 20 {
		rows = append(rows, fullCall(fmt.Sprintf("c%d", i), ts.Add(time.Duration(i)*time.Second)))
	}
	for i := range 30 {
		for j := range rows {
			rows[j].ContinuationOf = fmt.Sprintf("write-%02d", i)
		}
		if err := s.WriteToolCalls(ctx, rows); err != nil {
			t.Fatal(err)
		}
	}
	got := survivors(t, s, "tool_calls", "call_id", "continuation_of")
	for id, v := range got {
		if v != "write-29" {
			t.Errorf("%s: kept %s, want the last write", id, v)
		}
	}
	if strings.Contains(fmt.Sprint(got), "write-00") {
		t.Error("the first write survived")
	}
}
