package analysis

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ctxaudit/ctxaudit/collector/forensics"
	"github.com/ctxaudit/ctxaudit/schema"
)

// TestCoveragePrecision: coverage honours lower-bound originals (an upper
// bound on the share seen, never full coverage), the second shown range of
// head+tail cuts, and continuations that fetched their source again.
func TestCoveragePrecision(t *testing.T) {
	// A Bash failure notice at the 30,000-char cap: head [0,5002) and tail
	// [25013,30016) of at least 30,016 chars.
	bashAtCap := func(id string, sec int) schema.ToolCall {
		return call(id, "Bash", `{"command":"./gen.sh"}`, sec,
			cut(schema.KindExplicit, schema.StrategyHeadTail, schema.UnitChars, 0, 5002, 30016),
			tail(25013, 30016, false), originalChars(30016), atLeast(), understated())
	}
	tests := []struct {
		name    string
		calls   []schema.ToolCall
		answers []schema.Answer
		calls2  map[string]wantCall
		want    []wantAnswer
	}{
		{
			name:    "Bash failure at the cap: head and tail count, as at most a third",
			calls:   []schema.ToolCall{bashAtCap("b1", 0)},
			answers: []schema.Answer{answer("a1", 5, "The generator fails on the last record.", "b1")},
			calls2:  map[string]wantCall{"b1": {coverage: ratio(5002+5003, 30016), upperBound: true}},
			want: []wantAnswer{{
				risk: schema.RiskMedium, reasons: []string{explicit, notFollowed, understate},
				reasonCalls: map[string][]string{explicit: {"b1"}, notFollowed: {"b1"}, understate: {"b1"}},
				incomplete:  []string{"b1"}, inputs: []string{"b1"},
			}},
		},
		{
			name: "lower-bound original read past its bound: the share is unknown, never full",
			calls: []schema.ToolCall{
				call("r1", "Read", `{"file_path":"/repo/log.txt"}`, 0,
					cut(schema.KindExplicit, schema.StrategyPaginated, schema.UnitLines, 1, 1000, 2000), originalLines(2000), atLeast()),
				call("r2", "Read", `{"file_path":"/repo/log.txt","offset":1001,"limit":2000}`, 1,
					partial(schema.UnitLines, 1001, 3000, -1)),
			},
			answers: []schema.Answer{answer("a1", 5, "There is no error in the log.", "r1", "r2")},
			calls2: map[string]wantCall{
				"r1": {followedUp: true},
				"r2": {continuationOf: "r1"},
			},
			want: []wantAnswer{{
				risk: schema.RiskHigh, absence: true, reasons: []string{absence, explicit},
				reasonCalls: map[string][]string{absence: {"r1"}, explicit: {"r1"}},
				incomplete:  []string{"r1"}, inputs: []string{"r1", "r2"},
			}},
		},
		{
			// A digest of a page whose length nothing tells (Claude Code's
			// WebFetch before its notes): nothing is credited as seen.
			name: "a call of unknown completeness covers an unknown share",
			calls: []schema.ToolCall{
				call("w1", "WebFetch", `{"url":"https://docs.example/cli","prompt":"settings"}`, 0, unknownKind(schema.StrategySummary)),
			},
			answers: []schema.Answer{answer("a1", 5, "The CLI has a --verbose setting.", "w1")},
			calls2:  map[string]wantCall{"w1": {}},
			want: []wantAnswer{{
				risk: schema.RiskNone, reasons: []string{}, reasonCalls: map[string][]string{},
				incomplete: []string{}, inputs: []string{"w1"},
			}},
		},
		{
			name: "a read of unknown completeness recovers no earlier cut",
			calls: []schema.ToolCall{
				call("r1", "Read", `{"file_path":"/repo/log.txt"}`, 0,
					cut(schema.KindExplicit, schema.StrategyPaginated, schema.UnitLines, 1, 1000, 2000), originalLines(2000)),
				call("r2", "Read", `{"file_path":"/repo/log.txt"}`, 1, unknownKind(schema.StrategyNone)),
			},
			answers: []schema.Answer{answer("a1", 5, "There is no error in the log.", "r1", "r2")},
			calls2: map[string]wantCall{
				"r1": {coverage: ratio(1000, 2000)},
				"r2": {coverage: ratio(1000, 2000)},
			},
			want: []wantAnswer{{
				risk: schema.RiskHigh, absence: true, reasons: []string{absence, explicit, notFollowed},
				reasonCalls: map[string][]string{absence: {"r1"}, explicit: {"r1"}, notFollowed: {"r1"}},
				incomplete:  []string{"r1"}, inputs: []string{"r1", "r2"},
			}},
		},
		{
			// A refetch that failed (a 503, a timeout) got none of the page.
			name: "a failed read of the rest recovers nothing",
			calls: []schema.ToolCall{
				call("r1", "Read", `{"file_path":"/repo/log.txt"}`, 0,
					cut(schema.KindExplicit, schema.StrategyPaginated, schema.UnitLines, 1, 1000, 2000), originalLines(2000)),
				call("r2", "Read", `{"file_path":"/repo/log.txt","offset":1001}`, 1, failed()),
			},
			answers: []schema.Answer{answer("a1", 5, "There is no error in the log.", "r1", "r2")},
			calls2: map[string]wantCall{
				"r1": {coverage: ratio(1000, 2000)},
				"r2": {coverage: ratio(1000, 2000)},
			},
			want: []wantAnswer{{
				risk: schema.RiskHigh, absence: true, reasons: []string{absence, explicit, notFollowed},
				reasonCalls: map[string][]string{absence: {"r1"}, explicit: {"r1"}, notFollowed: {"r1"}},
				incomplete:  []string{"r1"}, inputs: []string{"r1", "r2"},
			}},
		},
		{
			// A command that exited non-zero printed its own output: that is
			// what it delivered, failing or not.
			name: "a failed command still delivered its output",
			calls: []schema.ToolCall{
				call("b1", "Bash", `{"command":"go test ./..."}`, 0, failed()),
			},
			answers: []schema.Answer{answer("a1", 5, "The tests fail in the parser package.", "b1")},
			calls2:  map[string]wantCall{"b1": {coverage: one}},
			want: []wantAnswer{{
				risk: schema.RiskNone, reasons: []string{}, reasonCalls: map[string][]string{},
				incomplete: []string{}, inputs: []string{"b1"},
			}},
		},
		{
			name: "a short last page settles a lower bound: exact, full coverage",
			calls: []schema.ToolCall{
				call("r1", "Read", `{"file_path":"/repo/log.txt"}`, 0,
					cut(schema.KindExplicit, schema.StrategyPaginated, schema.UnitLines, 1, 1000, 2000), originalLines(2000), atLeast()),
				call("r2", "Read", `{"file_path":"/repo/log.txt","offset":1001,"limit":2000}`, 1,
					partial(schema.UnitLines, 1001, 2500, -1)),
			},
			answers: []schema.Answer{answer("a1", 5, "The log ends with the shutdown.", "r1", "r2")},
			calls2: map[string]wantCall{
				"r1": {followedUp: true, coverage: one},
				"r2": {continuationOf: "r1", coverage: one},
			},
			want: []wantAnswer{{
				risk: schema.RiskLow, reasons: []string{recovered},
				reasonCalls: map[string][]string{recovered: {"r1"}},
				incomplete:  []string{}, inputs: []string{"r1", "r2"},
			}},
		},
		{
			name: "WebFetch note, then the rest with offset: full coverage from two fetches",
			calls: []schema.ToolCall{
				call("w1", "WebFetch", `{"url":"https://example.com/docs/config","prompt":"keys"}`, 0,
					cut(schema.KindExplicit, schema.StrategySummary, schema.UnitChars, 0, 100000, 195757), originalChars(195757)),
				call("w2", "WebFetch", `{"url":"https://example.com/docs/config","prompt":"keys","offset":100000}`, 1,
					func(c *schema.ToolCall) {
						c.PartialByRequest, c.Strategy = true, schema.StrategySummary
						c.Shown = schema.Range{Start: schema.Known(100000), Unit: schema.UnitChars}
					}, refetched()),
			},
			answers: []schema.Answer{answer("a1", 5, "The keys are listen, workers and upload_limit.", "w1", "w2")},
			calls2: map[string]wantCall{
				"w1": {followedUp: true, coverage: one, mixed: true},
				"w2": {continuationOf: "w1", coverage: one, mixed: true},
			},
			want: []wantAnswer{{
				risk: schema.RiskLow, reasons: []string{recovered},
				reasonCalls: map[string][]string{recovered: {"w1"}},
				incomplete:  []string{}, inputs: []string{"w1", "w2"},
			}},
		},
		{
			name: "MCP fetch paged with start_index: each page a new fetch, so the coverage is pieced",
			calls: []schema.ToolCall{
				call("f1", "mcp__fetch__fetch", `{"url":"https://example.com/log"}`, 0,
					cut(schema.KindExplicit, schema.StrategyPaginated, schema.UnitChars, 0, 5000, -1)),
				call("f2", "mcp__fetch__fetch", `{"url":"https://example.com/log","start_index":5000}`, 1,
					partial(schema.UnitChars, 5000, 10000, -1), refetched()),
				call("f3", "mcp__fetch__fetch", `{"url":"https://example.com/log","start_index":10000}`, 2,
					partial(schema.UnitChars, 10000, 11234, 11234), refetched()),
			},
			answers: []schema.Answer{answer("a1", 5, "The log ends with the shutdown.", "f1", "f2", "f3")},
			calls2: map[string]wantCall{
				"f1": {followedUp: true, coverage: one, mixed: true},
				"f2": {continuationOf: "f1", coverage: one, mixed: true},
				"f3": {continuationOf: "f1", coverage: one, mixed: true},
			},
			want: []wantAnswer{{
				risk: schema.RiskLow, reasons: []string{recovered},
				reasonCalls: map[string][]string{recovered: {"f1"}},
				incomplete:  []string{}, inputs: []string{"f1", "f2", "f3"},
			}},
		},
		{
			name: "one fetch only: not mixed",
			calls: []schema.ToolCall{
				call("w1", "WebFetch", `{"url":"https://example.com/docs/config","prompt":"keys"}`, 0,
					cut(schema.KindExplicit, schema.StrategySummary, schema.UnitChars, 0, 100000, 195757), originalChars(195757)),
			},
			answers: []schema.Answer{answer("a1", 5, "The keys are listen and workers.", "w1")},
			calls2:  map[string]wantCall{"w1": {coverage: ratio(100000, 195757)}},
			want: []wantAnswer{{
				risk: schema.RiskMedium, reasons: []string{explicit, notFollowed},
				reasonCalls: map[string][]string{explicit: {"w1"}, notFollowed: {"w1"}},
				incomplete:  []string{"w1"}, inputs: []string{"w1"},
			}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &Session{Calls: tc.calls, Answers: tc.answers}
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
			}
		})
	}
}

