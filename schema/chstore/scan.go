package chstore

import (
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/ctxaudit/ctxaudit/schema"
)

// rowTime is a record's time as written: ts to the second (it may hold
// milliseconds) and ts_ns the nanoseconds of that second.
func rowTime(ts time.Time, tsNs uint32) time.Time {
	return ts.Truncate(time.Second).Add(time.Duration(tsNs)).UTC()
}

// The scanners below read one row selected with columnNames(xxxColumns), in
// that column order. They are the inverse of the column tables in writer.go;
// TestReadBackEveryField (queries_test.go) writes every field and reads it
// back through them, so a column added to one side only fails there.

func scanToolCall(rows driver.Rows) (schema.ToolCall, error) {
	var (
		r                                                  schema.ToolCall
		ts                                                 time.Time
		tsNs                                               uint32
		turn                                               *uint32
		source, origSource, kind, strategy, unit           string
		sidechain, isError, truncated, partial             uint8
		dRange, dReason, dNext, dScore, understated, srchd uint8
		followed                                           *uint8
		ob, oc, ol, ot, cb, cc, cl, ct, ss, se, total      *uint64
		coverage                                           *float64
		line, version                                      uint64
		precision, tailUnit                                string
		tailStart, tailEnd                                 *uint64
		tailIsEnd, refetched, upperBound, mixed, exact     uint8
	)
	if err := rows.Scan(&r.SessionID, &r.CallID, &ts, &tsNs, &r.Tool, &source, &r.HarnessVersion, &r.Model,
		&r.Project, &r.Cwd, &r.GitBranch, &r.AgentID, &sidechain, &turn, &r.MessageID, &r.Arguments, &r.Target,
		&isError, &ob, &oc, &ol, &ot, &origSource, &precision, &cb, &cc, &cl, &ct, &truncated, &kind, &strategy, &partial,
		&ss, &se, &unit, &tailStart, &tailEnd, &tailUnit, &tailIsEnd, &total, &r.Reason, &dRange, &dReason, &dNext, &dScore, &r.NextHint, &r.SavedRef,
		&r.RefVersion, &refetched, &r.Marker, &understated, &r.Detector, &followed, &exact, &r.ContinuationOf, &coverage,
		&upperBound, &mixed, &srchd,
		&r.OriginalSHA256, &r.ContextSHA256, &r.SourceFile, &line, &version); err != nil {
		return r, err
	}
	r.Timestamp = rowTime(ts, tsNs)
	r.Source = schema.Harness(source)
	r.Sidechain, r.IsError, r.Truncated, r.PartialByRequest = sidechain == 1, isError == 1, truncated == 1, partial == 1
	r.Turn = schema.TurnFromPtr(turn)
	r.Original = schema.Original{Sizes: sizes(ob, oc, ol, ot), Source: schema.OriginalSource(origSource)}
	if precision != "unknown" {
		r.Original.Precision = schema.Precision(precision)
	}
	r.Context = sizes(cb, cc, cl, ct)
	r.Kind, r.Strategy = schema.TruncationKind(kind), schema.Strategy(strategy)
	r.Shown = schema.Range{Start: schema.CountFromPtr(ss), End: schema.CountFromPtr(se), Unit: schema.Unit(unit)}
	r.ShownTail = schema.Range{Start: schema.CountFromPtr(tailStart), End: schema.CountFromPtr(tailEnd), Unit: schema.Unit(tailUnit)}
	r.ShownTailIsEnd, r.RefetchedSource = tailIsEnd == 1, refetched == 1
	r.CoverageUpperBound, r.CoverageMixedVersions = upperBound == 1, mixed == 1
	r.Total = schema.CountFromPtr(total)
	r.Disclosure = schema.Disclosure{Range: dRange == 1, Reason: dReason == 1, Next: dNext == 1}
	r.MarkerUnderstated, r.Searched = understated == 1, srchd == 1
	r.FollowedUp, r.FollowUpUnknown = followed != nil && *followed == 1, followed == nil
	r.FollowUpExact = exact == 1
	r.SessionCoverage = schema.RatioFromPtr(coverage)
	r.SourceLine = int64(line)
	r.Analysis = analysisOfVersion(version)
	return r, nil
}

