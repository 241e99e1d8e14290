package ctxauditprocessor

import (
	"container/list"
	"context"
	"encoding/json"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"
	"go.uber.org/zap"

	"github.com/ctxaudit/ctxaudit/collector/otelconv"
	"github.com/ctxaudit/ctxaudit/collector/redact"
	"github.com/ctxaudit/ctxaudit/schema"
)

// ScopeName is the instrumentation scope of the spans this processor emits
// after analysing a session.
const ScopeName = otelconv.ScopeProcessor

type tracesProcessor struct {
	cfg    *Config
	logger *zap.Logger
	next   consumer.Traces
	tel    *telemetry
	now    func() time.Time
	secret *redact.Redactor
	// version is the collector build's, for the resource of emitted spans.
	version string

	// id is the processor's component id, which names its storage.
	id component.ID
	// store keeps the held sessions across restarts (nil: memory only);
	// persistMu orders its writes (taken before mu).
	store     *heldStore
	persistMu sync.Mutex
	// encoders are valueEncoders for persist, one per request at a time;
	// addeds are the requests' records (takeAdded).
	encoders sync.Pool
	addeds   sync.Pool

	mu       sync.Mutex
	sessions map[string]*list.Element // of *sessionBuffer, most recent at the front
	lru      *list.List
	// retry are buffers dropped from the held set, not emitted yet;
	// waiting counts their calls, those of an emission under way included
	// (see awaitWritten), and written is closed, and replaced, whenever
	// some of them are written.
	retry   []*sessionBuffer
	waiting int
	written chan struct{}
	// dropped are sessions whose buffer was dropped (evicted or restarted
	// past max_calls_per_session): a buffer started again for one of them
	// does not hold the session from its start, and says so.
	dropped *recentSet
	// parked are the dropped sessions (past max_sessions) whose records
	// stay in storage, to be read back if they go on (see park).
	parked *parkedSet
	// resuming are the parked sessions being read back from storage, each
	// closed when its buffer is held again (resume); readParked reads one
	// (heldStore.read). Tests replace readParked, and set onResumeWait to
	// learn that a request waits for another's read.
	resuming     map[string]chan struct{}
	readParked   func(*heldStore, context.Context, parkedBuffer) (*loadedBuffer, error)
	onResumeWait func()
	// seq numbers buffers and stored increments; pendingOps are storage
	// writes for the next batch (the dropped set).
	seq        uint64
	pendingOps []*storage.Operation

	stop       chan struct{}
	done       chan struct{}
	cancelLoop context.CancelFunc
	// wake asks the loop to emit the dropped buffers now (see evict), those
	// too few to fill an emission after dropWait (see emitDropped).
	wake     chan struct{}
	dropWait time.Duration
}

func newTracesProcessor(set processor.Settings, cfg *Config, next consumer.Traces) (*tracesProcessor, error) {
	tel, err := newTelemetry(set)
	if err != nil {
		return nil, err
	}
	secret, err := cfg.Redact.Redactor()
	if err != nil {
		return nil, err
	}
	return &tracesProcessor{
		cfg: cfg, logger: set.Logger, next: next, tel: tel, now: time.Now, secret: secret,
		version: set.BuildInfo.Version, id: set.ID,
		sessions: map[string]*list.Element{}, lru: list.New(),
		dropped:    newRecentSet(max(8*cfg.MaxSessions, 1024)),
		parked:     newParkedSet(),
		resuming:   map[string]chan struct{}{},
		readParked: (*heldStore).read,
		wake:       make(chan struct{}, 1),
		written:    make(chan struct{}),
		dropWait:   defaultDropWait,
		encoders:   sync.Pool{New: func() any { return new(valueEncoder) }},
	}, nil
}

func (p *tracesProcessor) processTraces(ctx context.Context, td ptrace.Traces) (ptrace.Traces, error) {
	if err := p.awaitWritten(ctx); err != nil {
		// Nothing of the request is held: the client sends it again.
		return td, err
	}
	var evicted []*sessionBuffer
	var calls callTally
	add := p.takeAdded(td.SpanCount())
	// A held call or answer leaves the processor once, with its session's
	// analysis; its span goes no further now unless forward_held_spans asks
	// for it.
	// Not forwarding it also keeps its output text out of the exporter's
	// (persistent) queue, which would carry it only to discard it.
	removeHeld := !p.cfg.ForwardHeldSpans
	removed := false
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		res := rs.Resource().Attributes()
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			sss.At(j).Spans().RemoveIf(func(sp ptrace.Span) bool {
				held, ev := p.processSpan(ctx, res, sp, add, &calls)
				evicted = append(evicted, ev...)
				removed = removed || (held && removeHeld)
				return held && removeHeld
			})
		}
	}
	if removed {
		rss.RemoveIf(func(rs ptrace.ResourceSpans) bool {
			rs.ScopeSpans().RemoveIf(func(ss ptrace.ScopeSpans) bool { return ss.Spans().Len() == 0 })
			return rs.ScopeSpans().Len() == 0
		})
	}
	// The dropped buffers go to the loop only once this request's records
	// are written: a buffer dropped mid-request (max_calls_per_session)
	// holds some of them, and its emission must delete their keys too.
	p.tel.recordCalls(ctx, calls)
	err := p.persist(ctx, add)
	p.releaseAdded(add)
	p.evict(evicted)
	if err != nil {
		// Not acknowledged: the client sends the request again.
		return td, err
	}
	if removed && rss.Len() == 0 {
		// Everything is held: the request is answered once it is in storage.
		return td, processorhelper.ErrSkipProcessingData
	}
	p.redactSecrets(ctx, td)
	return td, nil
}

