package agenttranscriptsreceiver // import "github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver"

import (
	"container/list"
	"context"
	"sort"
	"time"

	"go.uber.org/zap"

	"github.com/ctxaudit/ctxaudit/schema"

	"github.com/ctxaudit/ctxaudit/collector/session"
)

// sessionCache holds the sessions being built (collector/session does the
// building), most recently active first, up to a limit enforced by evict.
type sessionCache struct {
	max int
	m   map[string]*list.Element // of *session.Builder
	lru *list.List               // front = most recently active
}

func newSessionCache(maxSessions int) *sessionCache {
	return &sessionCache{max: maxSessions, m: map[string]*list.Element{}, lru: list.New()}
}

// get returns the session with id, creating it when absent; created says so.
func (c *sessionCache) get(id string) (s *session.Builder, created bool) {
	if e, ok := c.m[id]; ok {
		c.lru.MoveToFront(e)
		return e.Value.(*session.Builder), false
	}
	s = session.New(id)
	c.m[id] = c.lru.PushFront(s)
	return s, true
}

func (c *sessionCache) len() int { return len(c.m) }

// overflow removes and returns the least recently active sessions beyond
// the limit.
func (c *sessionCache) overflow() []*session.Builder {
	var out []*session.Builder
	for len(c.m) > c.max {
		e := c.lru.Back()
		s := e.Value.(*session.Builder)
		c.lru.Remove(e)
		delete(c.m, s.ID())
		out = append(out, s)
	}
	return out
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
		if f.parser != nil {
			f.parser.Flush(r.flushSink(f, b))
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
		res := s.Analyze(meta)
		r.retracted(ctx, id, res.Retracted)
		b.addAnalysis(id, res, true)
	}
	for _, f := range files {
		b.analyzed[f] = f.Read.Line
	}
}

// retracted reports answers an earlier analysis sent whose message went on
// to call a tool (the harness paused mid-message for longer than
// session_idle): they are not answers. The rows already stored for them are
// not taken back by this receiver; the log names them so that they can be.
func (r *agentReceiver) retracted(_ context.Context, id string, messages []string) {
	if len(messages) == 0 {
		return
	}
	r.logger.Warn("Answers sent earlier were not answers: their messages went on to call a tool",
		zap.String("session", id), zap.Strings("message_ids", messages))
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
