package agenttranscriptsreceiver

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/ctxaudit/ctxaudit/collector/ingest"
	"github.com/ctxaudit/ctxaudit/collector/otelconv"
	"github.com/ctxaudit/ctxaudit/collector/processor/ctxauditprocessor"
	"github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver/internal/metadata"
	"github.com/ctxaudit/ctxaudit/collector/redact"
	"github.com/ctxaudit/ctxaudit/collector/transcript"
	"github.com/ctxaudit/ctxaudit/collector/transcript/transcripttest"
	"github.com/ctxaudit/ctxaudit/schema"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

// FuzzTailedSessionsStoreTheOneShotRows writes real sessions into a folder
// the way harnesses do — a few lines at a time, at times stopping inside a
// line, a sub-agent's file appearing halfway — and runs the receiver over
// it the way a collector lives: polls while the files grow, sessions going
// idle and being analysed in between, a pipeline that refuses a batch now
// and then, restarts, crashes (no shutdown: only what the storage kept),
// shutdowns in the middle of a poll; at times at most one session held at
// a time, at times lines past a small max_line_bytes skipped. What the pipeline accepted goes
// on as in the shipped configuration, through the ctxaudit processor, to the
// tables. Once every file is whole and every session analysed, the rows the
// tables keep — per id the row of highest rank (chstore.Rank), the later
// write of equals, redacted as the store redacts, answers taken back
// skipped — must be what `ctxaudit ingest` writes for the same folder,
// field by field. Its saved inputs (testdata/fuzz) are schedules it found
// failing: 0fb60b7d4d16a0c8 (an answer sent at a shutdown, then its
// message's tool_use line read by the next process, the result's line too
// long to read) fails without the answer a rebuilt session starts with
// (reopen) and without the parser's NotAnswer on the tool_use line;
// 35b6b263a6a97e26 fails when the extent of an analysis that took such an
// answer back falls below the earlier one's.
func FuzzTailedSessionsStoreTheOneShotRows(f *testing.F) {
	corpus := tailCorpus(f)
	f.Add([]byte{})
	f.Add([]byte{0x0f, 1, 0, 4, 0, 1, 2, 3, 6, 0, 0, 9, 4, 7, 2, 1})
	f.Add([]byte("grow a little, pause, crash; grow again, refuse, restart"))
	f.Add(bytes.Repeat([]byte{0, 0, 3, 1, 4, 0, 1, 200, 17, 4}, 12))
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &scheduleGen{data: data}
		root := t.TempDir()
		files := corpus.lay(t, root, int(g.byte()))
		cfg := testConfig(root)
		cfg.PollInterval = time.Hour // polled by the test
		// A choice's 0 (also past the input's end) is the shipped default.
		if g.byte()%3 == 1 {
			cfg.MaxSessions = 1
		}
		if b := g.byte(); b%4 == 1 {
			// Lines past the limit are skipped, on both paths alike, even
			// when they arrive in pieces.
			cfg.MaxLineBytes = 1024 + int(b)*64
		}
		h, _ := withMemoryStorage(cfg)
		sink := new(flakySink)
		r := steppedReceiver(t, cfg, h, sink)
		ctx := context.Background()
		for range maxTailSteps {
			if g.done() {
				break
			}
			switch g.byte() % 10 {
			case 0, 1, 2:
				files[int(g.byte())%len(files)].grow(t, g)
			case 3:
				r.poll(ctx)
			case 4:
				pollIdle(r)
			case 5:
				sink.refuseNext(1 + int(g.byte()%2))
				r.poll(ctx)
			case 6:
				require.NoError(t, r.Shutdown(ctx))
				r = steppedReceiver(t, cfg, h, sink)
			case 7:
				// Killed: nothing saved beyond what the storage holds.
				r = steppedReceiver(t, cfg, h, sink)
			case 8:
				// Another poll later: a pipeline that refused takes it now.
				sink.refuseNext(0)
				r.poll(ctx)
			case 9:
				// The collector stops in the middle of a poll.
				r.poll(interruptAfter(int(g.byte())))
				require.NoError(t, r.Shutdown(ctx))
				r = steppedReceiver(t, cfg, h, sink)
			}
		}
		for _, tf := range files {
			tf.writeRest(t)
		}
		sink.refuseNext(0)
		pollIdle(r)
		require.NoError(t, r.Shutdown(ctx))

		want := oneShotRows(t, root, cfg.MaxLineBytes)
		if cfg.MaxLineBytes == transcript.DefaultMaxLineBytes {
			require.NotEmpty(t, want.calls, "every corpus session has calls")
		}
		got := keptRows(t, throughProcessor(t, sink.AllTraces()))
		sameRows(t, "sessions", want.sessions, got.sessions, func(w, g *schema.Session) {
			sameInstant(t, &g.StartedAt, w.StartedAt)
			sameInstant(t, &g.EndedAt, w.EndedAt)
		})
		sameRows(t, "tool_calls", want.calls, got.calls, func(w, g *schema.ToolCall) { sameInstant(t, &g.Timestamp, w.Timestamp) })
		sameRows(t, "answers", want.answers, got.answers, func(w, g *schema.Answer) { sameInstant(t, &g.Timestamp, w.Timestamp) })
	})
}

