package redact

import "reflect"

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
		t := v.Type()
		for i := 0; i < v.NumField(); i++ {
			if t.Field(i).IsExported() {
				n += r.value(v.Field(i))
			}
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
