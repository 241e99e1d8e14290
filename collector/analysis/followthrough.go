package analysis

import (
	"path"
	"strings"

	"github.com/ctxaudit/ctxaudit/schema"
)

// isTruncated: the harness delivered less than the call asked for, in any
// kind, including suspected. A partial view by request is not truncated
// unless forensics says it got less than it asked for (docs/design.md §4.3).
func isTruncated(c *schema.ToolCall) bool {
	if c.Truncated {
		return true
	}
	if c.PartialByRequest {
		return false
	}
	switch c.Kind {
	case schema.KindExplicit, schema.KindSilent, schema.KindSuspected:
		return true
	}
	return c.Strategy == schema.StrategyRefused || c.Strategy == schema.StrategyCleared
}

// truncGroup collects the truncated calls of one target that saw the same
// thing through the same request: a later call continues all of them or
// none, so repeats (the same WebFetch ten times) cost one check, not ten.
type truncGroup struct {
	members []int // call indices, ascending
	// members[:followed] have FollowedUp set, members[:searched] Searched.
	followed, searched int
	key                groupKey
}

type groupKey struct {
	s    seen
	args string // tool and arguments
}

// continues reports whether a later access (mode, what it saw s, request
// args) reads more of a target than the truncated calls of group g did.
func continues(mode AccessMode, s seen, args string, g *truncGroup) bool {
	switch mode {
	case AccessSearch:
		return true // searched the whole original, though not read
	case AccessRead:
		if !s.delivered {
			return false
		}
		if s.whole || s.positioned || s.fromEnd > 0 {
			return !s.within(g.key.s)
		}
		// Nothing says where this view lies; a different request reads
		// something else, the same request the same thing again.
		return args != g.key.args
	}
	return false
}

// tracker walks a session's calls in order, keeping per target what has been
// seen and which truncated calls wait for a follow-up.
type tracker struct {
	calls []schema.ToolCall
	infos []callInfo
	// targets by agent thread and target key: a sub-agent reading the rest of
	// a file does not put it in the main thread's context.
	targets map[string]*targetState
	// dirs lists, per directory key, the truncated file targets below it, so
	// that a recursive search of the directory counts as searching them.
	dirs map[string][]*targetState
	// self holds, per call, the targets its own output is part of.
	self [][]*targetState
}

func newTracker(calls []schema.ToolCall, infos []callInfo) *tracker {
	return &tracker{
		calls:   calls,
		infos:   infos,
		targets: make(map[string]*targetState),
		dirs:    make(map[string][]*targetState),
		self:    make([][]*targetState, len(calls)),
	}
}

func (tr *tracker) target(key string) *targetState {
	t := tr.targets[key]
	if t == nil {
		t = &targetState{}
		tr.targets[key] = t
	}
	return t
}

// add takes call i into account: marks the earlier truncated calls it
// continues, adds what it saw to its targets, and registers it if it was
// itself truncated.
func (tr *tracker) add(i int) {
	c := &tr.calls[i]
	truncated := isTruncated(c)
	info := &tr.infos[i]
	latest := -1
	for k, a := range info.acc {
		key := info.keys[k]
		switch a.Mode {
		case AccessSearch:
			// A search adds nothing seen; it only follows up what is there.
			if t := tr.targets[key]; t != nil {
				latest = max(latest, tr.followUp(i, t, AccessSearch, seen{}, info.request))
			}
			if a.Recursive {
				for _, below := range tr.dirs[key] {
					latest = max(latest, tr.followUp(i, below, AccessSearch, seen{}, info.request))
				}
			}
			continue
		case AccessRead:
		default:
			continue // named or written, not read
		}
		t := tr.target(key)
		s := seenBy(c, a, truncated)
		latest = max(latest, tr.followUp(i, t, AccessRead, s, info.request))
		t.add(s)
		if s.delivered {
			t.pieces++
			t.refetched = t.refetched || c.RefetchedSource
		}
		t.learnSize(c, a, s, truncated)
		if a.Self {
			tr.self[i] = append(tr.self[i], t)
			if truncated {
				tr.register(i, t, info.scope, a, s, info.request)
			}
		}
	}
	if latest >= 0 {
		c.ContinuationOf = tr.calls[latest].CallID
	}
}

// followUp marks the truncated calls of t that call i continues and returns
// the latest of them, or -1.
func (tr *tracker) followUp(i int, t *targetState, mode AccessMode, s seen, args string) int {
	latest := -1
	for _, g := range t.groups {
		n := len(g.members)
		for n > 0 && g.members[n-1] >= i {
			n-- // a call never continues itself
		}
		if n == 0 || !continues(mode, s, args, g) {
			continue
		}
		latest = max(latest, g.members[n-1])
		for ; g.followed < n; g.followed++ {
			tr.calls[g.members[g.followed]].FollowedUp = true
		}
		if mode == AccessSearch {
			for ; g.searched < n; g.searched++ {
				tr.calls[g.members[g.searched]].Searched = true
			}
		}
	}
	return latest
}

func (tr *tracker) register(i int, t *targetState, scope string, a access, s seen, args string) {
	k := groupKey{s: s, args: args}
	g := t.groupOf(k)
	g.members = append(g.members, i)
	if t.indexed || a.Kind != TargetFile {
		return
	}
	t.indexed = true
	p := strings.TrimPrefix(a.key, "file:")
	for {
		d := path.Dir(p)
		if d == p {
			break
		}
		tr.dirs[scope+"file:"+d] = append(tr.dirs[scope+"file:"+d], t)
		p = d
	}
}

func (t *targetState) groupOf(k groupKey) *truncGroup {
	if g := t.groupIdx[k]; g != nil {
		return g
	}
	if t.groupIdx == nil {
		t.groupIdx = make(map[groupKey]*truncGroup)
	}
	g := &truncGroup{key: k}
	t.groupIdx[k] = g
	t.groups = append(t.groups, g)
	return g
}

// coverage of call i so far: the best coverage of the targets its own output
// belongs to (its natural target and its saved full output).
func (tr *tracker) coverage(i int) schema.Ratio {
	r, _, _ := tr.coverageOf(i)
	return r
}

// coverageOf is coverage, whether it is only an upper bound (a share of a
// lower-bound original), and whether the target it comes from was pieced
// together from separate fetches of a source that may have changed.
func (tr *tracker) coverageOf(i int) (best schema.Ratio, upper, mixed bool) {
	anyMixed := false
	for _, t := range tr.self[i] {
		anyMixed = anyMixed || t.mixedVersions()
		if r, u := t.coverageBound(); r.Known && (!best.Known || r.V > best.V) {
			best, upper, mixed = r, u, t.mixedVersions()
		}
	}
	if !best.Known {
		mixed = anyMixed
	}
	return best, upper, mixed
}
