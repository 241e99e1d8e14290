package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/collector/analysis"
	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/schema"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

func TestSessionsCommand(t *testing.T) {
	addr := ingestScenarios(t)
	listJSON := func(t *testing.T, args ...string) []string {
		t.Helper()
		code, out, errOut := run(t, append([]string{"sessions", "--clickhouse", addr, "--format", "json"}, args...)...)
		if code != ExitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var sessions []schema.Session
		if err := json.Unmarshal([]byte(out), &sessions); err != nil {
			t.Fatalf("decode: %v\n%s", err, out)
		}
		ids := []string{}
		for _, s := range sessions {
			ids = append(ids, s.SessionID[:8])
		}
		return ids
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"all, most recently active first", []string{"--since", "all"},
			"019a0e0e f0f0f0f0 e0e0e0e0 019a0d0d c0c0c0c0 77777777 01990a6e 55555555 44444444 33333333 22222222 11111111"},
		{"high risk", []string{"--since", "all", "--risk", "high"}, "019a0e0e f0f0f0f0 77777777 01990a6e 55555555 33333333"},
		{"medium or worse from codex", []string{"--since", "all", "--risk", "medium", "--source", "codex"}, "019a0e0e 019a0d0d 01990a6e"},
		{"harness spelt as a transcript format", []string{"--since", "all", "--source", "claude-code", "--limit", "2"}, "e0e0e0e0 c0c0c0c0"},
		{"since a date", []string{"--since", "2026-01-16"}, "019a0e0e f0f0f0f0 e0e0e0e0 019a0d0d c0c0c0c0"},
		{"since an RFC 3339 time", []string{"--since", "2026-01-16T10:30:00Z"}, "019a0e0e f0f0f0f0 e0e0e0e0"},
		{"a week back has nothing from January 2026", []string{"--since", "7d"}, ""},
		{"by default every session, most recently active first", nil,
			"019a0e0e f0f0f0f0 e0e0e0e0 019a0d0d c0c0c0c0 77777777 01990a6e 55555555 44444444 33333333 22222222 11111111"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := strings.Join(listJSON(t, tc.args...), " "); got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}

	t.Run("table", func(t *testing.T) {
		code, out, errOut := run(t, "sessions", "--clickhouse", addr, "--since", "all", "--risk", "high", "--source", "pi")
		if code != ExitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 3 || !strings.HasPrefix(lines[0], "LAST ACTIVE (UTC)") ||
			!strings.Contains(lines[1], "f0f0f0f0-000f-400f-800f-00000000000f") || !strings.Contains(lines[1], "high") {
			t.Fatalf("table:\n%s", out)
		}
		code, out, _ = run(t, "sessions", "--clickhouse", addr, "--since", "24h")
		if code != ExitOK || !strings.Contains(out, "no sessions active since") {
			t.Fatalf("empty table: exit %d, %q", code, out)
		}
	})

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"bad risk", []string{"--risk", "severe"}, "--risk"},
		{"bad source", []string{"--source", "aider"}, "--source"},
		{"bad since", []string{"--since", "yesterday"}, "--since"},
		{"bad format", []string{"--format", "csv"}, "--format"},
		{"bad limit", []string{"--limit", "0"}, "--limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := run(t, append([]string{"sessions", "--clickhouse", addr}, tc.args...)...)
			if code != ExitUsage || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d, stderr %q; want exit 2 mentioning %s", code, errOut, tc.want)
			}
		})
	}
}

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 5, 10, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"":                          {},
		"all":                       {},
		"24h":                       now.Add(-24 * time.Hour),
		"90m":                       now.Add(-90 * time.Minute),
		"7d":                        now.Add(-7 * 24 * time.Hour),
		"2w":                        now.Add(-14 * 24 * time.Hour),
		"2026-01-15":                time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC),
		"2026-01-15T10:00:00+02:00": time.Date(2026, 1, 15, 8, 0, 0, 0, time.UTC),
	} {
		got, err := parseSince(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseSince(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"yesterday", "-3d", "0d", "2026-13-01"} {
		if _, err := parseSince(bad, now); err == nil {
			t.Errorf("parseSince(%q) accepted", bad)
		}
	}
}

// A session none of whose records had a time (stored at 1970-01-01) was
// last active at no known time; the table does not say 1970.
func TestSessionsTableSaysUnknownTime(t *testing.T) {
	var b strings.Builder
	sessions := []schema.Session{
		{SessionID: "timed", StartedAt: time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC), EndedAt: time.Date(2026, 1, 15, 10, 5, 0, 0, time.UTC)},
		{SessionID: "untimed", StartedAt: time.Unix(0, 0).UTC(), EndedAt: time.Unix(0, 0).UTC()},
	}
	if err := writeSessionsTable(&b, listed(sessions), chstore.SessionFilter{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "2026-01-15 10:05") || !strings.HasPrefix(lines[2], "unknown ") || strings.Contains(b.String(), "1970") {
		t.Fatalf("table:\n%s", b.String())
	}
}

// Risky answers whose inputs are uncertain are graded at their worst, so
// the RISKY column counts them; it says how many of them only may be that
// risky. A session row stored before they were counted says nothing of it.
func TestSessionsTableSaysRiskyAnswersOnUncertainInputs(t *testing.T) {
	var b strings.Builder
	at := time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)
	sessions := []schema.Session{
		{SessionID: "some-may", Source: schema.HarnessClaudeCode, StartedAt: at, EndedAt: at, Answers: 4, RiskyAnswers: 3, RiskyAnswersUncertain: schema.Known(2), MaxRisk: schema.RiskHigh},
		{SessionID: "none-may", Source: schema.HarnessClaudeCode, StartedAt: at, EndedAt: at, Answers: 4, RiskyAnswers: 3, RiskyAnswersUncertain: schema.Known(0), MaxRisk: schema.RiskHigh},
		{SessionID: "not-counted", Source: schema.HarnessClaudeCode, StartedAt: at, EndedAt: at, Answers: 4, RiskyAnswers: 3, MaxRisk: schema.RiskHigh},
	}
	if err := writeSessionsTable(&b, listed(sessions), chstore.SessionFilter{}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"some-may": "3 (2 may)", "none-may": "3", "not-counted": "3"}
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n")[1:] {
		f := strings.Fields(line)
		id := f[2]
		// When, session, source, turns, calls, truncated, silent, answers;
		// then RISKY up to MAX RISK and PROJECT.
		if got := strings.Join(f[9:len(f)-2], " "); got != want[id] {
			t.Errorf("%s: RISKY %q, want %q in:\n%s", id, got, want[id], b.String())
		}
	}
}

