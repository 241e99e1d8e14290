package redact

import (
	"reflect"
	"sync"
)

// Record redacts, in place, every exported string of the record rec points
// to — string fields, string slices, string map values, in nested and
// embedded structs — and returns how many secrets it replaced. It is the
// record-level form of what the ClickHouse writer does per column, for
// records that leave the process another way: held in a storage extension,
// printed by `ctxaudit ingest --dry-run`. Numbers and sizes are untouched:
// they were measured on the original text. rec must be a pointer to a
// struct; anything else is left as is.
func (r *Redactor) Record(rec any) int {
	v := reflect.ValueOf(rec)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return 0
	}
	return r.value(v.Elem())
}

func (r *Redactor) value(v reflect.Value) int {
	n := 0
	switch v.Kind() {
	case reflect.String:
		if !v.CanSet() {
			return 0
		}
		out, k := r.String(v.String())
		if k > 0 {
			v.SetString(out)
		}
		return k
	case reflect.Struct:
		for _, i := range r.fields.of(v.Type()) {
			n += r.value(v.Field(i))
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			n += r.value(v.Index(i))
		}
	case reflect.Pointer:
		if !v.IsNil() {
			n += r.value(v.Elem())
		}
	case reflect.Map:
		// Map elements are not addressable: redact a copy and put it back.
		it := v.MapRange()
		for it.Next() {
			e := reflect.New(it.Value().Type()).Elem()
			e.Set(it.Value())
			if k := r.value(e); k > 0 {
				v.SetMapIndex(it.Key(), e)
				n += k
			}
		}
	}
	return n
}

// fieldPlans caches, per struct type, the indexes of the exported fields
// that can hold a string: looking them up by reflection on every record
// cost more than redacting the record (reflect.Type.Field allocates), and
// numbers, times and sizes need no visit at all.
type fieldPlans struct{ m sync.Map } // reflect.Type → []int

func (p *fieldPlans) of(t reflect.Type) []int {
	if f, ok := p.m.Load(t); ok {
		return f.([]int)
	}
	var idx []int
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); f.IsExported() && mayHoldString(f.Type, map[reflect.Type]bool{}) {
			idx = append(idx, i)
		}
	}
	p.m.Store(t, idx)
	return idx
}

// mayHoldString reports whether a value of type t can contain a string that
// value would visit. seen breaks recursion through self-referencing types.
func mayHoldString(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.String:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return mayHoldString(t.Elem(), seen)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if f := t.Field(i); f.IsExported() && mayHoldString(f.Type, seen) {
				return true
			}
		}
	}
	return false
}
