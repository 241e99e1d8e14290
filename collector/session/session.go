// Package session builds one agent session out of the records its
// transcript files or spans produce, and analyses it: the one session layer
// that `ctxaudit ingest`, the transcript receiver and the ctxaudit processor
// share, so that the same records give the same rows on every path.
//
// A Builder holds records by id (adding a record again replaces it, so
// re-reading a file after a restart or an eviction never adds copies),
// places sub-agent records in the turn of the call that spawned them,
// analyses the whole session, and returns exactly what changed since its
// last result. Holding many sessions (limits, eviction) is the caller's.
//
// An answer can be taken back. A caller that analyses a session while its
// last assistant message is still being written (the harness paused between
// the message's lines) sees text and no tool call, which is an answer; when
// the message's next line turns out to call a tool, the message never was
// one (§5.1 of docs/design.md). The call names its message (MessageID), or
// the caller says so (NotAnswer), so the builder drops the answer of that id
// when the call arrives, no later analysis counts it, and the next Result
// lists it in Retracted if an earlier Result had returned it.
//
// It is pure: no file system, collector or database imports.
package session

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"slices"

	"github.com/ctxaudit/ctxaudit/collector/analysis"
	"github.com/ctxaudit/ctxaudit/collector/transcript"
	"github.com/ctxaudit/ctxaudit/schema"
)

// Builder is one session between analyses: its calls and answers as their
// sources produced them, and what was last returned for each.
type Builder struct {
	id      string
	calls   callStore
	callIdx map[string]int
	answers []schema.Answer
	ansIdx  map[string]int
	// notAnswers are the messages known not to be answers: they issued a
	// held call, or a call showed them to be narration.
	notAnswers map[string]bool
	// retracted are the answers returned by an earlier Result and dropped
	// since, to be listed by the next one.
	retracted []schema.Answer
	// freshNotAnswers are the messages learned not to be answers since the
	// last committed Result, to be listed by the next one.
	freshNotAnswers []string
	// spawnedTurn maps a sub-agent id to the turn of the Task/Agent call
	// whose result names it (agentId).
	spawnedTurn map[string]schema.Turn
	// spawnedBy maps a sub-agent id to the call its own metadata names as
	// the one that spawned it (Claude Code's agent-<id>.meta.json
	// toolUseId); claimed holds those calls' ids.
	spawnedBy map[string]string
	claimed   map[string]bool
	// unpairedTurn maps the id of a main-thread call read without its
	// result (transcript.Unpaired) to the turn it was issued in.
	unpairedTurn map[string]schema.Turn
	// placed is where each sub-agent's records go (placement); nil when
	// what it is worked out from changed since.
	placed map[string]schema.Turn
	// sentCall is a fingerprint of the follow-through each call was last
	// returned with; sentAnswer a fingerprint of each answer as last
	// returned (see Sent).
	sentCall   map[string]uint64
	sentAnswer map[string]uint64
	// Partial marks a builder that does not hold the session from its first
	// record (see schema.Analysis.Partial).
	Partial bool
	// Continues marks a builder dropped as its session went on past it (see
	// analysis.Session.Continues).
	Continues bool
}

// New starts the session id.
func New(id string) *Builder {
	return &Builder{
		id: id, callIdx: map[string]int{}, ansIdx: map[string]int{}, notAnswers: map[string]bool{},
		spawnedTurn: map[string]schema.Turn{}, spawnedBy: map[string]string{}, claimed: map[string]bool{},
		unpairedTurn: map[string]schema.Turn{},
		sentCall:     map[string]uint64{}, sentAnswer: map[string]uint64{},
	}
}

// ID is the session id.
func (b *Builder) ID() string { return b.id }

