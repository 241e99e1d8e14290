package agenttranscriptsreceiver // import "github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver"

import (
	"container/list"
	"context"

	"go.uber.org/zap"

	"github.com/ctxaudit/ctxaudit/collector/session"
	"github.com/ctxaudit/ctxaudit/schema"
)

// The session layer: the sessions being built and their analysis, by
// session id. It knows nothing of files; analyze.go decides when a session
// is analysed and gathers what its files hold.

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

// retracted reports answers an earlier analysis sent whose message went on
// to call a tool (the harness paused mid-message for longer than
// session_idle): they are not answers. The analysis carries a retraction
// record for each (session.Result.Answers), whose row replaces the answer's.
func (r *agentReceiver) retracted(id string, answers []schema.Answer) {
	if len(answers) == 0 {
		return
	}
	messages := make([]string, len(answers))
	for i := range answers {
		messages[i] = answers[i].MessageID
	}
	r.logger.Warn("Answers sent earlier were not answers: their messages went on to call a tool",
		zap.String("session", id), zap.Strings("message_ids", messages))
}

// session returns the session held for id, creating it when absent.
func (r *agentReceiver) session(id string) *session.Builder {
	s, created := r.sessions.get(id)
	if created {
		r.tel.SessionsHeld(context.Background(), 1)
		r.reopen(s)
	}
	return s
}

// reopen gives a session being built again — after a restart, or evicted
// and grown since — the answers an earlier analysis returned for its files'
// last messages, as returned: should a file's next line prove its last
// message no answer (its tool call), the session takes the answer back
// (docs/design.md §5.1). Rebuilt from the files alone it would not: the
// parser merges the message with its tool call and never offers the
// answer again, and nothing would say it had been returned. The parser's
// own answer of the message, when it comes, replaces what is given here.
func (r *agentReceiver) reopen(s *session.Builder) {
	for f := range r.bySession[s.ID()] {
		if a := f.openAnswer; a != nil && !s.HasAnswer(a.MessageID) {
			s.Restore(session.Sent{Answers: map[string]uint64{a.MessageID: 0}})
			s.AddAnswer(*a)
		}
	}
}

// analyze analyses session id with the metadata of its sources, the main
// thread first (it names the session), and returns what changed since the
// last result; ok is false for a session with nothing to show.
func (r *agentReceiver) analyze(id string, metas []schema.Session) (res session.Result, ok bool) {
	meta := session.MergeMeta(metas...)
	meta.SessionID = id
	s := r.session(id)
	if s.Empty(&meta) {
		return session.Result{}, false
	}
	res = s.Analyze(meta)
	r.retracted(id, res.Retracted)
	return res, true
}
