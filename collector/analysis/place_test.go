package analysis

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/schema"
)

// noTime gives a record the time it has when its source's timestamp was
// malformed: the zero time as a parser builds it, or the Unix epoch as a row
// or a span (OTLP's unset time) reads back.
func noTime(t time.Time) callOpt { return func(c *schema.ToolCall) { c.Timestamp = t } }

// onLine gives a call the transcript line it was read from, which orders it
// when its time is not known.
func onLine(n int64) callOpt {
	return func(c *schema.ToolCall) { c.SourceFile, c.SourceLine = "/logs/s1.jsonl", n }
}

// An answer whose time is not known may come after any call of its thread:
// it rests on those that may be of its turn, uncertain, each judged as the
// session stood when it was made — its worst place. It did not "use no tool
// results", nor was its cut input known to be read in full before it. The
// same holds whichever form the missing time has.
func TestAnswerOfUnknownTime(t *testing.T) {
	for _, none := range []time.Time{{}, time.Unix(0, 0).UTC()} {
		s := Session{
			Calls: []schema.ToolCall{
				call("c1", "Read", `{"file_path":"/repo/a.go"}`, 1, turn(0), cut(schema.KindSilent, schema.StrategyHead, schema.UnitLines, 1, 100, 500)),
				call("c2", "Read", `{"file_path":"/repo/a.go","offset":101,"limit":400}`, 2, turn(0), partial(schema.UnitLines, 101, 500, 500)),
				call("c3", "Read", `{"file_path":"/repo/b.go"}`, 3, turn(1)),
			},
			Answers: []schema.Answer{answer("m1", 0, "There is no retry setting.")},
		}
		s.Answers[0].Timestamp = none
		s.Answers[0].Turn = schema.KnownTurn(0)
		Analyze(&s)

		a := s.Answers[0]
		if !slices.Equal(a.InputCallIDs, []string{"c1", "c2"}) || !a.InputsUncertain {
			t.Errorf("time %v: inputs %v, uncertain %v; want its turn's calls [c1 c2], uncertain", none, a.InputCallIDs, a.InputsUncertain)
		}
		if a.Risk != schema.RiskHigh || !slices.Equal(a.IncompleteInputs, []string{"c1"}) ||
			!slices.Contains(a.Reasons, schema.ReasonAbsenceClaimOnPartialInput) || !slices.Contains(a.Reasons, schema.ReasonNotFollowedUp) {
			t.Errorf("time %v: risk %s, incomplete %v, reasons %v; want high: it may have come before c2 read the rest of a.go", none, a.Risk, a.IncompleteInputs, a.Reasons)
		}
		if !s.Calls[0].FollowedUp {
			t.Errorf("time %v: c1 not followed up; c2 read the rest of a.go", none)
		}
		want := `Answer says "There is no retry setting."; it may have been built on Read of /repo/a.go, which delivered the first 100 of 500 lines with no notice, and the model read further, not known whether before answering.`
		if a.Verdict != want {
			t.Errorf("time %v: verdict\n%s\nwant\n%s", none, a.Verdict, want)
		}
		if got := Verdict(a, s.Calls); got != a.Verdict {
			t.Errorf("time %v: verdict rebuilt from the rows\n%s\ndiffers from the analysis'\n%s", none, got, a.Verdict)
		}
	}
}

// A call whose time is not known is placed by issue order alone: after the
// calls before it, before those after it. Taken as the earliest call of the
// session, it made every call before it an input of any answer, even calls
// timed after the answer; and it is only a call the answer may rest on.
func TestCallOfUnknownTimeIsPlacedByIssueOrder(t *testing.T) {
	s := Session{
		Calls: []schema.ToolCall{
			call("c1", "Read", `{"file_path":"/repo/a.go"}`, 10, turn(0)),
			call("c2", "Read", `{"file_path":"/repo/b.go"}`, 25, turn(0), cut(schema.KindSilent, schema.StrategyHead, schema.UnitLines, 1, 100, 500)),
			call("c3", "Read", `{"file_path":"/repo/c.go"}`, 0, turn(0), noTime(time.Time{}), onLine(3)),
			call("c4", "Read", `{"file_path":"/repo/d.go"}`, 30, turn(0)),
		},
		Answers: []schema.Answer{answer("m1", 20, "It reads a.go.")},
	}
	s.Answers[0].Turn = schema.KnownTurn(0)
	Analyze(&s)

	a := s.Answers[0]
	if !slices.Equal(a.InputCallIDs, []string{"c1"}) || a.InputsUncertain || a.Risk != schema.RiskNone {
		t.Errorf("inputs %v, uncertain %v, risk %s; want [c1], certain, none: c2 came after the answer, and c3 after c2", a.InputCallIDs, a.InputsUncertain, a.Risk)
	}
}

