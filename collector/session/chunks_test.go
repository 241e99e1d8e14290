package session

import (
	"slices"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/schema"
)

// TestChunksIsASlice: appending, reading in place and cloning give what a
// plain slice gives, across the doubling chunks and the fixed ones after
// them, and growing never moves a record already held.
func TestChunksIsASlice(t *testing.T) {
	var c chunks[int]
	var want []int
	var first *int
	for i := range 3 * grownLen {
		c.append(i * 7)
		want = append(want, i*7)
		if i == 0 {
			first = c.at(0)
		}
		if c.len() != len(want) {
			t.Fatalf("len %d after %d appends", c.len(), i+1)
		}
	}
	if first != c.at(0) {
		t.Error("growing moved the first record")
	}
	for i, w := range want {
		if got := *c.at(i); got != w {
			t.Fatalf("at(%d) = %d, want %d", i, got, w)
		}
	}
	*c.at(grownLen) = -1
	want[grownLen] = -1
	if got := c.clone(); !slices.Equal(got, want) {
		t.Fatalf("clone differs from the slice (len %d vs %d)", len(got), len(want))
	}
	for i, p := range c.parts[:len(c.parts)-1] {
		if len(p) != cap(p) {
			t.Errorf("chunk %d not full (%d of %d) while a later one is used", i, len(p), cap(p))
		}
	}
	var empty chunks[int]
	if got := empty.clone(); len(got) != 0 {
		t.Errorf("empty clone has %d records", len(got))
	}
}

// BenchmarkAppendCalls appends a 50-call session's records, as HoldCall
// does, to chunks and to a plain slice.
func BenchmarkAppendCalls(b *testing.B) {
	c := call("toolu_01", time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC), true, `{"file_path":"/a.go"}`)
	b.Run("chunks", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var l chunks[schema.ToolCall]
			for range 50 {
				l.append(c)
			}
		}
	})
	b.Run("slice", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var l []schema.ToolCall
			for range 50 {
				l = append(l, c)
			}
			_ = l
		}
	})
}
