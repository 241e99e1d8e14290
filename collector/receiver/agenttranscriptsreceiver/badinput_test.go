//go:build unix

package agenttranscriptsreceiver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/ctxaudit/ctxaudit/collector/ingest"
	"github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver/internal/metadata"
	"github.com/ctxaudit/ctxaudit/internal/transcriptgen"
)

// A bad line and a notice pointing at a FIFO are reported at the default
// log level (Info and above) with file:line, counted, and neither stops the
// receiver: the call after them is still emitted.
func TestBadInputReportedAtDefaultLevel(t *testing.T) {
	root := t.TempDir()
	sid := "0f1f0000-0000-4000-8000-0000000000aa"
	project := filepath.Join(root, "claude-code", transcriptgen.CCProject)
	require.NoError(t, os.MkdirAll(filepath.Join(project, sid, "tool-results"), 0o755))
	fifo := filepath.Join(project, sid, "tool-results", "toolu_01Fifo.txt")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))

	cc := transcriptgen.NewClaudeCode(sid, "2.1.6", 2, time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC))
	cc.Assistant("msg_01Fifo", 10, transcriptgen.ToolUse("toolu_01Fifo", "Grep", transcriptgen.Obj{{"pattern", "x"}}))
	cc.Result("toolu_01Fifo", "<persisted-output>\nOutput too large (83.7KB). Full output saved to: "+fifo+
		"\n\nPreview (first 2KB):\nline 1\n...\n</persisted-output>\n", transcriptgen.Obj{{"mode", "content"}, {"numLines", 2000}})
	d := transcriptgen.NewDir(root)
	cc.Save(d)
	require.NoError(t, d.Err())
	path := filepath.Join(project, sid+".jsonl")
	appendFile(t, path, []byte("{not json\n"))
	cc2 := transcriptgen.NewClaudeCode(sid, "2.1.6", 3, time.Date(2026, 11, 30, 10, 1, 0, 0, time.UTC))
	cc2.Assistant("msg_01After", 10, transcriptgen.ToolUse("toolu_01After", "Bash", transcriptgen.Obj{{"command", "ls"}}))
	cc2.Result("toolu_01After", "a\nb\n", transcriptgen.Obj{{"stdout", "a\nb"}, {"stderr", ""}, {"interrupted", false}, {"isImage", false}})
	tmp := t.TempDir()
	d2 := transcriptgen.NewDir(tmp)
	cc2.Save(d2)
	require.NoError(t, d2.Err())
	more, err := os.ReadFile(filepath.Join(tmp, "claude-code", transcriptgen.CCProject, sid+".jsonl"))
	require.NoError(t, err)
	appendFile(t, path, more)

	core, logs := observer.New(zapcore.InfoLevel)
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := receivertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	set.Logger = zap.New(core)
	sink := new(consumertest.TracesSink)
	startReceiver(t, testConfig(root), sink, nil, &set)
	require.Eventually(t, func() bool { return len(toolSpans(sink)) == 2 }, waitFor, 10*time.Millisecond)

	skipped := logs.FilterMessage("Skipped transcript line").All()
	require.Len(t, skipped, 1)
	assert.Equal(t, zapcore.WarnLevel, skipped[0].Level)
	assert.Equal(t, fmt.Sprintf("%s:3", path), skipped[0].ContextMap()["at"])
	refused := logs.FilterMessage("Refused to read a saved tool output").All()
	require.Len(t, refused, 1)
	assert.Equal(t, fmt.Sprintf("%s:2", path), refused[0].ContextMap()["at"])
	assert.Equal(t, ingest.RefuseNotRegular, refused[0].ContextMap()["reason"])
	assert.Equal(t, int64(1), metricSum(t, tel, metadata.MetricSavedRefused, "reason", ingest.RefuseNotRegular))
	assert.Equal(t, int64(1), metricSum(t, tel, metadata.MetricLinesSkipped, "reason", "malformed_json"))
}
