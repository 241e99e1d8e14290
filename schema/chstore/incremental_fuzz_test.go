package chstore

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/collector/session"
	"github.com/ctxaudit/ctxaudit/schema"
)

// FuzzIncrementalAnalysisStoresTheOneShotRows draws a session — turns of
// Read, Bash and Grep calls, some cut and some followed up, answers with and
// without absence claims, messages that turn out to call a tool after they
// looked like answers — and requires what the collector stores of it to be
// what `ctxaudit ingest` stores.
//
// `ctxaudit ingest` reads a whole session and analyses it once. The ctxaudit
// processor holds records as they arrive, in whatever order its senders'
// batches bring them, and emits the session's analysis whenever it must
// (idle, evicted, shut down) — several times over a long session — each
// time only what changed. Each emission is written; the tables keep, per
// id, the row of the highest version (what its analysis knew, then the
// write's clock) and readers skip answers taken back. Once the processor
// has seen every record and emitted, that must be the one-shot's rows,
// field by field, with the same analysis rank.
func FuzzIncrementalAnalysisStoresTheOneShotRows(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{3, 2, 1, 0xff, 0x0f, 0xf0, 0x55, 0xaa, 7, 9})
	f.Add([]byte("read cut, read again; there is no foo"))
	f.Fuzz(func(t *testing.T, data []byte) {
		g := recordGen(data)
		meta := schema.Session{SessionID: "s", Source: schema.HarnessClaudeCode, Turns: schema.Known(3)}
		calls, answers := g.turns("s")
		if len(calls) > 0 && !calls[0].Turn.Known {
			meta.Turns = schema.Unknown // spans that do not say their turns do not count them either
		}
		arrived := g.arrival(calls, answers)
		// Now and then a record without a time (a malformed timestamp, a
		// span with OTLP's unset time): its place among the calls is not
		// known, whichever order it arrived in.
		if g.byte()%4 == 0 && len(arrived) > 0 {
			untimed := int(g.byte()) % len(arrived)
			none := pick(&g, time.Time{}, time.Unix(0, 0).UTC())
			switch r := arrived[untimed].(type) {
			case schema.ToolCall:
				for i := range arrived {
					if c, ok := arrived[i].(schema.ToolCall); ok && c.CallID == r.CallID {
						c.Timestamp = none
						arrived[i] = c
					}
				}
				calls[slices.IndexFunc(calls, func(x schema.ToolCall) bool { return x.CallID == r.CallID })].Timestamp = none
			case schema.Answer:
				for i := range arrived {
					if a, ok := arrived[i].(schema.Answer); ok && a.MessageID == r.MessageID {
						a.Timestamp = none
						arrived[i] = a
					}
				}
				for i := range answers {
					if answers[i].MessageID == r.MessageID {
						answers[i].Timestamp = none
					}
				}
			}
		}
		// A call sent again with other content (a sender that learned more)
		// is stored as last sent; the one-shot reads that version.
		for _, r := range arrived {
			if c, ok := r.(schema.ToolCall); ok {
				i := slices.IndexFunc(calls, func(x schema.ToolCall) bool { return x.CallID == c.CallID })
				calls[i] = c
			}
		}

		oneShot := session.New("s")
		for _, c := range calls {
			oneShot.AddCall(c, "", false)
		}
		for _, a := range answers {
			oneShot.AddAnswer(a)
		}
		want := oneShot.Analyze(meta)

		var st stored
		b := session.New("s")
		for i, r := range arrived {
			hold(b, r)
			switch g.byte() % 8 {
			case 0, 1, 2:
				st.emit(b, meta)
			case 3:
				// The collector restarts: the processor reloads what it had
				// emitted (session.Sent) and what it holds, from its
				// storage, in the order it arrived.
				b = session.New("s")
				b.Restore(st.sent)
				for _, r := range arrived[:i+1] {
					hold(b, r)
				}
			}
		}
		st.emit(b, meta)

		sameStored(t, "tool_calls", toolCallColumns, want.Calls, st.calls, func(c *schema.ToolCall) string { return c.CallID })
		var answered []schema.Answer
		for _, a := range want.Answers {
			if !a.Retracted {
				answered = append(answered, a)
			}
		}
		kept := map[string]*storedRow[schema.Answer]{}
		for id, a := range st.answers {
			if !a.row.Retracted {
				kept[id] = a
			}
		}
		sameStored(t, "answers", answerColumns, answered, kept, func(a *schema.Answer) string { return a.MessageID })
		if !reflect.DeepEqual(st.meta, want.Meta) {
			t.Fatalf("session: the last emission's\n%+v\nthe one-shot's\n%+v", st.meta, want.Meta)
		}
	})
}

