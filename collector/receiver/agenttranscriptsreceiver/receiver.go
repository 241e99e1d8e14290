package agenttranscriptsreceiver // import "github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver"

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receiverhelper"
	"go.uber.org/zap"

	"github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver/internal/checkpoint"
	"github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver/internal/metadata"
	"github.com/ctxaudit/ctxaudit/collector/session"
	"github.com/ctxaudit/ctxaudit/collector/transcript"
	"github.com/ctxaudit/ctxaudit/schema"
)

// agentReceiver tails transcript files. Everything below the lifecycle
// fields is owned by the poll goroutine; Shutdown touches it only after that
// goroutine has ended.
type agentReceiver struct {
	set    receiver.Settings
	cfg    *Config
	next   consumer.Traces
	logger *zap.Logger
	tel    *metadata.Telemetry
	obs    *receiverhelper.ObsReport

	// lifecycle
	cancel context.CancelFunc
	done   chan struct{}
	client storage.Client

	matcher *fileMatcher
	format  transcript.Format // forced format, or "" to detect per file

	files     map[string]*trackedFile
	bySession map[string]map[*trackedFile]struct{}
	sessions  *sessionCache
	// stored holds checkpoints loaded at start for files not seen yet;
	// indexed the paths that have an entry in storage; gone the paths
	// whose entry is to be deleted.
	stored     map[string]checkpoint.File
	indexed    map[string]bool
	gone       []string
	indexDirty bool
	firstScan  bool

	// pending is the batch being sent; nothing else is read until the
	// pipeline accepts it.
	pending  *batch
	failures int
}