// An answer timed after a cut call and before a later one, with a call of
// unknown time in between that read the rest: the answer may have come
// before that read. It is judged at its worst — the cut input not read in
// full — and the untimed call is only one it may rest on.
func TestUntimedRecoveryIsNotKnownToPrecedeTheAnswer(t *testing.T) {
	s := Session{
		Calls: []schema.ToolCall{
			call("c1", "Read", `{"file_path":"/repo/a.go"}`, 10, turn(0), cut(schema.KindExplicit, schema.StrategyHead, schema.UnitLines, 1, 100, 500)),
			call("c2", "Read", `{"file_path":"/repo/a.go","offset":101,"limit":400}`, 0, turn(0), partial(schema.UnitLines, 101, 500, 500), noTime(time.Unix(0, 0).UTC()), onLine(2)),
			call("c3", "Read", `{"file_path":"/repo/b.go"}`, 30, turn(0)),
		},
		Answers: []schema.Answer{answer("m1", 20, "It reads a.go.")},
	}
	s.Answers[0].Turn = schema.KnownTurn(0)
	Analyze(&s)

	a := s.Answers[0]
	if !slices.Equal(a.InputCallIDs, []string{"c1", "c2"}) || !a.InputsUncertain {
		t.Errorf("inputs %v, uncertain %v; want [c1 c2], uncertain: c2 may come after the answer", a.InputCallIDs, a.InputsUncertain)
	}
	if a.Risk != schema.RiskMedium || !slices.Equal(a.IncompleteInputs, []string{"c1"}) {
		t.Errorf("risk %s, incomplete %v; want medium with c1 incomplete: the rest may have been read after the answer", a.Risk, a.IncompleteInputs)
	}
	if !strings.HasSuffix(a.Verdict, "the model read further, not known whether before answering.") {
		t.Errorf("verdict %q; want it not to say when the model read further", a.Verdict)
	}

	// Timed, the same read places the answer: read in full before it.
	s.Calls[1].Timestamp = at(15)
	s.Answers[0].InputCallIDs = nil
	Analyze(&s)
	if a := s.Answers[0]; a.Risk != schema.RiskLow || a.InputsUncertain || !strings.Contains(a.Verdict, "read in full before the answer") {
		t.Errorf("with c2 timed before the answer: risk %s, uncertain %v, verdict %q; want low, certain, read in full before the answer", a.Risk, a.InputsUncertain, a.Verdict)
	}
}

// A scoped absence claim by an answer of unknown place is honest only if it
// is at every place it may have: within what each incomplete input
// delivered. Right after the first input below, the claim speaks for lines
// the model had not seen.
func TestScopedClaimOfUnknownPlace(t *testing.T) {
	s := Session{
		Calls: []schema.ToolCall{
			call("c1", "Read", `{"file_path":"/repo/b.go"}`, 1, cut(schema.KindExplicit, schema.StrategyHead, schema.UnitLines, 1, 50, 300)),
			call("c2", "Read", `{"file_path":"/repo/a.go"}`, 2, cut(schema.KindExplicit, schema.StrategyHead, schema.UnitLines, 1, 2000, 5000)),
		},
		Answers: []schema.Answer{answer("m1", 3, "In the first 2,000 lines there is no retryUpload.")},
	}
	Analyze(&s)
	if a := s.Answers[0]; a.Risk != schema.RiskMedium || !slices.Contains(a.Reasons, schema.ReasonScopedAbsence) {
		t.Errorf("placed after both: risk %s, reasons %v; want medium, %s: c2 delivered the 2,000 lines", a.Risk, a.Reasons, schema.ReasonScopedAbsence)
	}

	s.Answers[0].Timestamp, s.Answers[0].InputCallIDs = time.Time{}, nil
	Analyze(&s)
	if a := s.Answers[0]; a.Risk != schema.RiskHigh || !slices.Contains(a.Reasons, schema.ReasonAbsenceClaimOnPartialInput) {
		t.Errorf("place unknown: risk %s, reasons %v; want high, %s: it may have come right after c1", a.Risk, a.Reasons, schema.ReasonAbsenceClaimOnPartialInput)
	}
}

