// Package schematest builds records for tests of the packages that store,
// encode or copy them.
package schematest

import (
	"fmt"
	"reflect"
	"time"
)

// Filled is a T with every exported field reachable from it set to a value
// other than its zero value, derived from seed (two seeds give records that
// differ in every field): strings that need escaping (quotes, control and
// HTML characters, U+2028, non-ASCII), times with nanoseconds in a zone
// other than UTC. A test that compares a record with what came back from an
// encoding or a copy then covers every field the record has now or gets
// later.
func Filled[T any](seed int) T {
	var x T
	fill(reflect.ValueOf(&x).Elem(), seed)
	return x
}

func fill(v reflect.Value, n int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("v%d \"<a&b>\"\n\t\u2028 Größe 大小 \x01", n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(n + 1))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(n + 1))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(n) + 0.25)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), n+1)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fill(v.Index(i), n+i+1)
		}
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for i := range 3 {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(k, n+10*i+1)
			fill(e, n+i+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 5, 1, 9, 0, n%60, 123456789, time.FixedZone("x", 3600))))
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), n+i+1)
			}
		}
	}
}
