package analysis

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/ctxaudit/ctxaudit/schema"
)

// event is one record of a session timeline: a call or an answer.
type event struct {
	call   *schema.ToolCall
	answer *schema.Answer
}

// randomTimeline builds a plausible session: paged Reads, fetch pages,
// silent WebFetch summaries, spilled Bash output read back or searched,
// Codex head+tail cuts, sub-agent calls, and answers in between — some
// naming their inputs, some leaving them to be derived.
func randomTimeline(r *rand.Rand, n int) []event {
	return randomTimelineOver(r, n, []string{"/repo/a.go", "/repo/pkg/b.go", "/repo/pkg/c.go"})
}

func randomTimelineOver(r *rand.Rand, n int, files []string) []event {
	var refs []string
	var events []event
	var turnCalls []string
	turn := 0
	addCall := func(c schema.ToolCall) {
		c.Turn = schema.KnownTurn(turn)
		if r.IntN(8) == 0 {
			c.AgentID, c.Sidechain = "sub", true
		}
		events = append(events, event{call: &c})
		turnCalls = append(turnCalls, c.CallID)
	}
	for i := range n {
		id := fmt.Sprintf("c%d", i)
		f := files[r.IntN(len(files))]
		switch r.IntN(11) {
		case 0:
			addCall(call(id, "Read", fmt.Sprintf(`{"file_path":%q}`, f), i,
				cut(schema.KindExplicit, schema.StrategyPaginated, schema.UnitLines, 1, 2000, 4500)))
		case 1:
			off := 1 + 2000*r.IntN(3)
			end := min(off+1999, 4500)
			addCall(call(id, "Read", fmt.Sprintf(`{"file_path":%q,"offset":%d,"limit":2000}`, f, off), i,
				partial(schema.UnitLines, off, end, 4500)))
		case 2:
			addCall(call(id, "WebFetch", `{"url":"https://example.com/docs","prompt":"p"}`, i,
				cut(schema.KindSilent, schema.StrategySummary, schema.UnitChars, 0, 100000, 156000)))
		case 3:
			start := 5000 * r.IntN(3)
			if start == 10000 {
				addCall(call(id, "mcp__fetch__fetch", `{"url":"https://example.com/big","start_index":10000}`, i,
					partial(schema.UnitChars, 10000, 12345, -1)))
			} else {
				addCall(call(id, "mcp__fetch__fetch", fmt.Sprintf(`{"url":"https://example.com/big","start_index":%d}`, start), i,
					cut(schema.KindExplicit, schema.StrategyPaginated, schema.UnitChars, start, start+5000, -1)))
			}
		case 4:
			ref := "/x/tool-results/" + id + ".txt"
			refs = append(refs, ref)
			addCall(call(id, "Bash", `{"command":"go test ./..."}`, i,
				cut(schema.KindExplicit, schema.StrategySpillToFile, schema.UnitChars, 0, 2000, 60000),
				saved(ref), originalChars(60000), originalLines(1200)))
		case 5:
			if len(refs) == 0 {
				continue
			}
			ref := refs[r.IntN(len(refs))]
			cmds := []string{"grep FAIL " + ref, "sed -n '1,600p' " + ref, "tail -n +601 " + ref, "cat " + ref}
			addCall(call(id, "Bash", fmt.Sprintf(`{"command":%q}`, cmds[r.IntN(len(cmds))]), i))
		case 6:
			addCall(call(id, "shell_command", `{"command":"cargo test","workdir":"/repo"}`, i,
				cut(schema.KindExplicit, schema.StrategyHeadTail, schema.UnitLines, -1, -1, 3000), contextLines(256)))
		case 7:
			addCall(call(id, "Grep", `{"pattern":"Timeout","path":"/repo/pkg"}`, i))
		case 8:
			addCall(call(id, "Read", fmt.Sprintf(`{"file_path":%q}`, f), i))
		case 9, 10:
			texts := []string{"There is no such option.", "It works now.", "文件中沒有這個設定。", "If it is not found, retry."}
			a := answer("m"+id, i, texts[r.IntN(len(texts))])
			a.Turn = schema.KnownTurn(turn)
			if r.IntN(2) == 0 {
				a.InputCallIDs = append([]string(nil), turnCalls...)
			}
			events = append(events, event{answer: &a})
			if r.IntN(3) == 0 {
				turn++
				turnCalls = nil
			}
		}
	}
	return events
}

