package chstore

import (
	"fmt"
	"sync"
	"time"

	"github.com/ctxaudit/ctxaudit/schema"
)

// Versioning: a row's version grows with what the row knows.
//
// Every table is a ReplacingMergeTree(version) keyed on the record's stable
// id, and every read keeps the row of highest version (FINAL, argMax, or
// ORDER BY version DESC LIMIT 1 BY). A version that were only the write time
// would let whichever path wrote last win, even when it knew less: a
// collector re-reading a folder that `ctxaudit ingest --store-content all`
// had loaded would drop the links to the stored texts, a processor that
// restarted a session's buffer would put a partial session over the whole
// one, and a call's as-read and analysed rows written in one INSERT would
// tie. So the version is a knowledge rank in the high bits and a write clock
// in the low bits:
//
//	bit  63      analysed   session analysis filled the row (follow-through,
//	                        verdict, counts); a call as read has 0
//	bit  62      complete   the analysis saw the session from its first record
//	bits 46..61  extent     calls + answers + messages known to be no answers
//	                        the analysis saw (capped at 65,535)
//	bits 44..45  links      content links the row carries (original_sha256,
//	                        context_sha256): 0–2
//	bits 41..43  sizes      original and context sizes known (0–8, capped at 7)
//	bits  0..40  clock      milliseconds since 2025-01-01 UTC, strictly
//	                        increasing per Store (good until 2094)
//
// Ranks compare field by field from the top, so a row replaces another only
// when it knows at least as much in the order above, and — for equal
// knowledge — was written later. The same record written by any path gets
// the same rank, because the rank is computed here from the record alone.
//
// Ties are impossible: within one INSERT the writer keeps one row per id
// (the one that knows most, the later one of equals), and the clock gives
// every INSERT of a Store its own value. FINAL, argMax(…, version) and
// LIMIT 1 BY therefore always pick the same row.
//
// Extent ranks above links because an analysis over more of the session
// says more about every call (a later call may have read the rest). So that
// such a write does not drop the links an earlier one stored, WriteToolCalls
// first carries the stored links over to rows that lack them: the links name
// the call's own output texts, which no later write changes. (Two writers
// racing on one call can still miss each other's links; the rank then keeps
// the linked row among rows of equal extent.)
//
// Answers and sessions carry no links and no sizes; their rank is analysed,
// complete and extent. A stored tool output ranks an uncapped text over a
// capped one.
const (
	clockBits  = 41
	sizesShift = clockBits
	sizesBits  = 3
	linksShift = sizesShift + sizesBits
	linksBits  = 2
	extShift   = linksShift + linksBits
	extBits    = 16
	fullShift  = extShift + extBits
	doneShift  = fullShift + 1

	clockMask = 1<<clockBits - 1
)

// partiallyAnalysed is the SQL condition that a row was filled by an
// analysis that did not see its session from the first record: the top
// two bits of its version are 10 (analysed set, complete clear), i.e. its
// version divided by 2^fullShift is 2 (bitTest is not in 18.16).
var partiallyAnalysed = fmt.Sprintf("intDiv(version, %d) = 2", uint64(1)<<fullShift)

// versionEpoch is where the clock starts.
var versionEpoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// versionClock hands out strictly increasing clock values: a later INSERT
// of the same Store never gets an equal or smaller one, whatever the wall
// clock does.
type versionClock struct {
	mu   sync.Mutex
	last uint64
	now  func() time.Time
}

func (c *versionClock) tick() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now
	if c.now != nil {
		now = c.now
	}
	var ms uint64
	if d := now().Sub(versionEpoch); d > 0 {
		ms = uint64(d / time.Millisecond)
	}
	c.last = max(ms, c.last+1)
	return c.last & clockMask
}

// version combines a rank (from one of the rank functions) with a clock value.
func version(rank, clock uint64) uint64 { return rank | clock&clockMask }

func bit(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func analysisRank(a schema.Analysis) uint64 {
	if !a.Done {
		return 0
	}
	ext := uint64(min(max(a.Records, 0), 1<<extBits-1))
	return 1<<doneShift | bit(!a.Partial)<<fullShift | ext<<extShift
}

// toolCallRank is what a tool-call row knows.
func toolCallRank(r *schema.ToolCall) uint64 {
	links := bit(r.OriginalSHA256 != "") + bit(r.ContextSHA256 != "")
	sizes := uint64(0)
	for _, c := range [...]schema.Count{
		r.Original.Bytes, r.Original.Chars, r.Original.Lines, r.Original.Tokens,
		r.Context.Bytes, r.Context.Chars, r.Context.Lines, r.Context.Tokens,
	} {
		sizes += bit(c.Known)
	}
	sizes = min(sizes, 1<<sizesBits-1)
	return analysisRank(r.Analysis) | links<<linksShift | sizes<<sizesShift
}

// analysisOfVersion reads back the analysis a stored row's version ranks
// (Records is capped as in the version).
func analysisOfVersion(v uint64) schema.Analysis {
	if v>>doneShift&1 == 0 {
		return schema.Analysis{}
	}
	return schema.Analysis{Done: true, Partial: v>>fullShift&1 == 0, Records: int(v >> extShift & (1<<extBits - 1))}
}

func answerRank(r *schema.Answer) uint64 { return analysisRank(r.Analysis) }

func sessionRank(r *schema.Session) uint64 { return analysisRank(r.Analysis) }

func toolOutputRank(r *schema.ToolOutput) uint64 { return bit(!r.Capped) << doneShift }

func toolCallKey(r *schema.ToolCall) string { return r.SessionID + "\x00" + r.CallID }

func answerKey(r *schema.Answer) string { return r.SessionID + "\x00" + r.MessageID }

func sessionKey(r *schema.Session) string { return r.SessionID }

func toolOutputKey(r *schema.ToolOutput) string { return r.SHA256 }

// bestPerKey keeps one row per key: the one of highest rank, the later of
// equals, in the order the survivors first appeared. Rows of one INSERT
// share a clock value, so two rows of one id in it would tie.
func bestPerKey[T any](rows []T, key func(*T) string, rank func(*T) uint64) []T {
	at := make(map[string]int, len(rows))
	dup := false
	for i := range rows {
		k := key(&rows[i]) // a key is built, not looked up: once per row
		if _, ok := at[k]; ok {
			dup = true
			break
		}
		at[k] = i
	}
	if !dup {
		return rows
	}
	clear(at)
	out := make([]T, 0, len(rows))
	for i := range rows {
		k := key(&rows[i])
		j, ok := at[k]
		if !ok {
			at[k] = len(out)
			out = append(out, rows[i])
			continue
		}
		if rank(&rows[i]) >= rank(&out[j]) {
			out[j] = rows[i]
		}
	}
	return out
}

// Rank is the knowledge rank of a tool-call, answer or session row — its
// version without the write clock — exactly as the writer computes it; false
// for any other value. The tables keep, per id, the row of highest rank and,
// of equal ranks, the later write: a model of them (a test of a path that
// does not write through a Store, say) keeps the same row with this.
func Rank(row any) (uint64, bool) {
	switch r := row.(type) {
	case *schema.ToolCall:
		return toolCallRank(r), true
	case *schema.Answer:
		return answerRank(r), true
	case *schema.Session:
		return sessionRank(r), true
	}
	return 0, false
}
