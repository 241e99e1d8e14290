package redact

import (
	"strings"
	"testing"
)

// A record of nested, embedded, slice and map fields: every exported string
// loses its secret, numbers and unexported fields stay.
func TestRecordRedactsEveryExportedString(t *testing.T) {
	const key = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123"
	type Inner struct{ Marker string }
	type rec struct {
		Inner
		Args    string
		List    []string
		Reasons map[string][]string
		Ptr     *Inner
		Size    int
		private string
	}
	r := rec{Inner: Inner{Marker: "cut: " + key}, Args: `{"token":"` + key + `"}`, List: []string{"ok", key},
		Reasons: map[string][]string{"why": {key}}, Ptr: &Inner{Marker: key}, Size: 42, private: key}
	n := Default().Record(&r)
	if n != 5 {
		t.Errorf("Record replaced %d secrets; want 5 (marker, args, list, map value, pointer)", n)
	}
	for what, s := range map[string]string{"embedded": r.Marker, "field": r.Args, "slice": strings.Join(r.List, " "),
		"map": strings.Join(r.Reasons["why"], " "), "pointer": r.Ptr.Marker} {
		if strings.Contains(s, key) || !strings.Contains(s, Placeholder) {
			t.Errorf("%s: %q still holds the key or lacks %s", what, s, Placeholder)
		}
	}
	if r.Size != 42 || r.private != key || r.List[0] != "ok" {
		t.Errorf("untouched fields changed: %+v", r)
	}
	if Default().Record(r) != 0 || Default().Record(nil) != 0 {
		t.Error("a non-pointer or nil must be left alone")
	}
}

// The per-type plan of fields to visit must not lose a string field: two
// fields of one struct type, a self-referencing type, strings only inside
// a nested struct, and a number-only struct beside them.
func TestRecordPlanKeepsEveryStringField(t *testing.T) {
	const key = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123"
	type Sizes struct{ Bytes, Lines int }
	type Text struct{ S string }
	type node struct {
		Next  *node
		Value string
	}
	type rec struct {
		A, B   Text
		Sizes  Sizes
		Nested struct{ Deep []Text }
		List   *node
	}
	r := rec{A: Text{key}, B: Text{key}, Sizes: Sizes{1, 2}, List: &node{Next: &node{Value: key}, Value: key}}
	r.Nested.Deep = []Text{{key}}
	for round := range 2 { // the second round runs on the cached plan
		if n := Default().Record(&r); round == 0 && n != 5 {
			t.Errorf("Record replaced %d secrets; want 5", n)
		}
	}
	for what, s := range map[string]string{"A": r.A.S, "B": r.B.S, "deep": r.Nested.Deep[0].S, "list": r.List.Value, "list.next": r.List.Next.Value} {
		if strings.Contains(s, key) {
			t.Errorf("%s still holds the key", what)
		}
	}
	if r.Sizes != (Sizes{1, 2}) {
		t.Errorf("sizes changed: %+v", r.Sizes)
	}
}

// BenchmarkRecord is the per-record cost of redacting a held call: the
// field plan is why it is not dominated by reflection.
func BenchmarkRecord(b *testing.B) {
	type size struct {
		Value uint64
		Known bool
	}
	type call struct {
		SessionID, CallID, Tool, Source, Model, Project, Cwd, GitBranch string
		Arguments, Target, Marker, ContinuationOf                       string
		Original, Shown                                                 size
		Turn                                                            int
		Reasons                                                         []string
	}
	r := Default()
	c := call{SessionID: "0b1c7f9e-2d4a-4c39-9e55-6c1f0f3f6a10", CallID: "toolu_01PersistedGrep000001", Tool: "Bash",
		Source: "claude_code", Model: "claude-sonnet-4", Project: "/home/dev/app", Cwd: "/home/dev/app", GitBranch: "main",
		Arguments: `{"command":"grep -rn TODO src/ | head -200"}`, Target: "src/", Marker: "[1200 characters truncated]",
		Reasons: []string{"explicit marker"}}
	b.ReportAllocs()
	for b.Loop() {
		x := c
		r.Record(&x)
	}
}
