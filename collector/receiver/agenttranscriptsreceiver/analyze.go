package agenttranscriptsreceiver // import "github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver"

import (
	"context"
	"sort"

	"go.uber.org/zap"

	"github.com/ctxaudit/ctxaudit/schema"
)

// What ties transcript files to sessions: which files make up a session,
// when a session is due for analysis, and loading and flushing its files'
// parsers so that the analysis sees all of it.

// analyzeIdle analyses the sessions whose files have unanalysed lines and
// have not grown for session_idle (all such sessions when evenBusy, at
// shutdown).
func (r *agentReceiver) analyzeIdle(ctx context.Context, b *batch, evenBusy bool) {
	now := r.now()
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
		return files[i].Path < files[j].Path
	})
	return files
}

// analyzeSession loads every file of the session (so the analysis sees all
// of it), flushes their parsers (which gives the last answer of each) and
// unloads them, analyses the session and adds what changed to b.
func (r *agentReceiver) analyzeSession(ctx context.Context, id string, files []*trackedFile, b *batch) {
	for _, f := range files {
		if f.parser != nil || f.format == "" || f.Read.Offset == 0 {
			continue
		}
		fh, ok := r.open(ctx, f)
		if !ok {
			continue
		}
		if f.format != "" && f.parser == nil && f.Read.Offset > 0 { // open may have reset it
			if err := r.load(ctx, f, fh); err != nil && ctx.Err() == nil {
				r.logger.Warn("Cannot re-read transcript for analysis", zap.String("path", f.Path), zap.Error(err))
			}
		}
		fh.Close()
		if ctx.Err() != nil {
			return
		}
	}
	files = r.filesOf(id) // loading may have moved a file to another session
	for _, f := range files {
		f.flushed = nil
		if f.parser != nil {
			f.parser.Flush(r.flushSink(f, b))
			r.snapshot(f)
			f.parser = nil
		}
	}
	files = r.filesOf(id)
	metas := make([]schema.Session, len(files))
	s := r.session(id)
	for i, f := range files {
		metas[i] = f.meta
		// What each sub-agent's metadata says now, as ingest reads it
		// after the thread: a file written or rewritten since the last
		// poll counts.
		r.checkAgentMeta(f)
		if m := &f.agentMeta; m.agentID != "" {
			s.SpawnedBy(m.agentID, m.spawnedBy)
		}
	}
	if res, ok := r.analyze(id, metas); ok {
		b.addAnalysis(id, res, true)
	}
	for _, f := range files {
		b.analyzed[f] = f.Read.Line
		b.spawnedBy[f] = f.agentMeta.spawnedBy
		// The file's last message's answer, if the analysis counts it: kept
		// with the checkpoint once accepted (none clears the one before).
		var open *schema.Answer
		if f.flushed != nil && s.HasAnswer(f.flushed.MessageID) {
			open = f.flushed
		}
		b.open[f] = open
	}
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

// setSession files f under session id (or under none).
func (r *agentReceiver) setSession(f *trackedFile, id string) {
	if f.sessionID == id {
		return
	}
	if set := r.bySession[f.sessionID]; set != nil {
		delete(set, f)
		if len(set) == 0 {
			delete(r.bySession, f.sessionID)
		}
	}
	f.sessionID = id
	f.Dirty = true
	if id == "" {
		return
	}
	set := r.bySession[id]
	if set == nil {
		set = map[*trackedFile]struct{}{}
		r.bySession[id] = set
	}
	set[f] = struct{}{}
}