// followThrough is the part of a call that session analysis fills, and the
// analysis it reflects; the rest is fixed by the source, so a call's row
// changes only when this does. An analysis over more of the session is a
// change even when it concludes the same: the stored row must say how much
// of the session it reflects, whichever path wrote it. (FollowUpExact is
// not in it: analysis sets it from the call's own forensics alone.)
type followThrough struct {
	turn           schema.Turn
	target         string
	followedUp     bool
	unknown        bool // FollowUpUnknown
	continuationOf string
	coverage       schema.Ratio
	searched       bool
	analysis       schema.Analysis
}

func followOf(c *schema.ToolCall) followThrough {
	return followThrough{
		turn: c.Turn, target: c.Target, followedUp: c.FollowedUp, unknown: c.FollowUpUnknown,
		continuationOf: c.ContinuationOf, coverage: c.SessionCoverage, searched: c.Searched,
		analysis: c.Analysis,
	}
}

// callPrint is the fingerprint of a call's follow-through: equal
// fingerprints, equal rows (the rest of a call is fixed by its source).
// Every field of followThrough goes in, strings with their length so that
// no two follow-throughs share an encoding (TestCallPrintCoversFollowThrough).
// It is computed for every call of every emission, so it is encoded by hand
// rather than formatted (fmt's reflection was 2% of the collector's CPU).
func callPrint(c *schema.ToolCall) uint64 {
	return followOf(c).print()
}

func (f followThrough) print() uint64 {
	b := make([]byte, 0, 48+len(f.target)+len(f.continuationOf))
	// A known turn prints as it did when turns were plain integers, so the
	// fingerprints a processor stored before still match; unknown is -1,
	// which no turn was.
	turn := int64(-1)
	if f.turn.Known {
		turn = int64(f.turn.N)
	}
	b = binary.AppendVarint(b, turn)
	b = binary.AppendUvarint(b, uint64(len(f.target)))
	b = append(b, f.target...)
	b = binary.AppendUvarint(b, uint64(len(f.continuationOf)))
	b = append(b, f.continuationOf...)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f.coverage.V))
	var flags byte
	// A new flag goes last, so that the fingerprints stored before it
	// still match while it is unset.
	for i, set := range [...]bool{f.followedUp, f.coverage.Known, f.searched, f.analysis.Done, f.analysis.Partial, f.unknown} {
		if set {
			flags |= 1 << i
		}
	}
	b = append(b, flags)
	b = binary.AppendVarint(b, int64(f.analysis.Records))
	h := fnv.New64a()
	_, _ = h.Write(b) // a hash.Hash never returns an error
	return h.Sum64()
}

// AddCall stores a call (replacing one of the same id) and returns it with
// its turn placed in the parent's turn when it ran in a sub-agent whose
// spawning call is known (placement). spawnedAgentID names the sub-agent a
// Task call's result says it ran. emitted says the caller is about to emit
// the call as read; a call added without emitting was emitted before (by
// this process or a previous one), as read, unless this builder already
// knows better.
func (b *Builder) AddCall(c schema.ToolCall, spawnedAgentID string, emitted bool) schema.ToolCall {
	if spawnedAgentID != "" {
		if t, ok := b.spawnedTurn[spawnedAgentID]; !ok || t != c.Turn {
			b.spawnedTurn[spawnedAgentID] = c.Turn
			b.placed = nil
		}
	}
	if b.claimed[c.CallID] {
		b.placed = nil
	}
	if i, ok := b.callIdx[c.CallID]; ok {
		b.calls.set(i, &c)
	} else {
		b.callIdx[c.CallID] = b.calls.add(&c)
	}
	b.NotAnswer(c.MessageID)
	transcript.PlaceCall(&c, b.placement())
	if _, known := b.sentCall[c.CallID]; emitted || !known {
		b.sentCall[c.CallID] = callPrint(&c)
	}
	return c
}

// Unpaired records a call read without its result (transcript.Unpaired):
// the turn of a main-thread call places a sub-agent whose metadata names it
// (SpawnedBy), though the call never completed. Sub-agent calls are not
// kept: only the main thread's turns are the session's.
func (b *Builder) Unpaired(u *transcript.Unpaired) {
	if u.CallID == "" || u.Sidechain || u.AgentID != "" {
		return
	}
	if t, ok := b.unpairedTurn[u.CallID]; ok && t == u.Turn {
		return
	}
	b.unpairedTurn[u.CallID] = u.Turn
	if b.claimed[u.CallID] {
		b.placed = nil
	}
}

