package schema

import (
	"encoding/json"
	"time"
)

// TimeKnown reports whether a record's timestamp is known. A record with no
// time has the zero time as a parser builds it; the store writes that as
// 1970-01-01 and a span carries it as OTLP's unset time 0, both read back as
// the Unix epoch. So the epoch itself, to the nanosecond, is no time: no
// agent session ran then, and a row read back must mean what the record it
// was written from meant.
func TimeKnown(t time.Time) bool {
	return !t.IsZero() && (t.Unix() != 0 || t.Nanosecond() != 0)
}

// TimeOrNil is t as the records' JSON gives it: nil (null) when not known,
// so that no reader takes 1970-01-01 (or year 1) for the time a record was
// made.
func TimeOrNil(t time.Time) *time.Time {
	if !TimeKnown(t) {
		return nil
	}
	return &t
}

// MarshalJSON gives the call with its timestamp null when not known, and
// its followed_up null when that is not known.
func (c ToolCall) MarshalJSON() ([]byte, error) {
	type plain ToolCall
	return json.Marshal(struct {
		*plain
		Timestamp  *time.Time `json:"timestamp"`
		FollowedUp *bool      `json:"followed_up"`
	}{(*plain)(&c), TimeOrNil(c.Timestamp), c.FollowedUpOrNil()})
}

// FollowedUpOrNil is FollowedUp, or nil when it is not known
// (FollowUpUnknown).
func (c *ToolCall) FollowedUpOrNil() *bool {
	if c.FollowUpUnknown {
		return nil
	}
	return &c.FollowedUp
}

// MarshalJSON gives the answer with its timestamp null when not known.
func (a Answer) MarshalJSON() ([]byte, error) {
	type plain Answer
	return json.Marshal(struct {
		*plain
		Timestamp *time.Time `json:"timestamp"`
	}{(*plain)(&a), TimeOrNil(a.Timestamp)})
}

// MarshalJSON gives the session with its span null where not known.
func (s Session) MarshalJSON() ([]byte, error) {
	type plain Session
	return json.Marshal(struct {
		*plain
		StartedAt *time.Time `json:"started_at"`
		EndedAt   *time.Time `json:"ended_at"`
	}{(*plain)(&s), TimeOrNil(s.StartedAt), TimeOrNil(s.EndedAt)})
}
