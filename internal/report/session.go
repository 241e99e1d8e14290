package report

import (
	"time"

	"github.com/ctxaudit/ctxaudit/collector/analysis"
	"github.com/ctxaudit/ctxaudit/schema"
)

// SessionFromRecords stands in for a missing sessions row (a collector that
// has written calls but not yet the session's analysis): it summarises the
// records at hand by the rules session analysis counts by, so its counts
// are those of the scope, not necessarily the session's. Its turn count is
// unknown: the records of a scope do not say how many prompts the session
// had (a transcript counts turns without calls, and --answer reads one).
func SessionFromRecords(id string, calls []schema.ToolCall, answers []schema.Answer) schema.Session {
	s := schema.Session{SessionID: id}
	widen := func(t time.Time) {
		if !schema.TimeKnown(t) {
			return // no time: it widens nothing
		}
		if s.StartedAt.IsZero() || t.Before(s.StartedAt) {
			s.StartedAt = t
		}
		if t.After(s.EndedAt) {
			s.EndedAt = t
		}
	}
	for _, c := range calls {
		if s.Source == "" {
			s.Source, s.HarnessVersion, s.Model = c.Source, c.HarnessVersion, c.Model
			s.Project, s.Cwd, s.GitBranch, s.SourceFile = c.Project, c.Cwd, c.GitBranch, c.SourceFile
		}
		widen(c.Timestamp)
	}
	for _, a := range answers {
		if s.Source == "" {
			s.Source, s.Model = a.Source, a.Model
		}
		widen(a.Timestamp)
	}
	s = analysis.Counts(s, calls, answers)
	s.Turns = schema.Unknown
	return s
}
