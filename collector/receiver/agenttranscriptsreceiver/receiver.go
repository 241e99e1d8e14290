package agenttranscriptsreceiver // import "github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver"

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receiverhelper"
	"go.uber.org/zap"

	"github.com/ctxaudit/ctxaudit/collector/internal/storageclient"
	"github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver/internal/checkpoint"
	"github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver/internal/metadata"
	"github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver/internal/tail"
	"github.com/ctxaudit/ctxaudit/collector/transcript"
)

// agentReceiver follows transcript files and sends their records. The
// receiver is three layers:
//
//   - tailing (internal/tail): finding files, fingerprints, checkpoints,
//     complete lines with their positions, commit — nothing of transcripts;
//   - transcript files (files.go, feed.go): a file's format, its parser, and
//     the sink each Feed or Flush call is given;
//   - sessions (session.go): the sessions being built (collector/session)
//     and their analysis, by session id — nothing of files.
//
// analyze.go ties the last two: which files make up a session, when it is
// due, and loading and flushing its files for the analysis.
// This file holds the lifecycle and the loop that ties them together: read
// into a batch, send it, and commit the files' positions once the pipeline
// accepted it. Everything below the lifecycle
// fields is owned by the poll goroutine; Shutdown touches it only after that
// goroutine has ended.
type agentReceiver struct {
	set    receiver.Settings
	cfg    *Config
	next   consumer.Traces
	logger *zap.Logger
	tel    *metadata.Telemetry
	obs    *receiverhelper.ObsReport
	// now is the clock session_idle is measured with.
	now func() time.Time

	// lifecycle
	cancel context.CancelFunc
	done   chan struct{}
	client storage.Client

	finder *tail.Finder
	format transcript.Format // forced format, or "" to detect per file

	files     map[string]*trackedFile
	bySession map[string]map[*trackedFile]struct{}
	sessions  *sessionCache
	// checkpoints keeps the files' entries in storage; stored holds those
	// loaded at start for files not seen yet.
	checkpoints *tail.Store
	stored      map[string]checkpoint.File
	firstScan   bool

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
		set: set, cfg: cfg, next: next, logger: set.Logger, tel: tel, obs: obs, now: time.Now,
		files: map[string]*trackedFile{}, bySession: map[string]map[*trackedFile]struct{}{},
		sessions: newSessionCache(cfg.MaxSessions), stored: map[string]checkpoint.File{}, firstScan: true,
	}, nil
}

// Start resolves the patterns, opens the storage client, loads the
// checkpoints and starts polling.
func (r *agentReceiver) Start(ctx context.Context, host component.Host) error {
	if err := r.prepare(ctx, host); err != nil {
		return err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.done = make(chan struct{})
	go r.run(runCtx)
	return nil
}

// prepare is Start without the polling: the patterns resolved, the storage
// client open and the checkpoints loaded.
func (r *agentReceiver) prepare(ctx context.Context, host component.Host) error {
	finder, include, exclude, off, err := r.cfg.finder()
	if err != nil {
		return err
	}
	r.finder = finder
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
	if r.cfg.StorageID == nil {
		// A deployment choice with a cost to the records: say it once.
		r.logger.Warn("No storage configured: checkpoints live in memory, so a restart reads every transcript again and " +
			"cannot take back an answer the previous process sent whose message went on to call a tool; set storage (file_storage) to keep them")
	}
	r.client = client
	r.checkpoints = tail.NewStore(client, r.logger)
	stored, err := r.checkpoints.Load(ctx)
	if err != nil {
		_ = client.Close(ctx)
		r.client = nil
		return err
	}
	r.stored = stored
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
	return storageclient.Open(ctx, host, *id, component.KindReceiver, self, "")
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
	paths, err := r.finder.Find(ctx)
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

// collect reads new lines of the scanned files, then analyses sessions
// that went idle, until the batch is full.
func (r *agentReceiver) collect(ctx context.Context, scanned []*trackedFile) *batch {
	b := newBatch()
	for _, f := range scanned {
		if b.full() || ctx.Err() != nil {
			return b
		}
		if r.files[f.Path] != f {
			continue // forgotten
		}
		if err := r.readFile(ctx, f, b); err != nil && ctx.Err() == nil {
			r.logger.Warn("Cannot read transcript; will retry", zap.String("path", f.Path), zap.Error(err))
		}
		r.checkAgentMeta(f)
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
		if f.Read != f.Committed {
			r.logger.Info("Stopped mid-read; open sessions are analysed after the restart", zap.String("path", f.Path))
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
		f.Commit()
	}
	for f, line := range b.analyzed {
		if line > f.analyzed {
			f.analyzed, f.Dirty = line, true
		}
	}
	for f, a := range b.open {
		if a != f.openAnswer {
			f.openAnswer, f.Dirty = a, true
		}
	}
	for f, id := range b.spawnedBy {
		if id != f.analyzedSpawnedBy {
			f.analyzedSpawnedBy, f.Dirty = id, true
		}
	}
	if err := r.saveCheckpoints(ctx); err != nil && ctx.Err() == nil {
		r.logger.Warn("Cannot save checkpoints; will retry", zap.Error(err))
	}
}

// saveCheckpoints writes the entries that changed and deletes those of
// forgotten files, in one storage batch. What fails to be written stays
// marked and is written with the next save.
func (r *agentReceiver) saveCheckpoints(ctx context.Context) error {
	var entries []tail.Entry
	var saved []*trackedFile
	for _, f := range r.files {
		if !f.Dirty || f.format == "" || (f.Committed.Offset == 0 && !f.Stored) {
			continue
		}
		entries = append(entries, tail.Entry{Path: f.Path, File: f.checkpoint()})
		saved = append(saved, f)
	}
	err := r.checkpoints.Save(ctx, entries, func(p string) bool { return r.files[p] != nil })
	if err != nil {
		return err
	}
	for _, f := range saved {
		f.Stored, f.Dirty = true, false
	}
	return nil
}