// A collector that dropped a session's buffer before its end (its call
// limit, or an eviction it could not park) stored the row of the calls it
// held first, and the later buffer's partial row ranks below it
// (docs/design.md §10.3): the stored row counts 2 of the session's 4 calls
// and none of its answer, and ends where the first buffer ended. sessions
// shows it recounted from the stored records — as its postmortem does —
// ordered by the recounted end, marked in the table and in the JSON; a
// session whose row counts what is stored is shown as its row.
func TestSessionsRecountsAnUndercountingRow(t *testing.T) {
	ctx := context.Background()
	addr, s := chtest.NewDatabase(t)
	t0 := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	call := func(session, id string, at time.Duration, kind schema.TruncationKind) schema.ToolCall {
		c := schema.ToolCall{SessionID: session, CallID: id, Tool: "Read", Timestamp: t0.Add(at), Source: schema.HarnessClaudeCode,
			Turn: schema.KnownTurn(0), Analysis: schema.Analysis{Done: true, Records: 5}}
		c.Kind, c.Truncated = kind, kind != schema.KindNone
		return c
	}
	split := []schema.ToolCall{
		call("split", "toolu_1", 0, schema.KindExplicit), call("split", "toolu_2", time.Minute, schema.KindNone),
		call("split", "toolu_3", 2*time.Minute, schema.KindSilent), call("split", "toolu_4", 3*time.Minute, schema.KindNone),
	}
	answer := schema.Answer{SessionID: "split", MessageID: "msg_1", Timestamp: t0.Add(4*time.Minute + 300*time.Millisecond), Turn: schema.KnownTurn(0),
		Source: schema.HarnessClaudeCode, Risk: schema.RiskHigh, Verdict: "rests on a cut read", Analysis: schema.Analysis{Done: true, Records: 5}}
	meta := schema.Session{SessionID: "split", Source: schema.HarnessClaudeCode, Cwd: "/srv/app", StartedAt: t0, Turns: schema.Known(1)}
	first := analysis.Counts(meta, split[:2], nil)
	first.EndedAt, first.Analysis = t0.Add(time.Minute), schema.Analysis{Done: true, Records: 2}
	later := analysis.Counts(meta, split[2:], []schema.Answer{answer})
	later.StartedAt, later.EndedAt, later.Analysis = t0.Add(2*time.Minute), answer.Timestamp, schema.Analysis{Done: true, Partial: true, Records: 3}
	// A session whose row counts its one call, active after the split
	// session's first buffer and before its answer.
	whole := []schema.ToolCall{call("whole", "toolu_w", 2*time.Minute, schema.KindNone)}
	wholeRow := analysis.Counts(schema.Session{SessionID: "whole", Source: schema.HarnessCodex, StartedAt: t0.Add(2 * time.Minute)}, whole, nil)
	wholeRow.EndedAt, wholeRow.Analysis = t0.Add(150*time.Second), schema.Analysis{Done: true, Records: 1}
	for _, err := range []error{
		s.WriteToolCalls(ctx, append(split, whole...)), s.WriteAnswers(ctx, []schema.Answer{answer}),
		s.WriteSessions(ctx, []schema.Session{first, wholeRow}), s.WriteSessions(ctx, []schema.Session{later}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if row, _, err := s.SessionRow(ctx, "split"); err != nil || row.ToolCalls != 2 || row.Answers != 0 {
		t.Fatalf("stored row: %d calls, %d answers (%v); want the first buffer's 2 and 0: the test shows nothing", row.ToolCalls, row.Answers, err)
	}

	code, out, errOut := run(t, "sessions", "--clickhouse", addr, "--format", "json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got []struct {
		SessionID      string    `json:"session_id"`
		ToolCalls      int       `json:"tool_calls"`
		TruncatedCalls int       `json:"truncated_calls"`
		SilentCalls    int       `json:"silent_calls"`
		Answers        int       `json:"answers"`
		RiskyAnswers   int       `json:"risky_answers"`
		MaxRisk        string    `json:"max_risk"`
		StartedAt      time.Time `json:"started_at"`
		EndedAt        time.Time `json:"ended_at"`
		Recounted      *bool     `json:"recounted"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("decode: %v\n%s", err, out)
	}
	if len(got) != 2 || got[0].SessionID != "split" || got[1].SessionID != "whole" {
		t.Fatalf("listed %+v; want split (last active at its answer) before whole", got)
	}
	sp := got[0]
	if sp.Recounted == nil || !*sp.Recounted || sp.ToolCalls != 4 || sp.TruncatedCalls != 2 || sp.SilentCalls != 1 ||
		sp.Answers != 1 || sp.RiskyAnswers != 1 || sp.MaxRisk != "high" {
		t.Errorf("split: %+v; want recounted, 4 calls (2 truncated, 1 silently), 1 risky answer, high", sp)
	}
	if !sp.StartedAt.Equal(t0) || !sp.EndedAt.Equal(t0.Add(4*time.Minute)) {
		t.Errorf("split spans %s–%s; want %s–%s (its answer's time in whole seconds)", sp.StartedAt, sp.EndedAt, t0, t0.Add(4*time.Minute))
	}
	if w := got[1]; w.Recounted == nil || *w.Recounted || w.ToolCalls != 1 {
		t.Errorf("whole: %+v; want its row, not recounted", w)
	}

	code, out, errOut = run(t, "sessions", "--clickhouse", addr)
	if code != ExitOK {
		t.Fatalf("table: exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "split") || !strings.Contains(lines[1], " 4* ") || strings.Contains(lines[2], "*") {
		t.Errorf("table does not mark the recounted calls:\n%s", out)
	}
	if !strings.Contains(errOut, "1 session marked * counted from the stored calls and answers") {
		t.Errorf("stderr does not say why: %q", errOut)
	}
}

// A session that went on after its collector dropped its buffer is stored
// with the first buffer's row: ending before its later records, graded by
// the first buffer's answers. The filters select by rows, yet the session
// as recounted matches them, so sessions finds it by its records analysed
// by the later, partial buffer: "split" (its row: 2 calls up to t0+1m, no
// answer; stored: 4 calls up to t0+4m and a high-risk answer) is active
// since t0+3m, high risk, and the most recent session; "calm" went on too
// but its recount has no risk; "other"'s row is what is stored of it.
func TestSessionsFindsASessionThatWentOnPastItsRow(t *testing.T) {
	ctx := context.Background()
	addr, s := chtest.NewDatabase(t)
	t0 := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	whole := schema.Analysis{Done: true, Records: 2}
	later := schema.Analysis{Done: true, Partial: true, Records: 3}
	call := func(session, id string, at time.Duration, kind schema.TruncationKind, a schema.Analysis) schema.ToolCall {
		c := schema.ToolCall{SessionID: session, CallID: id, Tool: "Read", Timestamp: t0.Add(at), Source: schema.HarnessClaudeCode,
			Turn: schema.KnownTurn(0), Analysis: a}
		c.Kind, c.Truncated = kind, kind != schema.KindNone
		return c
	}
	row := func(id string, calls []schema.ToolCall, answers []schema.Answer, start, end time.Duration, a schema.Analysis) schema.Session {
		r := analysis.Counts(schema.Session{SessionID: id, Source: schema.HarnessClaudeCode, StartedAt: t0.Add(start), Turns: schema.Known(1)}, calls, answers)
		r.EndedAt, r.Analysis = t0.Add(end), a
		return r
	}
	split := []schema.ToolCall{
		call("split", "toolu_1", 0, schema.KindNone, whole), call("split", "toolu_2", time.Minute, schema.KindNone, whole),
		call("split", "toolu_3", 2*time.Minute, schema.KindSilent, later), call("split", "toolu_4", 3*time.Minute, schema.KindNone, later),
	}
	answer := schema.Answer{SessionID: "split", MessageID: "msg_1", Timestamp: t0.Add(4 * time.Minute), Turn: schema.KnownTurn(0),
		Source: schema.HarnessClaudeCode, Risk: schema.RiskHigh, Verdict: "rests on a silently cut read", Analysis: later}
	calm := []schema.ToolCall{call("calm", "toolu_c1", 0, schema.KindNone, whole), call("calm", "toolu_c2", 210*time.Second, schema.KindNone, later)}
	other := []schema.ToolCall{call("other", "toolu_o", 200*time.Second, schema.KindNone, whole)}
	for _, err := range []error{
		s.WriteToolCalls(ctx, slices.Concat(split, calm, other)), s.WriteAnswers(ctx, []schema.Answer{answer}),
		s.WriteSessions(ctx, []schema.Session{
			row("split", split[:2], nil, 0, time.Minute, whole),
			row("calm", calm[:1], nil, 0, 0, whole),
			row("other", other, nil, 200*time.Second, 200*time.Second, whole),
		}),
		s.WriteSessions(ctx, []schema.Session{
			row("split", split[2:], []schema.Answer{answer}, 2*time.Minute, 4*time.Minute, later),
			row("calm", calm[1:], nil, 210*time.Second, 210*time.Second, later),
		}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"split", "calm"} {
		if r, _, err := s.SessionRow(ctx, id); err != nil || r.ToolCalls != 1 && id == "calm" || r.ToolCalls != 2 && id == "split" || r.MaxRisk == schema.RiskHigh {
			t.Fatalf("stored row of %s: %+v (%v); want the first buffer's: the test shows nothing", id, r, err)
		}
	}

	listed := func(args ...string) (ids []string, errOut string) {
		t.Helper()
		code, out, errOut := run(t, append([]string{"sessions", "--clickhouse", addr, "--format", "json"}, args...)...)
		if code != ExitOK {
			t.Fatalf("sessions %v: exit %d: %s", args, code, errOut)
		}
		var got []struct {
			SessionID string `json:"session_id"`
			ToolCalls int    `json:"tool_calls"`
			MaxRisk   string `json:"max_risk"`
			Recounted bool   `json:"recounted"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("decode: %v\n%s", err, out)
		}
		for _, g := range got {
			ids = append(ids, g.SessionID)
			if g.SessionID == "split" && (!g.Recounted || g.ToolCalls != 4 || g.MaxRisk != "high") {
				t.Errorf("sessions %v: split %+v; want recounted, 4 calls, high", args, g)
			}
		}
		return ids, errOut
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		// By rows: other (t0+3m20s), calm (t0), split (t0+1m) are not since t0+3m.
		{[]string{"--since", t0.Add(3 * time.Minute).Format(time.RFC3339)}, []string{"split", "calm", "other"}},
		// By rows none is high.
		{[]string{"--risk", "high"}, []string{"split"}},
		{[]string{"--risk", "high", "--since", t0.Add(230 * time.Second).Format(time.RFC3339)}, []string{"split"}},
		// By rows other is the most recent.
		{[]string{"--limit", "1"}, []string{"split"}},
		{[]string{"--source", "codex"}, nil},
	} {
		got, errOut := listed(c.args...)
		if !slices.Equal(got, c.want) {
			t.Errorf("sessions %v: %v; want %v (stderr %q)", c.args, got, c.want, errOut)
		}
	}
	if _, errOut := listed("--limit", "1"); !strings.Contains(errOut, "showing the most recently active session") {
		t.Errorf("--limit 1 does not say the limit hid sessions: %q", errOut)
	}
}

// Beyond maxContinuedSessions sessions that went on, sessions says that the
// rest are listed by their rows alone; up to it, nothing.
func TestSessionsSaysWhenTooManyWentOn(t *testing.T) {
	ctx := context.Background()
	addr, s := chtest.NewDatabase(t)
	t0 := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	var calls []schema.ToolCall
	for i := range maxContinuedSessions + 1 {
		calls = append(calls, schema.ToolCall{SessionID: fmt.Sprintf("went-on-%04d", i), CallID: "toolu_1", Tool: "Read",
			Timestamp: t0.Add(time.Duration(i) * time.Second), Source: schema.HarnessClaudeCode,
			Analysis: schema.Analysis{Done: true, Partial: true, Records: 1}})
	}
	note := fmt.Sprintf("more than %d sessions went on after a collector dropped their buffer", maxContinuedSessions)
	for _, n := range []int{maxContinuedSessions, maxContinuedSessions + 1} {
		if err := s.WriteToolCalls(ctx, calls[:n]); err != nil {
			t.Fatal(err)
		}
		code, _, errOut := run(t, "sessions", "--clickhouse", addr)
		if code != ExitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if want := n > maxContinuedSessions; strings.Contains(errOut, note) != want {
			t.Errorf("with %d sessions that went on, stderr %q; want the note: %v", n, errOut, want)
		}
	}
}

// The note that --limit hid sessions counts what it shows in words that
// fit: one session, or N of them.
func TestHiddenNoteByLimit(t *testing.T) {
	for limit, want := range map[int]string{
		1: "showing the most recently active session; --limit lists more",
		3: "showing the 3 most recently active sessions; --limit lists more",
	} {
		got, err := hiddenNote(nil, chstore.SessionFilter{Limit: limit}, nil, true)
		if err != nil || got != want {
			t.Errorf("limit %d: %q, %v; want %q", limit, got, err, want)
		}
	}
}
