package transcript

import (
	"sort"
	"time"

	"github.com/ctxaudit/ctxaudit/schema"
)

// MergeSession folds the metadata of another file of the same session (a
// sub-agent thread) into main's: the main thread names the session; the
// others add their usage and compactions, widen its time span, and fill
// what the main thread left empty.
func MergeSession(main *schema.Session, other schema.Session) {
	main.InputTokens = schema.SumTokens(main.InputTokens, other.InputTokens)
	main.OutputTokens = schema.SumTokens(main.OutputTokens, other.OutputTokens)
	main.Compactions = main.Compactions.Plus(other.Compactions)
	if !other.StartedAt.IsZero() && (main.StartedAt.IsZero() || other.StartedAt.Before(main.StartedAt)) {
		main.StartedAt = other.StartedAt
	}
	if other.EndedAt.After(main.EndedAt) {
		main.EndedAt = other.EndedAt
	}
	if main.Source == "" {
		main.Source = other.Source
	}
	for _, f := range []struct {
		dst *string
		src string
	}{
		{&main.SessionID, other.SessionID}, {&main.HarnessVersion, other.HarnessVersion}, {&main.Model, other.Model},
		{&main.Cwd, other.Cwd}, {&main.Project, other.Project}, {&main.GitBranch, other.GitBranch},
	} {
		if *f.dst == "" {
			*f.dst = f.src
		}
	}
}

// Assemble puts a session's records in the order session analysis expects:
// sub-agent calls and answers move into the turn of the call that spawned
// their agent (spawnedTurn: agent id → turn), calls are ordered as issued
// (time, then file and line; issueTimes) and answers by time. Both the
// one-shot ingest and the collector's receiver use it, so they analyse
// sessions alike.
func Assemble(calls []schema.ToolCall, answers []schema.Answer, spawnedTurn map[string]schema.Turn) {
	for i := range calls {
		PlaceCall(&calls[i], spawnedTurn)
	}
	for i := range answers {
		if a := &answers[i]; a.Sidechain {
			if t, ok := spawnedTurn[a.AgentID]; ok {
				a.Turn = t
			}
		}
	}
	sort.Stable(byIssue{calls, issueTimes(calls)})
	sort.SliceStable(answers, func(i, j int) bool { return answers[i].Timestamp.Before(answers[j].Timestamp) })
	addSubAgentInputs(calls, answers, spawnedTurn)
}

// addSubAgentInputs makes the calls a sub-agent made before a main-thread
// answer inputs of that answer when they sit in its turn (docs/design.md §5.1: an
// answer's inputs are the calls of its turn before it). The main thread
// sees only the sub-agent's report, which was built on them, so a cut the
// sub-agent never recovered from is an incomplete input of the answer that
// relays it. A call whose time or the answer's is not known may have come
// before it: such a call is added too, and the answer's inputs are then
// only the calls it may rest on (InputsUncertain).
func addSubAgentInputs(calls []schema.ToolCall, answers []schema.Answer, spawnedTurn map[string]schema.Turn) {
	if len(spawnedTurn) == 0 {
		return
	}
	for i := range answers {
		a := &answers[i]
		if a.Sidechain || a.InputCallIDs == nil {
			continue
		}
		have := make(map[string]bool, len(a.InputCallIDs))
		for _, id := range a.InputCallIDs {
			have[id] = true
		}
		for j := range calls {
			c := &calls[j]
			// Without both times, the call is not known to come before the
			// answer, nor after it: it is one the answer may rest on.
			timed := schema.TimeKnown(c.Timestamp) && schema.TimeKnown(a.Timestamp)
			if !c.Sidechain || c.Turn != a.Turn || c.CallID == "" || have[c.CallID] || timed && c.Timestamp.After(a.Timestamp) {
				continue
			}
			if _, placed := spawnedTurn[c.AgentID]; !placed {
				continue
			}
			a.InputCallIDs = append(a.InputCallIDs, c.CallID)
			a.InputsUncertain = a.InputsUncertain || !timed
			have[c.CallID] = true
		}
	}
}

// PlaceCall moves a sub-agent call into the turn that spawned its agent.
func PlaceCall(c *schema.ToolCall, spawnedTurn map[string]schema.Turn) {
	if c.Sidechain {
		if t, ok := spawnedTurn[c.AgentID]; ok {
			c.Turn = t
		}
	}
}

// issueTimes gives each call the time it is ordered by: its own, or, when
// its time is not known (a malformed timestamp on its line), the latest time
// known of the calls on earlier lines of its file — a transcript's record
// was written after the lines before it. Sorted by its zero time instead, a
// call stood before every timed call of the session, and analysis took it
// for an input, known to precede them, of answers it may well have
// followed. A call that neither places (a span without a time, a file's
// first lines) is ordered first; its own time stays unknown either way.
func issueTimes(calls []schema.ToolCall) []time.Time {
	at := make([]time.Time, len(calls))
	var files map[string][]int
	for i := range calls {
		c := &calls[i]
		at[i] = c.Timestamp
		if !schema.TimeKnown(c.Timestamp) && c.SourceFile != "" && files == nil {
			files = make(map[string][]int)
		}
	}
	if files == nil {
		return at
	}
	for i := range calls {
		if f := calls[i].SourceFile; f != "" {
			files[f] = append(files[f], i)
		}
	}
	for _, idx := range files {
		sort.SliceStable(idx, func(x, y int) bool { return calls[idx[x]].SourceLine < calls[idx[y]].SourceLine })
		var latest time.Time
		for _, i := range idx {
			switch t := calls[i].Timestamp; {
			case !schema.TimeKnown(t):
				at[i] = latest
			case t.After(latest):
				latest = t
			}
		}
	}
	return at
}

// byIssue sorts calls by their issue times (issueTimes), then file and
// line, then call id.
type byIssue struct {
	calls []schema.ToolCall
	at    []time.Time
}

func (s byIssue) Len() int { return len(s.calls) }

func (s byIssue) Swap(i, j int) {
	s.calls[i], s.calls[j] = s.calls[j], s.calls[i]
	s.at[i], s.at[j] = s.at[j], s.at[i]
}

func (s byIssue) Less(i, j int) bool {
	a, b := &s.calls[i], &s.calls[j]
	if !s.at[i].Equal(s.at[j]) {
		return s.at[i].Before(s.at[j])
	}
	if a.SourceFile != b.SourceFile {
		return a.SourceFile < b.SourceFile
	}
	if a.SourceLine != b.SourceLine {
		return a.SourceLine < b.SourceLine
	}
	// Spans name no file or line: the call id keeps their order stable.
	return a.CallID < b.CallID
}