func scanAnswer(rows driver.Rows) (schema.Answer, error) {
	var (
		r                       schema.Answer
		ts                      time.Time
		tsNs                    uint32
		turn                    *uint32
		source, risk, absence   string
		sidechain, absenceClaim uint8
		retracted, uncertain    uint8
		reasonCalls             [][]string
		version                 uint64
	)
	if err := rows.Scan(&r.SessionID, &r.MessageID, &ts, &tsNs, &turn, &source, &r.Model, &r.AgentID, &sidechain,
		&r.Text, &r.InputCallIDs, &r.IncompleteInputs, &absenceClaim, &absence, &r.AbsenceClause, &r.AbsenceScope, &risk, &r.Reasons, &reasonCalls,
		&r.Verdict, &retracted, &uncertain, &version); err != nil {
		return r, err
	}
	r.Retracted, r.InputsUncertain = retracted == 1, uncertain == 1
	r.Timestamp = rowTime(ts, tsNs)
	r.Turn, r.Source, r.Risk = schema.TurnFromPtr(turn), schema.Harness(source), schema.Risk(risk)
	r.Sidechain, r.AbsenceClaim = sidechain == 1, absenceClaim == 1
	r.Absence = schema.Absence(absence)
	r.ReasonCalls = make(map[string][]string, len(r.Reasons))
	for i, reason := range r.Reasons {
		if i < len(reasonCalls) {
			r.ReasonCalls[reason] = reasonCalls[i]
		}
	}
	r.Analysis = analysisOfVersion(version)
	return r, nil
}

func scanSession(rows driver.Rows) (schema.Session, error) {
	var (
		sess                                     schema.Session
		source, maxRisk                          string
		calls, truncated, silent, answers, risky uint32
		turns, compact, riskyUncertain           *uint32
		inputTokens, outputTokens                *uint64
		version                                  uint64
	)
	if err := rows.Scan(&sess.SessionID, &source, &sess.HarnessVersion, &sess.Model, &sess.Project, &sess.Cwd,
		&sess.GitBranch, &sess.StartedAt, &sess.EndedAt, &sess.SourceFile, &turns, &calls, &truncated, &silent,
		&answers, &risky, &riskyUncertain, &compact, &maxRisk, &inputTokens, &outputTokens, &version); err != nil {
		return sess, err
	}
	sess.Source, sess.MaxRisk = schema.Harness(source), schema.Risk(maxRisk)
	sess.StartedAt, sess.EndedAt = sess.StartedAt.UTC(), sess.EndedAt.UTC()
	sess.ToolCalls, sess.TruncatedCalls, sess.SilentCalls = int(calls), int(truncated), int(silent)
	sess.Turns, sess.Compactions = count32(turns), count32(compact)
	sess.InputTokens, sess.OutputTokens = schema.CountFromPtr(inputTokens), schema.CountFromPtr(outputTokens)
	sess.Answers, sess.RiskyAnswers, sess.RiskyAnswersUncertain = int(answers), int(risky), count32(riskyUncertain)
	sess.Analysis = analysisOfVersion(version)
	return sess, nil
}

// count32 is a Nullable(UInt32) count as scanned: nil is unknown.
func count32(p *uint32) schema.Count {
	if p == nil {
		return schema.Unknown
	}
	return schema.Known(uint64(*p))
}

func sizes(b, c, l, t *uint64) schema.Sizes {
	return schema.Sizes{Bytes: schema.CountFromPtr(b), Chars: schema.CountFromPtr(c), Lines: schema.CountFromPtr(l), Tokens: schema.CountFromPtr(t)}
}

// scanCountedCall reads a row of countedCallColumns (CountedRecords).
func scanCountedCall(rows driver.Rows) (schema.ToolCall, error) {
	var (
		r                  schema.ToolCall
		ts                 time.Time
		tsNs               uint32
		line               uint64
		turn               *uint32
		truncated, partial uint8
		kind, strategy     string
	)
	if err := rows.Scan(&r.SessionID, &r.CallID, &ts, &tsNs, &line, &turn, &truncated, &partial, &kind, &strategy); err != nil {
		return r, err
	}
	r.Timestamp, r.SourceLine, r.Turn = rowTime(ts, tsNs), int64(line), schema.TurnFromPtr(turn)
	r.Truncated, r.PartialByRequest = truncated == 1, partial == 1
	r.Kind, r.Strategy = schema.TruncationKind(kind), schema.Strategy(strategy)
	return r, nil
}

// scanCountedAnswer reads a row of countedAnswerColumns (CountedRecords),
// and whether the row is a retraction.
func scanCountedAnswer(rows driver.Rows) (schema.Answer, bool, error) {
	var (
		r                    schema.Answer
		ts                   time.Time
		tsNs                 uint32
		turn                 *uint32
		risk                 string
		uncertain, retracted uint8
	)
	if err := rows.Scan(&r.SessionID, &r.MessageID, &ts, &tsNs, &turn, &risk, &uncertain, &retracted); err != nil {
		return r, false, err
	}
	r.Timestamp, r.Turn, r.Risk = rowTime(ts, tsNs), schema.TurnFromPtr(turn), schema.Risk(risk)
	r.InputsUncertain = uncertain == 1
	return r, retracted == 1, nil
}