// maxTailSteps bounds a schedule: enough to cut every corpus file a dozen
// times and restart in between.
const maxTailSteps = 64

// scheduleGen reads a fuzz input as a stream of choices; past its end every
// choice is 0 and done reports true.
type scheduleGen struct {
	data []byte
	pos  int
}

func (g *scheduleGen) byte() byte {
	if g.pos >= len(g.data) {
		g.pos++
		return 0
	}
	b := g.data[g.pos]
	g.pos++
	return b
}

func (g *scheduleGen) done() bool { return g.pos >= len(g.data) }

// steppedReceiver is a receiver on cfg's storage in h that polls only when
// the test calls poll; Shutdown drains and saves as in a collector.
func steppedReceiver(t *testing.T, cfg *Config, h component.Host, next consumer.Traces) *agentReceiver {
	t.Helper()
	r, err := newReceiver(receivertest.NewNopSettings(metadata.Type), cfg, next)
	require.NoError(t, err)
	require.NoError(t, r.prepare(context.Background(), h))
	stopped := make(chan struct{})
	close(stopped)
	r.cancel, r.done = func() {}, stopped
	return r
}

// pollIdle polls as if every file had last grown longer than session_idle
// ago: the sessions with lines not analysed yet are analysed.
func pollIdle(r *agentReceiver) {
	r.now = func() time.Time { return time.Now().Add(r.cfg.SessionIdle + time.Minute) }
	r.poll(context.Background())
	r.now = time.Now
}

// interrupted is a context cancelled once its Err has been asked a number
// of times: a shutdown that arrives at any point of a poll.
type interrupted struct {
	context.Context
	left int
	done chan struct{}
}

func interruptAfter(checks int) *interrupted {
	return &interrupted{Context: context.Background(), left: checks, done: make(chan struct{})}
}

func (c *interrupted) Err() error {
	if c.left > 0 {
		c.left--
		return nil
	}
	select {
	case <-c.done:
	default:
		close(c.done)
	}
	return context.Canceled
}

func (c *interrupted) Done() <-chan struct{} { return c.done }

// refuseNext makes the sink refuse its next n requests (none for 0).
func (s *flakySink) refuseNext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse = s.calls + n
}

// corpusSession is a real session's folder: its transcript files, written
// as the fuzz input says, and its other files (saved outputs), written whole
// at the start, as the harness writes them before the line naming them —
// except a sub-agent's metadata file, written as the fuzz input says too.
type corpusSession struct {
	name  string
	dir   string
	files map[string][]byte // path relative to dir
	// rename replaces ids in the files' names and contents (same lengths),
	// for a session whose ids another corpus session uses too.
	rename *strings.Replacer
}

type tailSessions []corpusSession

