package analysis

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ctxaudit/ctxaudit/schema"
)

// benchSession is a session of exactly 10,000 calls over 500 files, with
// answers between them (about one per five calls).
func benchSession() ([]schema.ToolCall, []schema.Answer) {
	files := make([]string, 500)
	for i := range files {
		files[i] = fmt.Sprintf("/repo/pkg%d/file%d.go", i%20, i)
	}
	r := rand.New(rand.NewPCG(1, 2))
	var calls []schema.ToolCall
	var answers []schema.Answer
	for _, e := range randomTimelineOver(r, 20000, files) {
		if len(calls) == 10000 {
			break
		}
		if e.call != nil {
			calls = append(calls, *e.call)
		} else {
			answers = append(answers, *e.answer)
		}
	}
	return calls, answers
}

// BenchmarkAnalyze10k analyses a 10,000-call session from scratch: argument
// and shell parsing, the follow-through sweep, answers and verdicts.
func BenchmarkAnalyze10k(b *testing.B) {
	calls, answers := benchSession()
	for b.Loop() {
		s := Session{Calls: clone(calls), Answers: cloneAnswers(answers)}
		Analyze(&s)
	}
	b.ReportMetric(float64(len(answers)), "answers")
}

func BenchmarkAbsenceClaim(b *testing.B) {
	text := "I read the first two pages of the documentation and the configuration reference. " +
		"The retry policy is described in section 4, but there is no such setting as max_backoff in the page."
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		AbsenceClaim(text)
	}
}
