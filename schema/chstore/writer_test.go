package chstore_test

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/collector/redact"
	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/schema"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

// Every text column is redacted on the way in — String and Array(String)
// alike — with the store's rules (built-in plus configured), and the
// record passed in is left as it was.
func TestWriterRedactsEveryTextColumn(t *testing.T) {
	ctx := context.Background()
	base := chtest.NewStore(t)
	red, err := redact.New([]redact.Pattern{{Name: "acme", Regex: `acme_[a-z0-9]{12}`}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := chstore.Open(ctx, chtest.Address(t), chstore.Options{Database: base.Database(), Redactor: red})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const secret = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"
	const custom = "acme_0123456789ab"
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	call := schema.ToolCall{SessionID: "s1", CallID: "c1", Tool: "Bash", Timestamp: at, Source: schema.HarnessClaudeCode,
		Arguments: `{"command":"GITHUB_TOKEN=` + secret + ` gh pr list"}`, Target: "curl -H 'Authorization: bearer " + secret + "'",
		Forensics: schema.Forensics{NextHint: "see " + custom, Kind: schema.KindNone}}
	answer := schema.Answer{SessionID: "s1", MessageID: "m1", Timestamp: at, Text: "Use token " + secret + " and " + custom,
		InputCallIDs: []string{"c1", custom}, Reasons: []string{"silent_truncation"},
		ReasonCalls: map[string][]string{"silent_truncation": {custom}}}
	out := schema.ToolOutput{SHA256: "ab", Bytes: 10, Text: "export API_KEY=" + custom + " " + secret, FirstSeen: at}
	if err := s.WriteToolCalls(ctx, []schema.ToolCall{call}); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteAnswers(ctx, []schema.Answer{answer}); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteToolOutputs(ctx, []schema.ToolOutput{out}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(call.Arguments, secret) || !strings.Contains(answer.InputCallIDs[1], custom) || out.Redactions != 0 {
		t.Fatal("the writer changed the caller's records")
	}
	var all string
	for _, q := range []string{
		"SELECT concat(arguments, target, next_hint) FROM DB.tool_calls",
		"SELECT concat(text, arrayStringConcat(input_call_ids, ' '), arrayStringConcat(arrayMap(x -> arrayStringConcat(x, ' '), reason_calls), ' ')) FROM DB.answers",
		"SELECT concat(text, ' ', toString(redactions)) FROM DB.tool_outputs",
	} {
		var v string
		if err := s.Conn().QueryRow(ctx, strings.ReplaceAll(q, "DB.", s.Database()+".")).Scan(&v); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		all += v + "\n"
	}
	if strings.Contains(all, secret) || strings.Contains(all, custom) {
		t.Fatalf("stored text holds a secret:\n%s", all)
	}
	if !strings.Contains(all, "GITHUB_TOKEN=[REDACTED]") || !strings.Contains(all, "[REDACTED] 2\n") {
		t.Fatalf("stored text lacks the placeholders or the output's redaction count:\n%s", all)
	}
}

// A tool-call row that knows its session analysis is not replaced by a
// pass-through row of the same call written later (a replay from a
// persistent queue after a crash).
func TestAnalysedRowOutranksLaterPassThrough(t *testing.T) {
	ctx := context.Background()
	s := chtest.NewStore(t)
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	read := schema.ToolCall{SessionID: "s1", CallID: "c1", Tool: "Read", Timestamp: at, Forensics: schema.Forensics{Kind: schema.KindNone}}
	analysed := read
	analysed.SessionCoverage, analysed.FollowedUp = schema.KnownRatio(0.4), true
	analysed.Analysis = schema.Analysis{Done: true, Records: 1}
	for _, rows := range [][]schema.ToolCall{{read}, {analysed}, {read}} {
		if err := s.WriteToolCalls(ctx, rows); err != nil {
			t.Fatal(err)
		}
	}
	var got string
	if err := s.Conn().QueryRow(ctx, "SELECT concat(ifNull(toString(session_coverage), 'null'), ' ', toString(followed_up)) FROM "+
		s.Database()+".tool_calls FINAL WHERE call_id = 'c1'").Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != "0.4 1" {
		t.Fatalf("row after replay: %q, want the analysed row (0.4 1)", got)
	}
}

// BenchmarkWriteToolCalls is one of the collector's INSERTs under the
// collector benchmark's load (internal/benchcollector): 10,000 analysed calls,
// its emissions' size, each with the few fields an execute_tool span of that
// load carries and the verdict forensics gives it — a third cut around a
// marker, 31% with a reported original size. Wall time includes the server's;
// the client's CPU per row is what the collector pays.
func BenchmarkWriteToolCalls(b *testing.B) {
	ctx := context.Background()
	s := chtest.NewStore(b)
	ts := time.Date(2026, 1, 19, 21, 18, 2, 0, time.UTC)
	rows := make([]schema.ToolCall, 10000)
	for i := range rows {
		size := uint64(2048 + i*37%6144)
		c := schema.ToolCall{
			SessionID: fmt.Sprintf("bench-run-%06d", i/50), CallID: fmt.Sprintf("call-%08d", i), Tool: "Bash",
			Timestamp: ts.Add(time.Duration(i) * time.Millisecond), Source: schema.HarnessClaudeCode,
			Forensics: schema.Forensics{
				Original: schema.Original{Source: schema.SourceUnknown},
				Context:  schema.Sizes{Bytes: schema.Known(size), Chars: schema.Known(size), Lines: schema.Known(size / 64)},
				Kind:     schema.KindNone, Strategy: schema.StrategyNone, Detector: "generic.complete",
			},
			Analysis: schema.Analysis{Done: true, Records: 50},
		}
		if i%3 == 0 {
			c.Truncated, c.Kind, c.Strategy, c.Detector = true, schema.KindExplicit, schema.StrategyHeadTail, "claude_code.chars_truncated"
			c.Marker = fmt.Sprintf("... [%d characters truncated] ...", 10000+i)
			c.Original = schema.Original{Sizes: schema.Sizes{Chars: schema.Known(size + 10000 + uint64(i))},
				Source: schema.SourceMarker, Precision: schema.PrecisionExact}
			c.Disclosure = schema.Disclosure{Range: true}
		}
		if i%100 < 31 {
			c.Original.Bytes, c.Original.Source, c.Original.Precision = schema.Known(size*3), schema.SourceOTelAttribute, schema.PrecisionExact
		}
		rows[i] = c
	}
	b.ReportAllocs()
	cpu0 := processCPU(b)
	for b.Loop() {
		if err := s.WriteToolCalls(ctx, rows); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((processCPU(b)-cpu0).Nanoseconds())/float64(b.N*len(rows)), "client-cpu-ns/row")
}

// processCPU is this process's user and system CPU time so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