// SpawnedBy records what sub-agent agentID's own metadata says of the call
// that spawned it: callID, or "" for nothing (no metadata, or none that can
// be trusted — what it said before no longer counts). It is trusted only
// when callID is a call of the session's main thread (placement).
func (b *Builder) SpawnedBy(agentID, callID string) {
	if agentID == "" || b.spawnedBy[agentID] == callID {
		return
	}
	if callID == "" {
		delete(b.spawnedBy, agentID)
	} else {
		b.spawnedBy[agentID] = callID
	}
	clear(b.claimed)
	for _, id := range b.spawnedBy {
		b.claimed[id] = true
	}
	b.placed = nil
}

// placement is the turn each placed sub-agent's records belong to: the
// turn of the call that spawned it (docs/design.md §3.2). That call's
// result names the agent (agentId), or the agent's metadata names the call
// (SpawnedBy), which must then be a main-thread call of this session, with
// or without its result, in a known turn: a sub-agent's own turns are not
// the session's, and an id the session lacks places nothing. When the two
// name calls of different turns, nothing tells which is right: the agent is
// not placed, and its records' turn stays unknown.
func (b *Builder) placement() map[string]schema.Turn {
	if b.placed != nil {
		return b.placed
	}
	placed := make(map[string]schema.Turn, len(b.spawnedTurn)+len(b.spawnedBy))
	maps.Copy(placed, b.spawnedTurn)
	for agent, id := range b.spawnedBy {
		t, ok := b.mainThreadTurn(id)
		if !ok {
			continue
		}
		if r, byResult := placed[agent]; byResult && r != t {
			delete(placed, agent)
			continue
		}
		placed[agent] = t
	}
	b.placed = placed
	return placed
}

// mainThreadTurn is the known turn of main-thread call id, with or without
// its result; ok is false when the session holds no such call.
func (b *Builder) mainThreadTurn(id string) (t schema.Turn, ok bool) {
	if i, held := b.callIdx[id]; held {
		var c schema.ToolCall
		b.calls.decode(i, &c)
		if c.Sidechain || c.AgentID != "" {
			return schema.Turn{}, false
		}
		t = c.Turn
	} else if t, ok = b.unpairedTurn[id]; !ok {
		return schema.Turn{}, false
	}
	return t, t.Known
}

// HoldCall stores a call that nobody has emitted yet: the next analysis
// returns it whatever its follow-through. A call held again with different
// content (a source that re-sent it with other figures) is returned again
// too; held again unchanged, it is returned only if its follow-through
// changes, as usual. The builder keeps its own copy of *c (a call is 800
// bytes: passed by value it was copied at every step of the way in), as its
// MessagePack encoding — what c.MarshalMsg appends — which HoldCall
// returns, so that a caller storing the call elsewhere need not encode it
// again. The encoding is read-only and stays valid, unchanged, for as long
// as the builder lives; reading it needs no lock the builder needs.
func (b *Builder) HoldCall(c *schema.ToolCall) []byte {
	b.NotAnswer(c.MessageID)
	if b.claimed[c.CallID] {
		b.placed = nil
	}
	i, ok := b.callIdx[c.CallID]
	if ok {
		if b.calls.update(i, c) {
			delete(b.sentCall, c.CallID)
		}
	} else {
		i = b.calls.add(c)
		b.callIdx[c.CallID] = i
	}
	return b.calls.bytes(i)
}

