package integrity

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/ctxaudit/ctxaudit/collector/otelconv"
	"github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver"
	"github.com/ctxaudit/ctxaudit/collector/transcript/transcripttest"
	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

// inputs copies every bundled session, every transcript fixture, the
// postmortem scenarios and the harness lab's recordings into one folder,
// which every path then reads under the same absolute paths.
func inputs(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "in")
	root := filepath.Join(transcripttest.ExamplesDir(t), "..", "..")
	copyTree(t, transcripttest.ExamplesDir(t), filepath.Join(dir, "examples"))
	copyTree(t, transcripttest.FixturesDir(t), filepath.Join(dir, "fixtures"))
	copyTree(t, filepath.Join(root, "internal", "cli", "testdata", "scenarios"), filepath.Join(dir, "scenarios"))
	copyLabRecordings(t, filepath.Join(root, "testdata", "lab"), filepath.Join(dir, "lab"))
	return dir
}

// labPlaceholder is a UUID as the lab's normalising writes it
// (00000000-0000-V000-8000-<n>): the session ids, and every id of the same
// kind, of one recording.
var labPlaceholder = regexp.MustCompile(`00000000-(0000-[0-9a-f]000-8000-[0-9a-f]{12})`)

// copyLabRecordings copies every recording of the harness lab (real
// harnesses' transcripts, testdata/lab/README.md) into dst. Normalising gave
// the runs of one harness the same placeholder ids, so every Claude Code run
// is session 00000000-0000-4000-8000-000000000001 and they would be one
// session here. Each recording's placeholders get the recording's number in
// their first group instead, in file contents and names alike: a
// substitution of the same length and alphabet, so no size, offset or
// verdict the transcripts give changes (the lab's own check ingests them
// unchanged and compares with truth.json).
func copyLabRecordings(t *testing.T, src, dst string) {
	t.Helper()
	runs, err := filepath.Glob(filepath.Join(src, "*@*", "*", "transcript"))
	if err != nil || len(runs) < 30 {
		t.Fatalf("lab recordings in %s: %d (%v)", src, len(runs), err)
	}
	for i, run := range runs {
		renumber := func(s string) string {
			return labPlaceholder.ReplaceAllString(s, fmt.Sprintf("%08x-$1", i+1))
		}
		rel, _ := filepath.Rel(src, filepath.Dir(run))
		err := filepath.Walk(run, func(p string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			inRun, _ := filepath.Rel(run, p)
			target := filepath.Join(dst, rel, renumber(inRun))
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			return os.WriteFile(target, []byte(renumber(string(b))), 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// freshStore is a new, migrated database.
func freshStore(t *testing.T) (string, *chstore.Store) {
	t.Helper()
	addr := chtest.Address(t)
	runCLI(t, "migrate", "--clickhouse", addr)
	return addr, chtest.OpenStore(t, addr)
}

// ingested is what `ctxaudit ingest` stores of dir in a fresh database.
func ingested(t *testing.T, dir string) (string, *chstore.Store, map[string]map[string]row) {
	t.Helper()
	addr, s := freshStore(t)
	runCLI(t, "ingest", "--clickhouse", addr, dir)
	return addr, s, stored(t, s)
}

// counts are how many records of each table a store holds.
type counts struct{ sessions, calls, answers int }

func countsOf(recs map[string]map[string]row) counts {
	return counts{len(recs["sessions"]), len(recs["tool_calls"]), len(recs["answers"])}
}

func storedCounts(t *testing.T, s *chstore.Store) counts {
	n := func(table string) int {
		v, _ := strconv.Atoi(scalar(t, s, "SELECT count() FROM (SELECT DISTINCT * FROM (SELECT "+keyOf(table)+" FROM DB."+table+"))"))
		return v
	}
	return counts{n("sessions"), n("tool_calls"), n("answers")}
}

func keyOf(table string) string {
	for _, tb := range tables {
		if tb.name == table {
			return tb.key
		}
	}
	return ""
}

// waitCounts waits until s holds want's records; the analysed ones
// (sessions, answers) come last, with the calls of the same analysis. On a
// timeout it reports the counts and returns: the comparison that follows
// names the records that differ.
func waitCounts(t *testing.T, s *chstore.Store, want counts) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := storedCounts(t, s)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("after 60s the store holds %+v, want %+v", got, want)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestEveryPathGivesTheSameRows runs the same transcripts through every path
// that writes the audit tables and compares the stored rows field by field
// with what one-shot ingest stores.
func TestEveryPathGivesTheSameRows(t *testing.T) {
	dir := inputs(t)
	refAddr, refStore, want := ingested(t, dir)
	n := countsOf(want)
	if n.sessions < 10 || n.calls < 50 || n.answers < 10 {
		t.Fatalf("the inputs gave only %+v", n)
	}
	t.Logf("reference: %+v", n)

	t.Run("re-ingest", func(t *testing.T) {
		runCLI(t, "ingest", "--clickhouse", refAddr, dir)
		compareStored(t, "re-ingest", want, stored(t, refStore))
	})

	t.Run("receiver", func(t *testing.T) {
		addr, s := freshStore(t)
		c := startCollector(t, receiverConfig(dir, t.TempDir(), addr))
		waitCounts(t, s, n)
		c.stop(t)
		compareStored(t, "receiver", want, stored(t, s))
	})

	t.Run("receiver stopped at random lines and restarted", func(t *testing.T) {
		seed := uint64(1)
		if v := os.Getenv("CTXAUDIT_INTEGRITY_SEED"); v != "" {
			seed, _ = strconv.ParseUint(v, 10, 64)
		}
		t.Logf("seed %d (set CTXAUDIT_INTEGRITY_SEED to vary)", seed)
		rng := rand.New(rand.NewPCG(seed, seed))
		full := readTranscripts(t, dir)
		defer writeTranscripts(t, full, nil)
		// Two random cuts per file, then the whole file.
		cuts := map[string][2]int{}
		for p, lines := range full {
			at := cutPoints(lines)
			a, b := at[rng.IntN(len(at))], at[rng.IntN(len(at))]
			cuts[p] = [2]int{min(a, b), max(a, b)}
		}
		addr, s := freshStore(t)
		state := t.TempDir()
		for phase := 0; phase < 3; phase++ {
			upTo := map[string]int{}
			for p, c := range cuts {
				if phase < 2 {
					upTo[p] = c[phase]
				} else {
					upTo[p] = len(full[p])
				}
			}
			writeTranscripts(t, full, upTo)
			_, _, phaseWant := ingested(t, dir)
			c := startCollector(t, receiverConfig(dir, state, addr))
			waitCounts(t, s, countsOf(phaseWant))
			c.stop(t)
			compareStored(t, fmt.Sprintf("restart phase %d", phase), phaseWant, stored(t, s))
		}
	})

	t.Run("receiver spans replayed over OTLP through the processor", func(t *testing.T) {
		spans := receiverSpans(t, dir, n)
		addr, s := freshStore(t)
		port := freePort(t)
		c := startCollector(t, otlpConfig(port, addr, true))
		for _, td := range spans {
			postOTLP(t, port, td)
		}
		waitCounts(t, s, n)
		c.stop(t)
		compareStored(t, "OTLP replay", want, stored(t, s))
	})
}

// cutPoints are the line counts a transcript can be stopped after: any,
// except inside one Claude Code assistant message, whose content blocks the
// harness writes as consecutive lines at once. A transcript that stopped
// there for longer than session_idle would end in what looks like a final
// answer and is not one once the message's tool_use line follows: later
// analyses take it back, but the answer row already stored stays (design
// §5.1); the receiver's TestAnswerCutMidMessageIsTakenBack covers that cut.
func cutPoints(lines []string) []int {
	id := func(l string) string {
		var v struct {
			Type    string `json:"type"`
			Message struct {
				ID string `json:"id"`
			} `json:"message"`
		}
		if json.Unmarshal([]byte(l), &v) != nil || v.Type != "assistant" {
			return ""
		}
		return v.Message.ID
	}
	out := []int{0}
	for i := 1; i <= len(lines); i++ {
		if i < len(lines) {
			if prev := id(lines[i-1]); prev != "" && prev == id(lines[i]) {
				continue
			}
		}
		out = append(out, i)
	}
	return out
}

// readTranscripts reads every transcript under dir as lines (each with its
// newline).
func readTranscripts(t *testing.T, dir string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || !strings.HasSuffix(p, ".jsonl") || strings.Contains(p, string(filepath.Separator)+"tool-results"+string(filepath.Separator)) {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[p] = strings.SplitAfter(string(b), "\n")
		if last := out[p][len(out[p])-1]; last == "" {
			out[p] = out[p][:len(out[p])-1]
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// writeTranscripts writes the first upTo[p] lines of every file (all of
// them when upTo is nil), as a transcript being written looks.
func writeTranscripts(t *testing.T, full map[string][]string, upTo map[string]int) {
	t.Helper()
	for p, lines := range full {
		k := len(lines)
		if upTo != nil {
			k = upTo[p]
		}
		if err := os.WriteFile(p, []byte(strings.Join(lines[:k], "")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// receiverSpans runs the agenttranscripts receiver alone over dir and
// returns what it emitted, once every session was analysed.
func receiverSpans(t *testing.T, dir string, want counts) []ptrace.Traces {
	t.Helper()
	f := agenttranscriptsreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*agenttranscriptsreceiver.Config)
	cfg.Include = []string{dir + "/**/*.jsonl"}
	cfg.PollInterval = 50 * time.Millisecond
	cfg.SessionIdle = 200 * time.Millisecond
	sink := new(consumertest.TracesSink)
	r, err := f.CreateTraces(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the receiver's analysis of every session", func() (bool, string) {
		sessions, answers := map[string]bool{}, map[string]bool{}
		for _, td := range sink.AllTraces() {
			otelconv.EachSpan(td, func(_ pcommon.Map, _ string, sp ptrace.Span) {
				switch otelconv.Operation(sp.Attributes()) {
				case otelconv.OperationInvokeAgent:
					sessions[sp.SpanID().String()] = true
				case otelconv.OperationChat:
					answers[sp.SpanID().String()] = true
				}
			})
		}
		return len(sessions) == want.sessions && len(answers) == want.answers,
			fmt.Sprintf("sessions %d/%d answers %d/%d", len(sessions), want.sessions, len(answers), want.answers)
	})
	if err := r.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	return sink.AllTraces()
}

// postOTLP sends td to an OTLP/HTTP receiver as protobuf.
func postOTLP(t *testing.T, port int, td ptrace.Traces) {
	t.Helper()
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(fmt.Sprintf("http://127.0.0.1:%d/v1/traces", port), "application/x-protobuf", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("OTLP export: %s", resp.Status)
	}
}
