package analysis

import (
	"time"

	"github.com/ctxaudit/ctxaudit/schema"
)

// Builders for calls and answers as the parsers produce them.

var t0 = time.Date(2026, 1, 19, 12, 0, 0, 0, time.UTC)

func at(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }

type callOpt func(*schema.ToolCall)

// call is a complete call (forensics found nothing cut).
func call(id, tool, args string, sec int, opts ...callOpt) schema.ToolCall {
	c := schema.ToolCall{
		SessionID: "s1", CallID: id, Tool: tool, Arguments: args, Timestamp: at(sec), Cwd: "/repo",
		Forensics: schema.Forensics{Kind: schema.KindNone, Strategy: schema.StrategyNone},
	}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// cut marks a truncated call showing [start, end] of total in unit (start,
// end or total < 0: unknown).
func cut(kind schema.TruncationKind, strategy schema.Strategy, unit schema.Unit, start, end, total int) callOpt {
	return func(c *schema.ToolCall) {
		c.Truncated, c.Kind, c.Strategy = true, kind, strategy
		c.Shown = schema.Range{Start: schema.KnownInt(start), End: schema.KnownInt(end), Unit: unit}
		c.Total = schema.KnownInt(total)
	}
}

// partial marks a partial view by request.
func partial(unit schema.Unit, start, end, total int) callOpt {
	return func(c *schema.ToolCall) {
		c.PartialByRequest = true
		c.Shown = schema.Range{Start: schema.KnownInt(start), End: schema.KnownInt(end), Unit: unit}
		c.Total = schema.KnownInt(total)
	}
}

func saved(ref string) callOpt { return func(c *schema.ToolCall) { c.SavedRef = ref } }

func originalChars(n int) callOpt {
	return func(c *schema.ToolCall) { c.Original.Chars = schema.KnownInt(n) }
}

func originalLines(n int) callOpt {
	return func(c *schema.ToolCall) { c.Original.Lines = schema.KnownInt(n) }
}

func contextLines(n int) callOpt {
	return func(c *schema.ToolCall) { c.Context.Lines = schema.KnownInt(n) }
}

// tail adds the kept tail [start, end) of a head+tail cut, in Shown's unit.
func tail(start, end int, isEnd bool) callOpt {
	return func(c *schema.ToolCall) {
		c.ShownTail = schema.Range{Start: schema.KnownInt(start), End: schema.KnownInt(end), Unit: c.Shown.Unit}
		c.ShownTailIsEnd = isEnd
	}
}

// atLeast marks the original sizes as a lower bound.
func atLeast() callOpt {
	return func(c *schema.ToolCall) { c.Original.Precision = schema.PrecisionLowerBound }
}

// unknownKind marks a call whose completeness nothing shows.
func unknownKind(strategy schema.Strategy) callOpt {
	return func(c *schema.ToolCall) { c.Kind, c.Strategy = schema.KindUnknown, strategy }
}

// failed marks a call the tool reported failed.
func failed() callOpt { return func(c *schema.ToolCall) { c.IsError = true } }

// refetched marks a continuation that fetched its source again.
func refetched() callOpt { return func(c *schema.ToolCall) { c.RefetchedSource = true } }

func understated() callOpt { return func(c *schema.ToolCall) { c.MarkerUnderstated = true } }

func agent(id string) callOpt { return func(c *schema.ToolCall) { c.AgentID, c.Sidechain = id, true } }

func turn(n int) callOpt { return func(c *schema.ToolCall) { c.Turn = schema.KnownTurn(n) } }

func answer(id string, sec int, text string, inputs ...string) schema.Answer {
	return schema.Answer{SessionID: "s1", MessageID: id, Timestamp: at(sec), Text: text, InputCallIDs: inputs}
}

func ratio(seen, total float64) schema.Ratio { return schema.KnownRatio(seen / total) }

var one = schema.KnownRatio(1)
