package agenttranscriptsreceiver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/ctxaudit/ctxaudit/collector/forensics"
	"github.com/ctxaudit/ctxaudit/collector/otelconv"
	"github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver/internal/metadata"
	"github.com/ctxaudit/ctxaudit/collector/transcript"
	"github.com/ctxaudit/ctxaudit/collector/transcript/transcripttest"
)

func TestTailsSessionFolder(t *testing.T) {
	root := t.TempDir()
	project := filepath.Join(root, "projects", "-Users-gray-src")
	copyTree(t, fixture216(t), project)
	sink := new(consumertest.TracesSink)
	startReceiver(t, testConfig(root), sink, nil, nil)

	require.Eventually(t, func() bool { return len(toolSpans(sink)) >= session216Main+session216Sub },
		waitFor, 10*time.Millisecond)
	spans := toolSpans(sink)
	require.Len(t, spans, session216Main+session216Sub)
	for id, n := range countByCallID(spans) {
		assert.Equal(t, 1, n, "call %s emitted %d times", id, n)
	}

	var grep *span
	sidechain := 0
	for i := range spans {
		s := spans[i]
		callID := attrStr(s, otelconv.AttrToolCallID)
		assert.Equal(t, metadata.ScopeName, s.scope)
		assert.True(t, otelconv.AnalysedUpstream(s.attrs), "a receiver span must be marked %s, calls as read included", otelconv.AttrAnalysisUpstream)
		assert.Equal(t, otelconv.TraceID(session216), s.traceID, "one trace per session, sub-agent included")
		assert.Equal(t, otelconv.SpanID(session216, "call", callID), s.spanID, "span id derived from the call id")
		assert.Equal(t, otelconv.SpanID(session216, "session", session216), s.parent)
		assert.Equal(t, "claude_code", attrStr(s, otelconv.AttrSource))
		if attrStr(s, otelconv.AttrSidechain) == "true" {
			sidechain++
			assert.Equal(t, "a4d534b", attrStr(s, otelconv.AttrAgentID))
			assert.Contains(t, attrStr(s, otelconv.AttrSourceFile), filepath.Join("subagents", "agent-a4d534b.jsonl"))
		}
		if callID == grep216CallID {
			grep = &spans[i]
		}
	}
	assert.Equal(t, session216Sub, sidechain)
	require.NotNil(t, grep, "line-52 Grep not emitted")
	assert.Equal(t, "execute_tool Grep", grep.name)
	assert.Equal(t, int64(85713), attrInt(t, *grep, forensics.AttrOriginalChars))
	assert.Equal(t, int64(85795), attrInt(t, *grep, forensics.AttrOriginalBytes))
	assert.Equal(t, int64(2153), attrInt(t, *grep, forensics.AttrContextChars))
	assert.Equal(t, "explicit", attrStr(*grep, forensics.AttrTruncationKind))
	assert.Equal(t, "spill_to_file", attrStr(*grep, forensics.AttrStrategy))
	assert.Equal(t, "true", attrStr(*grep, forensics.AttrTruncated))
	assert.Equal(t, int64(52), attrInt(t, *grep, otelconv.AttrSourceLine))
	assert.Equal(t, filepath.Join(project, session216+".jsonl"), attrStr(*grep, otelconv.AttrSourceFile))
	assert.True(t, strings.HasSuffix(attrStr(*grep, forensics.AttrSavedRef), "/tool-results/"+grep216CallID+".txt"))

	// Without session_idle elapsing there is no analysis yet.
	assert.Empty(t, withOp(spansOf(sink.AllTraces()), otelconv.OperationChat))
	assert.Empty(t, withOp(spansOf(sink.AllTraces()), otelconv.OperationInvokeAgent))
}

func TestFollowsGrowthAndNewFiles(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(fixture216(t), session216+".jsonl")
	all := lines(t, src)
	calls := callsOf(t, src)
	main := filepath.Join(root, "projects", "-p", session216+".jsonl")
	writeFile(t, main, all[:30]...)

	sink := new(consumertest.TracesSink)
	startReceiver(t, testConfig(root), sink, nil, nil)

	first := callIDsUpTo(calls, 30)
	require.NotEmpty(t, first)
	require.Eventually(t, func() bool { return len(toolSpans(sink)) == len(first) }, waitFor, 10*time.Millisecond)

	// Lines 31-60 and the first bytes of line 61: the incomplete line must
	// wait for its newline.
	half := all[60][:len(all[60])/2]
	appendFile(t, main, append(all[30:60:60], half)...)
	second := callIDsUpTo(calls, 60)
	require.Eventually(t, func() bool { return len(toolSpans(sink)) == len(second) }, waitFor, 10*time.Millisecond)
	time.Sleep(100 * time.Millisecond) // several polls with the half line present
	assert.Len(t, toolSpans(sink), len(second))

	appendFile(t, main, append([][]byte{all[60][len(half):]}, all[61:]...)...)
	require.Eventually(t, func() bool { return len(toolSpans(sink)) == len(calls) }, waitFor, 10*time.Millisecond)
	got := countByCallID(toolSpans(sink))
	for _, c := range calls {
		assert.Equal(t, 1, got[c.Call.CallID], "call %s (line %d)", c.Call.CallID, c.Call.SourceLine)
	}

	// A new file in a new folder is picked up.
	codexSrc := filepath.Join(transcripttest.ExamplesDir(t), "codex")
	copyTree(t, codexSrc, filepath.Join(root, "codex"))
	require.Eventually(t, func() bool {
		for _, s := range toolSpans(sink) {
			if attrStr(s, otelconv.AttrSource) == "codex" {
				return true
			}
		}
		return false
	}, waitFor, 10*time.Millisecond)
	for id, n := range countByCallID(toolSpans(sink)) {
		assert.Equal(t, 1, n, "call %s", id)
	}
}

