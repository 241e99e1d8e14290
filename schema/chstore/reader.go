package chstore

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/ctxaudit/ctxaudit/schema"
)

// ToolCalls returns all tool calls of one session in call order, each at its
// latest version. It bounds the read by the session's own time span, so it
// stays fast on large tables (see SessionToolCalls).
func (s *Store) ToolCalls(ctx context.Context, sessionID string) ([]schema.ToolCall, error) {
	sp, err := s.SessionSpan(ctx, sessionID)
	if err != nil || sp.Calls.Rows == 0 {
		return nil, err
	}
	return s.SessionToolCalls(ctx, sp, CallFilter{})
}

// Answers returns all answers of one session in order, at their latest version.
func (s *Store) Answers(ctx context.Context, sessionID string) ([]schema.Answer, error) {
	sp, err := s.SessionSpan(ctx, sessionID)
	if err != nil || sp.Answers.Rows == 0 {
		return nil, err
	}
	return s.SessionAnswers(ctx, sp)
}

// Session returns one session's row at its latest version; found is false if absent.
func (s *Store) Session(ctx context.Context, sessionID string) (schema.Session, bool, error) {
	return s.SessionRow(ctx, sessionID)
}

// StandingAnswers returns, of the messages named (message ids by session
// id), those whose latest stored row is an answer rather than a
// retraction, with what a retraction of each carries
// (session.Retractable): session and message ids, timestamp, turn, source,
// model, agent and sidechain; no text, no analysis. It is for a writer
// that learns a message was no answer after an earlier one stored it as
// one (docs/design.md §5.1).
//
// The messages are read in chunks of at most maxIDsPerQuery, one query
// each. The lookup is by key (session_id, message_id) without a time bound
// (the caller does not know when the answers were written): it touches one
// granule per part holding the sessions, a narrow read of the key, time
// and version columns.
func (s *Store) StandingAnswers(ctx context.Context, messages map[string][]string) ([]schema.Answer, error) {
	var pairs [][2]string
	for _, sessionID := range slices.Sorted(maps.Keys(messages)) {
		for _, id := range messages[sessionID] {
			pairs = append(pairs, [2]string{sessionID, id})
		}
	}
	var out []schema.Answer
	for start := 0; start < len(pairs); start += maxIDsPerQuery {
		chunk := pairs[start:min(start+maxIDsPerQuery, len(pairs))]
		want := make(map[[2]string]bool, len(chunk))
		var sessions, ids []any
		for _, p := range chunk {
			if len(sessions) == 0 || sessions[len(sessions)-1] != p[0] {
				sessions = append(sessions, p[0])
			}
			ids = append(ids, p[1])
			want[p] = true
		}
		found, err := s.standingAnswers(ctx, sessions, ids, want)
		if err != nil {
			return nil, err
		}
		out = append(out, found...)
	}
	return out, nil
}

// standingAnswers reads one chunk of StandingAnswers. The IN lists select
// every pair of a listed session and a listed message; want keeps the pairs
// asked for.
func (s *Store) standingAnswers(ctx context.Context, sessions, messages []any, want map[[2]string]bool) ([]schema.Answer, error) {
	q := "SELECT session_id, message_id, ts, ts_ns, turn, source, model, agent_id, sidechain, retracted FROM " +
		s.table("answers") + " PREWHERE session_id IN ? WHERE message_id IN ?" +
		" ORDER BY session_id, message_id, version DESC LIMIT 1 BY session_id, message_id"
	rows, err := s.conn.Query(ctx, q, clickhouse.GroupSet{Value: sessions}, clickhouse.GroupSet{Value: messages})
	if err != nil {
		return nil, fmt.Errorf("read the stored answers of %d messages: %w", len(messages), err)
	}
	defer rows.Close()
	var out []schema.Answer
	for rows.Next() {
		var (
			a                    schema.Answer
			ts                   time.Time
			tsNs                 uint32
			turn                 *uint32
			source               string
			sidechain, retracted uint8
		)
		if err := rows.Scan(&a.SessionID, &a.MessageID, &ts, &tsNs, &turn, &source, &a.Model, &a.AgentID, &sidechain, &retracted); err != nil {
			return nil, fmt.Errorf("read the stored answers of %d messages: %w", len(messages), err)
		}
		if retracted == 1 || !want[[2]string{a.SessionID, a.MessageID}] {
			continue
		}
		a.Timestamp, a.Turn, a.Source, a.Sidechain = rowTime(ts, tsNs), schema.TurnFromPtr(turn), schema.Harness(source), sidechain == 1
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the stored answers of %d messages: %w", len(messages), err)
	}
	return out, nil
}