// tailCorpus is sessions of every harness, with distinct session ids: the
// real Claude Code 2.1.6 session (a sub-agent, a truncated Grep, a message
// whose text line comes before its tool call), lab recordings of the real
// Claude Code whose Bash output overflowed to a saved file and of the real
// Codex whose output was cut, the Codex and pi example sessions, and the
// reproductions (testdata/repro) of a Claude Code sub-agent whose Agent
// call has no result, placed by its metadata file, and of a call whose
// line's timestamp cannot be read.
func tailCorpus(tb testing.TB) tailSessions {
	lab := transcripttest.LabDir(tb)
	examples := transcripttest.ExamplesDir(tb)
	var out tailSessions
	for _, s := range []corpusSession{
		{name: "claude-code-2.1.6", dir: fixture216(tb)},
		{name: "claude-code-lab", dir: filepath.Join(lab, "claude-code@2.1.328", "bash-over-cap", "transcript")},
		{name: "codex", dir: filepath.Join(examples, "codex")},
		{name: "pi", dir: filepath.Join(examples, "pi")},
		{name: "codex-lab", dir: filepath.Join(lab, "codex@0.169.0", "exec-over-cap", "transcript")},
		// A sub-agent whose Agent call has no result: only its metadata
		// file, written at any point of the schedule, places it. Its ids
		// are the lab's, which claude-code-lab uses too.
		{name: "claude-code-agent-unfinished", dir: filepath.Join(filepath.Dir(lab), "repro", "claude-code@2.1.328", "agent-unfinished", "transcript"),
			rename: strings.NewReplacer("00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-0000000000a1",
				"toolu_lab", "toolu_rpr", "msg_lab", "msg_rpr")},
		// A refetch whose line's timestamp cannot be read: placed by its
		// line, whichever pieces of the file the receiver has read.
		{name: "claude-code-untimed-refetch", dir: filepath.Join(filepath.Dir(lab), "repro", "claude-code@2.1.328", "untimed-refetch", "transcript"),
			rename: strings.NewReplacer("00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-0000000000a2",
				"toolu_lab", "toolu_utr", "msg_lab", "msg_utr")},
	} {
		s.files = map[string][]byte{}
		err := filepath.WalkDir(s.dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(s.dir, p)
			if s.rename != nil {
				rel, b = s.rename.Replace(rel), []byte(s.rename.Replace(string(b)))
			}
			s.files[rel] = b
			return err
		})
		if err != nil {
			tb.Fatalf("corpus %s: %v", s.name, err)
		}
		out = append(out, s)
	}
	return out
}

// lay writes the sessions mask picks (at least one) under root: their
// other files whole, their transcripts empty and not yet created.
func (c tailSessions) lay(t *testing.T, root string, mask int) []*growingFile {
	mask %= 1 << len(c)
	if mask == 0 {
		mask = 1
	}
	var out []*growingFile
	for i, s := range c {
		if mask&(1<<i) == 0 {
			continue
		}
		paths := make([]string, 0, len(s.files))
		for rel := range s.files {
			paths = append(paths, rel)
		}
		slices.Sort(paths)
		for _, rel := range paths {
			dst := filepath.Join(root, s.name, rel)
			// A sub-agent's metadata file is written when the schedule
			// says, in pieces too: before or after its thread, and seen
			// half-written (bad input) before it is whole.
			if strings.HasSuffix(rel, ".jsonl") || strings.HasSuffix(rel, ".meta.json") {
				out = append(out, &growingFile{path: dst, all: s.files[rel]})
				continue
			}
			writeFile(t, dst, s.files[rel])
		}
	}
	return out
}

// growingFile is a transcript written piece by piece.
type growingFile struct {
	path    string
	all     []byte
	written int
}

// grow appends the next piece: some whole lines, or up to a point inside a
// line, or the rest.
func (f *growingFile) grow(t *testing.T, g *scheduleGen) {
	left := f.all[f.written:]
	if len(left) == 0 {
		return
	}
	n := len(left)
	switch g.byte() % 3 {
	case 0:
		lines := 1 + int(g.byte()%8)
		for i, at := 0, 0; i < lines; i++ {
			j := bytes.IndexByte(left[at:], '\n')
			if j < 0 {
				break
			}
			at += j + 1
			n = at
		}
	case 1:
		n = 1 + (int(g.byte())<<8|int(g.byte()))%len(left)
	}
	f.write(t, left[:n])
}

func (f *growingFile) writeRest(t *testing.T) { f.write(t, f.all[f.written:]) }

func (f *growingFile) write(t *testing.T, b []byte) {
	t.Helper()
	if f.written == 0 {
		writeFile(t, f.path, b)
	} else if len(b) > 0 {
		appendFile(t, f.path, b)
	}
	f.written += len(b)
}

// rows are a table model's rows by id.
type rows struct {
	sessions map[string]schema.Session
	calls    map[string]schema.ToolCall
	answers  map[string]schema.Answer
}

// oneShotRows is what `ctxaudit ingest` writes for root, reading lines of
// up to maxLineBytes, kept as the tables keep it.
func oneShotRows(t *testing.T, root string, maxLineBytes int) rows {
	t.Helper()
	w := &ingestRecorder{}
	_, err := ingest.Run(context.Background(), []string{root}, ingest.Options{MaxLineBytes: maxLineBytes}, w)
	require.NoError(t, err)
	var m tableModel
	m.write(w.sessions, w.calls, w.answers)
	return m.rows(t)
}