func TestExclude(t *testing.T) {
	root := t.TempDir()
	copyTree(t, fixture216(t), filepath.Join(root, "projects", "-p"))
	cfg := testConfig(root)
	cfg.Exclude = []string{filepath.Join(root, "**", "subagents", "**")}
	sink := new(consumertest.TracesSink)
	startReceiver(t, cfg, sink, nil, nil)

	require.Eventually(t, func() bool { return len(toolSpans(sink)) == session216Main }, waitFor, 10*time.Millisecond)
	time.Sleep(100 * time.Millisecond)
	spans := toolSpans(sink)
	assert.Len(t, spans, session216Main)
	for _, s := range spans {
		// A flag is written only when true (docs/attributes.md): no main
		// thread call carries ctxaudit.sidechain.
		assert.Empty(t, attrStr(s, otelconv.AttrSidechain), "excluded sub-agent call %s", s.name)
	}
}

func TestStartAtEnd(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(fixture216(t), session216+".jsonl")
	all := lines(t, src)
	calls := callsOf(t, src)
	main := filepath.Join(root, "projects", "-p", session216+".jsonl")
	writeFile(t, main, all[:40]...)

	store := newMemStorage()
	storageID := component.MustNewID("memory")
	cfg := testConfig(root)
	cfg.StartAt = StartAtEnd
	cfg.StorageID = &storageID
	sink := new(consumertest.TracesSink)
	startReceiver(t, cfg, sink, host{ext: map[component.ID]component.Component{storageID: store}}, nil)

	// The first poll skips the history and checkpoints its end.
	require.Eventually(t, func() bool {
		cp, ok := store.checkpoint(t, main)
		return ok && cp.Line == 40
	}, waitFor, 10*time.Millisecond)
	assert.Zero(t, sink.SpanCount())

	appendFile(t, main, all[40:]...)
	want := len(calls) - len(callIDsUpTo(calls, 40))
	require.Eventually(t, func() bool { return len(toolSpans(sink)) == want }, waitFor, 10*time.Millisecond)
	for _, s := range toolSpans(sink) {
		assert.Greater(t, attrInt(t, s, otelconv.AttrSourceLine), int64(40))
	}

	// Files that appear later are read from the beginning.
	sub := filepath.Join(fixture216(t), session216, "subagents")
	copyTree(t, sub, filepath.Join(root, "projects", "-p", session216, "subagents"))
	require.Eventually(t, func() bool { return len(toolSpans(sink)) == want+session216Sub }, waitFor, 10*time.Millisecond)
}

func TestReplacedFileStartsOver(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "a", "transcript.jsonl")
	copyFile := func(src string) {
		b, err := os.ReadFile(src)
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, b, 0o644))
	}
	copyFile(filepath.Join(fixture216(t), session216+".jsonl"))

	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := receivertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	sink := new(consumertest.TracesSink)
	startReceiver(t, testConfig(root), sink, nil, &set)
	require.Eventually(t, func() bool { return len(toolSpans(sink)) == session216Main }, waitFor, 10*time.Millisecond)

	// Rewritten in place with another session (a different first KiB and
	// a shorter file): read again from the start, in its own format.
	matches, err := filepath.Glob(filepath.Join(transcripttest.ExamplesDir(t), "codex", "*", "*", "*", "*.jsonl"))
	require.NoError(t, err)
	require.Len(t, matches, 1)
	copyFile(matches[0])
	require.Eventually(t, func() bool {
		for _, s := range toolSpans(sink) {
			if attrStr(s, otelconv.AttrSource) == "codex" {
				return true
			}
		}
		return false
	}, waitFor, 10*time.Millisecond)
	assert.Equal(t, int64(1), metricSum(t, tel, metadata.MetricFilesReset, "", ""))
}

