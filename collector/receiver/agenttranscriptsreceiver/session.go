package agenttranscriptsreceiver // import "github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver"

import (
	"container/list"
	"encoding/json"
	"hash/fnv"
	"slices"

	"github.com/ctxaudit/ctxaudit/collector/analysis"
	"github.com/ctxaudit/ctxaudit/collector/transcript"
	"github.com/ctxaudit/ctxaudit/schema"
)

// session is what the receiver holds of one session between analyses: the
// calls and answers its files produced (as the parser produced them), and
// what was last emitted for each, so that an analysis re-emits only what
// changed. Records are kept by id: re-reading a file (after an idle flush,
// an eviction or a restart) replaces them rather than adding copies.
type session struct {
	id      string
	calls   []schema.ToolCall
	callIdx map[string]int
	answers []schema.Answer
	ansIdx  map[string]int
	// spawnedTurn maps a sub-agent id to the turn of the Task call that ran it.
	spawnedTurn map[string]int
	// sentCall is the follow-through each call was last emitted with;
	// sentAnswer a hash of each answer as last emitted.
	sentCall   map[string]followThrough
	sentAnswer map[string]uint64
	elem       *list.Element
}

// followThrough is the part of a call that session analysis fills, and the
// analysis it reflects; the rest is fixed by the parser, so a call's span
// changes only when this does. An analysis over more of the session is a
// change even when it concludes the same: the stored row must say how much
// of the session it reflects, as the one-shot ingest's does.
type followThrough struct {
	turn           int
	target         string
	followedUp     bool
	continuationOf string
	coverage       schema.Ratio
	searched       bool
	analysis       schema.Analysis
}

func followOf(c *schema.ToolCall) followThrough {
	return followThrough{
		turn: c.Turn, target: c.Target, followedUp: c.FollowedUp,
		continuationOf: c.ContinuationOf, coverage: c.SessionCoverage, searched: c.Searched,
		analysis: c.Analysis,
	}
}

func newSession(id string) *session {
	return &session{
		id: id, callIdx: map[string]int{}, ansIdx: map[string]int{}, spawnedTurn: map[string]int{},
		sentCall: map[string]followThrough{}, sentAnswer: map[string]uint64{},
	}
}

// addCall stores a call and returns it with its turn placed in the
// parent's turn when it ran in a sub-agent whose spawning call is known.
// emitted says whether the call is about to be emitted as read; a call
// re-read without emitting was emitted before (in this process or the
// previous one), as read, unless this session already knows better.
func (s *session) addCall(c schema.ToolCall, spawnedAgentID string, emitted bool) schema.ToolCall {
	if spawnedAgentID != "" {
		s.spawnedTurn[spawnedAgentID] = c.Turn
	}
	if i, ok := s.callIdx[c.CallID]; ok {
		s.calls[i] = c
	} else {
		s.callIdx[c.CallID] = len(s.calls)
		s.calls = append(s.calls, c)
	}
	transcript.PlaceCall(&c, s.spawnedTurn)
	if _, known := s.sentCall[c.CallID]; emitted || !known {
		s.sentCall[c.CallID] = followOf(&c)
	}
	return c
}

// addAnswer stores an answer candidate.
func (s *session) addAnswer(a schema.Answer) {
	if i, ok := s.ansIdx[a.MessageID]; ok {
		s.answers[i] = a
		return
	}
	s.ansIdx[a.MessageID] = len(s.answers)
	s.answers = append(s.answers, a)
}

// empty reports a session with nothing to show: no calls, no answers, no turns.
func (s *session) empty(meta *schema.Session) bool {
	return len(s.calls) == 0 && len(s.answers) == 0 && meta.Turns == 0
}

// analysisResult is what an analysis emits.
type analysisResult struct {
	meta    schema.Session
	calls   []schema.ToolCall // whose follow-through changed since last emitted
	answers []schema.Answer   // new or changed
}

// analyze runs session analysis over everything held, exactly as the
// one-shot ingest does (sub-agent records placed in the spawning turn, calls
// in issue order), and returns what changed since the last emission; it
// records the result as emitted.
func (s *session) analyze(meta schema.Session) analysisResult {
	calls, answers := slices.Clone(s.calls), slices.Clone(s.answers)
	transcript.Assemble(calls, answers, s.spawnedTurn)

	as := analysis.Session{Meta: meta, Calls: calls, Answers: answers}
	analysis.Analyze(&as)

	res := analysisResult{meta: as.Meta}
	for i := range as.Calls {
		c := &as.Calls[i]
		ft := followOf(c)
		if prev, ok := s.sentCall[c.CallID]; ok && prev == ft {
			continue
		}
		s.sentCall[c.CallID] = ft
		res.calls = append(res.calls, *c)
	}
	for i := range as.Answers {
		a := &as.Answers[i]
		h := hashAnswer(a)
		if prev, ok := s.sentAnswer[a.MessageID]; ok && prev == h {
			continue
		}
		s.sentAnswer[a.MessageID] = h
		res.answers = append(res.answers, *a)
	}
	return res
}

func hashAnswer(a *schema.Answer) uint64 {
	h := fnv.New64a()
	// An answer is plain data; encoding cannot fail, and if it ever did the
	// hash of the partial output would merely cause one more emission.
	_ = json.NewEncoder(h).Encode(a)
	return h.Sum64()
}

// sessionCache holds sessions, most recently active first, up to a limit
// enforced by evict.
type sessionCache struct {
	max int
	m   map[string]*session
	lru *list.List // of *session, front = most recently active
}

func newSessionCache(maxSessions int) *sessionCache {
	return &sessionCache{max: maxSessions, m: map[string]*session{}, lru: list.New()}
}

// get returns the session with id, creating it when absent; created says so.
func (c *sessionCache) get(id string) (s *session, created bool) {
	if s, ok := c.m[id]; ok {
		c.lru.MoveToFront(s.elem)
		return s, false
	}
	s = newSession(id)
	s.elem = c.lru.PushFront(s)
	c.m[id] = s
	return s, true
}

func (c *sessionCache) len() int { return len(c.m) }

// overflow removes and returns the least recently active sessions beyond
// the limit.
func (c *sessionCache) overflow() []*session {
	var out []*session
	for len(c.m) > c.max {
		e := c.lru.Back()
		s := e.Value.(*session)
		c.lru.Remove(e)
		delete(c.m, s.id)
		out = append(out, s)
	}
	return out
}
