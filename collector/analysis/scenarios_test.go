package analysis

import (
	"reflect"
	"testing"

	"github.com/ctxaudit/ctxaudit/schema"
)

type wantCall struct {
	followedUp     bool
	continuationOf string
	coverage       schema.Ratio
	searched       bool
	// upperBound: coverage is a share of a lower-bound original; mixed:
	// its pieces came from separate fetches of the source.
	upperBound, mixed bool
}

type wantAnswer struct {
	risk        schema.Risk
	absence     bool
	reasons     []string
	reasonCalls map[string][]string
	incomplete  []string
	inputs      []string
}

type wantMeta struct {
	truncated, silent, risky int
	maxRisk                  schema.Risk
}

const (
	absence     = schema.ReasonAbsenceClaimOnPartialInput
	silent      = schema.ReasonSilentTruncation
	explicit    = schema.ReasonExplicitTruncation
	suspected   = schema.ReasonSuspectedTruncation
	notFollowed = schema.ReasonNotFollowedUp
	recovered   = schema.ReasonRecovered
	understate  = schema.ReasonMarkerUnderstated
	refused     = schema.ReasonRefused
)

var scenarios = []struct {
	name    string
	calls   []schema.ToolCall
	answers []schema.Answer
	calls2  map[string]wantCall // every call, by id
	want    []wantAnswer
	meta    wantMeta
}{
	{
		name: "a: WebFetch silent summary, then 'there is no such setting'",
		calls: []schema.ToolCall{
			call("w1", "WebFetch", `{"url":"https://example.com/docs#top","prompt":"find the timeout setting"}`, 0,
				cut(schema.KindSilent, schema.StrategySummary, schema.UnitChars, 0, 100000, 156000), originalChars(156000)),
		},
		answers: []schema.Answer{answer("a1", 10, "There is no such setting in the documentation.", "w1")},
		calls2:  map[string]wantCall{"w1": {coverage: ratio(100000, 156000)}},
		want: []wantAnswer{{
			risk: schema.RiskHigh, absence: true,
			reasons:     []string{absence, silent, notFollowed},
			reasonCalls: map[string][]string{absence: {"w1"}, silent: {"w1"}, notFollowed: {"w1"}},
			incomplete:  []string{"w1"}, inputs: []string{"w1"},
		}},
		meta: wantMeta{truncated: 1, silent: 1, risky: 1, maxRisk: schema.RiskHigh},
	},
	{
		name: "b: partial Read paged to the end with offset",
		calls: []schema.ToolCall{
			call("r1", "Read", `{"file_path":"/repo/big.go"}`, 0,
				cut(schema.KindExplicit, schema.StrategyPaginated, schema.UnitLines, 1, 2000, 5000)),
			call("r2", "Read", `{"file_path":"/repo/big.go","offset":2001,"limit":2000}`, 1,
				partial(schema.UnitLines, 2001, 4000, 5000)),
			call("r3", "Read", `{"file_path":"big.go","offset":4001,"limit":2000}`, 2,
				partial(schema.UnitLines, 4001, 5000, 5000)),
		},
		answers: []schema.Answer{answer("a1", 10, "The handler is registered in big.go.", "r1", "r2", "r3")},
		calls2: map[string]wantCall{
			"r1": {followedUp: true, coverage: one},
			"r2": {continuationOf: "r1", coverage: one},
			"r3": {continuationOf: "r1", coverage: one},
		},
		want: []wantAnswer{{
			risk: schema.RiskLow, reasons: []string{recovered},
			reasonCalls: map[string][]string{recovered: {"r1"}},
			incomplete:  []string{}, inputs: []string{"r1", "r2", "r3"},
		}},
		meta: wantMeta{truncated: 1, maxRisk: schema.RiskLow},
	},
	{
		name: "c: Bash persisted-output, then grep over the saved file: searched, not read",
		calls: []schema.ToolCall{
			call("b1", "Bash", `{"command":"ls -laR /"}`, 0,
				cut(schema.KindExplicit, schema.StrategySpillToFile, schema.UnitChars, 0, 2000, 85713),
				saved("/x/tool-results/abc.txt"), originalChars(85713)),
			call("b2", "Bash", `{"command":"grep foo /x/tool-results/abc.txt"}`, 1),
		},
		answers: []schema.Answer{answer("a1", 10, "foo is in /etc/foo.conf.", "b1", "b2")},
		calls2: map[string]wantCall{
			"b1": {followedUp: true, searched: true, coverage: ratio(2000, 85713)},
			"b2": {continuationOf: "b1", coverage: one},
		},
		want: []wantAnswer{{
			risk: schema.RiskMedium, reasons: []string{explicit},
			reasonCalls: map[string][]string{explicit: {"b1"}},
			incomplete:  []string{"b1"}, inputs: []string{"b1", "b2"},
		}},
		meta: wantMeta{truncated: 1, risky: 1, maxRisk: schema.RiskMedium},
	},
	{
		name: "d: Codex head+tail truncation never revisited",
		calls: []schema.ToolCall{
			call("x1", "shell_command", `{"command":"cargo test","workdir":"/repo"}`, 0,
				cut(schema.KindExplicit, schema.StrategyHeadTail, schema.UnitLines, -1, -1, 3000), contextLines(256)),
		},
		answers: []schema.Answer{answer("a1", 10, "All tests pass.", "x1")},
		calls2:  map[string]wantCall{"x1": {coverage: ratio(256, 3000)}},
		want: []wantAnswer{{
			risk: schema.RiskMedium, reasons: []string{explicit, notFollowed},
			reasonCalls: map[string][]string{explicit: {"x1"}, notFollowed: {"x1"}},
			incomplete:  []string{"x1"}, inputs: []string{"x1"},
		}},
		meta: wantMeta{truncated: 1, risky: 1, maxRisk: schema.RiskMedium},
	},
	{
		name: "e: nothing truncated",
		calls: []schema.ToolCall{
			call("r1", "Read", `{"file_path":"/repo/main.go"}`, 0),
			call("g1", "Grep", `{"pattern":"func main","path":"/repo"}`, 1),
		},
		answers: []schema.Answer{answer("a1", 10, "There is no init function; main is in main.go.", "r1", "g1")},
		calls2: map[string]wantCall{
			"r1": {coverage: one},
			"g1": {coverage: one},
		},
		want: []wantAnswer{{
			risk: schema.RiskNone, absence: true, reasons: []string{}, reasonCalls: map[string][]string{},
			incomplete: []string{}, inputs: []string{"r1", "g1"},
		}},
		meta: wantMeta{maxRisk: schema.RiskNone},
	},
	{
		name: "f: Chinese absence claim on a partial fetch",
		calls: []schema.ToolCall{
			call("f1", "mcp__fetch__fetch", `{"url":"https://example.com/zh"}`, 0,
				cut(schema.KindExplicit, schema.StrategyPaginated, schema.UnitChars, 0, 5000, -1)),
		},
		answers: []schema.Answer{answer("a1", 10, "文件中沒有這個設定。", "f1")},
		calls2:  map[string]wantCall{"f1": {}},
		want: []wantAnswer{{
			risk: schema.RiskHigh, absence: true,
			reasons:     []string{absence, explicit, notFollowed},
			reasonCalls: map[string][]string{absence: {"f1"}, explicit: {"f1"}, notFollowed: {"f1"}},
			incomplete:  []string{"f1"}, inputs: []string{"f1"},
		}},
		meta: wantMeta{truncated: 1, risky: 1, maxRisk: schema.RiskHigh},
	},
	{
		name: "g: MCP fetch paged with start_index to the end (total learnt from the short last page)",
		calls: []schema.ToolCall{
			call("f1", "mcp__fetch__fetch", `{"url":"https://example.com/big"}`, 0,
				cut(schema.KindExplicit, schema.StrategyPaginated, schema.UnitChars, 0, 5000, -1)),
			call("f2", "mcp__fetch__fetch", `{"url":"https://example.com/big","start_index":5000}`, 1,
				cut(schema.KindExplicit, schema.StrategyPaginated, schema.UnitChars, 5000, 10000, -1)),
			call("f3", "mcp__fetch__fetch", `{"url":"https://EXAMPLE.com/big","start_index":10000}`, 2,
				partial(schema.UnitChars, 10000, 12345, -1)),
		},
		answers: []schema.Answer{answer("a1", 10, "There is no rate limit section.", "f1", "f2", "f3")},
		calls2: map[string]wantCall{
			"f1": {followedUp: true, coverage: one},
			"f2": {followedUp: true, continuationOf: "f1", coverage: one},
			"f3": {continuationOf: "f2", coverage: one},
		},
		want: []wantAnswer{{
			risk: schema.RiskLow, absence: true, reasons: []string{recovered},
			reasonCalls: map[string][]string{recovered: {"f1", "f2"}},
			incomplete:  []string{}, inputs: []string{"f1", "f2", "f3"},
		}},
		meta: wantMeta{truncated: 2, maxRisk: schema.RiskLow},
	},
	{
		name: "a WebFetch summary completed by an MCP fetch from start_index",
		calls: []schema.ToolCall{
			call("w1", "WebFetch", `{"url":"https://example.com/docs","prompt":"p"}`, 0,
				cut(schema.KindSilent, schema.StrategySummary, schema.UnitChars, 0, 100000, 156000)),
			call("f1", "mcp__fetch__fetch", `{"url":"https://example.com/docs","start_index":100000,"max_length":60000}`, 1,
				partial(schema.UnitChars, 100000, 156000, 156000)),
		},
		answers: []schema.Answer{answer("a1", 10, "There is no such setting.", "w1", "f1")},
		calls2: map[string]wantCall{
			"w1": {followedUp: true, coverage: one},
			"f1": {continuationOf: "w1", coverage: one},
		},
		want: []wantAnswer{{
			risk: schema.RiskLow, absence: true, reasons: []string{recovered},
			reasonCalls: map[string][]string{recovered: {"w1"}},
			incomplete:  []string{}, inputs: []string{"w1", "f1"},
		}},
		meta: wantMeta{truncated: 1, silent: 1, maxRisk: schema.RiskLow},
	},
	{
		name: "saved output Read back in pages, with an rg in between",
		calls: []schema.ToolCall{
			call("b1", "Bash", `{"command":"npm test"}`, 0,
				cut(schema.KindExplicit, schema.StrategySpillToFile, schema.UnitChars, 0, 2000, 90000),
				saved("/x/tool-results/n.txt"), originalChars(90000), originalLines(3000)),
			call("r1", "Read", `{"file_path":"/x/tool-results/n.txt"}`, 1,
				cut(schema.KindSilent, schema.StrategyHead, schema.UnitLines, 1, 2000, 3000)),
			call("g1", "Bash", `{"command":"rg -n TODO /x/tool-results/n.txt | head -20"}`, 2),
			call("r2", "Read", `{"file_path":"/x/tool-results/n.txt","offset":2001}`, 3,
				partial(schema.UnitLines, 2001, 3000, 3000)),
		},
		answers: []schema.Answer{answer("a1", 10, "One test fails.", "b1", "r1", "g1", "r2")},
		calls2: map[string]wantCall{
			"b1": {followedUp: true, searched: true, coverage: one},
			"r1": {followedUp: true, searched: true, continuationOf: "b1", coverage: one},
			"g1": {continuationOf: "r1", coverage: one},
			"r2": {continuationOf: "r1", coverage: one},
		},
		want: []wantAnswer{{
			risk: schema.RiskLow, reasons: []string{recovered},
			reasonCalls: map[string][]string{recovered: {"b1", "r1"}},
			incomplete:  []string{}, inputs: []string{"b1", "r1", "g1", "r2"},
		}},
		meta: wantMeta{truncated: 2, silent: 1, maxRisk: schema.RiskLow},
	},
	{
		name: "read further only after the answer: incomplete at answer time, followed up in the session",
		calls: []schema.ToolCall{
			call("r1", "Read", `{"file_path":"/repo/big.go"}`, 0,
				cut(schema.KindExplicit, schema.StrategyPaginated, schema.UnitLines, 1, 2000, 3000)),
			call("r2", "Read", `{"file_path":"/repo/big.go","offset":2001}`, 20,
				partial(schema.UnitLines, 2001, 3000, 3000)),
		},
		answers: []schema.Answer{answer("a1", 10, "No such handler exists.", "r1")},
		calls2: map[string]wantCall{
			"r1": {followedUp: true, coverage: one},
			"r2": {continuationOf: "r1", coverage: one},
		},
		want: []wantAnswer{{
			risk: schema.RiskHigh, absence: true,
			reasons:     []string{absence, explicit, notFollowed},
			reasonCalls: map[string][]string{absence: {"r1"}, explicit: {"r1"}, notFollowed: {"r1"}},
			incomplete:  []string{"r1"}, inputs: []string{"r1"},
		}},
		meta: wantMeta{truncated: 1, risky: 1, maxRisk: schema.RiskHigh},
	},
	{
		name: "a sub-agent reading the rest does not recover the main thread's input",
		calls: []schema.ToolCall{
			call("r1", "Read", `{"file_path":"/repo/big.go"}`, 0,
				cut(schema.KindExplicit, schema.StrategyPaginated, schema.UnitLines, 1, 2000, 3000)),
			call("s1", "Read", `{"file_path":"/repo/big.go","offset":2001}`, 1, agent("sub"),
				partial(schema.UnitLines, 2001, 3000, 3000)),
		},
		answers: []schema.Answer{answer("a1", 10, "Done.", "r1")},
		calls2: map[string]wantCall{
			"r1": {coverage: ratio(2000, 3000)},
			"s1": {coverage: ratio(1000, 3000)},
		},
		want: []wantAnswer{{
			risk: schema.RiskMedium, reasons: []string{explicit, notFollowed},
			reasonCalls: map[string][]string{explicit: {"r1"}, notFollowed: {"r1"}},
			incomplete:  []string{"r1"}, inputs: []string{"r1"},
		}},
		meta: wantMeta{truncated: 1, risky: 1, maxRisk: schema.RiskMedium},
	},
	{
		name: "refused Read recovered by offset/limit pages",
		calls: []schema.ToolCall{
			call("r1", "Read", `{"file_path":"/repo/huge.json"}`, 0, func(c *schema.ToolCall) {
				c.Truncated, c.Kind, c.Strategy = true, schema.KindExplicit, schema.StrategyRefused
				c.Original.Tokens = schema.Known(50155)
			}),
			call("r2", "Read", `{"file_path":"/repo/huge.json","offset":1,"limit":1500}`, 1,
				partial(schema.UnitLines, 1, 1500, 2900)),
			call("r3", "Read", `{"file_path":"/repo/huge.json","offset":1501,"limit":1500}`, 2,
				partial(schema.UnitLines, 1501, 2900, 2900)),
		},
		answers: []schema.Answer{answer("a1", 10, "The key is set twice.", "r1", "r2", "r3")},
		calls2: map[string]wantCall{
			"r1": {followedUp: true, coverage: one},
			"r2": {continuationOf: "r1", coverage: one},
			"r3": {continuationOf: "r1", coverage: one},
		},
		want: []wantAnswer{{
			risk: schema.RiskLow, reasons: []string{recovered},
			reasonCalls: map[string][]string{recovered: {"r1"}},
			incomplete:  []string{}, inputs: []string{"r1", "r2", "r3"},
		}},
		meta: wantMeta{truncated: 1, maxRisk: schema.RiskLow},
	},
	{
		name: "spilled output read back with sed ranges over the saved file",
		calls: []schema.ToolCall{
			call("b1", "Bash", `{"command":"go test ./... 2>&1"}`, 0,
				cut(schema.KindExplicit, schema.StrategySpillToFile, schema.UnitChars, 0, 2000, 90000),
				saved("/x/tool-results/t1.txt"), originalChars(90000), originalLines(3000)),
			call("b2", "Bash", `{"command":"sed -n '1,2000p' /x/tool-results/t1.txt"}`, 1),
			call("b3", "Bash", `{"command":"cd /x/tool-results && tail -n +2001 t1.txt"}`, 2),
		},
		answers: []schema.Answer{answer("a1", 10, "Two tests fail.", "b1", "b2", "b3")},
		calls2: map[string]wantCall{
			"b1": {followedUp: true, coverage: one},
			"b2": {continuationOf: "b1", coverage: one},
			"b3": {continuationOf: "b1", coverage: one},
		},
		want: []wantAnswer{{
			risk: schema.RiskLow, reasons: []string{recovered},
			reasonCalls: map[string][]string{recovered: {"b1"}},
			incomplete:  []string{}, inputs: []string{"b1", "b2", "b3"},
		}},
		meta: wantMeta{truncated: 1, maxRisk: schema.RiskLow},
	},
	{
		name: "the same WebFetch again reads nothing more: not a follow-up",
		calls: []schema.ToolCall{
			call("w1", "WebFetch", `{"url":"https://example.com/a","prompt":"x"}`, 0,
				cut(schema.KindSilent, schema.StrategySummary, schema.UnitChars, 0, 100000, 156000)),
			call("w2", "WebFetch", `{"url":"https://example.com/a","prompt":"y"}`, 1,
				cut(schema.KindSilent, schema.StrategySummary, schema.UnitChars, 0, 100000, 156000)),
		},
		answers: []schema.Answer{answer("a1", 10, "It supports OAuth.", "w1", "w2")},
		calls2: map[string]wantCall{
			"w1": {coverage: ratio(100000, 156000)},
			"w2": {coverage: ratio(100000, 156000)},
		},
		want: []wantAnswer{{
			risk: schema.RiskHigh, reasons: []string{silent, notFollowed},
			reasonCalls: map[string][]string{silent: {"w1", "w2"}, notFollowed: {"w1", "w2"}},
			incomplete:  []string{"w1", "w2"}, inputs: []string{"w1", "w2"},
		}},
		meta: wantMeta{truncated: 2, silent: 2, risky: 1, maxRisk: schema.RiskHigh},
	},
	{
		name: "suspected cut with an understated marker; inputs derived from the turn",
		calls: []schema.ToolCall{
			call("p1", "bash", `{"command":"cat server.log"}`, 0, turn(1), func(c *schema.ToolCall) {
				c.Truncated, c.Kind, c.Strategy = true, schema.KindSuspected, schema.StrategyHead
			}),
			call("p2", "bash", `{"command":"make build"}`, 1, turn(1), understated(),
				cut(schema.KindExplicit, schema.StrategyHead, schema.UnitChars, 0, 30000, -1)),
			call("p0", "read", `{"path":"other.go"}`, 2, turn(0)),
			call("p3", "bash", `{"command":"make test"}`, 30, turn(1)),
		},
		answers: []schema.Answer{func() schema.Answer {
			a := answer("a1", 10, "The build is broken.")
			a.Turn = schema.KnownTurn(1)
			return a
		}()},
		calls2: map[string]wantCall{
			"p1": {},
			"p2": {},
			"p0": {coverage: one},
			"p3": {coverage: one},
		},
		want: []wantAnswer{{
			risk: schema.RiskMedium, reasons: []string{explicit, suspected, notFollowed, understate},
			reasonCalls: map[string][]string{explicit: {"p2"}, suspected: {"p1"}, notFollowed: {"p1", "p2"}, understate: {"p2"}},
			incomplete:  []string{"p1", "p2"}, inputs: []string{"p1", "p2"},
		}},
		meta: wantMeta{truncated: 2, risky: 1, maxRisk: schema.RiskMedium},
	},
	{
		name: "recursive Grep over the directory of a truncated file counts as a search of it",
		calls: []schema.ToolCall{
			call("r1", "Read", `{"file_path":"/repo/pkg/conf.go"}`, 0,
				cut(schema.KindExplicit, schema.StrategyPaginated, schema.UnitLines, 1, 2000, 2500)),
			call("g1", "Grep", `{"pattern":"Timeout","path":"/repo/pkg","output_mode":"content"}`, 1),
		},
		answers: []schema.Answer{answer("a1", 10, "I couldn't find a Timeout field.", "r1", "g1")},
		calls2: map[string]wantCall{
			"r1": {followedUp: true, searched: true, coverage: ratio(2000, 2500)},
			"g1": {continuationOf: "r1", coverage: one},
		},
		want: []wantAnswer{{
			risk: schema.RiskHigh, absence: true, reasons: []string{absence, explicit},
			reasonCalls: map[string][]string{absence: {"r1"}, explicit: {"r1"}},
			incomplete:  []string{"r1"}, inputs: []string{"r1", "g1"},
		}},
		meta: wantMeta{truncated: 1, risky: 1, maxRisk: schema.RiskHigh},
	},
	{
		name: "refused output never recovered",
		calls: []schema.ToolCall{
			call("m1", "mcp__github__get_logs", `{"job":1}`, 0, func(c *schema.ToolCall) {
				c.Truncated, c.Kind, c.Strategy = true, schema.KindExplicit, schema.StrategyRefused
			}),
		},
		answers: []schema.Answer{answer("a1", 10, "The job failed on lint.", "m1")},
		calls2:  map[string]wantCall{"m1": {}},
		want: []wantAnswer{{
			risk: schema.RiskMedium, reasons: []string{explicit, notFollowed, refused},
			reasonCalls: map[string][]string{explicit: {"m1"}, notFollowed: {"m1"}, refused: {"m1"}},
			incomplete:  []string{"m1"}, inputs: []string{"m1"},
		}},
		meta: wantMeta{truncated: 1, risky: 1, maxRisk: schema.RiskMedium},
	},
}

