package transcript

import (
	"reflect"
	"testing"
)

func TestPending(t *testing.T) {
	q := NewPending[string](2)
	if ev := q.Put("a", "A"); ev != nil {
		t.Fatalf("evicted %v", ev)
	}
	q.Put("b", "B")
	q.Put("a", "A2") // a re-issued id counts from its new issue
	if ev := q.Put("c", "C"); !reflect.DeepEqual(ev, []string{"B"}) {
		t.Fatalf("evicted %v, want the oldest [B]", ev)
	}
	if v, ok := q.Take("a"); !ok || v != "A2" {
		t.Fatalf("Take(a) = %q, %v", v, ok)
	}
	q.Put("b", "B")
	if v, ok := q.Take("b"); !ok || v != "B" {
		t.Fatalf("Take(b) = %q, %v", v, ok)
	}
	if _, ok := q.Take("b"); ok {
		t.Fatal("taken twice")
	}
	for i := 0; i < 10; i++ { // ids taken right away must not grow the order list
		q.Put("x", "X")
		q.Take("x")
	}
	if len(q.order) > 2*q.limit+1 {
		t.Fatalf("order list grew to %d", len(q.order))
	}
	q.Put("d", "D")
	if got := q.Drain(); !reflect.DeepEqual(got, []string{"C", "D"}) || q.Len() != 0 {
		t.Fatalf("Drain = %v (len %d), want [C D] in issue order", got, q.Len())
	}
}
