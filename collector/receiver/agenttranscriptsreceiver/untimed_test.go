package agenttranscriptsreceiver

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver/internal/metadata"
	"github.com/ctxaudit/ctxaudit/collector/transcript/transcripttest"
	"github.com/ctxaudit/ctxaudit/schema"
)

// A call whose line has no readable timestamp (testdata/repro/…/
// untimed-refetch) stands where its line does on the receiver's path as on
// ingest's: the rows kept through the receiver and the processor are
// ingest's, and the cut fetch it read on from is followed up.
func TestUntimedCallPlacedLikeIngest(t *testing.T) {
	root := t.TempDir()
	copyTree(t, filepath.Join(filepath.Dir(transcripttest.LabDir(t)), "repro", "claude-code@2.1.328", "untimed-refetch", "transcript"), root)
	cfg := testConfig(root)
	h, _ := withMemoryStorage(cfg)
	sink := new(flakySink)
	r := steppedReceiverWith(t, cfg, h, sink, receivertest.NewNopSettings(metadata.Type))
	pollIdle(r)
	require.NoError(t, r.Shutdown(context.Background()))

	got := keptRows(t, throughProcessor(t, sink.AllTraces()))
	oneShot := oneShotRows(t, root, cfg.MaxLineBytes)
	const first, again = "toolu_lab000004", "toolu_lab000007"
	require.True(t, oneShot.calls[first].FollowedUp, "ingest: the cut fetch is followed up")
	require.Equal(t, first, oneShot.calls[again].ContinuationOf, "ingest: the refetch continues the cut fetch")
	require.False(t, schema.TimeKnown(got.calls[again].Timestamp), "the refetch's time is unknown")
	sameRows(t, "tool_calls", oneShot.calls, got.calls, func(w, g *schema.ToolCall) { sameInstant(t, &g.Timestamp, w.Timestamp) })
	sameRows(t, "answers", oneShot.answers, got.answers, func(w, g *schema.Answer) { sameInstant(t, &g.Timestamp, w.Timestamp) })
}