// A call that nothing places — no time, no source line: a span sent without
// a start time — is put first by issue order, but only by assumption. It
// is only a call an answer may rest on, and it takes no part in
// follow-through: a read of the rest of a cut file may have come after the
// answer, and a read of the rest before it may have been the earlier one.
func TestUnorderedCallIsNeitherPlacedNorFollowedUp(t *testing.T) {
	for _, none := range []time.Time{{}, time.Unix(0, 0).UTC()} {
		// The unordered call reads the rest of a file a timed call cut.
		s := Session{
			Calls: []schema.ToolCall{
				call("u1", "Read", `{"file_path":"/repo/a.go","offset":101,"limit":400}`, 0, turn(0), partial(schema.UnitLines, 101, 500, 500), noTime(none)),
				call("c1", "Read", `{"file_path":"/repo/a.go"}`, 10, turn(0), cut(schema.KindSilent, schema.StrategyHead, schema.UnitLines, 1, 100, 500)),
				call("c2", "Read", `{"file_path":"/repo/b.go"}`, 30, turn(0)),
			},
			Answers: []schema.Answer{answer("m1", 20, "There is no retry setting.")},
		}
		s.Answers[0].Turn = schema.KnownTurn(0)
		Analyze(&s)
		a := s.Answers[0]
		if !slices.Equal(a.InputCallIDs, []string{"u1", "c1"}) || !a.InputsUncertain {
			t.Errorf("time %v: inputs %v, uncertain %v; want [u1 c1], uncertain: u1 may come after the answer", none, a.InputCallIDs, a.InputsUncertain)
		}
		if a.Risk != schema.RiskHigh || !slices.Equal(a.IncompleteInputs, []string{"c1"}) || !slices.Contains(a.Reasons, schema.ReasonNotFollowedUp) {
			t.Errorf("time %v: risk %s, incomplete %v, reasons %v; want high, c1 incomplete and not followed up", none, a.Risk, a.IncompleteInputs, a.Reasons)
		}
		if c1 := s.Calls[1]; c1.FollowedUp || c1.SessionCoverage.V >= 1 {
			t.Errorf("time %v: c1 followed up %v, coverage %+v; want neither: u1 is not known to come after it", none, c1.FollowedUp, c1.SessionCoverage)
		}
		// Not followed up is not known either: u1 may have read the rest.
		// Only cut calls have a follow-up to be unknown.
		if u1, c1, c2 := s.Calls[0], s.Calls[1], s.Calls[2]; !c1.FollowUpUnknown || u1.FollowUpUnknown || c2.FollowUpUnknown {
			t.Errorf("time %v: follow-up unknown u1 %v, c1 %v, c2 %v; want c1 only", none, u1.FollowUpUnknown, c1.FollowUpUnknown, c2.FollowUpUnknown)
		}
		want := `Answer at 12:00:20 says "There is no retry setting."; it may have been built on Read of /repo/a.go, which delivered the first 100 of 500 lines with no notice, and the model is not known to have read further.`
		if a.Verdict != want {
			t.Errorf("time %v: verdict\n%s\nwant\n%s", none, a.Verdict, want)
		}
		if got := Verdict(a, s.Calls); got != a.Verdict {
			t.Errorf("time %v: verdict rebuilt from the rows\n%s\ndiffers from the analysis'\n%s", none, got, a.Verdict)
		}
		if m := s.Meta; m.RiskyAnswers != 1 || m.RiskyAnswersUncertain != schema.Known(1) {
			t.Errorf("time %v: session counts %d risky answers, %s on uncertain inputs; want 1, 1", none, m.RiskyAnswers, m.RiskyAnswersUncertain)
		}

		// The unordered call is the cut one; a timed call reads the rest.
		s = Session{
			Calls: []schema.ToolCall{
				call("u1", "Read", `{"file_path":"/repo/a.go"}`, 0, turn(0), cut(schema.KindExplicit, schema.StrategyHead, schema.UnitLines, 1, 100, 500), noTime(none)),
				call("c1", "Read", `{"file_path":"/repo/a.go","offset":101,"limit":400}`, 10, turn(0), partial(schema.UnitLines, 101, 500, 500)),
			},
			Answers: []schema.Answer{answer("m1", 20, "It reads a.go.")},
		}
		s.Answers[0].Turn = schema.KnownTurn(0)
		Analyze(&s)
		a = s.Answers[0]
		if u1, c1 := s.Calls[0], s.Calls[1]; u1.FollowedUp || c1.ContinuationOf != "" || u1.SessionCoverage.V >= 1 {
			t.Errorf("time %v: u1 followed up %v, coverage %+v, c1 continues %q; want none: c1 may have been the earlier read", none, u1.FollowedUp, u1.SessionCoverage, c1.ContinuationOf)
		}
		if u1 := s.Calls[0]; !u1.FollowUpUnknown {
			t.Errorf("time %v: u1's follow-up known; want not known: nothing places c1 after it, nor before", none)
		}
		if a.Risk != schema.RiskMedium || !slices.Equal(a.IncompleteInputs, []string{"u1"}) || !a.InputsUncertain {
			t.Errorf("time %v: risk %s, incomplete %v, uncertain %v; want medium, u1 incomplete, uncertain", none, a.Risk, a.IncompleteInputs, a.InputsUncertain)
		}

		// Two unordered calls, even of one call id, are not known to come
		// in either order: neither continues the other.
		for _, id := range []string{"", "u1"} {
			pair := Session{Calls: []schema.ToolCall{
				call(id, "Read", `{"file_path":"/repo/a.go"}`, 0, turn(0), cut(schema.KindExplicit, schema.StrategyHead, schema.UnitLines, 1, 100, 500), noTime(none)),
				call(id, "Read", `{"file_path":"/repo/a.go","offset":101,"limit":400}`, 0, turn(0), partial(schema.UnitLines, 101, 500, 500), noTime(none)),
			}}
			Analyze(&pair)
			if c := pair.Calls; c[0].FollowedUp || c[1].ContinuationOf != "" || c[0].SessionCoverage.V >= 1 {
				t.Errorf("time %v, id %q: first followed up %v, coverage %+v, second continues %q; want none", none, id, c[0].FollowedUp, c[0].SessionCoverage, c[1].ContinuationOf)
			}
			if c := pair.Calls; !c[0].FollowUpUnknown {
				t.Errorf("time %v, id %q: the first's follow-up known; want not known: the second may have come after it", none, id)
			}
		}

		// Named by the answer, the same call is a known input.
		s.Answers[0].InputCallIDs, s.Answers[0].InputsUncertain = []string{"u1"}, false
		Analyze(&s)
		if a := s.Answers[0]; a.InputsUncertain || a.Risk != schema.RiskMedium {
			t.Errorf("time %v: named input: uncertain %v, risk %s; want certain, medium", none, a.InputsUncertain, a.Risk)
		}
		if m := s.Meta; m.RiskyAnswers != 1 || m.RiskyAnswersUncertain != schema.Known(0) {
			t.Errorf("time %v: named input: session counts %d risky answers, %s on uncertain inputs; want 1, 0", none, m.RiskyAnswers, m.RiskyAnswersUncertain)
		}
	}
}