func TestMetrics(t *testing.T) {
	root := t.TempDir()
	project := filepath.Join(root, "projects", "-p")
	copyTree(t, fixture216(t), project)
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := receivertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	sink := new(consumertest.TracesSink)
	startReceiver(t, testConfig(root), sink, nil, &set)

	main := filepath.Join(project, session216+".jsonl")
	sub := filepath.Join(project, session216, "subagents", "agent-a4d534b.jsonl")
	wantLines := int64(len(lines(t, main)) + len(lines(t, sub)))
	require.Eventually(t, func() bool {
		return metricSum(t, tel, metadata.MetricLinesRead, "", "") == wantLines
	}, waitFor, 10*time.Millisecond)
	assert.Equal(t, wantLines, metricSum(t, tel, metadata.MetricLinesRead, "source", "claude-code"))
	require.Eventually(t, func() bool {
		return metricSum(t, tel, metadata.MetricToolCalls, "", "") == session216Main+session216Sub
	}, waitFor, 10*time.Millisecond)
	assert.Equal(t, int64(1), metricSum(t, tel, metadata.MetricToolCalls, "truncation_kind", "explicit"))
	assert.Zero(t, metricSum(t, tel, metadata.MetricLinesSkipped, "", ""))

	appendFile(t, main, []byte("this is not json\n"), []byte(`{"type":"user","sessionId":"`+session216+`","message":{"content":[{"type":"tool_result"}]}}`+"\n"))
	require.Eventually(t, func() bool {
		return metricSum(t, tel, metadata.MetricLinesSkipped, "reason", "malformed_json") == 1 &&
			metricSum(t, tel, metadata.MetricLinesSkipped, "", "") == 2
	}, waitFor, 10*time.Millisecond)
	assert.Equal(t, wantLines+2, metricSum(t, tel, metadata.MetricLinesRead, "", ""))

	// The standard receiver metrics count the accepted spans.
	m, err := tel.GetMetric("otelcol_receiver_accepted_spans")
	require.NoError(t, err)
	assert.NotNil(t, m.Data)
}

func TestBadInputNeverStopsTheReceiver(t *testing.T) {
	root := t.TempDir()
	garbage := filepath.Join(root, "garbage.jsonl")
	writeFile(t, garbage, []byte{0xff, 0xfe, 0, 1, '\n'}, []byte("{\"type\":\n"), []byte(strings.Repeat("x", 300<<10)+"\n"),
		[]byte(`{"type":"assistant","message":{"content":[{"type":"tool_use"}]}}`+"\n"), []byte("[1,2,3]\n"), []byte("\n"))
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := receivertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()

	cfg := testConfig(root)
	cfg.Source = "claude-code"
	cfg.MaxLineBytes = 256 << 10 // above the fixture's longest line (97,586 bytes)
	sink := new(consumertest.TracesSink)
	startReceiver(t, cfg, sink, nil, &set)
	require.Eventually(t, func() bool {
		return metricSum(t, tel, metadata.MetricLinesRead, "", "") == 6
	}, waitFor, 10*time.Millisecond)
	assert.Equal(t, int64(1), metricSum(t, tel, metadata.MetricLinesSkipped, "reason", "line_too_long"))
	assert.GreaterOrEqual(t, metricSum(t, tel, metadata.MetricLinesSkipped, "reason", "malformed_json"), int64(2))

	// Still tailing: a real session written next to it is read.
	copyTree(t, fixture216(t), filepath.Join(root, "p"))
	require.Eventually(t, func() bool { return len(toolSpans(sink)) == session216Main+session216Sub }, waitFor, 10*time.Millisecond)
}

func TestUnknownFormatIsNotTailed(t *testing.T) {
	root := t.TempDir()
	var body [][]byte
	for i := 0; i < transcript.DetectMaxLines+5; i++ {
		body = append(body, []byte(`{"hello":"world"}`+"\n"))
	}
	writeFile(t, filepath.Join(root, "other.jsonl"), body...)
	copyTree(t, fixture216(t), filepath.Join(root, "p"))
	sink := new(consumertest.TracesSink)
	startReceiver(t, testConfig(root), sink, nil, nil)
	require.Eventually(t, func() bool { return len(toolSpans(sink)) == session216Main+session216Sub }, waitFor, 10*time.Millisecond)
}

// Every span the receiver emits sits under a resource naming the receiver
// (service.name, and service.version from the build), whatever the harness.
func TestEmittedResourceNamesTheService(t *testing.T) {
	root := t.TempDir()
	copyTree(t, fixture216(t), filepath.Join(root, "projects", "-Users-gray-src"))
	sink := new(consumertest.TracesSink)
	set := receivertest.NewNopSettings(metadata.Type)
	set.BuildInfo.Version = "1.2.3-test"
	startReceiver(t, testConfig(root), sink, nil, &set)
	require.Eventually(t, func() bool { return len(toolSpans(sink)) >= session216Main+session216Sub },
		waitFor, 10*time.Millisecond)

	spans := 0
	for _, td := range sink.AllTraces() {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			name, _ := rs.Resource().Attributes().Get(string(semconv.ServiceNameKey))
			version, _ := rs.Resource().Attributes().Get(string(semconv.ServiceVersionKey))
			assert.Equal(t, "ctxaudit-agenttranscripts", name.AsString())
			assert.Equal(t, "1.2.3-test", version.AsString())
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				spans += rs.ScopeSpans().At(j).Spans().Len()
			}
		}
	}
	assert.GreaterOrEqual(t, spans, session216Main+session216Sub)
}
