package otelconv

import (
	"reflect"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestSlotsMatchKeys holds the switch of slotOf to slotKeys: every slot
// has its own key, and the switch finds each key's slot and no other.
func TestSlotsMatchKeys(t *testing.T) {
	seen := map[string]slot{}
	for s := range numSlots {
		k := slotKeys[s]
		if k == "" {
			t.Fatalf("slot %d has no key", s)
		}
		if other, dup := seen[k]; dup {
			t.Fatalf("slots %d and %d share key %q", other, s, k)
		}
		seen[k] = s
		if got, ok := slotOf(k); !ok || got != s {
			t.Errorf("slotOf(%q) = %d, %v; want %d", k, got, ok, s)
		}
	}
	for _, k := range []string{AttrToolCallResult, AttrOperationName, AttrAnalysisUpstream, "ctxaudit.output", ""} {
		if s, ok := slotOf(k); ok {
			t.Errorf("slotOf(%q) = %d, want no slot", k, s)
		}
	}
}

// lookedUp is callAttrs filled by looking every slot's key up in m: what
// the readers read before the one-pass index.
func lookedUp(m pcommon.Map) callAttrs {
	var x callAttrs
	for s := range numSlots {
		if v, ok := m.Get(slotKeys[s]); ok {
			x.set[s>>6] |= 1 << (s & 63)
			x.vals[s] = v
		}
	}
	return x
}

func sameAttrs(t *testing.T, got, want *callAttrs) {
	t.Helper()
	if got.set != want.set {
		t.Fatalf("slots set %b, want %b", got.set, want.set)
	}
	for s := range numSlots {
		if want.has(s) && !got.vals[s].Equal(want.vals[s]) {
			t.Fatalf("slot %d (%s) = %v, want %v", s, slotKeys[s], got.vals[s].AsRaw(), want.vals[s].AsRaw())
		}
	}
}

// TestIndexReadsTheFirstOfDuplicateKeys: OTLP can carry one key twice;
// Map.Get finds the first, and so does the index.
func TestIndexReadsTheFirstOfDuplicateKeys(t *testing.T) {
	const doc = `{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"execute_tool","attributes":[
		{"key":"gen_ai.tool.call.id","value":{"stringValue":"first"}},
		{"key":"ctxaudit.output.original.bytes","value":{"intValue":"10"}},
		{"key":"gen_ai.tool.call.id","value":{"stringValue":"second"}},
		{"key":"ctxaudit.output.original.bytes","value":{"intValue":"20"}}]}]}]}]}`
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	m := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes()
	if m.Len() != 4 {
		t.Fatalf("decoded %d attributes, want the 4 with their duplicates", m.Len())
	}
	var x callAttrs
	x.index(m)
	want := lookedUp(m)
	sameAttrs(t, &x, &want)
	c := ToolCallFromAttributes(m, pcommon.NewMap(), time.Time{})
	if c.CallID != "first" || !c.Forensics.Original.Bytes.Known || c.Forensics.Original.Bytes.N != 10 {
		t.Fatalf("read call id %q, original bytes %+v; want the first of each", c.CallID, c.Forensics.Original.Bytes)
	}
}

// FuzzCallAttrsIndex builds attribute maps of the keys the readers know
// (and others), with values of every type, and requires the one-pass index
// to be what looking each key up gives — and so the same call.
func FuzzCallAttrsIndex(f *testing.F) {
	f.Add([]byte{0, 0, 'a', 5, 1, '7', 33, 2, 9, 48, 3, 1, 66, 4, 0})
	f.Add([]byte{44, 0, 's', 44, 0, 'x', 32, 1, 200, 7, 0, '1'})
	f.Fuzz(func(t *testing.T, data []byte) {
		m := pcommon.NewMap()
		for len(data) >= 3 {
			k, typ, b := data[0], data[1], data[2]
			data = data[3:]
			key := "other.key"
			if int(k) < int(numSlots) {
				key = slotKeys[k]
			} else if k%2 == 0 {
				key = AttrToolCallResult
			}
			switch typ % 6 {
			case 0:
				m.PutStr(key, string(rune(b)))
			case 1:
				m.PutInt(key, int64(int8(b)))
			case 2:
				m.PutDouble(key, float64(int8(b))/3)
			case 3:
				m.PutBool(key, b%2 == 1)
			case 4:
				m.PutStr(key, " "+string(rune('0'+b%10))+" ")
			case 5:
				m.PutEmptySlice(key).AppendEmpty().SetStr(string(rune(b)))
			}
		}
		var x callAttrs
		x.index(m)
		want := lookedUp(m)
		sameAttrs(t, &x, &want)
		res := pcommon.NewMap()
		ts := time.Unix(1, 0)
		ref := toolCallFields(&want, res, ts)
		ref.Forensics, ref.Analysis = forensicsOf(&want), want.analysis()
		if got := ToolCallFromAttributes(m, res, ts); !reflect.DeepEqual(got, ref) {
			t.Fatalf("index read\n%+v\nlook-ups read\n%+v", got, ref)
		}
	})
}