// A cut call no unordered call could have continued is known not to have
// been followed up, and the analysis says so in its row (FollowUpExact) and
// its verdict; the verdict rebuilt from rows without the mark — stored
// before it — says only that none is known, as before.
func TestKnownNotFollowedUpBesideAnUnorderedCall(t *testing.T) {
	s := Session{
		Calls: []schema.ToolCall{
			call("u1", "Read", `{"file_path":"/repo/b.go"}`, 0, turn(0), noTime(time.Time{})),
			call("c1", "Read", `{"file_path":"/repo/a.go"}`, 10, turn(0), cut(schema.KindSilent, schema.StrategyHead, schema.UnitLines, 1, 100, 500)),
			call("c2", "Read", `{"file_path":"/repo/c.go"}`, 30, turn(0)),
		},
		Answers: []schema.Answer{answer("m1", 20, "There is no retry setting.")},
	}
	s.Answers[0].Turn = schema.KnownTurn(0)
	Analyze(&s)
	if OrderOf(s.Calls).Ordered {
		t.Fatal("u1 is ordered")
	}
	for _, c := range s.Calls {
		if c.FollowUpExact != (c.CallID == "c1") {
			t.Errorf("%s: exact %v; want it on the cut call c1 only", c.CallID, c.FollowUpExact)
		}
	}
	if c1 := s.Calls[1]; c1.FollowedUp || c1.FollowUpUnknown {
		t.Fatalf("c1 followed up %v, unknown %v; want known not followed up: u1 reads another file", c1.FollowedUp, c1.FollowUpUnknown)
	}
	a := s.Answers[0]
	if !strings.HasSuffix(a.Verdict, "and the model never read further.") {
		t.Errorf("verdict %q; want it to say the model never read further", a.Verdict)
	}
	if got := Verdict(a, s.Calls); got != a.Verdict {
		t.Errorf("verdict rebuilt from the rows\n%s\ndiffers from the analysis'\n%s", got, a.Verdict)
	}
	rows := slices.Clone(s.Calls)
	rows[1].FollowUpExact = false
	if got := Verdict(a, rows); !strings.HasSuffix(got, "and the model is not known to have read further.") {
		t.Errorf("verdict rebuilt from rows stored without the mark %q; want it to say the model is not known to have read further", got)
	}
}

