package session

import "math/bits"

// chunks is an append-only list of records kept in chunks that double in
// size (8, 16, 32, …, up to maxChunk, then maxChunk each), so that growing
// it never copies what it holds. A session's calls are 816-byte records
// appended one at a time; a doubling slice copied each of them about twice
// as it grew, and that was the largest allocation of the collector after
// the OTLP decode itself (docs/performance.md). A session with few records
// still costs one small chunk.
type chunks[T any] struct {
	parts [][]T
	n     int
}

const (
	firstChunk = 8
	// doublings is how many chunks double before they stay at maxChunk.
	doublings = 6
	maxChunk  = firstChunk << doublings // 512
	// grownLen is how many records the doubling chunks hold together.
	grownLen = firstChunk * (1<<doublings - 1) // 504
)

// locate is the chunk and the offset in it of record i.
func locate(i int) (part, off int) {
	if i < grownLen {
		// Chunk k holds firstChunk<<k records, starting at firstChunk*(2^k-1).
		part = bits.Len(uint(i/firstChunk+1)) - 1
		return part, i - firstChunk*(1<<part-1)
	}
	j := i - grownLen
	return doublings + j/maxChunk, j % maxChunk
}

func (c *chunks[T]) len() int { return c.n }

// at is record i, in place.
func (c *chunks[T]) at(i int) *T {
	p, o := locate(i)
	return &c.parts[p][o]
}

func (c *chunks[T]) append(v T) { c.appendCopy(&v) }

// appendCopy appends a copy of *v.
func (c *chunks[T]) appendCopy(v *T) {
	p, _ := locate(c.n)
	if p == len(c.parts) {
		size := maxChunk
		if p < doublings {
			size = firstChunk << p
		}
		c.parts = append(c.parts, make([]T, 0, size))
	}
	c.parts[p] = append(c.parts[p], *v)
	c.n++
}

// clone is every record, in order, in one new slice.
func (c *chunks[T]) clone() []T {
	out := make([]T, 0, c.n)
	for _, p := range c.parts {
		out = append(out, p...)
	}
	return out
}
