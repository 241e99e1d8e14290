package dashboards_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/schema"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

// takenBackAnswer is the message id of the fixture's retracted answer.
const takenBackAnswer = "cc-a5-taken-back"

// fixture is what loadFixture wrote: the time range that covers it and the
// figures some panels must reproduce exactly.
type fixture struct {
	From, To time.Time

	// RiskySession is the session the postmortem scenario opens (it has
	// answers of every risk and calls of every kind).
	RiskySession string
	// QuotedProject contains an apostrophe, to prove values are escaped.
	QuotedProject string

	// Expected figures over [From, To], each record counted once.
	Calls, Silent, HighAnswers int
	// QuotedProjectCalls is the number of calls in QuotedProject.
	QuotedProjectCalls int
	// OrphanSession has calls but no sessions row (e.g. written before its
	// session was analysed); OrphanCalls is its number of calls.
	OrphanSession string
	OrphanCalls   int

	// FollowUp is, for each harness and tool with truncated calls in the
	// range, how many of them the session's analysis judged and how many of
	// those it found followed up: the follow-up rate is Followed / Judged,
	// unknown (NULL) when Judged is 0. Calls no analysis has judged are in
	// neither count. The key "" sums every harness and tool.
	FollowUp map[toolHarness]followUp
	// CoveredByEnd counts the judged truncated calls with a coverage by the
	// end of the session (and a known, non-zero original and known context:
	// the calls the coverage chart places).
	CoveredByEnd int
}

// toolHarness names a tool under one harness ("" "" for all of them).
type toolHarness struct{ Source, Tool string }

// followUp counts truncated calls: Judged by the session's analysis,
// Followed up among those, and Unjudged (not analysed yet).
type followUp struct{ Judged, Followed, Unjudged int }

// Sizes in bytes; chars and lines follow loosely, tokens are ceil(bytes/4).
func sizes(bytes uint64) schema.Sizes {
	return schema.Sizes{Bytes: schema.Known(bytes), Chars: schema.Known(bytes), Lines: schema.Known(bytes/60 + 1), Tokens: schema.Known((bytes + 3) / 4)}
}

func orig(bytes uint64, src schema.OriginalSource) schema.Original {
	return schema.Original{Sizes: sizes(bytes), Source: src}
}

// loadFixture writes a small, realistic audit data set through the store's
// writers: sessions of claude_code, codex and pi with Read, Grep, Bash,
// WebFetch, shell_command, read and bash calls; every truncation kind and
// strategy (an image resized among them); answers of every risk with
// reasons; a session with an apostrophe in its project; a session older than
// the range; and records written twice with changed values (the later write
// must win, as after re-ingestion).
//
// It is the one place test data comes from: to add real transcripts, ingest
// them here and widen From/To and the expected figures accordingly.
func loadFixture(t testing.TB, ctx context.Context, store *chstore.Store) fixture {
	t.Helper()
	return loadFixtureAt(t, ctx, store, time.Now().UTC().Truncate(time.Hour))
}

