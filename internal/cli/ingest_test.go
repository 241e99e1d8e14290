package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxaudit/ctxaudit/collector/transcript/transcripttest"
	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

const mainSession = "637ef6e7-e740-4503-8ff8-5780d7c0918f"

func queryCount(t *testing.T, s *chstore.Store, sql string) uint64 {
	t.Helper()
	var n uint64
	if err := s.Conn().QueryRow(context.Background(), strings.ReplaceAll(sql, "DB.", s.Database()+".")).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// TestIngestFixturesIntoClickHouse ingests every real fixture through the CLI
// into a real server, checks the stored figures, then ingests again and
// checks that no query result changed.
func TestIngestFixturesIntoClickHouse(t *testing.T) {
	addr := chtest.Address(t)
	fixtures := transcripttest.FixturesDir(t)

	snapshot := func() map[string]uint64 {
		s := chtest.OpenStore(t, addr)
		return map[string]uint64{
			"sessions":       queryCount(t, s, "SELECT count() FROM DB.sessions FINAL"),
			"tool_calls":     queryCount(t, s, "SELECT count() FROM DB.tool_calls FINAL"),
			"answers":        queryCount(t, s, "SELECT count() FROM DB.answers FINAL"),
			"truncated":      queryCount(t, s, "SELECT count() FROM DB.tool_calls FINAL WHERE truncated = 1"),
			"main_calls":     queryCount(t, s, "SELECT count() FROM DB.tool_calls FINAL WHERE session_id = '"+mainSession+"'"),
			"sidechain":      queryCount(t, s, "SELECT count() FROM DB.tool_calls FINAL WHERE session_id = '"+mainSession+"' AND sidechain = 1"),
			"main_answers":   queryCount(t, s, "SELECT count() FROM DB.answers FINAL WHERE session_id = '"+mainSession+"'"),
			"line52_matches": queryCount(t, s, "SELECT count() FROM DB.tool_calls FINAL WHERE session_id = '"+mainSession+"' AND source_line = 52 AND tool = 'Grep' AND context_chars = 2153 AND original_chars = 85713 AND original_bytes = 85795 AND strategy = 'spill_to_file' AND truncation_kind = 'explicit' AND original_source = 'saved_file' AND saved_ref LIKE '%toolu_01PRASLbbpSRmj2CjAaB1NP4.txt'"),
			"null_originals": queryCount(t, s, "SELECT count() FROM DB.tool_calls FINAL WHERE original_bytes IS NULL"),
			"zero_not_null":  queryCount(t, s, "SELECT count() FROM DB.tool_calls FINAL WHERE original_source = 'unknown' AND original_bytes IS NOT NULL"),
			// ingest refreshes the dashboards' rollups of the days it wrote:
			// the newest snapshot of each hour counts every call.
			"rolled_up": queryCount(t, s, "SELECT toUInt64(sum(calls)) FROM (SELECT calls FROM DB.tool_call_rollup WHERE scope = 1 AND period = 3600 ORDER BY base_block DESC LIMIT 1 BY day, period_start)"),
		}
	}

	code, out, errOut := run(t, "ingest", "--clickhouse", addr, fixtures)
	if code != ExitOK {
		t.Fatalf("ingest: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"sessions:     3", "tool calls:   70", "answers:      4", "orphan_tool_result"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	first := snapshot()
	want := map[string]uint64{
		"sessions": 3, "tool_calls": 70, "answers": 4, "truncated": 2,
		"main_calls": 26, "sidechain": 7, "main_answers": 3, "line52_matches": 1, "zero_not_null": 0,
		"rolled_up": 70,
	}
	for k, v := range want {
		if first[k] != v {
			t.Errorf("%s = %d, want %d", k, first[k], v)
		}
	}

	code, _, errOut = run(t, "ingest", "--clickhouse", addr, fixtures)
	if code != ExitOK {
		t.Fatalf("second ingest: exit %d: %s", code, errOut)
	}
	second := snapshot()
	for k, v := range first {
		if second[k] != v {
			t.Errorf("after re-ingesting, %s = %d, was %d", k, second[k], v)
		}
	}
}

func TestIngestErrors(t *testing.T) {
	code, _, errOut := run(t, "ingest", "--dry-run", filepath.Join(t.TempDir(), "missing.jsonl"))
	if code != ExitUsage || !strings.Contains(errOut, "missing.jsonl") {
		t.Fatalf("missing file: exit %d, stderr %q; want exit 2 naming the file", code, errOut)
	}
	code, _, errOut = run(t, "ingest", "--dry-run", "--source", "aider", ".")
	if code != ExitUsage {
		t.Fatalf("unknown source: exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = run(t, "ingest", "--format", "jsonl", ".")
	if code != ExitUsage || !strings.Contains(errOut, "--dry-run") {
		t.Fatalf("jsonl without dry-run: exit %d, stderr %q", code, errOut)
	}
}

func TestIngestDryRunJSONL(t *testing.T) {
	fixtures := transcripttest.FixturesDir(t)
	code, out, errOut := run(t, "ingest", "--dry-run", "--format", "jsonl", filepath.Join(fixtures, "codex"))
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 41 {
		t.Fatalf("got %d JSON lines, want 41 (the Codex fixture's calls)", len(lines))
	}
	for _, key := range []string{`"call_id":`, `"original":{`, `"context":{`, `"truncation_kind":`, `"disclosure":{`, `"session_coverage":`} {
		if !strings.Contains(lines[0], key) {
			t.Errorf("record lacks %s: %s", key, lines[0])
		}
	}
	if !strings.Contains(errOut, "tool calls:   41") {
		t.Errorf("summary should go to stderr in jsonl mode: %q", errOut)
	}
}
