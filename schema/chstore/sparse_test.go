package chstore

import "testing"

// Only types whose own default is the writer's Go zero may be left out of
// an INSERT; enums and dates never.
func TestZeroIsTypeDefault(t *testing.T) {
	for typ, want := range map[string]bool{
		"String":                           true,
		"LowCardinality(String)":           true,
		"LowCardinality(Nullable(String))": true,
		"UInt8":                            true,
		"UInt32":                           true,
		"UInt64":                           true,
		"Float64":                          true,
		"Nullable(UInt64)":                 true,
		"Nullable(Float64)":                true,
		"Array(String)":                    true,
		"Array(Array(String))":             true,
		"Enum8('none' = 0, 'head' = 1)":    false,
		"LowCardinality(Enum8('a' = 1))":   false,
		"DateTime":                         false,
		"DateTime64(3)":                    false,
		"Date":                             false,
		"FixedString(64)":                  false,
		"Decimal(18, 4)":                   false,
		"UUID":                             false,
		"":                                 false,
	} {
		if got := zeroIsTypeDefault(typ); got != want {
			t.Errorf("zeroIsTypeDefault(%q) = %v, want %v", typ, got, want)
		}
	}
}

// A column is all zero only when every row holds its Go zero: a known 0 or
// 0.0 (a non-nil pointer) is a value, not NULL.
func TestAllZero(t *testing.T) {
	zero, one := uint64(0), 0.0
	for name, tc := range map[string]struct {
		values any
		want   bool
	}{
		"empty strings":      {[]string{"", ""}, true},
		"one string":         {[]string{"", "x"}, false},
		"false bools":        {[]uint8{0, 0}, true},
		"one true":           {[]uint8{0, 1}, false},
		"zero uint32":        {[]uint32{0}, true},
		"uint32":             {[]uint32{0, 7}, false},
		"zero uint64":        {[]uint64{0, 0}, true},
		"uint64":             {[]uint64{3}, false},
		"unknown sizes":      {[]*uint64{nil, nil}, true},
		"a known zero size":  {[]*uint64{nil, &zero}, false},
		"unknown ratios":     {[]*float64{nil}, true},
		"a known zero ratio": {[]*float64{&one, nil}, false},
		"empty arrays":       {[][]string{{}, nil}, true},
		"an array":           {[][]string{{}, {"a"}}, false},
		"empty nested":       {[][][]string{{}, {}}, true},
		"nested":             {[][][]string{{}, {{}}}, false},
		"no rows":            {[]string{}, true},
		"another type":       {[]int{0}, false},
		"times":              {[]any{nil}, false},
	} {
		if got := allZero(tc.values); got != tc.want {
			t.Errorf("%s: allZero(%v) = %v, want %v", name, tc.values, got, tc.want)
		}
	}
}
