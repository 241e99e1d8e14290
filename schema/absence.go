package schema

// Absence is what an answer claims is missing (docs/design.md §5.3): nothing, something
// within a scope it names ("in the first 2,000 lines there is no …", "讀到的
// 部分裡沒有…"), or something outright ("there is no such setting").
type Absence string

const (
	// AbsenceUnknown: the answer was not judged by the absence detector
	// (rows stored before the answers.absence column existed, or answers
	// from a source that does not carry the judgement).
	AbsenceUnknown Absence = "unknown"
	// AbsenceNone: the answer claims nothing is missing.
	AbsenceNone Absence = "none"
	// AbsenceScoped: every absence claim names the part it is about: the
	// honest form after reading part of a source.
	AbsenceScoped Absence = "scoped"
	// AbsenceUnscoped: at least one absence claim speaks for the whole.
	AbsenceUnscoped Absence = "unscoped"
)

// Absences lists the values in the order of the ClickHouse Enum8.
var Absences = []Absence{AbsenceUnknown, AbsenceNone, AbsenceScoped, AbsenceUnscoped}

// IsClaim reports whether the answer claims that something is missing,
// scoped or not: what Answer.AbsenceClaim stores.
func (a Absence) IsClaim() bool { return a == AbsenceScoped || a == AbsenceUnscoped }

// ReasonScopedAbsence: the answer's absence claims are scoped to a part the
// model did see (or to "what I read"), on an incomplete input. It is honest,
// so it caps the answer at medium instead of making it high.
const ReasonScopedAbsence = "scoped_absence"