// processSpan runs forensics on an execute_tool span and holds the calls
// and answers it tracks for session analysis, recording them in add. It
// reports whether it holds what the span carries (the call's row, or the
// answer with its risk, comes with the session's analysis) and the buffers
// dropped to make room.
func (p *tracesProcessor) processSpan(ctx context.Context, res pcommon.Map, sp ptrace.Span, add *added, calls *callTally) (bool, []*sessionBuffer) {
	attrs := sp.Attributes()
	track := p.cfg.AnalyzeSessions && !otelconv.AnalysedUpstream(attrs)
	switch otelconv.Operation(attrs) {
	case otelconv.OperationExecuteTool:
		t := sp.StartTimestamp().AsTime()
		// A status of Error is a failed call, for detection and the record
		// alike, as the exporter reads a span it is given (otelconv.Rows).
		failed := otelconv.SpanFailed(sp)
		var c schema.ToolCall
		// verdict is detection's, when it ran: written on the span only if
		// the span goes on.
		var verdict *schema.Forensics
		var harness schema.Harness
		if otelconv.HasForensics(attrs) {
			if !track {
				return false, nil
			}
			c = otelconv.ToolCallFromAttributes(attrs, res, t)
		} else {
			var f schema.Forensics
			f, harness = detect(attrs, schema.Harness(p.cfg.DefaultSource), failed)
			calls.add(f.Kind)
			verdict = &f
			if !track {
				otelconv.PutVerdict(attrs, verdict, harness)
				return false, nil
			}
			// The record is built from the verdict, not read back from the
			// attributes, which a span that is held and not forwarded would
			// carry only to be dropped: the same record either way.
			c = otelconv.ToolCallWithVerdict(attrs, res, t, verdict, harness)
		}
		c.IsError = c.IsError || failed
		held, evicted := p.holdCall(ctx, &c, sp, add)
		goesOn := !held || p.cfg.ForwardHeldSpans
		if verdict != nil && goesOn {
			otelconv.PutVerdict(attrs, verdict, harness)
		}
		if held && goesOn {
			otelconv.MarkAnalysisPending(attrs)
		}
		return held, evicted
	case otelconv.OperationChat:
		if track {
			if a, ok := answerFromChatSpan(sp); ok {
				b, evicted := p.addAnswer(ctx, &a)
				add.answer(b, a)
				return true, evicted
			}
		}
	}
	return false, nil
}

// holdCall holds the call c of span sp for session analysis, recording it in
// add; it reports whether it did (a call without a session is not held) and
// the buffers dropped to make room.
func (p *tracesProcessor) holdCall(ctx context.Context, c *schema.ToolCall, sp ptrace.Span, add *added) (bool, []*sessionBuffer) {
	if c.SessionID == "" {
		return false, nil
	}
	rec := add.reserve()
	*rec = *c
	if rec.CallID == "" {
		rec.CallID = sp.SpanID().String()
	}
	b, enc, evicted := p.addCall(ctx, rec)
	if b == nil {
		return false, evicted
	}
	add.call(b, rec, enc)
	return true, evicted
}

// redactSecrets removes secrets from every string of td after forensics has
// measured the originals and the session buffer has taken its copy, so no
// secret reaches a downstream queue.
func (p *tracesProcessor) redactSecrets(ctx context.Context, td ptrace.Traces) {
	p.tel.recordRedactions(ctx, p.secret.Traces(td))
}

// answerFromChatSpan turns a model-call span that produced assistant text
// into an answer candidate: the text comes from ctxaudit.answer.text or the
// GenAI gen_ai.output.messages attribute.
func answerFromChatSpan(sp ptrace.Span) (schema.Answer, bool) {
	attrs := sp.Attributes()
	if _, ok := attrs.Get(otelconv.AttrAnswerRisk); ok {
		return schema.Answer{}, false // already analysed upstream
	}
	a := otelconv.AnswerFromAttributes(attrs, sp.EndTimestamp().AsTime())
	if a.Text == "" {
		if v, ok := attrs.Get(otelconv.AttrOutputMessages); ok {
			a.Text = assistantText(v)
		}
	}
	if a.MessageID == "" {
		a.MessageID = sp.SpanID().String()
	}
	return a, a.SessionID != "" && a.Text != ""
}

// assistantText extracts the text parts of gen_ai.output.messages, given as a
// JSON string or as a structured value.
func assistantText(v pcommon.Value) string {
	var raw []byte
	if v.Type() == pcommon.ValueTypeStr {
		raw = []byte(v.Str())
	} else {
		b, err := json.Marshal(v.AsRaw())
		if err != nil {
			return ""
		}
		raw = b
	}
	var msgs []struct {
		Role  string `json:"role"`
		Parts []struct {
			Type    string `json:"type"`
			Content any    `json:"content"`
		} `json:"parts"`
	}
	if json.Unmarshal(raw, &msgs) != nil {
		return ""
	}
	var out string
	for _, m := range msgs {
		if m.Role != "" && m.Role != "assistant" {
			continue
		}
		for _, part := range m.Parts {
			if s, ok := part.Content.(string); ok && part.Type == "text" {
				if out != "" {
					out += "\n"
				}
				out += s
			}
		}
	}
	return out
}