// TestCoverageFromDetect runs Claude Code 2.1.328 results through forensics
// and then session analysis: what the verdicts record is what coverage
// honours.
func TestCoverageFromDetect(t *testing.T) {
	note := "[WebFetch note: this page's text is 195757 characters long and the answer above covers only characters 0 to 100000; " +
		"the final 95757 were not read — to read on, call WebFetch again with the same url and offset: 100000.]"
	fetched := []byte(`{"bytes":214995,"code":200,"codeText":"OK","result":"…","durationMs":2310,"url":"https://example.com/docs/config"}`)
	detected := func(id string, sec int, tool, args, text string, result []byte, isError bool) schema.ToolCall {
		c := call(id, tool, args, sec)
		c.HarnessVersion = "2.1.328"
		c.Forensics = forensics.Detect(forensics.Input{Harness: schema.HarnessClaudeCode, HarnessVersion: "2.1.328", Tool: tool,
			Arguments: []byte(args), Context: text, ToolUseResult: result, IsError: isError})
		return c
	}
	bashText := strings.Repeat("h", 5000) + "\n\n... [20011 characters truncated] ...\n\n" + strings.Repeat("t", 4989) + "\nExit code 2"
	s := &Session{Calls: []schema.ToolCall{
		detected("w1", 0, "WebFetch", `{"url":"https://example.com/docs/config","prompt":"keys"}`, "Keys: listen, workers.\n\n"+note, fetched, false),
		detected("w2", 1, "WebFetch", `{"url":"https://example.com/docs/config","prompt":"keys","offset":100000}`, "Also upload_limit.", fetched, false),
		detected("b1", 2, "Bash", `{"command":"./gen.sh"}`, bashText, []byte(`"Error: Exit code 2"`), true),
	}}
	Analyze(s)
	want := map[string]wantCall{
		"w1": {followedUp: true, coverage: one, mixed: true},
		"w2": {continuationOf: "w1", coverage: one, mixed: true},
		"b1": {coverage: ratio(5002+5003, 30016), upperBound: true},
	}
	for _, c := range s.Calls {
		got := wantCall{c.FollowedUp, c.ContinuationOf, c.SessionCoverage, c.Searched, c.CoverageUpperBound, c.CoverageMixedVersions}
		if got != want[c.CallID] {
			t.Errorf("call %s (%s): got %+v, want %+v", c.CallID, c.Detector, got, want[c.CallID])
		}
	}
}