// AddAnswer stores an answer candidate (replacing one of the same id). A
// candidate whose message issued a held call is not an answer and is
// ignored — and taken back in the next Result if an earlier builder of the
// session returned it (Restore), as NotAnswer takes back one held here.
func (b *Builder) AddAnswer(a schema.Answer) {
	if b.notAnswers[a.MessageID] {
		if _, returned := b.sentAnswer[a.MessageID]; returned {
			delete(b.sentAnswer, a.MessageID)
			b.retracted = append(b.retracted, a)
		}
		return
	}
	if i, ok := b.ansIdx[a.MessageID]; ok {
		b.answers[i] = a
		return
	}
	b.ansIdx[a.MessageID] = len(b.answers)
	b.answers = append(b.answers, a)
}

// NotAnswer records that message id is not an answer (a later line showed
// it to call a tool; see transcript.NotAnswer): the answer held for it is
// dropped, and taken back in the next Result if one was returned.
func (b *Builder) NotAnswer(id string) {
	if id == "" || b.notAnswers[id] {
		return
	}
	b.notAnswers[id] = true
	b.freshNotAnswers = append(b.freshNotAnswers, id)
	i, ok := b.ansIdx[id]
	if !ok {
		return
	}
	dropped := b.answers[i]
	b.answers = slices.Delete(b.answers, i, i+1)
	delete(b.ansIdx, id)
	for j := i; j < len(b.answers); j++ {
		b.ansIdx[b.answers[j].MessageID] = j
	}
	if _, returned := b.sentAnswer[id]; returned {
		delete(b.sentAnswer, id)
		b.retracted = append(b.retracted, dropped)
	}
}

// Records returns copies of the calls and answers held, as added.
func (b *Builder) Records() ([]schema.ToolCall, []schema.Answer) {
	return b.calls.all(), slices.Clone(b.answers)
}

// Calls is how many calls the builder holds.
func (b *Builder) Calls() int { return b.calls.len() }

// HasAnswer reports whether an answer of message id is held (a candidate
// not shown to be narration).
func (b *Builder) HasAnswer(id string) bool { _, ok := b.ansIdx[id]; return ok }

// HasCall reports whether a call of that id is held.
func (b *Builder) HasCall(id string) bool { _, ok := b.callIdx[id]; return ok }

// Empty reports a session with nothing to show: no calls, no answers, no turns.
func (b *Builder) Empty(meta *schema.Session) bool {
	return b.calls.len() == 0 && len(b.answers) == 0 && meta.Turns.N == 0
}

// Result is what an analysis returns.
type Result struct {
	Meta    schema.Session
	Calls   []schema.ToolCall // new, or whose follow-through changed since last returned
	Answers []schema.Answer   // new or changed
	// Retracted are the answers an earlier Result returned whose message has
	// since proved not to be one (it issued a tool call), as they were held
	// (ids, timestamp, turn, text; not analysed): what was written for them
	// must be taken back. Answers carries a retraction record for each.
	Retracted []schema.Answer
	// NotAnswers are the messages learned not to be answers since the last
	// committed Result. Another writer — an earlier process without the
	// builder's state, `ctxaudit ingest` of the file while it was being
	// written — may have stored one as an answer, which only the store
	// knows: a writer that can look them up takes those back
	// (docs/design.md §5.1).
	NotAnswers []string
}

// RetractedVerdict is the verdict of a retraction record.
const RetractedVerdict = "taken back: the message went on to call a tool, so it was not an answer"

// Retractable is what of answer a its retraction carries — its ids,
// timestamp (so the same partition), turn, source, model and agent; no
// text — for a caller that keeps it to take a back later.
func Retractable(a schema.Answer) schema.Answer {
	return schema.Answer{
		SessionID: a.SessionID, MessageID: a.MessageID, Timestamp: a.Timestamp, Turn: a.Turn,
		Source: a.Source, Model: a.Model, AgentID: a.AgentID, Sidechain: a.Sidechain,
	}
}

// Retraction is the record that takes back answer a: the same message (and
// timestamp, so the same partition) marked retracted, ranked by the
// analysis that took it back so that it replaces the answer's row.
func Retraction(a schema.Answer, by schema.Analysis) schema.Answer {
	r := Retractable(a)
	r.Risk, r.Absence, r.Verdict, r.Retracted, r.Analysis = schema.RiskNone, schema.AbsenceNone, RetractedVerdict, true, by
	return r
}

