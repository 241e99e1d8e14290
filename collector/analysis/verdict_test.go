package analysis

import (
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/schema"
)

func TestVerdict(t *testing.T) {
	webFetch := call("w1", "WebFetch", `{"url":"https://example.com/docs","prompt":"p"}`, 0,
		cut(schema.KindSilent, schema.StrategySummary, schema.UnitChars, 0, 100000, 156000))
	readHead := call("r1", "Read", `{"file_path":"/repo/big.go"}`, 0,
		cut(schema.KindExplicit, schema.StrategyPaginated, schema.UnitLines, 1, 2000, 5000))
	readMiddle := call("r2", "Read", `{"file_path":"/repo/big.go","offset":2001}`, 0,
		cut(schema.KindExplicit, schema.StrategyPaginated, schema.UnitLines, 2001, 4000, 5000))
	bashUnderstated := call("b1", "Bash", `{"command":"make build"}`, 0, understated(),
		cut(schema.KindExplicit, schema.StrategyHead, schema.UnitChars, 0, 30000, 170000))
	bashUnderstated.FollowedUp = true
	spill := call("b2", "Bash", `{"command":"go test ./..."}`, 0, saved("/x/tool-results/t.txt"),
		cut(schema.KindExplicit, schema.StrategySpillToFile, schema.UnitChars, 0, 2000, 85713))
	headTail := call("x1", "shell_command", `{"command":"cargo test"}`, 0,
		cut(schema.KindExplicit, schema.StrategyHeadTail, schema.UnitLines, -1, -1, 3000))
	refusedRead := call("r3", "Read", `{"file_path":"/repo/huge.json"}`, 0, func(c *schema.ToolCall) {
		c.Truncated, c.Kind, c.Strategy = true, schema.KindExplicit, schema.StrategyRefused
		c.Original.Tokens = schema.Known(50155)
		c.Shown.Unit, c.Total = schema.UnitTokens, schema.Known(50155)
	})
	suspectedTail := call("p1", "bash", `{"command":"tail -c 1000 log"}`, 0, func(c *schema.ToolCall) {
		c.Truncated, c.Kind, c.Strategy = true, schema.KindSuspected, schema.StrategyTail
		c.Shown = schema.Range{Start: schema.Known(9000), End: schema.Known(10000), Unit: schema.UnitBytes}
		c.Total = schema.Known(10000)
	})
	bashAtCap := call("b3", "Bash", `{"command":"./gen.sh"}`, 0, understated(), originalChars(30016), atLeast(),
		cut(schema.KindExplicit, schema.StrategyHeadTail, schema.UnitChars, 0, 5002, 30016), tail(25013, 30016, false))
	refusedLabel := call("r4", "Read", `{"file_path":"/srv/data/big.json"}`, 0, func(c *schema.ToolCall) {
		c.Truncated, c.Kind, c.Strategy = true, schema.KindExplicit, schema.StrategyRefused
		c.Original.Bytes, c.Original.Precision = schema.Known(454963), schema.PrecisionApproximate
		c.Shown = schema.Range{Start: schema.Known(0), End: schema.Known(0), Unit: schema.UnitBytes}
		c.Total = schema.Known(454963)
	})
	// Complete, and of unknown completeness (an image read: nothing shows
	// whether it was cut).
	readSmall := call("k1", "Read", `{"file_path":"/repo/small.go"}`, 0, func(c *schema.ToolCall) { c.Kind = schema.KindNone })
	readImage := call("u1", "Read", `{"file_path":"/repo/shot.png"}`, 0, func(c *schema.ToolCall) { c.Kind = schema.KindUnknown })
	calls := []schema.ToolCall{webFetch, readHead, readMiddle, bashUnderstated, spill, headTail, refusedRead, suspectedTail, bashAtCap, refusedLabel, readSmall, readImage}
	clean := func(text string, ids ...string) schema.Answer {
		a := answer("a1", 3821, text, ids...)
		a.Risk = schema.RiskNone
		return a
	}

	incomplete := func(risk schema.Risk, text string, ids []string, reasons map[string][]string) schema.Answer {
		a := answer("a1", 3821, text, ids...)
		a.Risk, a.AbsenceClaim, a.IncompleteInputs, a.ReasonCalls = risk, AbsenceClaim(text), ids, reasons
		return a
	}
	tests := []struct {
		name   string
		answer schema.Answer
		want   string
	}{
		{
			name: "silent summary under an absence claim",
			answer: incomplete(schema.RiskHigh, "There is no such variable.", []string{"w1"},
				map[string][]string{absence: {"w1"}, silent: {"w1"}, notFollowed: {"w1"}}),
			want: `Answer at 13:03:41 says "There is no such variable."; it was built on WebFetch of https://example.com/docs, which delivered a summary of the first 100,000 of 156,000 chars with no notice, and the model never read further.`,
		},
		{
			name: "middle page, followed up but not complete",
			answer: incomplete(schema.RiskMedium, "The handler is in big.go.", []string{"r2"},
				map[string][]string{explicit: {"r2"}}),
			want: `Answer at 13:03:41 was built on Read of /repo/big.go, which delivered lines 2,001–4,000 of 5,000 with a notice, and the model went back for more but had not seen all of it when it answered.`,
		},
		{
			name: "understated marker, read further only after the answer",
			answer: incomplete(schema.RiskMedium, "Build failed on lint.", []string{"b1"},
				map[string][]string{explicit: {"b1"}, notFollowed: {"b1"}, understate: {"b1"}}),
			want: "Answer at 13:03:41 was built on Bash `make build`, which delivered the first 30,000 of 170,000 chars with a notice that understated how much was cut, and the model read further only after answering.",
		},
		{
			name: "spill to file, two incomplete inputs",
			answer: incomplete(schema.RiskMedium, "Tests pass.", []string{"b2", "x1"},
				map[string][]string{explicit: {"b2", "x1"}, notFollowed: {"b2", "x1"}}),
			want: "Answer at 13:03:41 was built on Bash `go test ./...`, which delivered a preview of the first 2,000 of 85,713 chars (the rest saved to /x/tool-results/t.txt) with a notice, and the model never read further (plus 1 other incomplete input).",
		},
		{
			name: "head and tail",
			answer: incomplete(schema.RiskMedium, "Tests pass.", []string{"x1"},
				map[string][]string{explicit: {"x1"}, notFollowed: {"x1"}}),
			want: "Answer at 13:03:41 was built on shell_command `cargo test`, which delivered only the start and end of 3,000 lines with a notice, and the model never read further.",
		},
		{
			name: "refused",
			answer: incomplete(schema.RiskHigh, "找不到這個鍵。", []string{"r3"},
				map[string][]string{absence: {"r3"}, explicit: {"r3"}, notFollowed: {"r3"}, refused: {"r3"}}),
			want: `Answer at 13:03:41 says "找不到這個鍵。"; it was built on Read of /repo/huge.json, which delivered nothing (its 50,155 tokens were refused as too large) with a notice, and the model never read further.`,
		},
		{
			name: "suspected tail is explained before an explicit input",
			answer: incomplete(schema.RiskMedium, "The log ends cleanly.", []string{"r1", "p1"},
				map[string][]string{explicit: {"r1"}, suspected: {"p1"}, notFollowed: {"r1", "p1"}}),
			want: "Answer at 13:03:41 was built on bash `tail -c 1000 log`, which delivered the last 1,000 of 10,000 bytes with no notice but the shape of a cut, and the model never read further (plus 1 other incomplete input).",
		},
		{
			name: "recovered",
			answer: func() schema.Answer {
				a := answer("a1", 3821, "Done.", "r1", "r2")
				a.Risk, a.ReasonCalls = schema.RiskLow, map[string][]string{recovered: {"r1"}}
				return a
			}(),
			want: "Answer at 13:03:41 was built on Read of /repo/big.go, which was cut at first but read in full before the answer.",
		},
		{
			name: "several recovered",
			answer: func() schema.Answer {
				a := answer("a1", 3821, "Done.", "r1", "r2")
				a.Risk, a.ReasonCalls = schema.RiskLow, map[string][]string{recovered: {"r1", "r2"}}
				return a
			}(),
			want: "Answer at 13:03:41 was built on 2 truncated inputs, all read in full before the answer.",
		},
		{
			name: "complete inputs, claim quoted",
			answer: func() schema.Answer {
				a := answer("a1", 3821, "No such flag exists.", "r1", "r2")
				a.Risk, a.AbsenceClaim = schema.RiskNone, true
				return a
			}(),
			want: `Answer at 13:03:41 says "No such flag exists."; it was built on 2 tool calls, all complete.`,
		},
		{
			name:   "one complete input",
			answer: func() schema.Answer { a := answer("a1", 3821, "Done.", "w1"); a.Risk = schema.RiskNone; return a }(),
			want:   "Answer at 13:03:41 was built on WebFetch of https://example.com/docs, which was complete.",
		},
		{
			name: "head+tail at a cap: the total is a lower bound",
			answer: incomplete(schema.RiskMedium, "The generator fails on the last record.", []string{"b3"},
				map[string][]string{explicit: {"b3"}, notFollowed: {"b3"}, understate: {"b3"}}),
			want: "Answer at 13:03:41 was built on Bash `./gen.sh`, which delivered only the start and end of at least 30,016 chars with a notice that may understate how much was cut, and the model never read further.",
		},
		{
			name: "refused by a size label: the total is approximate",
			answer: incomplete(schema.RiskMedium, "The file is JSON.", []string{"r4"},
				map[string][]string{explicit: {"r4"}, notFollowed: {"r4"}}),
			want: "Answer at 13:03:41 was built on Read of /srv/data/big.json, which delivered nothing (about 454,963 bytes were refused as too large) with a notice, and the model never read further.",
		},
		{
			name:   "one complete input",
			answer: clean("It is in small.go.", "k1"),
			want:   "Answer at 13:03:41 was built on Read of /repo/small.go, which was complete.",
		},
		{
			name:   "one input of unknown completeness is not called complete",
			answer: clean("The screenshot shows no error.", "u1"),
			want:   "Answer at 13:03:41 was built on Read of /repo/shot.png, whose completeness is unknown: nothing shows whether it was cut.",
		},
		{
			name:   "complete inputs",
			answer: clean("Done.", "k1", "k1"),
			want:   "Answer at 13:03:41 was built on 2 tool calls, all complete.",
		},
		{
			name:   "some inputs of unknown completeness",
			answer: clean("Done.", "k1", "u1"),
			want:   "Answer at 13:03:41 was built on 2 tool calls, none known to be cut; 1 of them of unknown completeness.",
		},
		{
			name:   "every input of unknown completeness",
			answer: clean("Done.", "u1", "u1"),
			want:   "Answer at 13:03:41 was built on 2 tool calls, none known to be cut; all of unknown completeness.",
		},
		{
			name:   "one input no record is at hand for is not called complete",
			answer: clean("Done.", "gone"),
			want:   "Answer at 13:03:41 was built on call gone, whose completeness is unknown: nothing shows whether it was cut.",
		},
		{
			name:   "inputs one of which has no record",
			answer: clean("Done.", "k1", "gone"),
			want:   "Answer at 13:03:41 was built on 2 tool calls, none known to be cut; 1 of them of unknown completeness.",
		},
		{
			name:   "no inputs, no time",
			answer: schema.Answer{Text: "Hello.", Risk: schema.RiskNone},
			want:   "Answer used no tool results.",
		},
		{
			name: "input not among the calls",
			answer: incomplete(schema.RiskHigh, "Done.", []string{"gone"},
				map[string][]string{silent: {"gone"}}),
			want: "Answer at 13:03:41 was built on call gone.",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Verdict(tc.answer, calls); got != tc.want {
				t.Errorf("Verdict:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestNum(t *testing.T) {
	tests := []struct {
		name string
		in   uint64
		want string
	}{
		{"zero", 0, "0"},
		{"three digits", 999, "999"},
		{"four digits", 1000, "1,000"},
		{"six digits", 156000, "156,000"},
		{"seven digits", 1234567, "1,234,567"},
		{"max", 18446744073709551615, "18,446,744,073,709,551,615"},
	}
	for _, tc := range tests {
		if got := num(tc.in); got != tc.want {
			t.Errorf("%s: num(%d) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

func TestVerdictTimeIsUTC(t *testing.T) {
	a := schema.Answer{Timestamp: time.Date(2026, 1, 1, 23, 5, 9, 0, time.FixedZone("X", 3600)), Risk: schema.RiskNone}
	if got, want := Verdict(a, nil), "Answer at 22:05:09 used no tool results."; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
