package analysis

import (
	"iter"
	"path"
	"strings"

	"github.com/ctxaudit/ctxaudit/schema"
)

// Truncated reports whether the harness delivered less than call c asked
// for, in any kind, including suspected: the calls follow-through judges
// (followed_up means something for these only). A partial view by request
// is not truncated unless forensics says it got less than it asked for
// (docs/design.md §4.3).
func Truncated(c *schema.ToolCall) bool {
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
	truncated := Truncated(c)
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
	for d := range dirsAbove(a.key) {
		k := scope + "file:" + d
		tr.dirs[k] = append(tr.dirs[k], t)
	}
}

// dirsAbove yields the directories above file key k ("file:/a/b.go": "/a",
// "/"): those a recursive search reaches the file through, as the key
// "file:" + dir of the search's access.
func dirsAbove(k string) iter.Seq[string] {
	return func(yield func(string) bool) {
		p := strings.TrimPrefix(k, "file:")
		for {
			d := path.Dir(p)
			if d == p || !yield(d) {
				return
			}
			p = d
		}
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

// markFollowUpsUnknown flags (FollowUpUnknown) each cut call no call
// followed up whose follow-up a call nothing orders may have been. Such a
// call (unordered) takes no part in the sweep, so whether it came after the
// cut call is not known; if it would have continued the cut call had it come
// after, the cut call's follow-up is not known. A cut call that no such call
// could have continued keeps its known "not followed up". When the cut call
// is the unordered one, every other call of its thread may have come after
// it (docs/design.md §4.12).
func markFollowUpsUnknown(calls []schema.ToolCall, infos []callInfo) {
	var ofUnordered, ofAll followers
	for i := range calls {
		c := &calls[i]
		if c.FollowedUp || !Truncated(c) {
			continue
		}
		idx := &ofUnordered
		if unordered(c) {
			idx = &ofAll
		}
		if idx.byKey == nil {
			idx.index(calls, infos, idx == &ofAll)
		}
		c.FollowUpUnknown = idx.mayContinue(calls, infos, i)
	}
}

// followers indexes the accesses that may follow up a cut call — reads and
// searches — by their thread and target (without the scope of its own an
// unordered call's accesses have in the sweep), the alike ones as one class,
// so that a session of many alike calls costs one check per cut call and
// class, as the sweep's groups do (BenchmarkAnalyzeUnorderedRepeats).
type followers struct {
	byKey map[string][]*followerClass
}

// followerClass is the accesses of one thread and target that continue the
// same cut calls: the same mode and view and, for a read, request.
type followerClass struct {
	mode      AccessMode
	recursive bool
	s         seen
	args      string
	// of: up to two of its calls, distinct (n of them), enough to tell
	// whether one is not the cut call itself.
	of [2]int
	n  int
}

func threadKey(c *schema.ToolCall, a *access) string { return threadOf(c) + a.key }

// index takes the accesses of the unordered calls, or, with all, of every
// call.
func (f *followers) index(calls []schema.ToolCall, infos []callInfo, all bool) {
	type classKey struct {
		key       string
		mode      AccessMode
		recursive bool
		s         seen
		args      string
	}
	f.byKey = make(map[string][]*followerClass)
	classes := make(map[classKey]*followerClass)
	for i := range calls {
		u := &calls[i]
		if !all && !unordered(u) {
			continue
		}
		for k := range infos[i].acc {
			a := &infos[i].acc[k]
			ck := classKey{key: threadKey(u, a), mode: a.Mode}
			switch a.Mode {
			case AccessRead:
				ck.s, ck.args = seenBy(u, *a, Truncated(u)), infos[i].request
			case AccessSearch:
				ck.recursive = a.Recursive // what a search saw plays no part
			default:
				continue
			}
			cl := classes[ck]
			if cl == nil {
				cl = &followerClass{mode: ck.mode, recursive: ck.recursive, s: ck.s, args: ck.args}
				classes[ck] = cl
				f.byKey[ck.key] = append(f.byKey[ck.key], cl)
			}
			if cl.n == 0 || (cl.n == 1 && cl.of[0] != i) {
				cl.of[cl.n] = i
				cl.n++
			}
		}
	}
}

// other reports whether the class holds a call other than call i: a call
// never continues itself.
func (cl *followerClass) other(i int) bool { return cl.n == 2 || (cl.n == 1 && cl.of[0] != i) }

// mayContinue reports whether an indexed access of a call other than cut
// call i would continue it, had it come after it: the test the sweep makes
// (tracker.followUp, continues) on the groups call i registers.
func (f *followers) mayContinue(calls []schema.ToolCall, infos []callInfo, i int) bool {
	c := &calls[i]
	for k := range infos[i].acc {
		a := &infos[i].acc[k]
		if !a.Self || a.Mode != AccessRead {
			continue // what tracker.register does not wait on
		}
		g := truncGroup{key: groupKey{s: seenBy(c, *a, true), args: infos[i].request}}
		for _, cl := range f.byKey[threadKey(c, a)] {
			if cl.other(i) && continues(cl.mode, cl.s, cl.args, &g) {
				return true
			}
		}
		if a.Kind != TargetFile {
			continue
		}
		for d := range dirsAbove(a.key) {
			for _, cl := range f.byKey[threadOf(c)+"file:"+d] {
				if cl.mode == AccessSearch && cl.recursive && cl.other(i) {
					return true
				}
			}
		}
	}
	return false
}