// Analyze runs session analysis over everything held — sub-agent records
// placed in the spawning turn, calls in issue order — and returns what
// changed since the last result, which it records as returned.
func (b *Builder) Analyze(meta schema.Session) Result {
	res := b.Pending(meta)
	b.Commit(res)
	return res
}

// Pending is Analyze without recording the result as returned: a caller
// whose emission can fail calls Commit once it succeeded, so a failed
// emission is returned again by the next analysis.
func (b *Builder) Pending(meta schema.Session) Result {
	calls, answers := b.calls.all(), slices.Clone(b.answers)
	transcript.Assemble(calls, answers, b.placement())
	// An answer whose record named no harness (a chat span without
	// ctxaudit.source) is the session's: filled here, at analysis, it is
	// the same whether the answer came before the session's first call or
	// after, and whether the session was held all along or read back.
	for i := range answers {
		if answers[i].Source == "" {
			answers[i].Source = meta.Source
		}
	}

	as := analysis.Session{Meta: meta, Calls: calls, Answers: answers, Partial: b.Partial, NotAnswers: len(b.notAnswers),
		Continues: b.Continues}
	analysis.Analyze(&as)

	res := Result{Meta: as.Meta, Retracted: slices.Clone(b.retracted), NotAnswers: slices.Clone(b.freshNotAnswers)}
	// calls and answers are this analysis's own copies: what was returned
	// unchanged is taken out of them in place.
	res.Calls = slices.DeleteFunc(as.Calls, func(c schema.ToolCall) bool {
		prev, ok := b.sentCall[c.CallID]
		return ok && prev == callPrint(&c)
	})
	res.Answers = slices.DeleteFunc(as.Answers, func(a schema.Answer) bool {
		prev, ok := b.sentAnswer[a.MessageID]
		return ok && prev == hashAnswer(&a)
	})
	for _, a := range res.Retracted {
		res.Answers = append(res.Answers, Retraction(a, res.Meta.Analysis))
	}
	return res
}

// Commit records res (from Pending) as returned and gives the fingerprints
// it recorded, for a caller that keeps them across restarts (Restore).
func (b *Builder) Commit(res Result) Sent {
	s := Sent{Calls: make(map[string]uint64, len(res.Calls)), Answers: make(map[string]uint64, len(res.Answers))}
	// The retractions res carried are delivered; any made since stay.
	b.retracted = slices.DeleteFunc(b.retracted, func(a schema.Answer) bool {
		return slices.ContainsFunc(res.Retracted, func(r schema.Answer) bool { return r.MessageID == a.MessageID })
	})
	// Messages are only ever added to freshNotAnswers, so those res listed
	// are its first ones.
	b.freshNotAnswers = slices.Delete(b.freshNotAnswers, 0, min(len(res.NotAnswers), len(b.freshNotAnswers)))
	for i := range res.Calls {
		c := &res.Calls[i]
		s.Calls[c.CallID] = callPrint(c)
		b.sentCall[c.CallID] = s.Calls[c.CallID]
	}
	for i := range res.Answers {
		a := &res.Answers[i]
		if a.Retracted {
			// Not an answer: nothing of it is returned again, and a builder
			// restored from these fingerprints must not take it back again.
			s.Retracted = append(s.Retracted, a.MessageID)
			continue
		}
		s.Answers[a.MessageID] = hashAnswer(a)
		b.sentAnswer[a.MessageID] = s.Answers[a.MessageID]
	}
	return s
}

// Sent is what a builder last returned of each record, as fingerprints by
// call id and answer message id: with the records themselves, enough to
// rebuild a builder after a restart that returns only what changed.
type Sent struct {
	Calls   map[string]uint64 `json:"calls,omitempty"`
	Answers map[string]uint64 `json:"answers,omitempty"`
	// Retracted are the answers taken back (their retractions returned):
	// no longer returned, whatever an earlier Sent says (Merge).
	Retracted []string `json:"retracted,omitempty"`
}

