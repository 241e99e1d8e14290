package session

import (
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/schema"
)

func call(id string, at time.Time, truncated bool, args string) schema.ToolCall {
	c := schema.ToolCall{SessionID: "s", CallID: id, Tool: "Read", Timestamp: at, Source: schema.HarnessClaudeCode,
		Arguments: args, SourceFile: "/s.jsonl"}
	c.Original.Source = schema.SourceUnknown
	c.Kind, c.Strategy = schema.KindNone, schema.StrategyNone
	if truncated {
		c.Truncated, c.Kind, c.Strategy = true, schema.KindExplicit, schema.StrategyHead
		c.Shown = schema.Range{Start: schema.Known(1), End: schema.Known(2000), Unit: schema.UnitLines}
		c.Total = schema.Known(5000)
	}
	return c
}

func ids(calls []schema.ToolCall) []string {
	var out []string
	for _, c := range calls {
		out = append(out, c.CallID)
	}
	return out
}

// A builder returns what changed since its last result: everything at
// first, then the calls a later call followed up (and, since the analysis
// saw more, every call again: its stored row must say so), and nothing when
// the same records are added again.
func TestAnalyzeReturnsWhatChanged(t *testing.T) {
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	b := New("s")
	first := call("c1", at, true, `{"file_path":"/a.go"}`)
	b.AddCall(first, "", true)
	b.AddAnswer(schema.Answer{SessionID: "s", MessageID: "m1", Timestamp: at.Add(time.Second), Text: "there is no such thing",
		InputCallIDs: []string{"c1"}})
	res := b.Analyze(schema.Session{SessionID: "s"})
	if len(res.Calls) != 1 || len(res.Answers) != 1 || res.Calls[0].FollowedUp {
		t.Fatalf("first analysis: calls %v answers %d", ids(res.Calls), len(res.Answers))
	}
	if a := res.Calls[0].Analysis; a != (schema.Analysis{Done: true, Records: 2}) {
		t.Errorf("analysis stamp %+v", a)
	}
	if res := b.Analyze(schema.Session{SessionID: "s"}); len(res.Calls) != 0 || len(res.Answers) != 0 {
		t.Errorf("nothing changed, yet %v and %d answers were returned", ids(res.Calls), len(res.Answers))
	}

	// Re-adding the same call (a re-read file) neither duplicates it nor changes anything.
	b.AddCall(first, "", false)
	if b.Calls() != 1 {
		t.Fatalf("%d calls held after re-adding one", b.Calls())
	}
	if res := b.Analyze(schema.Session{SessionID: "s"}); len(res.Calls) != 0 {
		t.Errorf("re-added call returned again: %v", ids(res.Calls))
	}

	// A later Read of the rest follows c1 up.
	b.AddCall(call("c2", at.Add(2*time.Second), false, `{"file_path":"/a.go","offset":2001}`), "", true)
	res = b.Analyze(schema.Session{SessionID: "s"})
	got := map[string]schema.ToolCall{}
	for _, c := range res.Calls {
		got[c.CallID] = c
	}
	if c, ok := got["c1"]; !ok || !c.FollowedUp {
		t.Errorf("c1 after its follow-up: returned %v, followed_up %v", ok, c.FollowedUp)
	}
	if _, ok := got["c2"]; !ok {
		t.Error("the new call c2 was not returned")
	}
	if res.Meta.ToolCalls != 2 || res.Meta.Analysis.Records != 3 {
		t.Errorf("session counts %d calls, analysis %+v", res.Meta.ToolCalls, res.Meta.Analysis)
	}
}

