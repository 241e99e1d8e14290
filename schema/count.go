package schema

import (
	"bytes"
	"math"
	"strconv"
)

// Count is a size that may be unknown. The zero value is unknown, so a
// forgotten measurement can never masquerade as "0 bytes": docs/design.md §3.2 requires
// unknown sizes to be null in JSON and NULL in ClickHouse, never 0.
type Count struct {
	N     uint64 `msg:"N,omitempty"`
	Known bool   `msg:"Known,omitempty"`
}

// MaxCount is the largest count: every path carries a count up to it — an
// OTLP int attribute is a signed 64-bit integer — and none beyond. A figure
// past it is nothing anything measured (8 EiB), and unknown: carried through
// spans it could only come back changed, and the same input must give the
// same row whichever way it travelled (docs/design.md §3.2).
const MaxCount = 1<<63 - 1

// Known returns a known count of n, or unknown when n is past MaxCount.
func Known(n uint64) Count {
	if n > MaxCount {
		return Count{}
	}
	return Count{N: n, Known: true}
}

// KnownInt returns a known count of n, or unknown when n is negative.
func KnownInt(n int) Count {
	if n < 0 {
		return Count{}
	}
	return Count{N: uint64(n), Known: true}
}

// KnownFloat returns a known count of f when f is one: whole, not negative
// and at most MaxCount (below 2^63). 3.5, NaN or 1e300 is no count, and unknown — converting it
// would state one (3, or a wrapped figure). Senders give counts as doubles
// (a JSON number, an OTel double attribute); every reader of them uses this.
func KnownFloat(f float64) Count {
	if !(f >= 0 && f < 1<<63) || f != math.Trunc(f) {
		return Count{}
	}
	return Count{N: uint64(f), Known: true}
}

// Plus is c + d: unknown when either is, or when the sum would pass
// MaxCount.
func (c Count) Plus(d Count) Count {
	if !c.Known || !d.Known || c.N > MaxCount || d.N > MaxCount-c.N {
		return Unknown
	}
	return Count{N: c.N + d.N, Known: true}
}

// A session's token totals are Counts: unknown until a message reports
// usage (a session no message reported usage for did not use 0 tokens), the
// sum of what was reported after. A total past MaxCount is none — unknown,
// NULL — and stays so however much is added (tokensPast), where a plain sum
// would wrap around to a small, wrong figure.

// tokensPast is a token total past MaxCount: unknown, and it stays so.
var tokensPast = Count{N: math.MaxUint64}

// Tokens is a token total a source reports: past MaxCount it is none.
func Tokens(n uint64) Count { return AddTokens(Unknown, n) }

// AddTokens is total after a message reports n more tokens.
func AddTokens(total Count, n uint64) Count {
	if n > MaxCount {
		return tokensPast
	}
	return SumTokens(total, Count{N: n, Known: true})
}

// SumTokens is the sum of two token totals (a session's threads): known
// when either is, past MaxCount when either is or their sum would be.
func SumTokens(a, b Count) Count {
	switch {
	case a == tokensPast || b == tokensPast:
		return tokensPast
	case !a.Known:
		return b
	case !b.Known:
		return a
	case a.N > MaxCount || b.N > MaxCount-a.N:
		return tokensPast
	}
	return Count{N: a.N + b.N, Known: true}
}

// Unknown is the unknown count; it equals the zero value and exists for readability.
var Unknown = Count{}

// Ptr returns the count as a pointer, nil when unknown. This is the shape the
// ClickHouse driver binds to a Nullable(UInt64) column.
func (c Count) Ptr() *uint64 {
	if !c.Known {
		return nil
	}
	n := c.N
	return &n
}

// CountFromPtr is the inverse of Ptr.
func CountFromPtr(p *uint64) Count {
	if p == nil {
		return Count{}
	}
	return Known(*p)
}

// Stored is c as its Nullable(UInt64) column — and an int attribute —
// holds it: known only up to MaxCount (a Count built without Known, a
// decoded one, may hold any figure).
func (c Count) Stored() (uint64, bool) { return c.N, c.Known && c.N <= MaxCount }

// Or returns c when known, otherwise alt.
func (c Count) Or(alt Count) Count {
	if c.Known {
		return c
	}
	return alt
}

func (c Count) String() string {
	if !c.Known {
		return "unknown"
	}
	return strconv.FormatUint(c.N, 10)
}

// MarshalJSON renders an unknown count as null.
func (c Count) MarshalJSON() ([]byte, error) {
	if !c.Known {
		return []byte("null"), nil
	}
	return strconv.AppendUint(nil, c.N, 10), nil
}

// UnmarshalJSON accepts a non-negative integer or null.
func (c *Count) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		*c = Count{}
		return nil
	}
	n, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		return err
	}
	*c = Known(n)
	return nil
}

// Ratio is a fraction in [0,1] that may be unknown (e.g. session coverage of
// an output whose original size was never learned).
type Ratio struct {
	V     float64 `msg:"V,omitempty"`
	Known bool    `msg:"Known,omitempty"`
}

// KnownRatio returns a known ratio of v, or unknown when v is no share: one
// outside [0, 1], NaN included, is none, whichever path it took (a span's
// reader, the store) — docs/design.md §3.2.
func KnownRatio(v float64) Ratio {
	if !(v >= 0 && v <= 1) {
		return Ratio{}
	}
	return Ratio{V: v, Known: true}
}

// Stored is r as its Nullable(Float64) column holds it: known only when it
// is a share (a Ratio built without KnownRatio may hold any float).
func (r Ratio) Stored() (float64, bool) { return r.V, r.Known && r.V >= 0 && r.V <= 1 }

// Ptr returns nil when unknown, for Nullable(Float64) columns.
func (r Ratio) Ptr() *float64 {
	if !r.Known {
		return nil
	}
	v := r.V
	return &v
}

// RatioFromPtr is the inverse of Ptr.
func RatioFromPtr(p *float64) Ratio {
	if p == nil {
		return Ratio{}
	}
	return KnownRatio(*p)
}

// MarshalJSON renders an unknown ratio as null.
func (r Ratio) MarshalJSON() ([]byte, error) {
	if !r.Known {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, r.V, 'f', -1, 64), nil
}

// UnmarshalJSON accepts a number or null.
func (r *Ratio) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		*r = Ratio{}
		return nil
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return err
	}
	*r = KnownRatio(v)
	return nil
}
