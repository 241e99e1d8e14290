package chstore

import (
	"context"

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