// A sub-agent's calls are placed in the turn of the Task call that ran it,
// whatever order the files were read in.
func TestSubAgentPlacement(t *testing.T) {
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	b := New("s")
	side := call("side", at.Add(time.Second), false, `{"file_path":"/b.go"}`)
	side.Sidechain, side.AgentID, side.Turn = true, "agent-1", schema.KnownTurn(0)
	b.AddCall(side, "", true)
	task := call("task", at, false, `{}`)
	task.Turn = schema.KnownTurn(3)
	b.AddCall(task, "agent-1", true)
	res := b.Analyze(schema.Session{SessionID: "s"})
	for _, c := range res.Calls {
		if c.CallID == "side" && c.Turn != schema.KnownTurn(3) {
			t.Errorf("sub-agent call in turn %s, want the Task's turn 3", c.Turn)
		}
	}
	b.Partial = true
	res = b.Analyze(schema.Session{SessionID: "s"})
	if !res.Meta.Analysis.Partial || len(res.Calls) != 2 {
		t.Errorf("a partial builder's analysis: %+v, %d calls returned", res.Meta.Analysis, len(res.Calls))
	}
}

func TestMergeMeta(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	m := MergeMeta(
		schema.Session{SessionID: "main", Model: "m1", StartedAt: t0.Add(time.Minute), EndedAt: t0.Add(2 * time.Minute), InputTokens: schema.Known(5)},
		schema.Session{SessionID: "agent", Model: "m2", Cwd: "/w", StartedAt: t0, EndedAt: t0.Add(3 * time.Minute), InputTokens: schema.Known(7)},
	)
	if m.SessionID != "main" || m.Model != "m1" || m.Cwd != "/w" || !m.StartedAt.Equal(t0) || !m.EndedAt.Equal(t0.Add(3*time.Minute)) || m.InputTokens != schema.Known(12) {
		t.Errorf("merged %+v", m)
	}
	if MergeMeta() != (schema.Session{}) {
		t.Error("merging nothing is not empty")
	}
}