func newReceiver(set receiver.Settings, cfg *Config, next consumer.Traces) (*agentReceiver, error) {
	tel, err := metadata.NewTelemetry(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	obs, err := receiverhelper.NewObsReport(receiverhelper.ObsReportSettings{
		ReceiverID: set.ID, Transport: "file", ReceiverCreateSettings: set,
	})
	if err != nil {
		return nil, err
	}
	return &agentReceiver{
		set: set, cfg: cfg, next: next, logger: set.Logger, tel: tel, obs: obs,
		files: map[string]*trackedFile{}, bySession: map[string]map[*trackedFile]struct{}{},
		sessions: newSessionCache(cfg.MaxSessions), stored: map[string]checkpoint.File{},
		indexed: map[string]bool{}, firstScan: true,
	}, nil
}

// Start resolves the patterns, opens the storage client, loads the
// checkpoints and starts polling.
func (r *agentReceiver) Start(ctx context.Context, host component.Host) error {
	home, _ := os.UserHomeDir()
	include, off := r.cfg.patterns(home)
	exclude := make([]string, len(r.cfg.Exclude))
	for i, p := range r.cfg.Exclude {
		exclude[i] = expandHome(p, home)
	}
	m, err := newFileMatcher(include, exclude)
	if err != nil {
		return err
	}
	r.matcher = m
	// Say what is read: transcripts are private, so which folders are
	// watched must never be a surprise.
	r.logger.Info("Watching transcript files", zap.Strings("include", include),
		zap.Strings("exclude", exclude), zap.Ints("folders_off", off))
	format, err := transcript.ParseFormat(r.cfg.Source)
	if err != nil {
		return fmt.Errorf("source: %w", err)
	}
	if format != transcript.FormatAuto {
		r.format = format
	}

	client, err := storageClient(ctx, host, r.cfg.StorageID, r.set.ID)
	if err != nil {
		return err
	}
	r.client = client
	if err := r.loadCheckpoints(ctx); err != nil {
		_ = client.Close(ctx)
		r.client = nil
		return err
	}

	runCtx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.done = make(chan struct{})
	go r.run(runCtx)
	return nil
}

// Shutdown stops polling, sends the analysis of the sessions still open
// (drain), saves the checkpoints of what was accepted and closes the
// storage client. It is safe before Start and more than once.
func (r *agentReceiver) Shutdown(ctx context.Context) error {
	if r.cancel == nil {
		return nil
	}
	r.cancel()
	select {
	case <-r.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	r.drain(ctx)
	if r.client == nil {
		return nil
	}
	err := r.saveCheckpoints(ctx)
	err = errors.Join(err, r.client.Close(ctx))
	r.client = nil
	r.tel.SessionsHeld(ctx, -int64(r.sessions.len()))
	return err
}

func storageClient(ctx context.Context, host component.Host, id *component.ID, self component.ID) (storage.Client, error) {
	if id == nil {
		return storage.NewNopClient(), nil
	}
	ext, ok := host.GetExtensions()[*id]
	if !ok {
		return nil, fmt.Errorf("storage: extension %q not found", id.String())
	}
	se, ok := ext.(storage.Extension)
	if !ok {
		return nil, fmt.Errorf("storage: extension %q is not a storage extension", id.String())
	}
	client, err := se.GetClient(ctx, component.KindReceiver, self, "")
	if err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	return client, nil
}

// loadCheckpoints reads the index and every entry it lists. An entry that
// cannot be decoded is dropped (the file is read again from the start: its
// span ids make that harmless downstream); a storage error fails Start.
func (r *agentReceiver) loadCheckpoints(ctx context.Context) error {
	raw, err := r.client.Get(ctx, checkpoint.IndexKey)
	if err != nil {
		return fmt.Errorf("storage: read checkpoint index: %w", err)
	}
	paths, err := checkpoint.DecodeIndex(raw)
	if err != nil {
		r.logger.Warn("Ignoring unreadable checkpoint index; files will be read from the start", zap.Error(err))
		return nil
	}
	if len(paths) == 0 {
		return nil
	}
	ops := make([]*storage.Operation, len(paths))
	for i, p := range paths {
		ops[i] = storage.GetOperation(checkpoint.Key(p))
	}
	if err := r.client.Batch(ctx, ops...); err != nil {
		return fmt.Errorf("storage: read checkpoints: %w", err)
	}
	for i, p := range paths {
		r.indexed[p] = true
		if ops[i].Value == nil {
			continue
		}
		cp, err := checkpoint.Decode(ops[i].Value)
		if err != nil {
			r.logger.Warn("Ignoring unreadable checkpoint; the file will be read from the start", zap.String("path", p), zap.Error(err))
			continue
		}
		r.stored[p] = cp
	}
	return nil
}

func (r *agentReceiver) run(ctx context.Context) {
	defer close(r.done)
	r.poll(ctx)
	t := time.NewTicker(r.cfg.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.poll(ctx)
		}
	}
}

// poll sends a refused batch again, then scans the folders and reads and
// sends batches until nothing is left or the pipeline refuses one.
func (r *agentReceiver) poll(ctx context.Context) {
	if r.pending != nil && !r.send(ctx) {
		return
	}
	paths, err := r.matcher.find(ctx)
	if err != nil {
		return // cancelled
	}
	scanned := r.reconcile(paths)
	for ctx.Err() == nil {
		b := r.collect(ctx, scanned)
		if ctx.Err() != nil {
			return // what was read is not committed; a restart reads it again
		}
		r.pending = b
		if !r.send(ctx) {
			return
		}
		r.evict(ctx)
		if !b.full() {
			return
		}
	}
}

// reconcile brings the tracked files in line with a scan and returns the
// scanned ones in path order.
func (r *agentReceiver) reconcile(paths []string) []*trackedFile {
	present := make(map[string]bool, len(paths))
	scanned := make([]*trackedFile, 0, len(paths))
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			continue
		}
		present[p] = true
		f := r.files[p]
		if f == nil {
			f = &trackedFile{path: p, format: r.format, drainedAt: -1, modTime: st.ModTime(), lastGrowth: st.ModTime()}
			if cp, ok := r.stored[p]; ok {
				delete(r.stored, p)
				r.restore(f, cp)
			} else if r.firstScan && r.cfg.StartAt == StartAtEnd {
				f.startAtEnd = true
			}
			r.files[p] = f
		}
		f.size = st.Size()
		scanned = append(scanned, f)
	}
	for p, f := range r.files {
		if present[p] {
			continue
		}
		// Forget only files that are gone, not ones a folder error hid.
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			r.forget(f)
		}
	}
	if r.firstScan {
		resumed := 0
		for _, f := range scanned {
			if f.stored {
				resumed++
			}
		}
		r.logger.Info("Found transcript files", zap.Int("files", len(scanned)),
			zap.Int("resumed_from_checkpoint", resumed))
		// Entries of files that disappeared (or are no longer included)
		// while the collector was down.
		for p := range r.stored {
			r.gone = append(r.gone, p)
		}
		clear(r.stored)
		r.firstScan = false
	}
	return scanned
}

func (r *agentReceiver) restore(f *trackedFile, cp checkpoint.File) {
	f.fp = cp.Fingerprint
	f.committed = position{offset: cp.Offset, line: cp.Line}
	f.read = f.committed
	f.analyzed = cp.AnalyzedLine
	f.stored = true
	if r.format == "" && cp.Format != "" {
		if format, err := transcript.ParseFormat(cp.Format); err == nil && format != transcript.FormatAuto {
			f.format = format
		}
	}
	if f.format == "" {
		// Without a format the file is detected and read from the start.
		f.committed, f.read, f.analyzed = position{}, position{}, 0
	}
	r.setSession(f, cp.SessionID)
	f.dirty = false
}