func split(events []event) ([]schema.ToolCall, []schema.Answer) {
	var calls []schema.ToolCall
	var answers []schema.Answer
	for _, e := range events {
		if e.call != nil {
			calls = append(calls, *e.call)
		} else {
			a := *e.answer
			a.InputCallIDs = append([]string(nil), a.InputCallIDs...)
			answers = append(answers, a)
		}
	}
	return calls, answers
}

func analyzed(events []event) Session {
	calls, answers := split(events)
	s := Session{Calls: calls, Answers: answers}
	Analyze(&s)
	return s
}

// TestIncrementalEqualsWhole: for every prefix of a growing session,
// Analyze run on the analysed prefix records with the rest appended gives
// exactly the result of analysing the whole at once (collector/session
// re-analyses growing sessions this way).
func TestIncrementalEqualsWhole(t *testing.T) {
	for seed := range uint64(12) {
		r := rand.New(rand.NewPCG(seed, 42))
		events := randomTimeline(r, 50)
		whole := analyzed(events)
		if again := whole; true {
			again.Calls, again.Answers = clone(whole.Calls), cloneAnswers(whole.Answers)
			Analyze(&again)
			if !reflect.DeepEqual(again, whole) {
				t.Fatalf("seed %d: Analyze is not idempotent", seed)
			}
		}
		for p := range len(events) + 1 {
			// Analyze the prefix, then the analysed records plus the rest.
			prefix := analyzed(events[:p])
			restCalls, restAnswers := split(events[p:])
			grown := Session{
				Meta:    prefix.Meta,
				Calls:   append(prefix.Calls, restCalls...),
				Answers: append(prefix.Answers, restAnswers...),
			}
			Analyze(&grown)
			if !reflect.DeepEqual(grown, whole) {
				t.Fatalf("seed %d prefix %d: re-analysis of a grown session differs\n%s", seed, p, diff(grown, whole))
			}
		}
	}
}

func diff(got, want Session) string {
	if !reflect.DeepEqual(got.Meta, want.Meta) {
		return fmt.Sprintf("meta: got %+v\nwant %+v", got.Meta, want.Meta)
	}
	for i := range min(len(got.Calls), len(want.Calls)) {
		if !reflect.DeepEqual(got.Calls[i], want.Calls[i]) {
			return fmt.Sprintf("call %d: got %+v\nwant %+v", i, got.Calls[i], want.Calls[i])
		}
	}
	for i := range min(len(got.Answers), len(want.Answers)) {
		if !reflect.DeepEqual(got.Answers[i], want.Answers[i]) {
			return fmt.Sprintf("answer %d: got %+v\nwant %+v", i, got.Answers[i], want.Answers[i])
		}
	}
	return fmt.Sprintf("lengths: %d/%d calls, %d/%d answers", len(got.Calls), len(want.Calls), len(got.Answers), len(want.Answers))
}

// TestAnswerVerdictStableOnceMade: when every record's time is known, an
// answer's risk, reasons and incomplete inputs depend only on the calls up
// to it, so later growth never changes
// them (only the verdict sentence may, to say the model read further later).
func TestAnswerVerdictStableOnceMade(t *testing.T) {
	for seed := range uint64(8) {
		r := rand.New(rand.NewPCG(seed, 7))
		events := randomTimeline(r, 60)
		whole := analyzed(events)
		for p := range len(events) + 1 {
			prefix := analyzed(events[:p])
			for i, a := range prefix.Answers {
				w := whole.Answers[i]
				if a.Risk != w.Risk || !reflect.DeepEqual(a.Reasons, w.Reasons) ||
					!reflect.DeepEqual(a.ReasonCalls, w.ReasonCalls) || !reflect.DeepEqual(a.IncompleteInputs, w.IncompleteInputs) {
					t.Fatalf("seed %d prefix %d answer %s changed with later calls:\n got %+v\nwant %+v", seed, p, a.MessageID, a, w)
				}
			}
		}
	}
}
