package report

import (
	"testing"

	"github.com/ctxaudit/ctxaudit/schema"
)

func TestAbsenceText(t *testing.T) {
	q := func(s string) string { return "«" + s + "»" }
	for _, tc := range []struct {
		a    schema.Answer
		want string
	}{
		{schema.Answer{Absence: schema.AbsenceNone}, "none"},
		{schema.Answer{Absence: schema.AbsenceUnscoped, AbsenceClaim: true, AbsenceClause: "there is no such flag"},
			"unscoped: «there is no such flag»"},
		{schema.Answer{Absence: schema.AbsenceScoped, AbsenceClaim: true, AbsenceClause: "前 100 行沒有 retryUpload。", AbsenceScope: "前 100 行"},
			"scoped to «前 100 行»: «前 100 行沒有 retryUpload。»"},
		{schema.Answer{Absence: schema.AbsenceUnknown, AbsenceClaim: true}, "not judged (absence claim yes)"},
		{schema.Answer{AbsenceClaim: false}, "not judged (absence claim no)"},
	} {
		if got := absenceText(&tc.a, q); got != tc.want {
			t.Errorf("absenceText(%+v) = %q, want %q", tc.a, got, tc.want)
		}
	}
}