// A message analysed while it was still being written (its text line read,
// its tool_use line not yet) looked like an answer; once its call arrives it
// is not one: no later analysis counts it, and the next result takes back
// the answer it returned once, and only once.
func TestAnswerOfAMessageThatCallsAToolIsRetracted(t *testing.T) {
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	b := New("s")
	b.AddCall(call("c1", at, false, `{"file_path":"/a.go"}`), "", true)
	b.AddAnswer(schema.Answer{SessionID: "s", MessageID: "m2", Timestamp: at.Add(time.Second), Text: "Let me check b.go.",
		InputCallIDs: []string{"c1"}})
	res := b.Analyze(schema.Session{SessionID: "s"})
	if len(res.Answers) != 1 || res.Meta.Answers != 1 || len(res.Retracted) != 0 {
		t.Fatalf("open message: answers %d, session answers %d, retracted %v", len(res.Answers), res.Meta.Answers, res.Retracted)
	}

	c2 := call("c2", at.Add(2*time.Second), false, `{"file_path":"/b.go"}`)
	c2.MessageID = "m2"
	b.AddCall(c2, "", true)
	// A re-read of the file offers the candidate again; it stays out.
	b.AddAnswer(schema.Answer{SessionID: "s", MessageID: "m2", Timestamp: at.Add(time.Second), Text: "Let me check b.go."})
	res = b.Analyze(schema.Session{SessionID: "s"})
	if res.Meta.Answers != 0 {
		t.Errorf("after its call the message still counts as an answer: session answers %d", res.Meta.Answers)
	}
	if len(res.Retracted) != 1 || res.Retracted[0].MessageID != "m2" || !res.Retracted[0].Timestamp.Equal(at.Add(time.Second)) {
		t.Errorf("retracted %v, want m2 as held", res.Retracted)
	}
	// What is returned for it is its retraction: the same message and
	// timestamp (so the same row key and partition), marked, ranked by the
	// analysis that took it back.
	if len(res.Answers) != 1 {
		t.Fatalf("%d answer records returned; want the retraction of m2 only", len(res.Answers))
	}
	if r := res.Answers[0]; !r.Retracted || r.MessageID != "m2" || !r.Timestamp.Equal(at.Add(time.Second)) ||
		r.Verdict != RetractedVerdict || r.Analysis != res.Meta.Analysis || !r.Analysis.Done {
		t.Errorf("retraction record %+v (session analysis %+v)", r, res.Meta.Analysis)
	}
	if res := b.Analyze(schema.Session{SessionID: "s"}); len(res.Retracted) != 0 || len(res.Answers) != 0 {
		t.Errorf("retracted again: %v, answers %v", res.Retracted, res.Answers)
	}

	// A candidate never returned is dropped without a retraction.
	b.AddAnswer(schema.Answer{SessionID: "s", MessageID: "m3", Timestamp: at.Add(3 * time.Second), Text: "Reading c.go."})
	c3 := call("c3", at.Add(4*time.Second), false, `{"file_path":"/c.go"}`)
	c3.MessageID = "m3"
	b.AddCall(c3, "", true)
	if res := b.Analyze(schema.Session{SessionID: "s"}); len(res.Retracted) != 0 || res.Meta.Answers != 0 {
		t.Errorf("never-returned candidate: retracted %v, session answers %d", res.Retracted, res.Meta.Answers)
	}

	// A caller can say so itself (a Codex call naming the narration it ends).
	b.AddAnswer(schema.Answer{SessionID: "s", MessageID: "m4", Timestamp: at.Add(5 * time.Second), Text: "Looking further.",
		InputCallIDs: []string{"c1"}})
	if res := b.Analyze(schema.Session{SessionID: "s"}); len(res.Answers) != 1 || res.Meta.Answers != 1 {
		t.Fatalf("m4 as a candidate: %d returned, session answers %d", len(res.Answers), res.Meta.Answers)
	}
	b.NotAnswer("m4")
	b.AddAnswer(schema.Answer{SessionID: "s", MessageID: "m4", Timestamp: at.Add(5 * time.Second), Text: "Looking further."})
	if res := b.Analyze(schema.Session{SessionID: "s"}); len(res.Retracted) != 1 || res.Retracted[0].MessageID != "m4" || res.Meta.Answers != 0 {
		t.Errorf("NotAnswer: retracted %v, session answers %d", res.Retracted, res.Meta.Answers)
	}
}

// A builder rebuilt after a restart — what was returned restored first,
// then the records, in any order — takes back an answer returned before
// whose message proved to call a tool, once: the fingerprints it merges
// after the retraction no longer count the answer as returned.
func TestRestoredBuilderTakesBackAnAnswerOnce(t *testing.T) {
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	meta := schema.Session{SessionID: "s"}
	answer := schema.Answer{SessionID: "s", MessageID: "m2", Timestamp: at.Add(time.Second), Text: "Let me check b.go."}
	c1, c2 := call("c1", at, false, `{"file_path":"/a.go"}`), call("c2", at.Add(2*time.Second), false, `{"file_path":"/b.go"}`)
	c2.MessageID = "m2"

	b := New("s")
	b.HoldCall(&c1)
	b.AddAnswer(answer)
	var sent Sent
	sent.Merge(b.Commit(b.Pending(meta)))
	if _, ok := sent.Answers["m2"]; !ok {
		t.Fatalf("the answer was not returned: %+v", sent)
	}
	for _, order := range [][]any{{c1, answer, c2}, {c1, c2, answer}, {answer, c2, c1}} {
		r := restored(sent, order)
		res := r.Pending(meta)
		if len(res.Retracted) != 1 || res.Retracted[0].MessageID != "m2" || res.Meta.Answers != 0 {
			t.Fatalf("order %v: retracted %v, session answers %d; want m2 taken back", order, res.Retracted, res.Meta.Answers)
		}
		done := sent
		done.Calls, done.Answers = maps.Clone(sent.Calls), maps.Clone(sent.Answers)
		done.Merge(r.Commit(res))
		if _, ok := done.Answers["m2"]; ok {
			t.Fatalf("order %v: m2 still counted as returned after its retraction: %+v", order, done)
		}
		if res := restored(done, order).Pending(meta); len(res.Retracted) != 0 {
			t.Errorf("order %v: taken back again after a second restart: %v", order, res.Retracted)
		}
	}
}

