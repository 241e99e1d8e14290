package report

import "github.com/ctxaudit/ctxaudit/schema"

// SessionFromRecords stands in for a missing sessions row (a collector that
// has written calls but not yet the session): it summarises the records at
// hand, so its counts are those of the scope, not necessarily the session.
func SessionFromRecords(id string, calls []schema.ToolCall, answers []schema.Answer) schema.Session {
	s := schema.Session{SessionID: id, MaxRisk: schema.RiskNone}
	turns := map[schema.Turn]bool{}
	widen := func(c schema.ToolCall) {
		if s.StartedAt.IsZero() || c.Timestamp.Before(s.StartedAt) {
			s.StartedAt = c.Timestamp
		}
		if c.Timestamp.After(s.EndedAt) {
			s.EndedAt = c.Timestamp
		}
	}
	for _, c := range calls {
		if s.Source == "" {
			s.Source, s.HarnessVersion, s.Model = c.Source, c.HarnessVersion, c.Model
			s.Project, s.Cwd, s.GitBranch, s.SourceFile = c.Project, c.Cwd, c.GitBranch, c.SourceFile
		}
		widen(c)
		turns[c.Turn] = true
		s.ToolCalls++
		if c.Truncated {
			s.TruncatedCalls++
			if c.Kind == schema.KindSilent {
				s.SilentCalls++
			}
		}
	}
	for _, a := range answers {
		if s.Source == "" {
			s.Source, s.Model = a.Source, a.Model
		}
		widen(schema.ToolCall{Timestamp: a.Timestamp})
		turns[a.Turn] = true
		s.Answers++
		if a.Risk.Severity() > schema.RiskNone.Severity() {
			s.RiskyAnswers++
		}
		if a.Risk.Severity() > s.MaxRisk.Severity() {
			s.MaxRisk = a.Risk
		}
	}
	s.Turns = schema.KnownInt(len(turns))
	if turns[schema.Turn{}] {
		s.Turns = schema.Unknown // a record of unknown turn may be in any of them
	}
	return s
}