// hold gives a builder a record as the processor does.
func hold(b *session.Builder, r any) {
	switch r := r.(type) {
	case schema.ToolCall:
		b.HoldCall(&r)
	case schema.Answer:
		b.AddAnswer(r)
	}
}

// stored is what the tables keep of a processor's emissions: per id the
// row of the highest version.
type stored struct {
	clock   uint64
	calls   map[string]*storedRow[schema.ToolCall]
	answers map[string]*storedRow[schema.Answer]
	meta    schema.Session
	// sent is what the processor's storage says was emitted.
	sent session.Sent
}

type storedRow[T any] struct {
	row     T
	version uint64
}

func (s *stored) emit(b *session.Builder, meta schema.Session) {
	res := b.Pending(meta)
	sent := b.Commit(res)
	s.clock++
	if s.calls == nil {
		s.calls, s.answers = map[string]*storedRow[schema.ToolCall]{}, map[string]*storedRow[schema.Answer]{}
	}
	s.sent.Merge(sent)
	for _, c := range res.Calls {
		keep(s.calls, c.CallID, c, version(toolCallRank(&c), s.clock))
	}
	for _, a := range res.Answers {
		keep(s.answers, a.MessageID, a, version(answerRank(&a), s.clock))
	}
	s.meta = res.Meta
}

func keep[T any](rows map[string]*storedRow[T], id string, r T, v uint64) {
	if cur, ok := rows[id]; !ok || v > cur.version {
		rows[id] = &storedRow[T]{r, v}
	}
}

// sameStored requires the stored rows to be want's, id by id, column by
// column, with the same rank (the version without the write's clock).
func sameStored[T any](t *testing.T, table string, cols []column[T], want []T, byID map[string]*storedRow[T], id func(*T) string) {
	t.Helper()
	if len(byID) != len(want) {
		var ids, wantIDs []string
		for k, r := range byID {
			ids = append(ids, fmt.Sprintf("%s: %+v", k, r.row))
		}
		for i := range want {
			wantIDs = append(wantIDs, id(&want[i]))
		}
		slices.Sort(ids)
		t.Fatalf("%s: %d rows stored, the one-shot stores %d (%v)\nstored:\n%s", table, len(byID), len(want), wantIDs, strings.Join(ids, "\n"))
	}
	for i := range want {
		w := &want[i]
		g, ok := byID[id(w)]
		if !ok {
			t.Fatalf("%s: no row of %s stored; the one-shot stores one", table, id(w))
		}
		if wr, gr := versionOf(w)&^clockMask, g.version&^clockMask; wr != gr {
			t.Fatalf("%s %s: stored with rank %#x, the one-shot's %#x\nstored:   %+v\none-shot: %+v", table, id(w), gr, wr, g.row, *w)
		}
		for _, c := range cols {
			if c.name == "version" {
				continue
			}
			if wv, gv := rowValue(c, w), rowValue(c, &g.row); !reflect.DeepEqual(wv, gv) {
				t.Fatalf("%s %s, column %s: stored %s, the one-shot %s\nstored:   %+v\none-shot: %+v",
					table, id(w), c.name, show(gv), show(wv), g.row, *w)
			}
		}
	}
}

// turns draws up to three turns of a session: calls on a few files, some
// cut (with the notice's range and total), some reading on from where a cut
// one stopped, and an answer ending each turn — at times a message that
// reads as an answer and then calls a tool, as a harness writes a message
// line by line.
func (g *recordGen) turns(session string) ([]schema.ToolCall, []schema.Answer) {
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	next := func() time.Time { at = at.Add(time.Duration(1+g.byte()%5) * time.Second); return at }
	var calls []schema.ToolCall
	var answers []schema.Answer
	// A quarter of the sessions come from an instrumentation that does
	// not say its turns (no ctxaudit.turn): every record's turn is unknown.
	said := g.byte()%4 != 0
	turnOf := func(turn int) schema.Turn {
		if !said {
			return schema.Turn{}
		}
		return schema.KnownTurn(turn)
	}
	n := 0
	for turn := 1; turn <= 1+int(g.byte()%3); turn++ {
		for k := range int(g.byte() % 4) {
			msg := fmt.Sprintf("m%d-%d", turn, k)
			if k > 0 && g.bool() {
				msg = fmt.Sprintf("m%d-%d", turn, k-1) // two calls of one message
			}
			if g.byte()%5 == 0 {
				// The message read as an answer before its call's line came.
				answers = append(answers, schema.Answer{SessionID: session, MessageID: msg, Timestamp: next(), Turn: turnOf(turn),
					Source: schema.HarnessClaudeCode, Text: pick(g, "Let me check.", "There is no foo here.")})
			}
			calls = append(calls, g.turnCall(session, fmt.Sprintf("c%d", n), msg, turnOf(turn), next()))
			n++
		}
		if g.byte()%4 != 0 {
			answers = append(answers, schema.Answer{SessionID: session, MessageID: fmt.Sprintf("a%d", turn), Timestamp: next(),
				Turn: turnOf(turn), Source: schema.HarnessClaudeCode,
				Text: pick(g, "Done.", "There is no function foo in /r/a.go.", "The file has 400 lines.", "没有找到 foo。")})
		}
	}
	return calls, answers
}

