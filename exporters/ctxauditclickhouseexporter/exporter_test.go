package ctxauditclickhouseexporter

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ctxaudit/ctxaudit/collector/otelconv"
	"github.com/ctxaudit/ctxaudit/exporters/ctxauditclickhouseexporter/internal/metadata"
	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/schema"
)

func TestMain(m *testing.M) { chtest.Main(m) }

func TestConfig(t *testing.T) {
	if err := componenttest.CheckConfigStruct(createDefaultConfig()); err != nil {
		t.Fatal(err)
	}
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	load := func(name string) (*Config, error) {
		cfg := createDefaultConfig().(*Config)
		sub, err := cm.Sub(component.NewIDWithName(metadata.Type, name).String())
		if err != nil {
			return nil, err
		}
		if err := sub.Unmarshal(cfg); err != nil {
			return nil, err
		}
		return cfg, confmap.Validate(cfg)
	}
	def, err := load("")
	if err != nil || def.Endpoint == "" || !def.CreateSchema || !def.QueueConfig.HasValue() {
		t.Fatalf("default config: %+v, %v", def, err)
	}
	custom, err := load("custom")
	if err != nil {
		t.Fatal(err)
	}
	if custom.Database != "audit_eu" || custom.CreateSchema || custom.DialTimeout != 2*time.Second ||
		custom.Timeout != 10*time.Second || custom.BackOffConfig.MaxElapsedTime != 0 || custom.QueueConfig.Get().QueueSize != 50 {
		t.Fatalf("custom config: %+v", custom)
	}
	_, err = load("bad")
	if err == nil || !strings.Contains(err.Error(), "endpoint:") || !strings.Contains(err.Error(), "database:") {
		t.Fatalf("bad config: %v; want errors naming endpoint and database", err)
	}
}

// TestExportToClickHouse drives the exporter component directly: traces with
// a call, an answer and a session, and a Claude Code log event, become rows.
func TestExportToClickHouse(t *testing.T) {
	addr := chtest.Address(t)
	cfg := createDefaultConfig().(*Config)
	cfg.Endpoint = addr
	set := exportertest.NewNopSettings(metadata.Type)
	ctx := context.Background()

	te, err := NewFactory().CreateTraces(ctx, set, cfg)
	if err != nil {
		t.Fatal(err)
	}
	le, err := NewFactory().CreateLogs(ctx, set, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []component.Component{te, le} {
		if err := c.Start(ctx, componenttest.NewNopHost()); err != nil {
			t.Fatal(err)
		}
	}

	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	call := schema.ToolCall{SessionID: "exp-1", CallID: "c1", Tool: "Read", Timestamp: at, Source: schema.HarnessPi,
		Forensics: schema.Forensics{Original: schema.Original{Sizes: schema.Sizes{Bytes: schema.Known(75229)}, Source: schema.SourceHarnessMetadata},
			Context: schema.Sizes{Bytes: schema.Known(51190)}, Truncated: true, Kind: schema.KindExplicit, Strategy: schema.StrategyHead}}
	otelconv.AppendToolCall(spans, &call)
	ans := schema.Answer{SessionID: "exp-1", MessageID: "m1", Timestamp: at.Add(time.Second), Text: "done", Risk: schema.RiskMedium,
		Reasons: []string{schema.ReasonExplicitTruncation}, ReasonCalls: map[string][]string{schema.ReasonExplicitTruncation: {"c1"}}}
	otelconv.AppendAnswer(spans, &ans)
	sess := schema.Session{SessionID: "exp-1", Source: schema.HarnessPi, StartedAt: at, EndedAt: at.Add(time.Second), ToolCalls: 1, Answers: 1, MaxRisk: schema.RiskMedium}
	otelconv.AppendSession(spans, &sess)
	// A chat span from other instrumentation (no verdict) is not an answer.
	plain := spans.AppendEmpty()
	plain.Attributes().PutStr(otelconv.AttrOperationName, otelconv.OperationChat)
	plain.Attributes().PutStr(otelconv.AttrConversationID, "exp-1")
	if err := te.ConsumeTraces(ctx, td); err != nil {
		t.Fatal(err)
	}

	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("session.id", "cc-log")
	lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.SetTimestamp(pcommonTS(at))
	lr.Body().SetStr("claude_code.tool_result")
	lr.Attributes().PutStr("event.name", "tool_result")
	lr.Attributes().PutStr("tool_name", "Bash")
	if err := le.ConsumeLogs(ctx, ld); err != nil {
		t.Fatal(err)
	}
	for _, c := range []component.Component{te, le} {
		if err := c.Shutdown(ctx); err != nil { // drains the queue
			t.Fatal(err)
		}
	}

	s := chtest.OpenStore(t, addr)
	calls, err := s.ToolCalls(ctx, "exp-1")
	if err != nil || len(calls) != 1 || calls[0].Original.Bytes != schema.Known(75229) || calls[0].Kind != schema.KindExplicit {
		t.Fatalf("tool calls: %+v, %v", calls, err)
	}
	answers, err := s.Answers(ctx, "exp-1")
	if err != nil || len(answers) != 1 || answers[0].Risk != schema.RiskMedium || answers[0].ReasonCalls[schema.ReasonExplicitTruncation][0] != "c1" {
		t.Fatalf("answers: %+v, %v", answers, err)
	}
	if got, found, err := s.Session(ctx, "exp-1"); err != nil || !found || got.MaxRisk != schema.RiskMedium {
		t.Fatalf("session: %+v found=%v err=%v", got, found, err)
	} else if got.Turns.Known || got.Compactions.Known || got.InputTokens.Known || got.OutputTokens.Known {
		t.Errorf("session stored with %s turns, %s compactions, %s/%s tokens; its span said none",
			got.Turns, got.Compactions, got.InputTokens, got.OutputTokens)
	}
	// No span said its turn: none is stored as turn 0, the first.
	if calls[0].Turn.Known || answers[0].Turn.Known {
		t.Errorf("call stored in turn %s, answer in turn %s; their spans said none", calls[0].Turn, answers[0].Turn)
	}
	logCalls, err := s.ToolCalls(ctx, "cc-log")
	if err != nil || len(logCalls) != 1 || logCalls[0].Source != schema.HarnessClaudeCode || logCalls[0].Kind != schema.KindUnknown {
		t.Fatalf("log row: %+v, %v (no processor ran, so the kind must be unknown, not none)", logCalls, err)
	}
	if logCalls[0].Turn.Known {
		t.Errorf("log row stored in turn %s; the event said none", logCalls[0].Turn)
	}
}

// TestUnreachableAtStart: the exporter starts while ClickHouse is down, and a
// push fails with a retryable error instead of being dropped.
func TestUnreachableAtStart(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Endpoint = "clickhouse://default@127.0.0.1:1/ctxaudit"
	cfg.DialTimeout = 200 * time.Millisecond
	e, err := newExporter(cfg, exportertest.NewNopSettings(metadata.Type), newRollupLeaders())
	if err != nil {
		t.Fatal(err)
	}
	if err := e.start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatalf("start must not fail while ClickHouse is down: %v", err)
	}
	td := ptrace.NewTraces()
	c := schema.ToolCall{SessionID: "s", CallID: "c", Tool: "Read", Timestamp: time.Now()}
	otelconv.AppendToolCall(td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans(), &c)
	if err := e.pushTraces(context.Background(), td); err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("push while down: %v; want an error naming the server", err)
	}
}