// throughProcessor passes the requests the receiver's pipeline accepted
// through a ctxaudit processor of the default configuration, as
// examples/collector.yaml does, and returns what it sends on.
func throughProcessor(t *testing.T, accepted []ptrace.Traces) []ptrace.Traces {
	t.Helper()
	ctx := context.Background()
	out := new(consumertest.TracesSink)
	f := ctxauditprocessor.NewFactory()
	p, err := f.CreateTraces(ctx, processortest.NewNopSettings(f.Type()), f.CreateDefaultConfig(), out)
	require.NoError(t, err)
	require.NoError(t, p.Start(ctx, componenttest.NewNopHost()))
	for _, td := range accepted {
		require.NoError(t, p.ConsumeTraces(ctx, td))
	}
	require.NoError(t, p.Shutdown(ctx))
	return out.AllTraces()
}

// keptRows is what the tables keep of the requests a pipeline accepted, in
// order, read as the exporter reads them (one INSERT per request).
func keptRows(t *testing.T, accepted []ptrace.Traces) rows {
	t.Helper()
	var m tableModel
	for _, td := range accepted {
		var r otelconv.Rows
		r.AddTraces(td)
		require.Zero(t, r.Dropped, "records the exporter cannot store")
		m.write(r.Sessions, r.Calls, r.Answers)
	}
	return m.rows(t)
}

// tableModel keeps, per id, the row of highest rank and, of equal ranks,
// the later write, as ReplacingMergeTree(version) does with the writer's
// versions.
type tableModel struct {
	clock    uint64
	sessions map[string]modelRow[schema.Session]
	calls    map[string]modelRow[schema.ToolCall]
	answers  map[string]modelRow[schema.Answer]
}

type modelRow[T any] struct {
	row         T
	rank, clock uint64
}

func (m *tableModel) write(sessions []schema.Session, calls []schema.ToolCall, answers []schema.Answer) {
	m.clock++
	if m.calls == nil {
		m.sessions, m.calls, m.answers = map[string]modelRow[schema.Session]{}, map[string]modelRow[schema.ToolCall]{}, map[string]modelRow[schema.Answer]{}
	}
	for _, s := range sessions {
		keepRow(m.sessions, s.SessionID, &s, m.clock)
	}
	for _, c := range calls {
		keepRow(m.calls, c.CallID, &c, m.clock)
	}
	for _, a := range answers {
		keepRow(m.answers, a.MessageID, &a, m.clock)
	}
}

func keepRow[T any](rows map[string]modelRow[T], id string, r *T, clock uint64) {
	redact.Default().Record(r) // the writer redacts every text it stores
	rank, ok := chstore.Rank(r)
	if !ok {
		panic(fmt.Sprintf("no rank for %T", r))
	}
	if cur, ok := rows[id]; !ok || rank > cur.rank || rank == cur.rank && clock >= cur.clock {
		rows[id] = modelRow[T]{*r, rank, clock}
	}
}

// rows are the kept rows readers see: answers taken back are skipped.
func (m *tableModel) rows(t *testing.T) rows {
	t.Helper()
	out := rows{sessions: map[string]schema.Session{}, calls: map[string]schema.ToolCall{}, answers: map[string]schema.Answer{}}
	for id, r := range m.sessions {
		out.sessions[id] = r.row
	}
	for id, r := range m.calls {
		out.calls[id] = r.row
	}
	for id, r := range m.answers {
		if !r.row.Retracted {
			out.answers[id] = r.row
		}
	}
	return out
}

// sameRows requires got to hold want's ids, and each row to equal want's
// once same has set what may differ in form only (a time's location).
func sameRows[T any](t *testing.T, table string, want, got map[string]T, same func(w, g *T)) {
	t.Helper()
	var missing, extra []string
	for id := range want {
		if _, ok := got[id]; !ok {
			missing = append(missing, id)
		}
	}
	for id := range got {
		if _, ok := want[id]; !ok {
			extra = append(extra, id)
		}
	}
	if len(missing) > 0 || len(extra) > 0 {
		slices.Sort(missing)
		slices.Sort(extra)
		t.Fatalf("%s: the receiver's rows lack %v and have %v more than the one-shot's", table, missing, extra)
	}
	ids := make([]string, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		w, g := want[id], got[id]
		same(&w, &g)
		if !reflect.DeepEqual(w, g) {
			t.Fatalf("%s %s:\nthe receiver's %+v\nthe one-shot's %+v", table, id, g, w)
		}
	}
}

// sameInstant sets *got to want when both name the same instant, or neither
// names one.
func sameInstant(t *testing.T, got *time.Time, want time.Time) {
	t.Helper()
	// No time is the zero time as ingest keeps it and OTLP's unset time as
	// a span carries it; both are stored as 1970-01-01.
	if got.Equal(want) || !schema.TimeKnown(*got) && !schema.TimeKnown(want) {
		*got = want
	}
}
