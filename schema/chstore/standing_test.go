package chstore_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/collector/session"
	"github.com/ctxaudit/ctxaudit/schema"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

// StandingAnswers finds, of the messages asked about, exactly those whose
// latest row is an answer: not one taken back since, not a message of
// another session that shares the id, not one never stored. It returns what
// a retraction needs, field for field, on both renderings, across the
// chunks a long list is read in.
func TestStandingAnswers(t *testing.T) {
	ctx := context.Background()
	en := both(t)
	at := time.Date(2026, 3, 2, 10, 0, 0, 123_456_789, time.UTC)
	early := schema.Analysis{Done: true, Records: 4}
	later := schema.Analysis{Done: true, Records: 9}
	answer := func(sessionID, id string, i int) schema.Answer {
		return schema.Answer{
			SessionID: sessionID, MessageID: id, Timestamp: at.Add(time.Duration(i) * time.Minute),
			Turn: schema.KnownTurn(i % 5), Source: schema.HarnessClaudeCode, Model: "claude-x",
			AgentID: fmt.Sprintf("agent-%d", i%3), Sidechain: i%2 == 1, Text: "The answer is 42.",
			Risk: schema.RiskNone, Absence: schema.AbsenceNone, Verdict: "fine", Analysis: early,
		}
	}
	// s1's messages: m-0000 … m-1499 are asked about, four of them stored
	// as answers, astride the first chunk's end; m-taken was answered and
	// taken back; m-other is stored but not asked about.
	standing := []schema.Answer{answer("s1", "m-0000", 0), answer("s1", "m-0999", 1), answer("s1", "m-1000", 2), answer("s1", "m-1499", 3)}
	taken := answer("s1", "m-taken", 4)
	stored := append(slices.Clone(standing), taken, answer("s1", "m-other", 5),
		// s2 shares a message id with s1 and is asked about another one.
		answer("s2", "m-0000", 6))
	asked := map[string][]string{"s1": {"m-taken", "m-other-session"}, "s2": {"m-never-stored"}}
	for i := range 1500 {
		asked["s1"] = append(asked["s1"], fmt.Sprintf("m-%04d", i))
	}

	en.each(t, func(s *chstore.Store) error {
		if err := s.WriteAnswers(ctx, stored); err != nil {
			return err
		}
		// One answer written again (an unmerged second version), and the
		// retraction of another.
		if err := s.WriteAnswers(ctx, []schema.Answer{standing[0], session.Retraction(taken, later)}); err != nil {
			return err
		}
		got, err := s.StandingAnswers(ctx, asked)
		if err != nil {
			return err
		}
		slices.SortFunc(got, func(a, b schema.Answer) int {
			return strings.Compare(a.SessionID+"/"+a.MessageID, b.SessionID+"/"+b.MessageID)
		})
		want := make([]schema.Answer, len(standing))
		for i, a := range standing {
			want[i] = session.Retractable(a)
		}
		if !reflect.DeepEqual(got, want) {
			return fmt.Errorf("standing answers:\n got %+v\nwant %+v", got, want)
		}
		none, err := s.StandingAnswers(ctx, map[string][]string{"s3": {"m-0000"}})
		if err != nil || len(none) != 0 {
			return fmt.Errorf("a session never stored: %+v, %v; want none", none, err)
		}
		return nil
	})
}
