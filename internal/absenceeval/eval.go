package absenceeval

import (
	"fmt"
	"io"
	"strings"

	"github.com/ctxaudit/ctxaudit/collector/analysis"
	"github.com/ctxaudit/ctxaudit/schema"
)

// Predict is the detector's label for one answer text.
func Predict(text string) string {
	switch analysis.AbsenceOf(text) {
	case schema.AbsenceUnscoped:
		return LabelUnscoped
	case schema.AbsenceScoped:
		return LabelScoped
	}
	return LabelNone
}

// Scores are the figures of one label over some answers.
type Scores struct {
	TP, FP, FN int
	// Support is how many answers carry the label.
	Support int
}

// Precision is TP/(TP+FP); 1 when nothing was predicted (no false claim made).
func (s Scores) Precision() float64 { return ratio(s.TP, s.TP+s.FP) }

// Recall is TP/(TP+FN); 1 when no answer carries the label.
func (s Scores) Recall() float64 { return ratio(s.TP, s.TP+s.FN) }

// F1 is the harmonic mean of precision and recall.
func (s Scores) F1() float64 {
	p, r := s.Precision(), s.Recall()
	if p+r == 0 {
		return 0
	}
	return 2 * p * r / (p + r)
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

// Result is the evaluation of one split.
type Result struct {
	Split   string
	N       int
	Overall map[string]Scores
	// ByLang maps language → label → scores.
	ByLang map[string]map[string]Scores
	// LangN counts answers per language.
	LangN map[string]int
	// Confusion[want][got] counts answers.
	Confusion map[string]map[string]int
	// Errors are the answers the detector got wrong.
	Errors []Miss
}

// Miss is one wrongly labeled answer.
type Miss struct {
	Answer Answer
	Got    string
}

// Evaluate scores the detector on the answers of one split.
func Evaluate(answers []Answer, split string) Result {
	r := Result{
		Split: split, Overall: map[string]Scores{}, ByLang: map[string]map[string]Scores{},
		LangN: map[string]int{}, Confusion: map[string]map[string]int{},
	}
	for _, l := range Labels {
		r.Confusion[l] = map[string]int{}
	}
	for _, a := range answers {
		if a.Split != split {
			continue
		}
		got := Predict(a.Text)
		r.N++
		r.LangN[a.Lang]++
		r.Confusion[a.Label][got]++
		if got != a.Label {
			r.Errors = append(r.Errors, Miss{a, got})
		}
		if r.ByLang[a.Lang] == nil {
			r.ByLang[a.Lang] = map[string]Scores{}
		}
		for _, l := range Labels {
			for _, m := range []map[string]Scores{r.Overall, r.ByLang[a.Lang]} {
				s := m[l]
				if a.Label == l {
					s.Support++
				}
				switch {
				case got == l && a.Label == l:
					s.TP++
				case got == l:
					s.FP++
				case a.Label == l:
					s.FN++
				}
				m[l] = s
			}
		}
	}
	return r
}

// Write prints r: per-label figures overall and per language, then the
// confusion matrix; with verbose, every miss.
func (r Result) Write(w io.Writer, verbose bool) {
	fmt.Fprintf(w, "== %s: %d answers\n\n", r.Split, r.N)
	fmt.Fprintf(w, "%-8s %-17s %9s %9s %9s %8s\n", "lang", "label", "precision", "recall", "f1", "support")
	row := func(lang, label string, s Scores) {
		fmt.Fprintf(w, "%-8s %-17s %9.3f %9.3f %9.3f %8d\n", lang, label, s.Precision(), s.Recall(), s.F1(), s.Support)
	}
	for _, l := range Labels {
		row("all", l, r.Overall[l])
	}
	for _, lang := range Languages {
		if r.LangN[lang] == 0 {
			continue
		}
		for _, l := range Labels {
			row(lang, l, r.ByLang[lang][l])
		}
	}
	fmt.Fprintf(w, "\nconfusion (rows: label, columns: detector)\n%-17s", "")
	for _, l := range Labels {
		fmt.Fprintf(w, " %17s", l)
	}
	fmt.Fprintln(w)
	for _, want := range Labels {
		fmt.Fprintf(w, "%-17s", want)
		for _, got := range Labels {
			fmt.Fprintf(w, " %17d", r.Confusion[want][got])
		}
		fmt.Fprintln(w)
	}
	if verbose && len(r.Errors) > 0 {
		fmt.Fprintf(w, "\nmisses\n")
		for _, m := range r.Errors {
			fmt.Fprintf(w, "  %s %s: want %s, got %s: %s\n", m.Answer.ID, m.Answer.Lang, m.Answer.Label, m.Got, oneLine(m.Answer.Text, 160))
		}
	}
	fmt.Fprintln(w)
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