// TestFollowUpUnknownOnlyWhereACallIsUnordered: the analysis says a cut
// call's follow-up is not known only in a session holding a call nothing
// orders. Elsewhere not followed up is known, a call followed up by an
// ordered call stays followed up, and a later analysis without the
// unordered call clears the flag.
func TestFollowUpUnknownOnlyWhereACallIsUnordered(t *testing.T) {
	calls := func() []schema.ToolCall {
		return []schema.ToolCall{
			call("c1", "Read", `{"file_path":"/repo/a.go"}`, 10, turn(0), cut(schema.KindSilent, schema.StrategyHead, schema.UnitLines, 1, 100, 500)),
			call("c2", "Read", `{"file_path":"/repo/a.go","offset":101,"limit":400}`, 20, turn(0), partial(schema.UnitLines, 101, 500, 500)),
			call("c3", "Read", `{"file_path":"/repo/b.go"}`, 30, turn(0), cut(schema.KindExplicit, schema.StrategyHead, schema.UnitLines, 1, 100, 500)),
		}
	}
	s := Session{Calls: calls()}
	Analyze(&s)
	for _, c := range s.Calls {
		if c.FollowUpUnknown {
			t.Errorf("ordered session: %s's follow-up not known; want known", c.CallID)
		}
	}
	if !s.Calls[0].FollowedUp || s.Calls[2].FollowedUp {
		t.Fatalf("ordered session: followed up c1 %v, c3 %v; want c1 only", s.Calls[0].FollowedUp, s.Calls[2].FollowedUp)
	}

	s.Calls = append(calls(), call("u1", "Grep", `{"pattern":"x","path":"/repo"}`, 0, turn(0), noTime(time.Time{})))
	Analyze(&s)
	if c1, c3 := s.Calls[0], s.Calls[2]; !c1.FollowedUp || c1.FollowUpUnknown || c3.FollowedUp || !c3.FollowUpUnknown {
		t.Errorf("with an unordered call: c1 followed up %v (unknown %v), c3 followed up %v (unknown %v); want c1 followed up, c3 not known",
			c1.FollowedUp, c1.FollowUpUnknown, c3.FollowedUp, c3.FollowUpUnknown)
	}

	s.Calls = s.Calls[:3]
	Analyze(&s)
	if s.Calls[2].FollowUpUnknown {
		t.Error("analysed again without the unordered call: c3's follow-up still not known")
	}
}

