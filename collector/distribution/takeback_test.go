package distribution_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/collector/distribution"
	"github.com/ctxaudit/ctxaudit/collector/transcript/transcripttest"
	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/internal/cli"
	"github.com/ctxaudit/ctxaudit/internal/collectortest"
)

// TestCollectorTakesBackAnAnswerIngestStored: `ctxaudit ingest` of the real
// 2.1.6 session while Claude Code had written it up to line 20 — the text
// of msg_019SiiKuPg4TsXVmQ7fDS7Ln, whose tool_use is line 21 — stores that
// text as an answer. The collector then tails the whole file: its
// transcript receiver learns the message called a tool and names it on the
// session span, and the exporter takes the stored answer back. The answers
// then read as one ingest of the whole file stores them.
func TestCollectorTakesBackAnAnswerIngestStored(t *testing.T) {
	const session, message = transcripttest.Session216, transcripttest.CutAnswer
	ctx := context.Background()
	whole, lines := transcripttest.Session216MainThread(t)
	watched := t.TempDir()
	path := filepath.Join(watched, session+".jsonl")
	ingest := func(addr string) {
		t.Helper()
		var out, errOut bytes.Buffer
		if code := cli.Run(ctx, []string{"ingest", "--clickhouse", addr, path}, &out, &errOut); code != cli.ExitOK {
			t.Fatalf("ingest: exit %d: %s", code, errOut.String())
		}
	}
	answerIDs := func(addr string) []string {
		t.Helper()
		answers, err := chtest.OpenStore(t, addr).Answers(ctx, session)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, a := range answers {
			ids = append(ids, a.MessageID)
		}
		return ids
	}

	addr := chtest.Address(t)
	if err := os.WriteFile(path, bytes.Join(lines[:20], nil), 0o644); err != nil {
		t.Fatal(err)
	}
	ingest(addr)
	if ids := answerIDs(addr); !slices.Contains(ids, message) {
		t.Fatalf("ingested up to line 20, %s is not stored as an answer (%v): the test shows nothing", message, ids)
	}
	once := chtest.Address(t)
	if err := os.WriteFile(path, whole, 0o644); err != nil {
		t.Fatal(err)
	}
	ingest(once)
	want := answerIDs(once)

	collectortest.Start(t, distribution.Settings("test"), fmt.Sprintf(`
receivers:
  agenttranscripts:
    include: ["%s/*.jsonl"]
    poll_interval: 100ms
    session_idle: 300ms
processors:
  ctxaudit: {session_idle: 300ms}
exporters:
  ctxaudit_clickhouse:
    endpoint: %s
    retry_on_failure: {initial_interval: 100ms, max_interval: 1s}
service:
  pipelines:
    traces: {receivers: [agenttranscripts], processors: [ctxaudit], exporters: [ctxaudit_clickhouse]}
  telemetry:
    metrics: {level: none}
`, watched, addr))
	s := chtest.OpenStore(t, addr)
	collectortest.WaitFor(t, "the stored answer taken back", time.Minute, func() (bool, string) {
		n := collectortest.Scalar(t, s, "SELECT count() FROM DB.answers FINAL WHERE session_id = ? AND message_id = ? AND retracted = 1", session, message)
		return n == "1", "retracted rows of the message: " + n
	})
	if got := answerIDs(addr); !reflect.DeepEqual(got, want) {
		t.Errorf("answers after ingest of the cut file and the collector on the whole: %v, want one ingest's %v", got, want)
	}
}
