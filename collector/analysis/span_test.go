package analysis

import (
	"reflect"
	"testing"

	"github.com/ctxaudit/ctxaudit/schema"
)

func TestIntervalSet(t *testing.T) {
	tests := []struct {
		name       string
		add        []span
		want       intervalSet
		lengthIn   uint64
		wantLength uint64
	}{
		{"disjoint stay apart", []span{{10, 20}, {0, 5}}, intervalSet{{0, 5}, {10, 20}}, 100, 15},
		{"touching merge", []span{{0, 2000}, {2000, 4000}, {4000, 5000}}, intervalSet{{0, 5000}}, 5000, 5000},
		{"overlap merges", []span{{0, 10}, {5, 15}, {14, 30}}, intervalSet{{0, 30}}, 100, 30},
		{"bridge joins three", []span{{0, 5}, {10, 15}, {20, 25}, {4, 21}}, intervalSet{{0, 25}}, 100, 25},
		{"empty ignored", []span{{5, 5}, {7, 3}}, nil, 100, 0},
		{"open end clipped to total", []span{{2000, openEnd}}, intervalSet{{2000, openEnd}}, 3000, 1000},
		{"beyond total ignored", []span{{0, 10}, {200, 300}}, intervalSet{{0, 10}, {200, 300}}, 100, 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s intervalSet
			for _, x := range tc.add {
				s = s.add(x)
			}
			if !reflect.DeepEqual(s, tc.want) {
				t.Errorf("set = %v, want %v", s, tc.want)
			}
			if got := s.lengthWithin(tc.lengthIn); got != tc.wantLength {
				t.Errorf("lengthWithin(%d) = %d, want %d", tc.lengthIn, got, tc.wantLength)
			}
		})
	}
}

func TestIntervalSetContains(t *testing.T) {
	s := intervalSet{{0, 10}, {20, 30}}
	tests := []struct {
		name string
		x    span
		want bool
	}{
		{"inside first", span{2, 8}, true},
		{"equal second", span{20, 30}, true},
		{"across gap", span{5, 25}, false},
		{"in gap", span{12, 15}, false},
		{"past end", span{25, 35}, false},
		{"empty", span{40, 40}, true},
	}
	for _, tc := range tests {
		if got := s.contains(tc.x); got != tc.want {
			t.Errorf("%s: contains(%v) = %v, want %v", tc.name, tc.x, got, tc.want)
		}
	}
}

