package analysis

import (
	"time"

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
	for _, c := range calls {
		if s.Source == "" {
			s.Source, s.HarnessVersion, s.Model = c.Source, c.HarnessVersion, c.Model
			s.Project, s.Cwd, s.GitBranch, s.SourceFile = c.Project, c.Cwd, c.GitBranch, c.SourceFile
		}
	}
	for _, a := range answers {
		if s.Source == "" {
			s.Source, s.Model = a.Source, a.Model
		}
	}
	widen(&s, calls, answers)
	s = Counts(s, calls, answers)
	s.Turns = schema.Unknown
	return s
}

// Recount is a whole session's stored row made to count the session's
// stored records when it counts fewer calls or answers than are stored: a
// collector that dropped the session's buffer before its end wrote the row
// of what it held first, and the later buffer's row ranks below it
// (docs/design.md §10.3). The recount counts by the rules session analysis
// counts by (its turns at least the row's) and widens the row's time span
// to the records', which run past the first buffer's end, in whole seconds as
// a row holds it; an analysed row's analysis then covers its records and
// the stored calls and answers it did not count, so that, stored, the
// recount ranks above the row it recounts (§7.2). recounted says whether it did; a row counting at least what is
// stored (records pruned since) is kept as it is.
func Recount(row schema.Session, calls []schema.ToolCall, answers []schema.Answer) (s schema.Session, recounted bool) {
	if len(calls) <= row.ToolCalls && len(answers) <= row.Answers {
		return row, false
	}
	s = Counts(row, calls, answers)
	widen(&s, calls, answers)
	s.StartedAt, s.EndedAt = s.StartedAt.Truncate(time.Second), s.EndedAt.Truncate(time.Second)
	if s.Analysis.Done {
		// The row's analysis saw its records, and the store holds this
		// many calls and answers more than it counted: a recount that
		// finds more ranks higher, whatever else the row's analysis saw.
		s.Analysis.Records += max(len(calls)+len(answers)-row.ToolCalls-row.Answers, 0)
	}
	return s, true
}

// widen stretches s's time span over the records' times; a record without
// a time widens nothing.
func widen(s *schema.Session, calls []schema.ToolCall, answers []schema.Answer) {
	at := func(t time.Time) {
		if !schema.TimeKnown(t) {
			return
		}
		if !schema.TimeKnown(s.StartedAt) || t.Before(s.StartedAt) {
			s.StartedAt = t
		}
		if t.After(s.EndedAt) {
			s.EndedAt = t
		}
	}
	for i := range calls {
		at(calls[i].Timestamp)
	}
	for i := range answers {
		at(answers[i].Timestamp)
	}
}
