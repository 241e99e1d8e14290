package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxaudit/ctxaudit/collector/ingest"
	"github.com/ctxaudit/ctxaudit/collector/transcript/transcripttest"
	"github.com/ctxaudit/ctxaudit/internal/chtest"
)

// BenchmarkIngestToClickHouse measures end-to-end ingestion — read, parse,
// forensics, session analysis, batched INSERTs — into a real ClickHouse, on
// 40 copies of the real 2.1.6 Claude Code session (each under its own session
// id, with its sub-agent and saved outputs), about 37 MB. Reports MB/s and rows/s.
//
//	go test -run '^$' -bench IngestToClickHouse -benchtime 3x ./internal/cli/
func BenchmarkIngestToClickHouse(b *testing.B) {
	const copies = 40
	src := filepath.Join(transcripttest.FixturesDir(b), "claude-code", "session-2.1.6-637ef6e7")
	const sid = "637ef6e7-e740-4503-8ff8-5780d7c0918f"
	root := b.TempDir()
	var total int64
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for i := 0; i < copies; i++ {
			id := fmt.Sprintf("%08d", i) + sid[8:]
			out := filepath.Join(root, strings.ReplaceAll(rel, sid, id))
			if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
				return err
			}
			text := strings.ReplaceAll(string(data), sid, id)
			if strings.HasSuffix(out, ".jsonl") {
				total += int64(len(text))
			}
			if err := os.WriteFile(out, []byte(text), 0o644); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var rows int
	b.SetBytes(total)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		store := chtest.NewStore(b)
		b.StartTimer()
		sum, err := ingest.Run(ctx, []string{root}, ingest.Options{}, store)
		if err != nil {
			b.Fatal(err)
		}
		rows = sum.ToolCalls + sum.Answers + sum.Sessions
	}
	b.StopTimer()
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
