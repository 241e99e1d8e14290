package agenttranscriptsreceiver // import "github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver"

import (
	"container/list"

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