// TestFollowUpUnknownIsWhatSomePlacementWouldFollowUp: a cut call's
// follow-up is not known exactly when some place of the unordered call among
// the others — the sweep run with it there — would have followed the cut
// call up. A cut call no place of it follows up is known not followed up,
// whatever else the unordered call touched: the follow-up analysis itself,
// run once per place, is the reference.
func TestFollowUpUnknownIsWhatSomePlacementWouldFollowUp(t *testing.T) {
	cutLines := cut(schema.KindSilent, schema.StrategyHead, schema.UnitLines, 1, 100, 500)
	cutChars := cut(schema.KindExplicit, schema.StrategyHead, schema.UnitChars, 1, 1000, 9000)
	// Ordered calls, at 10, 20, … in slice order.
	bases := map[string][]schema.ToolCall{
		"cut, none followed up": {
			call("a1", "Read", `{"file_path":"/repo/a.go"}`, 0, cutLines),
			call("b1", "Read", `{"file_path":"/repo/b.go"}`, 0, agent("sub"), cutLines),
			call("t1", "Bash", `{"command":"go test ./..."}`, 0, cutChars),
			call("w1", "WebFetch", `{"url":"https://example.com/docs","prompt":"timeouts"}`, 0, cutChars),
			call("z1", "Read", `{"file_path":"/other/z.go"}`, 0),
			call("a2", "Read", `{"file_path":"/repo/a.go","offset":1,"limit":100}`, 0, partial(schema.UnitLines, 1, 100, 500)),
		},
		"one followed up": {
			call("a1", "Read", `{"file_path":"/repo/a.go"}`, 0, cutLines),
			call("c1", "Read", `{"file_path":"/repo/c.go"}`, 0, cutLines),
			call("a2", "Read", `{"file_path":"/repo/a.go","offset":101,"limit":400}`, 0, partial(schema.UnitLines, 101, 500, 500)),
		},
	}
	// The unordered call, cut or not.
	unordered := map[string]schema.ToolCall{
		"reads the rest of a.go":           call("u", "Read", `{"file_path":"/repo/a.go","offset":101,"limit":400}`, 0, partial(schema.UnitLines, 101, 500, 500)),
		"reads a.go again within the view": call("u", "Read", `{"file_path":"/repo/a.go","offset":1,"limit":50}`, 0, partial(schema.UnitLines, 1, 50, 500)),
		"searches /repo":                   call("u", "Grep", `{"pattern":"Timeout","path":"/repo"}`, 0),
		"searches /repo in sub":            call("u", "Grep", `{"pattern":"Timeout","path":"/repo"}`, 0, agent("sub")),
		"reads b.go in sub":                call("u", "Read", `{"file_path":"/repo/b.go"}`, 0, agent("sub")),
		"reads an unrelated file":          call("u", "Read", `{"file_path":"/other/z.go"}`, 0),
		"runs the same command":            call("u", "Bash", `{"command":"go test ./..."}`, 0),
		"runs the command to a file":       call("u", "Bash", `{"command":"go test ./... > /tmp/out.txt"}`, 0),
		"fetches the page again":           call("u", "WebFetch", `{"url":"https://example.com/docs","prompt":"retries"}`, 0),
		"is cut, of a.go":                  call("u", "Read", `{"file_path":"/repo/a.go"}`, 0, cutLines),
		"is cut, of d.go":                  call("u", "Read", `{"file_path":"/repo/d.go"}`, 0, cutLines),
		"is cut, of c.go":                  call("u", "Read", `{"file_path":"/repo/c.go","offset":1,"limit":100}`, 0, cutLines),
	}
	unknownSeen, knownSeen := 0, 0
	for bn, base := range bases {
		for un, u := range unordered {
			some, s := followedUpInSomePlace(base, u), analysedUnordered(base, u)
			for _, c := range s.Calls {
				var want bool
				switch {
				case !Truncated(&c) || c.FollowedUp:
					want = false
				default:
					want = some[c.CallID]
					if want {
						unknownSeen++
					} else {
						knownSeen++
					}
				}
				if c.FollowUpUnknown != want {
					t.Errorf("%s, the unordered call %s: %s follow-up unknown %v, want %v (truncated %v, followed up %v, in some place %v)",
						bn, un, c.CallID, c.FollowUpUnknown, want, Truncated(&c), c.FollowedUp, some[c.CallID])
				}
			}
		}
	}
	// Both outcomes occur, or the test would check one of them only.
	if unknownSeen == 0 || knownSeen == 0 {
		t.Fatalf("cut calls not followed up: %d not known, %d known; want both", unknownSeen, knownSeen)
	}
}