func TestScenarios(t *testing.T) {
	for _, tc := range scenarios {
		t.Run(tc.name, func(t *testing.T) {
			s := &Session{Calls: clone(tc.calls), Answers: cloneAnswers(tc.answers)}
			Analyze(s)
			if len(tc.calls2) != len(s.Calls) {
				t.Fatalf("test lists %d calls, session has %d", len(tc.calls2), len(s.Calls))
			}
			for _, c := range s.Calls {
				want, ok := tc.calls2[c.CallID]
				if !ok {
					t.Fatalf("no expectation for call %s", c.CallID)
				}
				got := wantCall{c.FollowedUp, c.ContinuationOf, c.SessionCoverage, c.Searched, c.CoverageUpperBound, c.CoverageMixedVersions}
				if got != want {
					t.Errorf("call %s: got %+v, want %+v", c.CallID, got, want)
				}
			}
			for i, want := range tc.want {
				a := s.Answers[i]
				got := wantAnswer{a.Risk, a.AbsenceClaim, a.Reasons, a.ReasonCalls, a.IncompleteInputs, a.InputCallIDs}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("answer %s:\n got %+v\nwant %+v", a.MessageID, got, want)
				}
				if a.Verdict == "" {
					t.Errorf("answer %s: empty verdict", a.MessageID)
				}
			}
			m := s.Meta
			gotMeta := wantMeta{m.TruncatedCalls, m.SilentCalls, m.RiskyAnswers, m.MaxRisk}
			if gotMeta != tc.meta {
				t.Errorf("meta: got %+v, want %+v", gotMeta, tc.meta)
			}
			if m.ToolCalls != len(tc.calls) || m.Answers != len(tc.answers) {
				t.Errorf("meta counts: %d calls, %d answers", m.ToolCalls, m.Answers)
			}
		})
	}
}

func clone(calls []schema.ToolCall) []schema.ToolCall {
	return append([]schema.ToolCall(nil), calls...)
}

func cloneAnswers(answers []schema.Answer) []schema.Answer {
	out := make([]schema.Answer, len(answers))
	for i, a := range answers {
		a.InputCallIDs = append([]string(nil), a.InputCallIDs...)
		out[i] = a
	}
	return out
}
