package schema

import (
	"encoding/json"
	"testing"
)

func TestPrecisionJSON(t *testing.T) {
	tests := []struct {
		p    Precision
		json string
	}{
		{PrecisionNone, "null"},
		{PrecisionExact, `"exact"`},
		{PrecisionApproximate, `"approximate"`},
		{PrecisionLowerBound, `"lower_bound"`},
		{Precision(`odd "one"`), `"odd \"one\""`}, // not one of ours: escaped as any string
	}
	for _, tt := range tests {
		b, err := json.Marshal(Original{Source: SourceMarker, Precision: tt.p})
		if err != nil {
			t.Fatal(err)
		}
		want := `{"bytes":null,"chars":null,"lines":null,"tokens":null,"source":"marker","precision":` + tt.json + `}`
		if string(b) != want {
			t.Errorf("marshal %q = %s, want %s", tt.p, b, want)
		}
		var back Original
		if err := json.Unmarshal(b, &back); err != nil || back.Precision != tt.p {
			t.Errorf("unmarshal %s = %q, %v; want %q", b, back.Precision, err, tt.p)
		}
	}
	var p Precision = PrecisionExact
	if err := json.Unmarshal([]byte(`3`), &p); err == nil {
		t.Errorf("a number unmarshalled as precision %q", p)
	}
}

func TestPrecisionWeaker(t *testing.T) {
	order := []Precision{PrecisionNone, PrecisionLowerBound, PrecisionApproximate, PrecisionExact}
	for i, a := range order {
		for j, b := range order {
			if got := a.Weaker(b); got != (i < j) {
				t.Errorf("%q.Weaker(%q) = %v, want %v", a, b, got, i < j)
			}
		}
	}
}

func TestForensicsJSONHasTailAndRefetch(t *testing.T) {
	f := Forensics{
		ShownTail:      Range{Start: Known(29000), End: Known(30000), Unit: UnitChars},
		ShownTailIsEnd: false, RefetchedSource: true,
	}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	tail, _ := m["shown_tail"].(map[string]any)
	if tail["start"] != 29000.0 || tail["end"] != 30000.0 || tail["unit"] != "chars" {
		t.Errorf("shown_tail = %v", m["shown_tail"])
	}
	if m["shown_tail_is_end"] != false || m["refetched_source"] != true {
		t.Errorf("shown_tail_is_end = %v, refetched_source = %v", m["shown_tail_is_end"], m["refetched_source"])
	}
	var none map[string]any
	b, _ = json.Marshal(Forensics{})
	_ = json.Unmarshal(b, &none)
	if tail, _ := none["shown_tail"].(map[string]any); tail["start"] != nil || tail["end"] != nil {
		t.Errorf("absent shown_tail = %v, want null start and end", none["shown_tail"])
	}
}