// restored is a builder rebuilt as a restarted processor rebuilds one: what
// was returned first, then the records in order.
func restored(sent Sent, records []any) *Builder {
	b := New("s")
	b.Restore(sent)
	for _, rec := range records {
		switch rec := rec.(type) {
		case schema.ToolCall:
			b.HoldCall(&rec)
		case schema.Answer:
			b.AddAnswer(rec)
		}
	}
	return b
}

// A processor stores the fingerprints of what it emitted (session.Sent);
// a call of known turn must print as it did when turns were plain
// integers, or every held session would be emitted again after an
// upgrade. The figures are what the fingerprint gave then (534861b).
func TestCallPrintOfAKnownTurnIsUnchanged(t *testing.T) {
	for turn, want := range map[int]uint64{0: 0x9a0ca252897100d, 3: 0xe8206223a6e3a7e7} {
		f := followThrough{turn: schema.KnownTurn(turn), target: "a.go", continuationOf: "toolu_1", coverage: schema.KnownRatio(0.5),
			analysis: schema.Analysis{Done: true, Records: 12}}
		if got := f.print(); got != want {
			t.Errorf("turn %d prints %#x, before %#x", turn, got, want)
		}
	}
}

// TestCallPrintCoversFollowThrough: a change to any field of a call's
// follow-through changes its fingerprint (else the change is never
// emitted), and two strings that split the same bytes differently do not
// collide. The field counts make a field added to followThrough, Analysis
// or Ratio fail here until print covers it.
func TestCallPrintCoversFollowThrough(t *testing.T) {
	for typ, want := range map[reflect.Type]int{
		reflect.TypeFor[followThrough]():   8,
		reflect.TypeFor[schema.Analysis](): 3,
		reflect.TypeFor[schema.Ratio]():    2,
	} {
		if got := typ.NumField(); got != want {
			t.Errorf("%v has %d fields, callPrint covers %d: add the new ones to followThrough.print", typ, got, want)
		}
	}
	base := followThrough{turn: schema.KnownTurn(3), target: "a.go", continuationOf: "toolu_1", coverage: schema.KnownRatio(0.5),
		analysis: schema.Analysis{Done: true, Records: 12}}
	changes := map[string]func(*followThrough){
		"turn":              func(f *followThrough) { f.turn = schema.KnownTurn(4) },
		"turn 0":            func(f *followThrough) { f.turn = schema.KnownTurn(0) },
		"turn unknown":      func(f *followThrough) { f.turn = schema.Turn{} },
		"target":            func(f *followThrough) { f.target = "b.go" },
		"followedUp":        func(f *followThrough) { f.followedUp = true },
		"unknown":           func(f *followThrough) { f.unknown = true },
		"continuationOf":    func(f *followThrough) { f.continuationOf = "toolu_2" },
		"coverage.V":        func(f *followThrough) { f.coverage.V = 0.75 },
		"coverage.Known":    func(f *followThrough) { f.coverage.Known = false },
		"searched":          func(f *followThrough) { f.searched = true },
		"analysis.Done":     func(f *followThrough) { f.analysis.Done = false },
		"analysis.Partial":  func(f *followThrough) { f.analysis.Partial = true },
		"analysis.Records":  func(f *followThrough) { f.analysis.Records = 13 },
		"target/continuing": func(f *followThrough) { f.target, f.continuationOf = "a.got", "oolu_1" },
	}
	seen := map[uint64]string{base.print(): "base"}
	for name, change := range changes {
		f := base
		change(&f)
		p := f.print()
		if other, dup := seen[p]; dup {
			t.Errorf("changing %s gives the fingerprint of %s", name, other)
		}
		seen[p] = name
	}
	if first, again := base.print(), base.print(); first != again {
		t.Error("fingerprint is not deterministic")
	}
}

