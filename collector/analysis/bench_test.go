package analysis

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

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

// BenchmarkAnalyze10kUnordered analyses the same session with no call
// placed (every time unknown, no source line: a sender of spans without
// start times), where every cut call not followed up is checked against the
// calls that could have continued it (markFollowUpsUnknown).
func BenchmarkAnalyze10kUnordered(b *testing.B) {
	calls, answers := benchSession()
	for i := range calls {
		calls[i].Timestamp = time.Time{}
	}
	for b.Loop() {
		s := Session{Calls: clone(calls), Answers: cloneAnswers(answers)}
		Analyze(&s)
	}
}

// BenchmarkAnalyzeUnorderedRepeats analyses 3,000 calls nothing orders
// that read the same file and were cut the same way, and 3,000 that each
// read a page of their own of another: every cut call not followed up is
// checked against the classes of the calls that could continue it, not
// against each call (quadratic: seconds instead of milliseconds here).
func BenchmarkAnalyzeUnorderedRepeats(b *testing.B) {
	var calls []schema.ToolCall
	for i := range 3000 {
		c := call("", "Read", `{"file_path":"/repo/a.go"}`, 0, cut(schema.KindSilent, schema.StrategyHead, schema.UnitLines, 1, 100, 500))
		p := call("", "Read", fmt.Sprintf(`{"file_path":"/repo/b.log","offset":%d,"limit":10}`, 1+10*i), 0,
			cut(schema.KindSilent, schema.StrategyHead, schema.UnitLines, 1+10*i, 5+10*i, 30000))
		c.Timestamp, p.Timestamp = time.Time{}, time.Time{}
		calls = append(calls, c, p)
	}
	for b.Loop() {
		s := Session{Calls: clone(calls)}
		Analyze(&s)
	}
}

func BenchmarkAbsenceClaim(b *testing.B) {
	text := "I read the first two pages of the documentation and the configuration reference. " +
		"The retry policy is described in section 4, but there is no such setting as max_backoff in the page."
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		AbsenceClaim(text)
	}
}