func (r *agentReceiver) forget(f *trackedFile) {
	delete(r.files, f.path)
	r.setSession(f, "")
	if f.stored {
		r.gone = append(r.gone, f.path)
	}
}

// collect reads new lines of the scanned files, then analyses sessions
// that went idle, until the batch is full.
func (r *agentReceiver) collect(ctx context.Context, scanned []*trackedFile) *batch {
	b := newBatch()
	for _, f := range scanned {
		if b.full() || ctx.Err() != nil {
			return b
		}
		if r.files[f.path] != f {
			continue // forgotten
		}
		if err := r.readFile(ctx, f, b); err != nil && ctx.Err() == nil {
			r.logger.Warn("Cannot read transcript; will retry", zap.String("path", f.path), zap.Error(err))
		}
	}
	r.analyzeIdle(ctx, b, false)
	return b
}

// drain runs at shutdown, once polling has stopped and while the pipeline
// downstream still runs (the collector stops receivers first): it sends a
// refused batch once more, then the analysis of every session with
// unanalysed lines, idle or not, so that a stopping collector does not lose
// the answers and summaries of sessions still open. Nothing new is read. If
// a poll was cut off with lines read but not sent, it does nothing: sending
// an analysis commits every file, and those lines' calls would be lost; a
// restart reads them again and analyses them then.
func (r *agentReceiver) drain(ctx context.Context) {
	if r.pending != nil && !r.send(ctx) {
		return
	}
	for _, f := range r.files {
		if f.read != f.committed {
			r.logger.Info("Stopped mid-read; open sessions are analysed after the restart", zap.String("path", f.path))
			return
		}
	}
	// Each round analyses at least one session and commits it; the bound
	// only guards against a file that never stops being due.
	for range len(r.files) + 1 {
		if ctx.Err() != nil {
			return
		}
		b := newBatch()
		r.analyzeIdle(ctx, b, true)
		if len(b.analyzed) == 0 {
			return
		}
		r.pending = b
		if !r.send(ctx) {
			return
		}
	}
}

// analyzeIdle analyses the sessions whose files have unanalysed lines and
// have not grown for session_idle (all such sessions when evenBusy, at
// shutdown).
func (r *agentReceiver) analyzeIdle(ctx context.Context, b *batch, evenBusy bool) {
	now := time.Now()
	due := map[string]bool{}
	for _, f := range r.files {
		if f.needsAnalysis() {
			if _, inBatch := b.analyzed[f]; !inBatch {
				due[f.sessionID] = true
			}
		}
	}
	ids := make([]string, 0, len(due))
	for id := range due {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if b.full() || ctx.Err() != nil {
			return
		}
		files := r.filesOf(id)
		idle := true
		for _, f := range files {
			if evenBusy {
				break
			}
			idle = idle && now.Sub(f.lastGrowth) >= r.cfg.SessionIdle
		}
		if idle {
			r.analyzeSession(ctx, id, files, b)
		}
	}
}

// filesOf returns the files of a session, main thread first, then by path.
func (r *agentReceiver) filesOf(id string) []*trackedFile {
	set := r.bySession[id]
	files := make([]*trackedFile, 0, len(set))
	for f := range set {
		files = append(files, f)
	}
	sort.Slice(files, func(i, j int) bool {
		mi, mj := files[i].agentID == "", files[j].agentID == ""
		if mi != mj {
			return mi
		}
		return files[i].path < files[j].path
	})
	return files
}

// analyzeSession loads every file of the session (so the analysis sees all
// of it), flushes their parsers (which gives the last answer of each) and
// unloads them, analyses the session and adds what changed to b.
func (r *agentReceiver) analyzeSession(ctx context.Context, id string, files []*trackedFile, b *batch) {
	for _, f := range files {
		if f.parser != nil || f.format == "" || f.read.offset == 0 {
			continue
		}
		fh, _, ok := r.open(ctx, f)
		if !ok {
			continue
		}
		if f.format != "" && f.parser == nil && f.read.offset > 0 { // open may have reset it
			if err := r.load(ctx, f, fh); err != nil && ctx.Err() == nil {
				r.logger.Warn("Cannot re-read transcript for analysis", zap.String("path", f.path), zap.Error(err))
			}
		}
		fh.Close()
		if ctx.Err() != nil {
			return
		}
	}
	files = r.filesOf(id) // loading may have moved a file to another session
	for _, f := range files {
		if f.parser != nil {
			f.parser.Flush(r.sink(f, modeFlush, b))
			r.snapshot(f)
			f.parser = nil
		}
	}
	files = r.filesOf(id)
	metas := make([]schema.Session, len(files))
	for i, f := range files {
		metas[i] = f.meta
	}
	meta := session.MergeMeta(metas...) // the main thread (first) names it
	meta.SessionID = id
	s := r.session(id)
	if !s.Empty(&meta) {
		b.addAnalysis(id, s.Analyze(meta), true)
	}
	for _, f := range files {
		b.analyzed[f] = f.read.line
	}
}

