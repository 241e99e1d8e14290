package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ctxaudit/ctxaudit/collector/ingest"
	"github.com/ctxaudit/ctxaudit/collector/transcript/transcripttest"
	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/schema"
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

// TestIngestTakesBackAnAnswerAHalfWrittenFileStored: in the real 2.1.6
// session, line 20 is the text block of msg_019SiiKuPg4TsXVmQ7fDS7Ln and
// line 21 its tool_use block. Ingested while Claude Code had written only
// up to line 20, the file ends with that text, which is stored as an
// answer. Ingested again whole, the file shows the message called a tool:
// the answer is taken back, and the store then reads as if the whole file
// had been ingested once. Ingested once more, nothing is left to take back.
// The same holds when both copies are read in one run.
func TestIngestTakesBackAnAnswerAHalfWrittenFileStored(t *testing.T) {
	const message = transcripttest.CutAnswer
	ctx := context.Background()
	whole, lines := transcripttest.Session216MainThread(t)
	half := bytes.Join(lines[:20], nil)

	ingest := func(addr string, paths ...string) string {
		t.Helper()
		code, out, errOut := run(t, append([]string{"ingest", "--clickhouse", addr}, paths...)...)
		if code != ExitOK {
			t.Fatalf("ingest %v: exit %d\n%s\n%s", paths, code, out, errOut)
		}
		return out
	}
	answered := func(s *chstore.Store) bool {
		t.Helper()
		answers, err := s.Answers(ctx, mainSession)
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(answers, func(a schema.Answer) bool { return a.MessageID == message })
	}
	const takenBack = "taken back:   1 answer stored earlier"

	dir := t.TempDir()
	path := filepath.Join(dir, mainSession+".jsonl")
	if err := os.WriteFile(path, half, 0o644); err != nil {
		t.Fatal(err)
	}
	addr := chtest.Address(t)
	if out := ingest(addr, path); strings.Contains(out, "taken back") {
		t.Errorf("the first ingest took something back:\n%s", out)
	}
	s := chtest.OpenStore(t, addr)
	if !answered(s) {
		t.Fatalf("ingested up to line 20, %s is not stored as an answer: the test shows nothing", message)
	}
	if err := os.WriteFile(path, whole, 0o644); err != nil {
		t.Fatal(err)
	}
	if out := ingest(addr, path); !strings.Contains(out, takenBack) {
		t.Errorf("the whole file's summary lacks %q:\n%s", takenBack, out)
	}
	if answered(s) {
		t.Errorf("ingested whole, %s is still stored as an answer", message)
	}
	if n := queryCount(t, s, "SELECT count() FROM DB.answers FINAL WHERE message_id = '"+message+"' AND retracted = 1"); n != 1 {
		t.Errorf("%d retracted rows of %s, want 1", n, message)
	}

	// The store now reads as one ingest of the whole file does.
	once := chtest.Address(t)
	ingest(once, path)
	if err := sameRowsOf(ctx, s, chtest.OpenStore(t, once), mainSession); err != nil {
		t.Errorf("after the half file and the whole: %v", err)
	}
	if out := ingest(addr, path); strings.Contains(out, "taken back") {
		t.Errorf("ingested whole again, something was taken back again:\n%s", out)
	}

	// Both copies in one run, the half one read first: its answer waits for
	// its batch when the whole one is read, or (batches of one row) is
	// already stored.
	both := t.TempDir()
	if err := os.WriteFile(filepath.Join(both, "a-half.jsonl"), half, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(both, "b-whole.jsonl"), whole, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, flags := range [][]string{nil, {"--batch-size", "1"}} {
		oneRun := chtest.Address(t)
		if out := ingest(oneRun, append(flags, both)...); !strings.Contains(out, takenBack) {
			t.Errorf("one run of both copies %v: the summary lacks %q:\n%s", flags, takenBack, out)
		}
		if answered(chtest.OpenStore(t, oneRun)) {
			t.Errorf("one run of both copies %v: %s is stored as an answer", flags, message)
		}
	}
}

// TestIngestEveryPrefixThenWholeStoresTheWhole: whatever line an ingest of
// the real 2.1.6 session stopped at — between two lines, or inside one, as
// the harness was writing it — ingesting the whole file afterwards leaves
// the store reading exactly as one ingest of the whole file does: every
// call, answer and session row. Each cut is its own copy of the session
// (its own id), so three runs cover every cut: the wholes into one
// database; the prefixes, then the wholes, into another.
func TestIngestEveryPrefixThenWholeStoresTheWhole(t *testing.T) {
	ctx := context.Background()
	whole, lines := transcripttest.Session216MainThread(t)
	type cut struct {
		id     string
		prefix []byte
	}
	var cuts []cut
	for k := 1; k < len(lines); k++ {
		between := bytes.Join(lines[:k], nil)
		inside := append(bytes.Clone(between), lines[k][:len(lines[k])/2]...)
		cuts = append(cuts,
			cut{fmt.Sprintf("%08d", 2*k) + mainSession[8:], between},
			cut{fmt.Sprintf("%08d", 2*k+1) + mainSession[8:], inside})
	}
	dir := t.TempDir()
	write := func(of func(cut) []byte) {
		t.Helper()
		for _, c := range cuts {
			text := bytes.ReplaceAll(of(c), []byte(mainSession), []byte(c.id))
			if err := os.WriteFile(filepath.Join(dir, c.id+".jsonl"), text, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	ingestInto := func(s *chstore.Store) ingest.Summary {
		t.Helper()
		sum, err := ingest.Run(ctx, []string{dir}, ingest.Options{}, s)
		if err != nil {
			t.Fatal(err)
		}
		return sum
	}
	answerIDs := func(s *chstore.Store, session string) map[string]bool {
		t.Helper()
		answers, err := s.Answers(ctx, session)
		if err != nil {
			t.Fatal(err)
		}
		ids := map[string]bool{}
		for _, a := range answers {
			ids[a.MessageID] = true
		}
		return ids
	}
	inTwo, once := chtest.NewStore(t), chtest.NewStore(t)
	write(func(cut) []byte { return whole })
	ingestInto(once)
	write(func(c cut) []byte { return c.prefix })
	ingestInto(inTwo)
	// A cut that ends with the text of a message that goes on to call a
	// tool stores that text as an answer the whole file does not have.
	stale := 0
	for _, c := range cuts {
		final := answerIDs(once, c.id)
		for id := range answerIDs(inTwo, c.id) {
			if !final[id] {
				stale++
			}
		}
	}
	write(func(cut) []byte { return whole })
	if sum := ingestInto(inTwo); stale == 0 || sum.AnswersRetracted != stale {
		t.Errorf("%d answers taken back, want the %d the cuts stored that the whole file has not", sum.AnswersRetracted, stale)
	}
	t.Logf("%d cuts; %d stored an answer the whole file has not", len(cuts), stale)
	// The reads wait on the server more than they work: four at a time.
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < len(cuts); i = int(next.Add(1)) - 1 {
				if err := sameRowsOf(ctx, inTwo, once, cuts[i].id); err != nil {
					t.Errorf("cut %s (%d bytes) and then the whole: %v", cuts[i].id[:8], len(cuts[i].prefix), err)
				}
			}
		}()
	}
	wg.Wait()
}

// sameRowsOf reports how session id's answers, tool calls and session row
// as got reads them differ from want's.
func sameRowsOf(ctx context.Context, got, want *chstore.Store, id string) error {
	for what, read := range map[string]func(*chstore.Store) (any, error){
		"answers":    func(s *chstore.Store) (any, error) { return s.Answers(ctx, id) },
		"tool calls": func(s *chstore.Store) (any, error) { return s.ToolCalls(ctx, id) },
		"session": func(s *chstore.Store) (any, error) {
			sess, _, err := s.Session(ctx, id)
			return sess, err
		},
	} {
		g, err := read(got)
		if err != nil {
			return err
		}
		w, err := read(want)
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(g, w) {
			return fmt.Errorf("%s differ from one ingest of the whole:\n got %+v\nwant %+v", what, g, w)
		}
	}
	return nil
}
