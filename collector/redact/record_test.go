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