// followedUpInSomePlace reports, by call id, the calls the sweep follows
// up with u in some place among base's calls (placed).
func followedUpInSomePlace(base []schema.ToolCall, u schema.ToolCall) map[string]bool {
	some := map[string]bool{}
	for p := 0; p <= len(base); p++ {
		calls := placed(base, u, p)
		Analyze(&Session{Calls: calls})
		for _, c := range calls {
			some[c.CallID] = some[c.CallID] || c.FollowedUp
		}
	}
	return some
}

// analysedUnordered is base's calls with u unordered (no time, no source
// line; first, as issue order puts it), analysed.
func analysedUnordered(base []schema.ToolCall, u schema.ToolCall) Session {
	u.Timestamp = time.Time{}
	s := Session{Calls: append([]schema.ToolCall{u}, placed(base, schema.ToolCall{}, -1)...)}
	Analyze(&s)
	return s
}

// placed is base's calls at 10, 20, … seconds with u inserted at index p
// (p < 0: left out), between its neighbours in time.
func placed(base []schema.ToolCall, u schema.ToolCall, p int) []schema.ToolCall {
	var out []schema.ToolCall
	for i, c := range base {
		if i == p {
			u.Timestamp = at(10*i + 5)
			out = append(out, u)
		}
		c.Timestamp = at(10 * (i + 1))
		out = append(out, c)
	}
	if p == len(base) {
		u.Timestamp = at(10*len(base) + 5)
		out = append(out, u)
	}
	return out
}

