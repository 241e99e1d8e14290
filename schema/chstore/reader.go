package chstore

import (
	"context"
	"fmt"
	"time"

	"github.com/ctxaudit/ctxaudit/schema"
)

// ToolCalls returns the tool calls of one session in call order, each at its
// latest version (FINAL collapses re-ingested duplicates).
func (s *Store) ToolCalls(ctx context.Context, sessionID string) ([]schema.ToolCall, error) {
	query := "SELECT " + columnNames(toolCallColumns) + " FROM " + s.table("tool_calls") + " FINAL" +
		" WHERE session_id = ? ORDER BY ts, ts_ns, source_line, call_id"
	rows, err := s.conn.Query(ctx, query, sessionID)
	if err != nil {
		return nil, fmt.Errorf("query tool calls of %s: %w", sessionID, err)
	}
	defer rows.Close()
	var out []schema.ToolCall
	for rows.Next() {
		var (
			r                                                            schema.ToolCall
			ts                                                           time.Time
			tsNs, turn                                                   uint32
			source, origSource, kind, strategy, unit                     string
			sidechain, isError, truncated, partial                       uint8
			dRange, dReason, dNext, dScore, understated, followed, srchd uint8
			ob, oc, ol, ot, cb, cc, cl, ct, ss, se, total                *uint64
			coverage                                                     *float64
			line, version                                                uint64
		)
		if err := rows.Scan(&r.SessionID, &r.CallID, &ts, &tsNs, &r.Tool, &source, &r.HarnessVersion, &r.Model,
			&r.Project, &r.Cwd, &r.GitBranch, &r.AgentID, &sidechain, &turn, &r.MessageID, &r.Arguments, &r.Target,
			&isError, &ob, &oc, &ol, &ot, &origSource, &cb, &cc, &cl, &ct, &truncated, &kind, &strategy, &partial,
			&ss, &se, &unit, &total, &r.Reason, &dRange, &dReason, &dNext, &dScore, &r.NextHint, &r.SavedRef,
			&r.RefVersion, &r.Marker, &understated, &r.Detector, &followed, &r.ContinuationOf, &coverage, &srchd,
			&r.OriginalSHA256, &r.ContextSHA256, &r.SourceFile, &line, &version); err != nil {
			return nil, fmt.Errorf("scan tool call of %s: %w", sessionID, err)
		}
		r.Timestamp = ts.Add(time.Duration(tsNs)).UTC()
		r.Source = schema.Harness(source)
		r.Sidechain, r.IsError, r.Truncated, r.PartialByRequest = sidechain == 1, isError == 1, truncated == 1, partial == 1
		r.Turn = int(turn)
		r.Original = schema.Original{Sizes: sizes(ob, oc, ol, ot), Source: schema.OriginalSource(origSource)}
		r.Context = sizes(cb, cc, cl, ct)
		r.Kind, r.Strategy = schema.TruncationKind(kind), schema.Strategy(strategy)
		r.Shown = schema.Range{Start: schema.CountFromPtr(ss), End: schema.CountFromPtr(se), Unit: schema.Unit(unit)}
		r.Total = schema.CountFromPtr(total)
		r.Disclosure = schema.Disclosure{Range: dRange == 1, Reason: dReason == 1, Next: dNext == 1}
		r.MarkerUnderstated, r.FollowedUp, r.Searched = understated == 1, followed == 1, srchd == 1
		r.SessionCoverage = schema.RatioFromPtr(coverage)
		r.SourceLine = int64(line)
		out = append(out, r)
	}
	return out, rows.Err()
}

func sizes(b, c, l, t *uint64) schema.Sizes {
	return schema.Sizes{Bytes: schema.CountFromPtr(b), Chars: schema.CountFromPtr(c), Lines: schema.CountFromPtr(l), Tokens: schema.CountFromPtr(t)}
}

// Answers returns the answers of one session in order, at their latest version.
func (s *Store) Answers(ctx context.Context, sessionID string) ([]schema.Answer, error) {
	query := "SELECT " + columnNames(answerColumns) + " FROM " + s.table("answers") + " FINAL" +
		" WHERE session_id = ? ORDER BY ts, ts_ns, message_id"
	rows, err := s.conn.Query(ctx, query, sessionID)
	if err != nil {
		return nil, fmt.Errorf("query answers of %s: %w", sessionID, err)
	}
	defer rows.Close()
	var out []schema.Answer
	for rows.Next() {
		var (
			r                       schema.Answer
			ts                      time.Time
			tsNs, turn              uint32
			source, risk            string
			sidechain, absenceClaim uint8
			reasonCalls             [][]string
			version                 uint64
		)
		if err := rows.Scan(&r.SessionID, &r.MessageID, &ts, &tsNs, &turn, &source, &r.Model, &r.AgentID, &sidechain,
			&r.Text, &r.InputCallIDs, &r.IncompleteInputs, &absenceClaim, &risk, &r.Reasons, &reasonCalls,
			&r.Verdict, &version); err != nil {
			return nil, fmt.Errorf("scan answer of %s: %w", sessionID, err)
		}
		r.Timestamp = ts.Add(time.Duration(tsNs)).UTC()
		r.Turn, r.Source, r.Risk = int(turn), schema.Harness(source), schema.Risk(risk)
		r.Sidechain, r.AbsenceClaim = sidechain == 1, absenceClaim == 1
		r.ReasonCalls = make(map[string][]string, len(r.Reasons))
		for i, reason := range r.Reasons {
			if i < len(reasonCalls) {
				r.ReasonCalls[reason] = reasonCalls[i]
			}
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Session returns one session's row at its latest version; found is false if absent.
func (s *Store) Session(ctx context.Context, sessionID string) (sess schema.Session, found bool, err error) {
	query := "SELECT " + columnNames(sessionColumns) + " FROM " + s.table("sessions") + " FINAL WHERE session_id = ? LIMIT 1"
	rows, err := s.conn.Query(ctx, query, sessionID)
	if err != nil {
		return sess, false, fmt.Errorf("query session %s: %w", sessionID, err)
	}
	defer rows.Close()
	if !rows.Next() {
		return sess, false, rows.Err()
	}
	var (
		source, maxRisk                                          string
		turns, calls, truncated, silent, answers, risky, compact uint32
		version                                                  uint64
	)
	if err := rows.Scan(&sess.SessionID, &source, &sess.HarnessVersion, &sess.Model, &sess.Project, &sess.Cwd,
		&sess.GitBranch, &sess.StartedAt, &sess.EndedAt, &sess.SourceFile, &turns, &calls, &truncated, &silent,
		&answers, &risky, &compact, &maxRisk, &sess.InputTokens, &sess.OutputTokens, &version); err != nil {
		return sess, false, fmt.Errorf("scan session %s: %w", sessionID, err)
	}
	sess.Source, sess.MaxRisk = schema.Harness(source), schema.Risk(maxRisk)
	sess.StartedAt, sess.EndedAt = sess.StartedAt.UTC(), sess.EndedAt.UTC()
	sess.Turns, sess.ToolCalls, sess.TruncatedCalls, sess.SilentCalls = int(turns), int(calls), int(truncated), int(silent)
	sess.Answers, sess.RiskyAnswers, sess.Compactions = int(answers), int(risky), int(compact)
	return sess, true, nil
}
