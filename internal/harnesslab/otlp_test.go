package harnesslab

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/ctxaudit/ctxaudit/collector/processor/ctxauditprocessor"
	"github.com/ctxaudit/ctxaudit/exporters/ctxauditclickhouseexporter"
	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/schema"
)

func TestMain(m *testing.M) { chtest.Main(m) }

// TestClaudeCodeOTLPAgreesWithTranscript replays the OTLP log events Claude
// Code exported during a lab run through the collector's own components
// (ctxaudit processor → ctxaudit_clickhouse exporter → ClickHouse) and
// compares each row with the same call's row from the transcript and with
// the run's truth: the same call, session and tool, and nothing stated that
// the event cannot know (the event carries sizes, never the text the model
// saw, so a verdict it cannot reach must be unknown, not "none").
func TestClaudeCodeOTLPAgreesWithTranscript(t *testing.T) {
	runs, err := filepath.Glob(filepath.Join("..", "..", "testdata", "lab", "claude-code@*", "*", OTLPFile))
	if err != nil || len(runs) == 0 {
		t.Fatalf("no recorded OTLP events: %v", err)
	}
	for _, otlpFile := range runs {
		dir := filepath.Dir(otlpFile)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			ctx := context.Background()
			truth, err := ReadTruth(dir)
			if err != nil {
				t.Fatal(err)
			}
			calls, _, err := Records(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			addr, store := chtest.NewDatabase(t)
			ef := ctxauditclickhouseexporter.NewFactory()
			ecfg := ef.CreateDefaultConfig().(*ctxauditclickhouseexporter.Config)
			ecfg.Endpoint = addr
			exp, err := ef.CreateLogs(ctx, exportertest.NewNopSettings(ef.Type()), ecfg)
			if err != nil {
				t.Fatal(err)
			}
			pf := ctxauditprocessor.NewFactory()
			proc, err := pf.CreateLogs(ctx, processortest.NewNopSettings(pf.Type()), pf.CreateDefaultConfig(), exp)
			if err != nil {
				t.Fatal(err)
			}
			host := componenttest.NewNopHost()
			if err := exp.Start(ctx, host); err != nil {
				t.Fatal(err)
			}
			if err := proc.Start(ctx, host); err != nil {
				t.Fatal(err)
			}
			events := replay(t, otlpFile, func(ld plog.Logs) error { return proc.ConsumeLogs(ctx, ld) })
			if err := proc.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
			if err := exp.Shutdown(ctx); err != nil { // drains the queue
				t.Fatal(err)
			}
			if events != len(calls) {
				t.Fatalf("%d claude_code.tool_result events, %d calls in the transcript", events, len(calls))
			}
			rows, err := store.ToolCalls(ctx, calls[0].SessionID)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != len(calls) {
				t.Fatalf("%d event rows in the transcript's session, want %d", len(rows), len(calls))
			}
			byID := map[string]schema.ToolCall{}
			for _, r := range rows {
				byID[r.CallID] = r
			}
			for i, c := range calls {
				r, ok := byID[c.CallID]
				if !ok {
					t.Fatalf("no event row for call %s", c.CallID)
				}
				if r.Tool != c.Tool || r.Source != c.Source {
					t.Errorf("call %s: event row %s/%s, transcript %s/%s", c.CallID, r.Source, r.Tool, c.Source, c.Tool)
				}
				if r.Kind != schema.KindUnknown && (r.Kind != c.Kind || r.Truncated != c.Truncated || r.Strategy != c.Strategy) {
					t.Errorf("call %s: event row says %s, transcript %s", c.CallID, Describe(r), Describe(c))
				}
				view := recordView(r)
				prec := precisionOf(view)
				for unit, rec := range map[string]*uint64{"bytes": view.Original.Bytes, "chars": view.Original.Chars, "lines": view.Original.Lines} {
					if rec == nil {
						continue
					}
					st, ok := truth.Calls[i].Original[unit]
					if !ok {
						t.Errorf("call %s: event row states original %s %d, which the truth does not know", c.CallID, unit, *rec)
						continue
					}
					if msg := sizeOK(unit, st, rec, prec); msg != "" {
						t.Errorf("call %s: event row: %s", c.CallID, msg)
					}
				}
				for unit, pair := range map[string][2]schema.Count{"bytes": {r.Context.Bytes, c.Context.Bytes}, "chars": {r.Context.Chars, c.Context.Chars}} {
					if pair[0].Known && pair[0] != pair[1] {
						t.Errorf("call %s: event row context %s %s, transcript %s", c.CallID, unit, pair[0], pair[1])
					}
				}
			}
		})
	}
}

// replay feeds each recorded OTLP/HTTP JSON request to consume and returns
// the number of claude_code.tool_result records seen.
func replay(t *testing.T, path string, consume func(plog.Logs) error) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var um plog.JSONUnmarshaler
	n, line := 0, 0
	for sc.Scan() {
		line++
		ld, err := um.UnmarshalLogs(sc.Bytes())
		if err != nil {
			t.Fatalf("%s:%d: %v", path, line, err)
		}
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			sls := ld.ResourceLogs().At(i).ScopeLogs()
			for j := 0; j < sls.Len(); j++ {
				lrs := sls.At(j).LogRecords()
				for k := 0; k < lrs.Len(); k++ {
					if lrs.At(k).Body().Str() == "claude_code.tool_result" {
						n++
					}
				}
			}
		}
		if err := consume(ld); err != nil {
			t.Fatalf("%s:%d: %v", path, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}