// FuzzFollowUpUnknownMatchesPlacements: for any tools, arguments and cut
// views, a cut call's follow-up is not known exactly when some place of the
// unordered call among the others would have followed it up (the sweep run
// once per place is the reference, as in
// TestFollowUpUnknownIsWhatSomePlacementWouldFollowUp).
func FuzzFollowUpUnknownMatchesPlacements(f *testing.F) {
	// flags: c1 cut (1), c2 cut (2), u cut (4), u in a sub-agent (8), c2 in it (16).
	f.Add("Read", `{"file_path":"/repo/a.go"}`, "Read", `{"file_path":"/other/z.go"}`, "Grep", `{"pattern":"x","path":"/repo"}`, uint8(0b00001), uint64(1), uint64(100))
	f.Add("Read", `{"file_path":"/repo/b.go"}`, "Read", `{"file_path":"/repo/a.go","offset":101,"limit":400}`, "Read", `{"file_path":"/repo/a.go"}`, uint8(0b00101), uint64(1), uint64(100))
	f.Add("Read", `{"file_path":"/repo/a.go"}`, "Read", `{"file_path":"/repo/a.go","offset":1,"limit":100}`, "Read", `{"file_path":"/repo/a.go","offset":101,"limit":400}`, uint8(0b00011), uint64(1), uint64(100))
	f.Add("Bash", `{"command":"cat /repo/a.go | head -50"}`, "Bash", `{"command":"grep -rn x /repo"}`, "Read", `{"file_path":"a.go"}`, uint8(0b1011), uint64(1), uint64(50))
	f.Add("WebFetch", `{"url":"https://e.com/d","prompt":"p"}`, "exec_command", `{"cmd":"sed -n '100,200p' /repo/a.go"}`, "WebFetch", `{"url":"https://e.com/d#x","prompt":"q"}`, uint8(0b1111), uint64(0), uint64(1000))
	f.Add("shell", `{"command":["bash","-lc","tail -n 20 /repo/b.log"]}`, "Glob", `{"pattern":"**/*.go","path":"/repo"}`, "Bash", `{"command":"cat /repo/b.log > /tmp/x; rg y /repo"}`, uint8(0b0110), uint64(5), uint64(5))
	f.Fuzz(func(t *testing.T, tool1, args1, tool2, args2, toolU, argsU string, flags uint8, start, end uint64) {
		mk := func(id, tool, args string, truncated, sub bool) schema.ToolCall {
			c := schema.ToolCall{SessionID: "s1", CallID: id, Tool: tool, Arguments: args, Cwd: "/repo",
				Forensics: schema.Forensics{Kind: schema.KindNone, Strategy: schema.StrategyNone}}
			if truncated {
				c.Truncated, c.Kind, c.Strategy = true, schema.KindSilent, schema.StrategyHead
				c.Shown = schema.Range{Start: schema.Known(start), End: schema.Known(end), Unit: schema.UnitLines}
				c.Total = schema.Known(end + 100)
			}
			if sub {
				c.AgentID = "sub"
			}
			return c
		}
		base := []schema.ToolCall{
			mk("c1", tool1, args1, flags&1 != 0, false),
			mk("c2", tool2, args2, flags&2 != 0, flags&16 != 0),
		}
		u := mk("u", toolU, argsU, flags&4 != 0, flags&8 != 0)
		some, s := followedUpInSomePlace(base, u), analysedUnordered(base, u)
		for _, c := range s.Calls {
			want := Truncated(&c) && !c.FollowedUp && some[c.CallID]
			if c.FollowUpUnknown != want {
				t.Fatalf("%s (%s %s): follow-up unknown %v, want %v (followed up %v, in some place %v)",
					c.CallID, c.Tool, c.Arguments, c.FollowUpUnknown, want, c.FollowedUp, some[c.CallID])
			}
		}
	})
}

// A session that goes on past the records analysed (a buffer dropped as it
// grew) leaves every cut call none of them followed up unknown, not "not
// followed up": the rest of the session may follow it up. A cut call they
// did follow up stays followed up; a whole one is not judged.
func TestContinuingSessionLeavesFollowUpsUnknown(t *testing.T) {
	calls := []schema.ToolCall{
		call("c1", "Read", `{"file_path":"/repo/a.go"}`, 1, cut(schema.KindExplicit, schema.StrategyPaginated, schema.UnitLines, 1, 2000, 5000)),
		call("c2", "Read", `{"file_path":"/repo/a.go","offset":2001,"limit":3000}`, 2, partial(schema.UnitLines, 2001, 5000, 5000)),
		call("c3", "Read", `{"file_path":"/repo/b.go"}`, 3, cut(schema.KindExplicit, schema.StrategyPaginated, schema.UnitLines, 1, 2000, 5000)),
		call("c4", "Read", `{"file_path":"/repo/c.go"}`, 4),
	}
	for _, continues := range []bool{false, true} {
		s := Session{Meta: schema.Session{SessionID: "s1"}, Calls: slices.Clone(calls), Continues: continues}
		Analyze(&s)
		c1, c3, c4 := s.Calls[0], s.Calls[2], s.Calls[3]
		if !c1.FollowedUp || c1.FollowUpUnknown {
			t.Errorf("continues %v: c1 followed up %v, unknown %v; want followed up", continues, c1.FollowedUp, c1.FollowUpUnknown)
		}
		if c3.FollowedUp || c3.FollowUpUnknown != continues {
			t.Errorf("continues %v: c3 followed up %v, unknown %v; want not followed up, unknown %v", continues, c3.FollowedUp, c3.FollowUpUnknown, continues)
		}
		if c4.FollowUpUnknown {
			t.Errorf("continues %v: the whole c4 has an unknown follow-up", continues)
		}
	}
}