func (g *recordGen) turnCall(session, id, msg string, turn schema.Turn, at time.Time) schema.ToolCall {
	file := pick(g, "/r/a.go", "/r/b.go")
	c := schema.ToolCall{SessionID: session, CallID: id, MessageID: msg, Turn: turn, Timestamp: at,
		Source: schema.HarnessClaudeCode, Cwd: "/r", Project: "r"}
	c.Original.Source, c.Kind, c.Strategy = schema.SourceUnknown, schema.KindNone, schema.StrategyNone
	switch g.byte() % 4 {
	case 0, 1:
		offset, limit := pick(g, 0, 1, 101, 201), pick(g, 0, 100, 2000)
		c.Tool, c.Target = "Read", file
		c.Arguments = fmt.Sprintf(`{"file_path":%q,"offset":%d,"limit":%d}`, file, offset, limit)
		if g.bool() {
			// Cut: lines 1 (or offset) to 100 of 400 shown, the rest not.
			first := uint64(max(offset, 1))
			c.Truncated, c.Kind, c.Strategy = true, pick(g, schema.KindExplicit, schema.KindSilent), schema.StrategyHead
			c.Shown = schema.Range{Start: schema.Known(first), End: schema.Known(first + 99), Unit: schema.UnitLines}
			c.Total = schema.Known(400)
			c.Original = schema.Original{Sizes: schema.Sizes{Lines: schema.Known(400)}, Source: schema.SourceMarker,
				Precision: schema.PrecisionExact}
		} else {
			c.PartialByRequest = offset > 1 || limit > 0
		}
		c.Context = schema.Sizes{Bytes: schema.Known(uint64(100 + g.byte())), Lines: schema.Known(100)}
	case 2:
		c.Tool, c.Target = "Bash", file
		c.Arguments = fmt.Sprintf(`{"command":"sed -n '%d,%dp' %s"}`, 1+int(g.byte()%3)*100, 100+int(g.byte()%3)*100, file)
		c.Context = schema.Sizes{Bytes: schema.Known(4000), Lines: schema.Known(100)}
	default:
		c.Tool, c.Target = "Grep", "/r"
		c.Arguments = `{"pattern":"foo","path":"/r"}`
		if g.bool() {
			c.Truncated, c.Kind, c.Strategy = true, schema.KindExplicit, schema.StrategyHead
			c.Shown = schema.Range{Start: schema.Known(0), End: schema.Known(20), Unit: schema.UnitMatches}
			c.Total = schema.Known(90)
		}
		c.Context = schema.Sizes{Bytes: schema.Known(900), Lines: schema.Known(20)}
	}
	return c
}

// arrival is the order a processor receives the records in: the session's
// order with neighbours swapped here and there (parallel calls, batches
// from several clients), at times a record sent twice (a retry), and at
// times a call sent again with other figures.
func (g *recordGen) arrival(calls []schema.ToolCall, answers []schema.Answer) []any {
	var recs []any
	ci, ai := 0, 0
	for ci < len(calls) || ai < len(answers) {
		if ai == len(answers) || ci < len(calls) && !calls[ci].Timestamp.After(answers[ai].Timestamp) {
			recs = append(recs, calls[ci])
			ci++
		} else {
			recs = append(recs, answers[ai])
			ai++
		}
	}
	for i := 0; i+1 < len(recs); i++ {
		if g.byte()%4 == 0 {
			recs[i], recs[i+1] = recs[i+1], recs[i]
		}
	}
	if len(recs) > 0 && g.byte()%4 == 0 {
		recs = append(recs, recs[int(g.byte())%len(recs)])
	}
	if len(calls) > 0 && g.byte()%4 == 0 {
		c := calls[int(g.byte())%len(calls)]
		c.Context.Bytes = schema.Known(c.Context.Bytes.N + 1)
		c.IsError = !c.IsError
		recs = append(recs, c)
	}
	return recs
}