// A Result lists the messages learned not to be answers since the last
// committed one: each once when its emission succeeds, again when it
// failed (not committed), and one learned between Pending and Commit in the
// next Result. Retractions pairs them with a store's standing answers.
func TestResultListsNotAnswersLearnedSinceTheLastCommit(t *testing.T) {
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	b := New("s")
	c1 := call("c1", at, false, `{"file_path":"/a.go"}`)
	c1.MessageID = "m1"
	b.AddCall(c1, "", true)
	b.NotAnswer("m2")
	meta := schema.Session{SessionID: "s"}
	if res := b.Pending(meta); !slices.Equal(res.NotAnswers, []string{"m1", "m2"}) {
		t.Fatalf("first result lists %v, want m1 m2", res.NotAnswers)
	}
	// The emission failed: not committed, listed again.
	res := b.Pending(meta)
	if !slices.Equal(res.NotAnswers, []string{"m1", "m2"}) {
		t.Fatalf("after a failed emission: %v, want m1 m2 again", res.NotAnswers)
	}
	b.NotAnswer("m3") // between Pending and Commit
	b.NotAnswer("m1") // known: not listed again
	b.Commit(res)
	if res := b.Analyze(meta); !slices.Equal(res.NotAnswers, []string{"m3"}) {
		t.Fatalf("after the commit: %v, want m3 only", res.NotAnswers)
	}
	if res := b.Analyze(meta); len(res.NotAnswers) != 0 {
		t.Fatalf("nothing learned since: %v", res.NotAnswers)
	}

	by := schema.Analysis{Done: true, Records: 4}
	learned := []NotAnswers{{SessionID: "s", MessageIDs: []string{"m1", "m3"}, By: by}}
	standing := []schema.Answer{
		{SessionID: "s", MessageID: "m3", Timestamp: at, Text: "Looking.", Risk: schema.RiskLow},
		{SessionID: "other", MessageID: "m1", Timestamp: at}, // not of the session that learned it
	}
	if got := Lookup(learned); !reflect.DeepEqual(got, map[string][]string{"s": {"m1", "m3"}}) {
		t.Errorf("Lookup = %v", got)
	}
	got := Retractions(learned, standing)
	if len(got) != 1 || got[0].MessageID != "m3" || !got[0].Retracted || got[0].Analysis != by || got[0].Text != "" || !got[0].Timestamp.Equal(at) {
		t.Errorf("Retractions = %+v, want m3's, ranked by the learner, without its text", got)
	}
}

// An answer whose record names no harness is the session's, whenever it
// came: before the session's first call (when the holder did not know the
// harness yet) or after. One that names its own keeps it.
func TestAnswerWithoutSourceIsTheSessions(t *testing.T) {
	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	b := New("s")
	b.AddAnswer(schema.Answer{SessionID: "s", MessageID: "early", Timestamp: at, Text: "First."})
	b.HoldCall(new(call("c1", at.Add(time.Second), false, `{"file_path":"/a"}`)))
	b.AddAnswer(schema.Answer{SessionID: "s", MessageID: "own", Timestamp: at.Add(2 * time.Second), Text: "Second.", Source: schema.HarnessPi})
	got := map[string]schema.Harness{}
	for _, a := range b.Analyze(schema.Session{SessionID: "s", Source: schema.HarnessClaudeCode}).Answers {
		got[a.MessageID] = a.Source
	}
	if want := map[string]schema.Harness{"early": schema.HarnessClaudeCode, "own": schema.HarnessPi}; !maps.Equal(got, want) {
		t.Errorf("answers' harnesses %v; want %v", got, want)
	}
}