func TestShownSpan(t *testing.T) {
	r := func(start, end int, u schema.Unit) schema.Range {
		return schema.Range{Start: schema.KnownInt(start), End: schema.KnownInt(end), Unit: u}
	}
	tests := []struct {
		name string
		in   schema.Range
		want span
		ok   bool
	}{
		{"lines are 1-based inclusive", r(1, 2000, schema.UnitLines), span{0, 2000}, true},
		{"lines from 0 read as 0-based", r(0, 2000, schema.UnitLines), span{0, 2000}, true},
		{"chars are 0-based exclusive", r(100000, 156000, schema.UnitChars), span{100000, 156000}, true},
		{"unknown end", r(0, -1, schema.UnitChars), span{}, false},
		{"no unit", r(0, 10, schema.UnitNone), span{}, false},
		{"reversed", r(10, 5, schema.UnitBytes), span{}, false},
	}
	for _, tc := range tests {
		got, ok := shownSpan(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: shownSpan = %v, %v; want %v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// FuzzAnalyze: no input — tool names, arguments, commands, saved refs,
// shown ranges, answer text — makes analysis panic.
func FuzzAnalyze(f *testing.F) {
	f.Add("Bash", `{"command":"cat a | head -n 5; sed -n '1,$p' b"}`, "/x/t.txt", uint64(0), uint64(10), "there is no x")
	f.Add("Read", `{"file_path":"a","offset":-1,"limit":1e309}`, "", uint64(5), uint64(2), "没有")
	f.Add("shell", `{"command":["bash","-c"]}`, "https://e.com/#", uint64(1), uint64(1<<63), "")
	f.Add("Grep", `{"pattern":"x","path":"/","offset":18446744073709551615}`, "", uint64(0), uint64(0), "not found")
	f.Add("exec_command", `{"cmd":"tail -n +0 f; head -c 99999999999999999999 f; grep -A"}`, "/", uint64(3), uint64(3), "?")
	f.Fuzz(func(t *testing.T, tool, args, ref string, start, end uint64, text string) {
		calls := []schema.ToolCall{
			{CallID: "1", Tool: tool, Arguments: args, Cwd: "/repo", Forensics: schema.Forensics{
				SavedRef: ref, Truncated: true, Kind: schema.KindExplicit, Strategy: schema.StrategyHead, Total: schema.Known(end),
				Shown: schema.Range{Start: schema.Known(start), End: schema.Known(end), Unit: schema.UnitLines},
			}},
			{CallID: "2", Tool: tool, Arguments: args, Cwd: "/repo", Forensics: schema.Forensics{
				PartialByRequest: true, Kind: schema.KindNone, Total: schema.Known(start),
				Shown: schema.Range{Start: schema.Known(end), End: schema.Known(start), Unit: schema.UnitChars},
			}},
			{CallID: "3", Tool: "Bash", Arguments: `{"command":` + jsonQuote(args) + `}`, Cwd: "/repo"},
		}
		s := &Session{Calls: calls, Answers: []schema.Answer{{MessageID: "a", Text: text}, {MessageID: "b", Text: text, InputCallIDs: []string{"1", "2", "3"}}}}
		Analyze(s)
		for _, c := range s.Calls {
			if r := c.SessionCoverage; r.Known && (r.V < 0 || r.V > 1) {
				t.Fatalf("coverage out of range: %v", r.V)
			}
		}
		for _, a := range s.Answers {
			if a.Verdict == "" || a.Risk == "" {
				t.Fatalf("answer not judged: %+v", a)
			}
		}
	})
}

func jsonQuote(s string) string {
	b := make([]byte, 0, len(s)+2)
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r < 0x20:
			b = append(b, ' ')
		default:
			b = append(b, string(r)...)
		}
	}
	return string(append(b, '"'))
}

func TestTargetCoverage(t *testing.T) {
	idx := func(u schema.Unit) int { i, _ := unitIndex(u); return i }
	chars, lines, tokens := idx(schema.UnitChars), idx(schema.UnitLines), idx(schema.UnitTokens)
	tests := []struct {
		name  string
		state func(*targetState)
		want  schema.Ratio
	}{
		{"seen in the unit with a total", func(s *targetState) {
			s.add(seen{delivered: true, positioned: true, unit: chars, sp: span{0, 100000}})
			s.in(chars).total = schema.Known(156000)
			s.in(idx(schema.UnitBytes)).total = schema.Known(160000) // nothing seen in bytes: not a 0
		}, ratio(100000, 156000)},
		{"seen only in a unit without a total", func(s *targetState) {
			s.add(seen{delivered: true, positioned: true, unit: chars, sp: span{0, 5000}})
			s.in(lines).total = schema.Known(300)
		}, schema.Ratio{}},
		{"refused: nothing delivered, size known", func(s *targetState) {
			s.add(seen{})
			s.in(tokens).total = schema.Known(50155)
		}, schema.KnownRatio(0)},
		{"delivered but unplaced", func(s *targetState) {
			s.add(seen{delivered: true})
			s.in(lines).total = schema.Known(300)
		}, schema.Ratio{}},
		{"whole", func(s *targetState) { s.add(seen{delivered: true, whole: true}) }, one},
		{"head and a tail meet", func(s *targetState) {
			s.add(seen{delivered: true, positioned: true, unit: lines, sp: span{0, 2000}})
			s.add(seen{delivered: true, unit: lines, fromEnd: 100})
			s.in(lines).total = schema.Known(2100)
		}, one},
		{"unplaced amount", func(s *targetState) {
			s.add(seen{delivered: true, unit: lines, amount: 256})
			s.in(lines).total = schema.Known(3000)
		}, ratio(256, 3000)},
		{"an unplaced amount never makes the whole", func(s *targetState) {
			s.add(seen{delivered: true, unit: lines, amount: 5000})
			s.in(lines).total = schema.Known(3000)
		}, ratio(2999, 3000)},
		{"end learnt from a short last page", func(s *targetState) {
			s.add(seen{delivered: true, positioned: true, unit: chars, sp: span{0, 10000}})
			s.add(seen{delivered: true, positioned: true, unit: chars, sp: span{10000, 12345}})
			s.in(chars).end = schema.Known(12345)
		}, one},
		{"empty original", func(s *targetState) { s.in(lines).total = schema.Known(0) }, one},
		{"nothing known", func(s *targetState) {}, schema.Ratio{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s targetState
			tc.state(&s)
			if got := s.coverage(); got != tc.want {
				t.Errorf("coverage = %+v, want %+v", got, tc.want)
			}
		})
	}
}
