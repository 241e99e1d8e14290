package schema

import "time"

// TimeKnown reports whether a record's timestamp is known. A record with no
// time has the zero time as a parser builds it; the store writes that as
// 1970-01-01 and a span carries it as OTLP's unset time 0, both read back as
// the Unix epoch. So the epoch itself, to the nanosecond, is no time: no
// agent session ran then, and a row read back must mean what the record it
// was written from meant.
func TimeKnown(t time.Time) bool {
	return !t.IsZero() && (t.Unix() != 0 || t.Nanosecond() != 0)
}
