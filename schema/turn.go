package schema

import (
	"bytes"
	"math"
	"strconv"

	"github.com/tinylib/msgp/msgp"
)

// Turn is the 0-based index of the user prompt a call or answer belongs to
// (docs/design.md §5.1), or unknown: a transcript always shows its turns,
// but a span from an instrumentation that does not set ctxaudit.turn does
// not, and such a call is not "turn 0" (§3.2: unknown is null, never 0).
// The zero value is unknown. A turn is stored in a Nullable(UInt32), so a
// known turn is at most math.MaxUint32.
type Turn struct {
	N     uint32
	Known bool
}

// KnownTurn returns turn n, or unknown when n is negative or past what a
// turn column holds.
func KnownTurn(n int) Turn {
	if n < 0 || uint64(n) > math.MaxUint32 {
		return Turn{}
	}
	return Turn{N: uint32(n), Known: true}
}

// KnownTurn64 is KnownTurn for a 64-bit integer (a MessagePack or span
// attribute value).
func KnownTurn64(n int64) Turn {
	if n < 0 || n > math.MaxUint32 {
		return Turn{}
	}
	return Turn{N: uint32(n), Known: true}
}

// TurnFromPtr is a turn as the ClickHouse driver scans a Nullable(UInt32):
// nil is unknown.
func TurnFromPtr(p *uint32) Turn {
	if p == nil {
		return Turn{}
	}
	return Turn{N: *p, Known: true}
}

// Less orders turns: known ones by index, unknown after every known one.
func (t Turn) Less(u Turn) bool {
	if t.Known != u.Known {
		return t.Known
	}
	return t.N < u.N
}

func (t Turn) String() string {
	if !t.Known {
		return "unknown"
	}
	return strconv.FormatUint(uint64(t.N), 10)
}

// MarshalJSON renders an unknown turn as null.
func (t Turn) MarshalJSON() ([]byte, error) {
	if !t.Known {
		return []byte("null"), nil
	}
	return strconv.AppendUint(nil, uint64(t.N), 10), nil
}

// UnmarshalJSON accepts an integer in a turn's range, or null.
func (t *Turn) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		*t = Turn{}
		return nil
	}
	n, err := strconv.ParseUint(string(b), 10, 32)
	if err != nil {
		return err
	}
	*t = Turn{N: uint32(n), Known: true}
	return nil
}

// A turn is written to MessagePack as an integer when known (and left out,
// omitzero, when not), so a held call written by an earlier version — whose
// turn was a plain integer — reads back the same. Those versions also left
// a turn of 0 out: a call without the key reads as turn unknown here, and
// the one reader of such values, the processor's stored records, marks
// what it writes (explicit_turns) and reads a call of an earlier version
// without the key as turn 0, what that version meant.

// IsZero reports an unknown turn; the omitzero tag leaves it out.
func (t Turn) IsZero() bool { return !t.Known }

// MarshalMsg implements msgp.Marshaler.
func (t Turn) MarshalMsg(b []byte) ([]byte, error) {
	if !t.Known {
		return msgp.AppendNil(b), nil
	}
	return msgp.AppendInt64(b, int64(t.N)), nil
}

// UnmarshalMsg implements msgp.Unmarshaler. An integer outside a turn's
// range reads as unknown.
func (t *Turn) UnmarshalMsg(b []byte) ([]byte, error) {
	if msgp.IsNil(b) {
		*t = Turn{}
		return msgp.ReadNilBytes(b)
	}
	n, rest, err := msgp.ReadInt64Bytes(b)
	if err != nil {
		return b, err
	}
	*t = KnownTurn64(n)
	return rest, nil
}

// Msgsize implements msgp.Sizer.
func (t Turn) Msgsize() int { return msgp.Int64Size }
