package forensics

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ctxaudit/ctxaudit/schema"
)

// benchText builds n bytes of realistic tool output without any notice: a
// mix of source code, log lines, JSON and some non-ASCII prose, as Read,
// Bash and Grep return it.
func benchText(n int) string {
	lines := []string{
		"func (s *Server) handle(w http.ResponseWriter, r *http.Request) error {\n",
		"\tif err := s.store.Put(ctx, key, value); err != nil { return fmt.Errorf(\"put %s: %w\", key, err) }\n",
		"2026-01-19T21:18:02.463Z INFO  worker[12] processed batch id=7f3a size=512 latency=12.3ms\n",
		`{"id":"msg_01EwicMwiVdZD44kVWJ5uFzm","type":"message","role":"assistant","usage":{"input_tokens":3}}` + "\n",
		"src/app/main.go:120:\treturn collectFiles(root, opts)\n",
		"Überprüfen Sie die Konfiguration — 配置文件不存在 — résumé naïve café\n",
		"    assert response.status_code == 200, f\"unexpected {response.status_code}\"\n",
	}
	var b strings.Builder
	b.Grow(n + 128)
	for i := 0; b.Len() < n; i++ {
		b.WriteString(lines[i%len(lines)])
	}
	return b.String()[:n]
}

var benchSizes = []int{1 << 10, 64 << 10, 1 << 20}

func sizeName(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%dMB", n>>20)
	}
	return fmt.Sprintf("%dKB", n>>10)
}

func runDetect(b *testing.B, in Input) {
	b.SetBytes(int64(len(in.Context)))
	b.ReportAllocs()
	for b.Loop() {
		Detect(in)
	}
}

// BenchmarkDetectNoMarker is the common case: output with no notice. The
// anchor prefilter keeps it to a few vectorised scans plus the size count.
func BenchmarkDetectNoMarker(b *testing.B) {
	for _, h := range []schema.Harness{schema.HarnessClaudeCode, schema.HarnessCodex, schema.HarnessPi, schema.HarnessGeneric} {
		for _, n := range benchSizes {
			text := benchText(n)
			if h == schema.HarnessCodex {
				text = "Exit code: 0\nWall time: 0.1 seconds\nOutput:\n" + text
			}
			b.Run(fmt.Sprintf("%s/%s", h, sizeName(n)), func(b *testing.B) {
				runDetect(b, Input{Harness: h, Tool: "Bash", Context: text})
			})
		}
	}
}

// BenchmarkDetectMarker: outputs carrying a notice in the middle or at the end.
func BenchmarkDetectMarker(b *testing.B) {
	for _, n := range benchSizes {
		half := benchText(n / 2)
		cases := []struct {
			name string
			in   Input
		}{
			{"claude_chars_truncated", Input{Harness: schema.HarnessClaudeCode, Tool: "Bash",
				Context: half + "\n\n... [480572 characters truncated] ...\n\n" + half}},
			{"codex_omitted_lines", Input{Harness: schema.HarnessCodex, Tool: "shell",
				Context: "Exit code: 0\nWall time: 0.1 seconds\nTotal output lines: 90000\nOutput:\n" + half + "\n[... omitted 80000 of 90000 lines ...]\n\n" + half}},
			{"pi_read_lines", Input{Harness: schema.HarnessPi, Tool: "read",
				Context: half + half + "\n\n[Showing lines 1-1603 of 2377 (50.0KB limit). Use offset=1604 to continue]"}},
			{"generic_all_rules", Input{Harness: schema.HarnessGeneric, Tool: "x",
				Context: half + "\n[... Observation truncated due to length ...]\n" + half}},
		}
		for _, c := range cases {
			b.Run(fmt.Sprintf("%s/%s", c.name, sizeName(n)), func(b *testing.B) { runDetect(b, c.in) })
		}
	}
}
