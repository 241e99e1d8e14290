package report

import "github.com/ctxaudit/ctxaudit/schema"

// absenceText says what an answer claims is missing: "none", `unscoped:
// "there is no such setting"`, `scoped to "the first 2,000 lines": "…"`; for
// rows stored before the detector judged scope, only whether it claimed.
func absenceText(a *schema.Answer, quoteFn func(string) string) string {
	switch a.Absence {
	case schema.AbsenceNone:
		return "none"
	case schema.AbsenceUnscoped:
		return "unscoped: " + quoteFn(a.AbsenceClause)
	case schema.AbsenceScoped:
		return "scoped to " + quoteFn(a.AbsenceScope) + ": " + quoteFn(a.AbsenceClause)
	}
	return "not judged (absence claim " + yesNo(a.AbsenceClaim) + ")"
}