// Merge folds later fingerprints into s: a record's later fingerprint
// replaces its earlier one, and an answer taken back is no longer returned.
func (s *Sent) Merge(later Sent) {
	if s.Calls == nil {
		s.Calls = map[string]uint64{}
	}
	if s.Answers == nil {
		s.Answers = map[string]uint64{}
	}
	maps.Copy(s.Calls, later.Calls)
	maps.Copy(s.Answers, later.Answers)
	for _, id := range later.Retracted {
		delete(s.Answers, id)
	}
}

// Restore records fingerprints (from Commit, possibly of an earlier
// process) as returned; a later one of the same record replaces an earlier.
// A caller rebuilding a builder restores first and then adds the records
// again: what the builder learns from them is then weighed against what was
// returned — an answer returned before whose message proves to have called
// a tool is taken back, and a call held again with other content than it
// was returned with is returned again. Restored after the records, both
// were lost: the answer's row stayed, stating an answer the message never
// was (FuzzIncrementalAnalysisStoresTheOneShotRows in schema/chstore).
func (b *Builder) Restore(s Sent) {
	for id, p := range s.Calls {
		b.sentCall[id] = p
	}
	for id, p := range s.Answers {
		b.sentAnswer[id] = p
	}
	for _, id := range s.Retracted {
		delete(b.sentAnswer, id)
	}
}

// plainAnswer is an answer's fields without schema.Answer's MarshalJSON:
// a fingerprint needs the fields, not the JSON readers are given (whose
// wrapper encodes every answer twice, and would change the fingerprints a
// processor stored before it).
type plainAnswer schema.Answer

func hashAnswer(a *schema.Answer) uint64 {
	h := fnv.New64a()
	// An answer is plain data; encoding cannot fail, and if it ever did the
	// hash of the partial output would merely cause one more emission.
	_ = json.NewEncoder(h).Encode((*plainAnswer)(a))
	fmt.Fprintf(h, "%+v", a.Analysis) // not in the JSON, but a change
	return h.Sum64()
}

// MergeMeta folds the session metadata of a session's files into one: the
// first (the main thread) names the session, the others add their usage,
// compactions and time span and fill what it lacks.
func MergeMeta(metas ...schema.Session) schema.Session {
	var m schema.Session
	for i, o := range metas {
		if i == 0 {
			m = o
			continue
		}
		transcript.MergeSession(&m, o)
	}
	return m
}

// NotAnswers are messages of one session known not to be answers (a
// Result's NotAnswers), and the analysis that knew it: a writer whose store
// may hold one of them as an answer — written by another path or an
// earlier process that did not know — takes it back (Retractions).
type NotAnswers struct {
	SessionID  string
	MessageIDs []string
	By         schema.Analysis
}

// Lookup is the messages of learned by session id, as a store's look-up of
// standing answers takes them.
func Lookup(learned []NotAnswers) map[string][]string {
	ids := make(map[string][]string, len(learned))
	for _, n := range learned {
		ids[n.SessionID] = append(ids[n.SessionID], n.MessageIDs...)
	}
	return ids
}

// Retractions are the records that take back standing — answers a store
// holds for messages of learned — each ranked by the analysis that learned
// its message was no answer. A message learned twice (the same session in
// two batches, or from two paths) gets a retraction from each; the store
// keeps the one of highest rank.
func Retractions(learned []NotAnswers, standing []schema.Answer) []schema.Answer {
	if len(standing) == 0 {
		return nil
	}
	held := make(map[[2]string]schema.Answer, len(standing))
	for _, a := range standing {
		held[[2]string{a.SessionID, a.MessageID}] = a
	}
	var out []schema.Answer
	for _, n := range learned {
		for _, id := range n.MessageIDs {
			if a, ok := held[[2]string{n.SessionID, id}]; ok {
				out = append(out, Retraction(a, n.By))
			}
		}
	}
	return out
}