// session returns the session held for id, creating it when absent.
func (r *agentReceiver) session(id string) *session.Builder {
	s, created := r.sessions.get(id)
	if created {
		r.tel.SessionsHeld(context.Background(), 1)
	}
	return s
}

// evict drops the least recently active sessions beyond max_sessions and
// unloads their files; they are rebuilt from the files when needed again.
func (r *agentReceiver) evict(ctx context.Context) {
	for _, s := range r.sessions.overflow() {
		for f := range r.bySession[s.ID()] {
			f.parser = nil
		}
		r.tel.SessionEvicted(ctx)
		r.tel.SessionsHeld(ctx, -1)
	}
}

// send hands the pending batch to the pipeline and commits it once
// accepted. A refused batch is kept and sent again on the next poll; a
// permanent error drops it (it can never be accepted) and commits past it.
func (r *agentReceiver) send(ctx context.Context) bool {
	b := r.pending
	td := b.traces(r.set.BuildInfo.Version)
	if n := td.SpanCount(); n > 0 {
		obsCtx := r.obs.StartTracesOp(ctx)
		err := r.next.ConsumeTraces(obsCtx, td)
		r.obs.EndTracesOp(obsCtx, "jsonl", n, err)
		if err != nil {
			if !consumererror.IsPermanent(err) {
				r.failures++
				if r.failures == 1 {
					r.logger.Warn("Pipeline refused transcript spans; checkpoints stay put and the batch is retried every poll",
						zap.Int("spans", n), zap.Error(err))
				}
				return false
			}
			r.logger.Error("Pipeline rejected transcript spans permanently; dropping them", zap.Int("spans", n), zap.Error(err))
		}
		if r.failures > 0 {
			r.logger.Info("Pipeline accepted the retried batch", zap.Int("attempts", r.failures+1))
			r.failures = 0
		}
	}
	r.pending = nil
	r.commit(ctx, b)
	return true
}

// commit advances every file's checkpoint to what it has read (all of it
// was in the accepted batch) and saves the entries that changed.
func (r *agentReceiver) commit(ctx context.Context, b *batch) {
	for _, f := range r.files {
		if f.read != f.committed {
			f.committed, f.dirty = f.read, true
		}
	}
	for f, line := range b.analyzed {
		if line > f.analyzed {
			f.analyzed, f.dirty = line, true
		}
	}
	if err := r.saveCheckpoints(ctx); err != nil && ctx.Err() == nil {
		r.logger.Warn("Cannot save checkpoints; will retry", zap.Error(err))
	}
}

// saveCheckpoints writes the changed entries, deletes those of forgotten
// files and rewrites the index when its paths changed, in one storage batch.
// What fails to be written stays marked and is written with the next save.
func (r *agentReceiver) saveCheckpoints(ctx context.Context) error {
	var ops []*storage.Operation
	var saved []*trackedFile
	for _, p := range r.gone {
		if r.files[p] != nil {
			continue // seen again since
		}
		ops = append(ops, storage.DeleteOperation(checkpoint.Key(p)))
		if r.indexed[p] {
			delete(r.indexed, p)
			r.indexDirty = true
		}
	}
	for _, f := range r.files {
		if !f.dirty || f.format == "" || (f.committed.offset == 0 && !f.stored) {
			continue
		}
		raw, err := checkpoint.Encode(f.checkpoint())
		if err != nil {
			return err
		}
		ops = append(ops, storage.SetOperation(checkpoint.Key(f.path), raw))
		saved = append(saved, f)
		if !r.indexed[f.path] {
			r.indexed[f.path] = true
			r.indexDirty = true
		}
	}
	if r.indexDirty {
		paths := make([]string, 0, len(r.indexed))
		for p := range r.indexed {
			paths = append(paths, p)
		}
		raw, err := checkpoint.EncodeIndex(paths)
		if err != nil {
			return err
		}
		ops = append(ops, storage.SetOperation(checkpoint.IndexKey, raw))
	}
	if len(ops) == 0 {
		return nil
	}
	if err := r.client.Batch(ctx, ops...); err != nil {
		return err
	}
	r.gone, r.indexDirty = r.gone[:0], false
	for _, f := range saved {
		f.stored, f.dirty = true, false
	}
	return nil
}