// loadFixtureAt is loadFixture relative to now (a whole hour), so that two
// stores can hold the very same rows.
func loadFixtureAt(t testing.TB, ctx context.Context, store *chstore.Store, now time.Time) fixture {
	t.Helper()
	base := now.Add(-30 * time.Hour)
	at := func(minutes int) time.Time { return base.Add(time.Duration(minutes) * time.Minute) }

	fx := fixture{From: now.Add(-7 * 24 * time.Hour), To: now.Add(time.Hour), RiskySession: "cc-absence-webfetch", QuotedProject: "o'brien's api",
		OrphanSession: "cc-no-session-row"}

	type sess struct {
		id, model, project, cwd string
		source                  schema.Harness
		version                 string
	}
	cc := sess{"cc-absence-webfetch", "claude-sonnet-4-5", "ctxaudit", "/home/dev/ctxaudit", schema.HarnessClaudeCode, "2.1.6"}
	cx := sess{"codex-build-logs", "gpt-5-codex", fx.QuotedProject, "/home/dev/obrien-api", schema.HarnessCodex, "0.46.0"}
	pi := sess{"pi-big-file", "claude-opus-4-1", "webapp", "/home/dev/webapp", schema.HarnessPi, "0.9.2"}
	cc2 := sess{"cc-refused-cleared", "claude-opus-4-1", "webapp", "/home/dev/webapp", schema.HarnessClaudeCode, "2.1.6"}
	orphan := sess{fx.OrphanSession, "claude-sonnet-4-5", "ctxaudit", "/home/dev/ctxaudit", schema.HarnessClaudeCode, "2.1.6"}
	old := sess{"cc-last-month", "claude-sonnet-4-5", "ctxaudit", "/home/dev/ctxaudit", schema.HarnessClaudeCode, "2.0.1"}

	call := func(s sess, id string, minute, turn int, tool, target string, f schema.Forensics) schema.ToolCall {
		return schema.ToolCall{
			SessionID: s.id, CallID: id, Tool: tool, Timestamp: at(minute).Add(123 * time.Millisecond),
			Source: s.source, HarnessVersion: s.version, Model: s.model, Project: s.project, Cwd: s.cwd, GitBranch: "main",
			Turn: schema.KnownTurn(turn), MessageID: "msg-" + id, Arguments: `{"target":"` + target + `"}`, Target: target, Forensics: f,
			SourceFile: "/fixtures/" + s.id + ".jsonl", SourceLine: int64(minute + 1),
		}
	}
	complete := func(bytes uint64) schema.Forensics {
		return schema.Forensics{Original: orig(bytes, schema.SourceHarnessMetadata), Context: sizes(bytes), Kind: schema.KindNone, Strategy: schema.StrategyNone}
	}
	cut := func(o, c uint64, kind schema.TruncationKind, st schema.Strategy, reason string, d schema.Disclosure, marker string) schema.Forensics {
		return schema.Forensics{
			Original: orig(o, schema.SourceHarnessMetadata), Context: sizes(c), Truncated: true, Kind: kind, Strategy: st,
			Shown: schema.Range{Start: schema.Known(0), End: schema.Known(c), Unit: schema.UnitBytes}, Total: schema.Known(o),
			Reason: reason, Disclosure: d, Marker: marker, Detector: "fixture",
		}
	}
	followed := func(c schema.ToolCall, coverage float64) schema.ToolCall {
		c.FollowedUp, c.SessionCoverage = true, schema.KnownRatio(coverage)
		return c
	}
	unrecovered := func(c schema.ToolCall) schema.ToolCall {
		c.SessionCoverage = schema.KnownRatio(float64(c.Context.Bytes.N) / float64(c.Original.Bytes.N))
		return c
	}

	// claude_code: a WebFetch summary with no notice, a Bash failure whose
	// notice understates the cut, a paginated Read read to the end, a Grep
	// cut at its cap, and a spilled output.
	webfetch := unrecovered(call(cc, "cc-2", 2, 0, "WebFetch", "https://docs.example.com/config",
		cut(156000, 100000, schema.KindSilent, schema.StrategySummary, "summarised", schema.Disclosure{}, "")))
	bash := cut(140000, 30000, schema.KindExplicit, schema.StrategyHeadTail, "cap_chars", schema.Disclosure{Reason: true}, "[20012 characters truncated]")
	bash.MarkerUnderstated = true
	readBig := cut(520000, 256000, schema.KindExplicit, schema.StrategyPaginated, "cap_lines", schema.Disclosure{Range: true, Reason: true, Next: true},
		"[Showing lines 1-2000 of 4100. Use offset=2001 to continue.]")
	readBig.NextHint = "Use offset=2001 to continue."
	readRest := complete(264000)
	readRest.PartialByRequest = true
	grep := cut(48000, 20000, schema.KindExplicit, schema.StrategyHead, "cap_items", schema.Disclosure{Range: true}, "[Showing results with pagination = limit: 100]")
	spill := cut(83700, 2048, schema.KindExplicit, schema.StrategySpillToFile, "too_large", schema.Disclosure{Range: true, Reason: true, Next: true},
		"Output too large (83.7KB). Full output saved to: /tmp/tool-results/cc-7.txt")
	spill.SavedRef = "/tmp/tool-results/cc-7.txt"
	ccCalls := []schema.ToolCall{
		call(cc, "cc-1", 1, 0, "Read", "/home/dev/ctxaudit/README.md", complete(4200)),
		webfetch,
		unrecovered(call(cc, "cc-3", 5, 1, "Bash", "go test ./...", bash)),
		followed(call(cc, "cc-4", 8, 2, "Read", "/home/dev/ctxaudit/testdata/big.log", readBig), 1),
		call(cc, "cc-5", 9, 2, "Read", "/home/dev/ctxaudit/testdata/big.log", readRest),
		unrecovered(call(cc, "cc-6", 12, 3, "Grep", "func .*Handler", grep)),
		followed(call(cc, "cc-7", 14, 3, "Bash", "go vet ./...", spill), 0.4),
	}
	ccCalls[4].ContinuationOf = "cc-4"

	// codex: shell_command output cut head+tail with a line-count notice.
	cxCut := cut(61000, 10000, schema.KindExplicit, schema.StrategyHeadTail, "cap_lines", schema.Disclosure{Range: true, Reason: true},
		"[... omitted 1210 of 1450 lines ...]")
	cxCut.Shown.Unit = schema.UnitLines
	cxCalls := []schema.ToolCall{
		call(cx, "cx-1", 60, 0, "shell_command", "ls -la", complete(900)),
		unrecovered(call(cx, "cx-2", 62, 0, "shell_command", "make build 2>&1", cxCut)),
		call(cx, "cx-3", 64, 1, "apply_patch", "internal/api/handler.go", complete(300)),
	}

	// pi: a read capped at 50KB and continued, a bash tail, and a read whose
	// original is unknown but whose output stops exactly at the cap.
	piRead := cut(210000, 51200, schema.KindExplicit, schema.StrategyPaginated, "cap_bytes", schema.Disclosure{Range: true, Reason: true, Next: true},
		"[Showing lines 1-2000 of 8123. Use offset=2001 to continue]")
	piTail := cut(90000, 51200, schema.KindExplicit, schema.StrategyTail, "cap_bytes", schema.Disclosure{Range: true, Reason: true, Next: true},
		"[Showing last 50KB. Full output: /tmp/pi-bash-1.log]")
	piTail.SavedRef = "/tmp/pi-bash-1.log"
	suspected := schema.Forensics{Original: schema.Original{Source: schema.SourceUnknown}, Context: sizes(51200), Kind: schema.KindSuspected,
		Strategy: schema.StrategyHead, Reason: "cap_bytes", Detector: "fixture"}
	piCalls := []schema.ToolCall{
		followed(call(pi, "pi-1", 120, 0, "read", "src/app.tsx", piRead), 0.8),
		unrecovered(call(pi, "pi-2", 122, 0, "bash", "npm test", piTail)),
		call(pi, "pi-3", 125, 1, "read", "dist/bundle.js", suspected),
		call(pi, "pi-4", 127, 1, "bash", "git status", complete(512)),
	}

	// claude_code: a Read refused as too large, a result cleared by
	// micro-compaction, an error, and a second silent WebFetch.
	refused := schema.Forensics{Original: orig(1200000, schema.SourceMarker), Context: sizes(180), Truncated: true, Kind: schema.KindExplicit,
		Strategy: schema.StrategyRefused, Reason: "too_large", Disclosure: schema.Disclosure{Reason: true, Next: true},
		Marker: "File content (312.5KB) exceeds maximum allowed size (256KB). Please use offset and limit parameters."}
	cleared := schema.Forensics{Original: orig(35000, schema.SourceHarnessMetadata), Context: sizes(34), Truncated: true, Kind: schema.KindExplicit,
		Strategy: schema.StrategyCleared, Reason: "cleared", Marker: "[Old tool result content cleared]"}
	unknown := schema.Forensics{Original: schema.Original{Source: schema.SourceUnknown}, Context: sizes(700), Kind: schema.KindUnknown, Strategy: schema.StrategyNone}
	// An image Read scaled down without a word: the file's size is known,
	// what entered the context (an image block) is not.
	resized := schema.Forensics{Original: schema.Original{Sizes: schema.Sizes{Bytes: schema.Known(2456789)}, Source: schema.SourceHarnessMetadata}, Truncated: true, Kind: schema.KindSilent,
		Strategy: schema.StrategyResized, Reason: "too_large", Detector: "claude_code.read_image_resized"}
	cc2Calls := []schema.ToolCall{
		call(cc2, "cc2-1", 180, 0, "Read", "/home/dev/webapp/package-lock.json", refused),
		call(cc2, "cc2-2", 182, 0, "Read", "/home/dev/webapp/src/index.ts", cleared),
		call(cc2, "cc2-3", 184, 1, "Bash", "npm run lint", unknown),
		unrecovered(call(cc2, "cc2-4", 186, 1, "WebFetch", "https://react.dev/reference",
			cut(98000, 4000, schema.KindSilent, schema.StrategySummary, "summarised", schema.Disclosure{}, ""))),
		call(cc2, "cc2-5", 186, 1, "Read", "/home/dev/webapp/docs/screenshot.png", resized),
	}
	cc2Calls[2].IsError = true

	// Outside the range: must never be counted.
	oldAt := now.Add(-40 * 24 * time.Hour)
	oldCall := call(old, "old-1", 0, 0, "WebFetch", "https://old.example.com",
		cut(150000, 100000, schema.KindSilent, schema.StrategySummary, "summarised", schema.Disclosure{}, ""))
	oldCall.Timestamp = oldAt

	// A session whose sessions row was never written, and which no analysis
	// has judged yet: its truncated calls count in no follow-up figure. or-3
	// says it was followed up, as a span may that carries
	// ctxaudit.followed_up without the ctxaudit.analysis.* of the analysis
	// that judged it; or-4 is the only truncation of its tool, whose
	// follow-up rate is therefore unknown, not 0. (The tool has four calls,
	// a count no other tool has: the Tool variable orders tools by count,
	// and each engine breaks a tie its own way.)
	orphanPage := cut(90000, 40000, schema.KindExplicit, schema.StrategyPaginated, "cap_lines", schema.Disclosure{Range: true, Reason: true, Next: true},
		"[Showing lines 1-800 of 1800. Use offset=801 to continue.]")
	orphanCalls := []schema.ToolCall{
		call(orphan, "or-1", 240, 0, "Read", "/home/dev/ctxaudit/go.mod", complete(1800)),
		unrecovered(call(orphan, "or-2", 241, 0, "Grep", "TODO", cut(30000, 20000, schema.KindExplicit, schema.StrategyHead, "cap_items",
			schema.Disclosure{Range: true}, "[Showing results with pagination = limit: 100]"))),
		followed(call(orphan, "or-3", 242, 0, "Read", "/home/dev/ctxaudit/testdata/huge.log", orphanPage), 1),
		call(orphan, "or-4", 243, 0, "WebSearch", "ctxaudit truncation",
			cut(64000, 9000, schema.KindSilent, schema.StrategySummary, "summarised", schema.Disclosure{}, "")),
		call(orphan, "or-5", 244, 1, "WebSearch", "clickhouse 18.16 final", complete(5200)),
		call(orphan, "or-6", 245, 1, "WebSearch", "grafana clickhouse plugin", complete(4100)),
		call(orphan, "or-7", 246, 1, "WebSearch", "replacingmergetree version", complete(3900)),
	}

	// Every call but the orphan session's was analysed with its session;
	// the orphan's are as a collector writes them before the analysis.
	for _, cs := range [][]schema.ToolCall{ccCalls, cxCalls, piCalls, cc2Calls} {
		for i := range cs {
			cs[i].Analysis = schema.Analysis{Done: true, Records: len(cs)}
		}
	}
	oldCall.Analysis = schema.Analysis{Done: true, Records: 1}
	calls := append(append(append(append(append(ccCalls, cxCalls...), piCalls...), cc2Calls...), orphanCalls...), oldCall)

	answer := func(s sess, id string, minute, turn int, risk schema.Risk, absence bool, text string, inputs, incomplete []string, reasons map[string][]string) schema.Answer {
		a := schema.Answer{SessionID: s.id, MessageID: id, Timestamp: at(minute).Add(500 * time.Millisecond), Turn: schema.KnownTurn(turn), Source: s.source,
			Model: s.model, Text: text, InputCallIDs: inputs, IncompleteInputs: incomplete, AbsenceClaim: absence, Risk: risk,
			ReasonCalls: reasons}
		for _, r := range []string{schema.ReasonAbsenceClaimOnPartialInput, schema.ReasonSilentTruncation, schema.ReasonSuspectedTruncation,
			schema.ReasonExplicitTruncation, schema.ReasonNotFollowedUp, schema.ReasonMarkerUnderstated, schema.ReasonRecovered,
			schema.ReasonCleared, schema.ReasonRefused} {
			if _, ok := reasons[r]; ok {
				a.Reasons = append(a.Reasons, r)
			}
		}
		a.Verdict = "Answer is rated " + string(risk) + "."
		return a
	}
	answers := []schema.Answer{
		answer(cc, "cc-a1", 3, 0, schema.RiskHigh, true, "There is no such setting in the configuration reference.", []string{"cc-1", "cc-2"}, []string{"cc-2"},
			map[string][]string{schema.ReasonAbsenceClaimOnPartialInput: {"cc-2"}, schema.ReasonSilentTruncation: {"cc-2"}, schema.ReasonNotFollowedUp: {"cc-2"}}),
		answer(cc, "cc-a2", 6, 1, schema.RiskMedium, false, "The tests fail in TestParse only.", []string{"cc-3"}, []string{"cc-3"},
			map[string][]string{schema.ReasonExplicitTruncation: {"cc-3"}, schema.ReasonNotFollowedUp: {"cc-3"}, schema.ReasonMarkerUnderstated: {"cc-3"}}),
		answer(cc, "cc-a3", 10, 2, schema.RiskLow, false, "The log ends with a panic in worker 7.", []string{"cc-4", "cc-5"}, nil,
			map[string][]string{schema.ReasonRecovered: {"cc-4"}}),
		answer(cc, "cc-a4", 15, 3, schema.RiskHigh, true, "No other handler matches; 沒有 other callers exist.", []string{"cc-6", "cc-7"}, []string{"cc-6", "cc-7"},
			map[string][]string{schema.ReasonAbsenceClaimOnPartialInput: {"cc-6", "cc-7"}, schema.ReasonExplicitTruncation: {"cc-6", "cc-7"}, schema.ReasonNotFollowedUp: {"cc-6"}}),
		answer(cx, "cx-a1", 63, 0, schema.RiskMedium, false, "The build fails in the linker step.", []string{"cx-1", "cx-2"}, []string{"cx-2"},
			map[string][]string{schema.ReasonExplicitTruncation: {"cx-2"}, schema.ReasonNotFollowedUp: {"cx-2"}}),
		answer(cx, "cx-a2", 65, 1, schema.RiskNone, false, "Patched the handler.", []string{"cx-3"}, nil, nil),
		answer(pi, "pi-a1", 124, 0, schema.RiskMedium, false, "The failing test is the last one.", []string{"pi-1", "pi-2"}, []string{"pi-2"},
			map[string][]string{schema.ReasonExplicitTruncation: {"pi-2"}, schema.ReasonNotFollowedUp: {"pi-2"}}),
		answer(pi, "pi-a2", 128, 1, schema.RiskMedium, false, "The bundle exports App.", []string{"pi-3", "pi-4"}, []string{"pi-3"},
			map[string][]string{schema.ReasonSuspectedTruncation: {"pi-3"}}),
		answer(cc2, "cc2-a1", 187, 1, schema.RiskHigh, true, "React has no such hook.", []string{"cc2-1", "cc2-2", "cc2-3", "cc2-4"}, []string{"cc2-1", "cc2-2", "cc2-4"},
			map[string][]string{schema.ReasonAbsenceClaimOnPartialInput: {"cc2-4"}, schema.ReasonSilentTruncation: {"cc2-4"}, schema.ReasonRefused: {"cc2-1"},
				schema.ReasonCleared: {"cc2-2"}, schema.ReasonNotFollowedUp: {"cc2-4"}}),
		answer(old, "old-a1", 0, 0, schema.RiskHigh, true, "There is no such option.", []string{"old-1"}, []string{"old-1"},
			map[string][]string{schema.ReasonSilentTruncation: {"old-1"}}),
	}
	answers[len(answers)-1].Timestamp = oldAt.Add(time.Minute)

	summarize := func(s sess, calls []schema.ToolCall, answers []schema.Answer) schema.Session {
		out := schema.Session{SessionID: s.id, Source: s.source, HarnessVersion: s.version, Model: s.model, Project: s.project, Cwd: s.cwd,
			GitBranch: "main", SourceFile: "/fixtures/" + s.id + ".jsonl", InputTokens: schema.Known(120000), OutputTokens: schema.Known(4000), MaxRisk: schema.RiskNone,
			Turns: schema.Known(0), Compactions: schema.Known(0)} // as a transcript shows them
		for _, c := range calls {
			if c.SessionID != s.id {
				continue
			}
			if out.StartedAt.IsZero() || c.Timestamp.Before(out.StartedAt) {
				out.StartedAt = c.Timestamp
			}
			if c.Timestamp.After(out.EndedAt) {
				out.EndedAt = c.Timestamp
			}
			out.ToolCalls++
			out.Turns = schema.Known(max(out.Turns.N, uint64(c.Turn.N)+1))
			if c.Truncated {
				out.TruncatedCalls++
			}
			if c.Kind == schema.KindSilent {
				out.SilentCalls++
			}
			if c.Strategy == schema.StrategyCleared {
				out.Compactions = schema.Known(out.Compactions.N + 1)
			}
		}
		for _, a := range answers {
			if a.SessionID != s.id {
				continue
			}
			if a.Timestamp.After(out.EndedAt) {
				out.EndedAt = a.Timestamp
			}
			out.Answers++
			if a.Risk.Severity() >= schema.RiskMedium.Severity() {
				out.RiskyAnswers++
			}
			if a.Risk.Severity() > out.MaxRisk.Severity() {
				out.MaxRisk = a.Risk
			}
		}
		return out
	}
	var sessions []schema.Session
	for _, s := range []sess{cc, cx, pi, cc2, old} {
		sessions = append(sessions, summarize(s, calls, answers))
	}

	// First writes of records that are re-written below with other values;
	// only the later version may count (ReplacingMergeTree before a merge).
	staleCall := ccCalls[5]
	staleCall.Kind, staleCall.Strategy, staleCall.Disclosure = schema.KindSilent, schema.StrategyHead, schema.Disclosure{}
	staleAnswer := answers[5]
	staleAnswer.Risk = schema.RiskHigh
	staleSession := sessions[1]
	staleSession.MaxRisk = schema.RiskNone
	// A high-risk answer of the risky session that an analysis sent while
	// its message was still being written, and took back once the message
	// called a tool: its retraction replaces it, and no panel may show it.
	takenBack := answer(cc, takenBackAnswer, 16, 3, schema.RiskHigh, true, "There is no retry setting.", []string{"cc-6"}, []string{"cc-6"},
		map[string][]string{schema.ReasonAbsenceClaimOnPartialInput: {"cc-6"}})
	retraction := schema.Answer{SessionID: takenBack.SessionID, MessageID: takenBack.MessageID, Timestamp: takenBack.Timestamp,
		Turn: takenBack.Turn, Source: takenBack.Source, Model: takenBack.Model, Risk: schema.RiskNone, Absence: schema.AbsenceNone,
		Verdict: "taken back", Retracted: true}
	if err := store.WriteToolCalls(ctx, []schema.ToolCall{staleCall}); err != nil {
		t.Fatalf("fixture: %v", err)
	}
	if err := store.WriteAnswers(ctx, []schema.Answer{staleAnswer, takenBack}); err != nil {
		t.Fatalf("fixture: %v", err)
	}
	if err := store.WriteSessions(ctx, []schema.Session{staleSession}); err != nil {
		t.Fatalf("fixture: %v", err)
	}
	time.Sleep(2 * time.Millisecond) // versions are write times in ns
	if err := store.WriteToolCalls(ctx, calls); err != nil {
		t.Fatalf("fixture: %v", err)
	}
	if err := store.WriteAnswers(ctx, append(slices.Clone(answers), retraction)); err != nil {
		t.Fatalf("fixture: %v", err)
	}
	if err := store.WriteSessions(ctx, sessions); err != nil {
		t.Fatalf("fixture: %v", err)
	}

	inRange := func(ts time.Time) bool { return !ts.Before(fx.From) && !ts.After(fx.To) }
	fx.FollowUp = map[toolHarness]followUp{}
	for _, c := range calls {
		if inRange(c.Timestamp) && c.Truncated && c.Analysis.Done && c.SessionCoverage.Known && c.Original.Bytes.Known && c.Original.Bytes.N > 0 && c.Context.Bytes.Known {
			fx.CoveredByEnd++
		}
		if inRange(c.Timestamp) && c.Truncated {
			for _, k := range []toolHarness{{}, {string(c.Source), c.Tool}} {
				f := fx.FollowUp[k]
				switch {
				case !c.Analysis.Done:
					f.Unjudged++
				case c.FollowedUp:
					f.Judged++
					f.Followed++
				default:
					f.Judged++
				}
				fx.FollowUp[k] = f
			}
		}
		if inRange(c.Timestamp) {
			fx.Calls++
			if c.Project == fx.QuotedProject {
				fx.QuotedProjectCalls++
			}
			if c.SessionID == fx.OrphanSession {
				fx.OrphanCalls++
			}
			if c.Kind == schema.KindSilent {
				fx.Silent++
			}
		}
	}
	for _, a := range answers {
		if inRange(a.Timestamp) && a.Risk == schema.RiskHigh {
			fx.HighAnswers++
		}
	}
	return fx
}
