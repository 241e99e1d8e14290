package ctxauditprocessor

import (
	"container/list"
	"context"
	"encoding/json"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.uber.org/zap"

	"github.com/ctxaudit/ctxaudit/collector/otelconv"
	"github.com/ctxaudit/ctxaudit/collector/redact"
	"github.com/ctxaudit/ctxaudit/collector/session"
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

	mu       sync.Mutex
	sessions map[string]*list.Element // of *sessionBuffer, most recent at the front
	lru      *list.List
	// dropped are sessions whose buffer was dropped (evicted or restarted
	// past max_calls_per_session): a buffer started again for one of them
	// does not hold the session from its start, and says so.
	dropped *recentSet

	stop chan struct{}
	done chan struct{}
}

// sessionBuffer is one session as seen so far: its records, held and
// analysed by collector/session, and the metadata its spans carry.
type sessionBuffer struct {
	id     string
	source schema.Harness
	b      *session.Builder
	// meta is what the spans say of the session: its time span, and the
	// model and place of its first call.
	meta      schema.Session
	firstCall *schema.ToolCall
	lastSeen  time.Time
	dirty     bool
}

func newSessionBuffer(id string, source schema.Harness, partial bool) *sessionBuffer {
	b := session.New(id)
	// Partial: an earlier buffer of the same session was dropped, so this
	// one lacks the session's first records.
	b.Partial = partial
	return &sessionBuffer{id: id, source: source, b: b, meta: schema.Session{SessionID: id, Source: source}}
}

// span widens the session's time span to t.
func (b *sessionBuffer) span(t time.Time) {
	if b.meta.StartedAt.IsZero() || t.Before(b.meta.StartedAt) {
		b.meta.StartedAt = t
	}
	if t.After(b.meta.EndedAt) {
		b.meta.EndedAt = t
	}
}

func (b *sessionBuffer) addCall(c schema.ToolCall) {
	b.b.AddCall(c, "", false)
	b.span(c.Timestamp)
	if f := b.firstCall; f == nil || c.Timestamp.Before(f.Timestamp) || (c.Timestamp.Equal(f.Timestamp) && c.CallID < f.CallID) {
		b.firstCall = &c
		b.meta.Model, b.meta.HarnessVersion = c.Model, c.HarnessVersion
		b.meta.Project, b.meta.Cwd, b.meta.GitBranch = c.Project, c.Cwd, c.GitBranch
	}
	if b.source == "" {
		b.source = c.Source
		b.meta.Source = c.Source
	}
}

func (b *sessionBuffer) addAnswer(a schema.Answer) {
	if a.Source == "" {
		a.Source = b.source
	}
	b.b.AddAnswer(a)
	b.span(a.Timestamp)
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
		version:  set.BuildInfo.Version,
		sessions: map[string]*list.Element{}, lru: list.New(),
		dropped: newRecentSet(max(8*cfg.MaxSessions, 1024)),
	}, nil
}

func (p *tracesProcessor) start(context.Context, component.Host) error {
	if !p.cfg.AnalyzeSessions {
		return nil
	}
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	go p.loop()
	return nil
}

// shutdown analyses what is still buffered, so a stopping collector does not
// lose the verdicts of sessions that had not gone idle yet.
func (p *tracesProcessor) shutdown(ctx context.Context) error {
	if p.stop == nil {
		return nil
	}
	close(p.stop)
	<-p.done
	p.stop = nil
	return p.flush(ctx, func(*sessionBuffer) bool { return true })
}

func (p *tracesProcessor) loop() {
	defer close(p.done)
	tick := max(p.cfg.SessionIdle/4, 10*time.Millisecond)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			cutoff := p.now().Add(-p.cfg.SessionIdle)
			if err := p.flush(context.Background(), func(b *sessionBuffer) bool { return b.lastSeen.Before(cutoff) }); err != nil {
				p.logger.Warn("emitting analysed session failed; will retry", zap.Error(err))
			}
		}
	}
}

func (p *tracesProcessor) processTraces(ctx context.Context, td ptrace.Traces) (ptrace.Traces, error) {
	var evicted []*sessionBuffer
	otelconv.EachSpan(td, func(res pcommon.Map, _ string, sp ptrace.Span) {
		attrs := sp.Attributes()
		track := p.cfg.AnalyzeSessions && !otelconv.AnalysedUpstream(attrs)
		switch otelconv.Operation(attrs) {
		case otelconv.OperationExecuteTool:
			if !otelconv.HasForensics(attrs) {
				f := detectInto(attrs, schema.Harness(p.cfg.DefaultSource))
				p.tel.recordCall(ctx, f.Kind)
			}
			if track {
				c := otelconv.ToolCallFromAttributes(attrs, res, sp.StartTimestamp().AsTime())
				if c.CallID == "" {
					c.CallID = sp.SpanID().String()
				}
				evicted = append(evicted, p.addCall(c)...)
			}
		case otelconv.OperationChat:
			if track {
				if a, ok := answerFromChatSpan(sp); ok {
					evicted = append(evicted, p.addAnswer(a)...)
				}
			}
		}
	})
	if len(evicted) > 0 {
		if err := p.emit(ctx, evicted); err != nil {
			p.logger.Warn("emitting evicted sessions failed", zap.Error(err))
		}
	}
	p.redactSecrets(ctx, td)
	return td, nil
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

// buffer returns the session's buffer, creating it (and evicting the least
// recently active session when full). Called with p.mu held.
func (p *tracesProcessor) buffer(id string, source schema.Harness) (*sessionBuffer, []*sessionBuffer) {
	if el, ok := p.sessions[id]; ok {
		p.lru.MoveToFront(el)
		return el.Value.(*sessionBuffer), nil
	}
	var evicted []*sessionBuffer
	for p.lru.Len() >= p.cfg.MaxSessions {
		el := p.lru.Back()
		b := el.Value.(*sessionBuffer)
		p.lru.Remove(el)
		delete(p.sessions, b.id)
		p.tel.sessionsHeld.Add(context.Background(), -1)
		p.tel.sessionsEvicted.Add(context.Background(), 1)
		p.dropped.add(b.id)
		if b.dirty {
			evicted = append(evicted, b)
		}
	}
	b := newSessionBuffer(id, source, p.dropped.has(id))
	p.sessions[id] = p.lru.PushFront(b)
	p.tel.sessionsHeld.Add(context.Background(), 1)
	return b, evicted
}

func (p *tracesProcessor) addCall(c schema.ToolCall) []*sessionBuffer {
	if c.SessionID == "" {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	b, evicted := p.buffer(c.SessionID, c.Source)
	if !b.b.HasCall(c.CallID) && b.b.Calls() >= p.cfg.MaxCallsPerSession {
		// Analyse what we have and start the session's buffer again: bounded
		// memory wins over whole-session analysis for runaway sessions.
		el := p.sessions[c.SessionID]
		p.lru.Remove(el)
		delete(p.sessions, c.SessionID)
		p.tel.sessionsHeld.Add(context.Background(), -1)
		p.tel.sessionsEvicted.Add(context.Background(), 1)
		p.dropped.add(c.SessionID)
		evicted = append(evicted, b)
		var more []*sessionBuffer
		b, more = p.buffer(c.SessionID, c.Source)
		evicted = append(evicted, more...)
	}
	b.addCall(c)
	b.lastSeen, b.dirty = p.now(), true
	return evicted
}

func (p *tracesProcessor) addAnswer(a schema.Answer) []*sessionBuffer {
	p.mu.Lock()
	defer p.mu.Unlock()
	b, evicted := p.buffer(a.SessionID, a.Source)
	b.addAnswer(a)
	b.lastSeen, b.dirty = p.now(), true
	return evicted
}

// flush analyses and emits every dirty session that pick selects.
func (p *tracesProcessor) flush(ctx context.Context, pick func(*sessionBuffer) bool) error {
	p.mu.Lock()
	var ready []*sessionBuffer
	for el := p.lru.Front(); el != nil; el = el.Next() {
		b := el.Value.(*sessionBuffer)
		if b.dirty && pick(b) {
			ready = append(ready, b)
			b.dirty = false
		}
	}
	p.mu.Unlock()
	if len(ready) == 0 {
		return nil
	}
	if err := p.emit(ctx, ready); err != nil {
		p.mu.Lock()
		for _, b := range ready {
			b.dirty = true // try again on the next tick
		}
		p.mu.Unlock()
		return err
	}
	return nil
}

// emit analyses sessions and sends their verdicts downstream as spans: the
// calls whose follow-through changed, the answers (with risk) and the session.
func (p *tracesProcessor) emit(ctx context.Context, bufs []*sessionBuffer) error {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	otelconv.PutEmitterResource(rs.Resource().Attributes(), otelconv.ServiceProcessor, p.version)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(ScopeName)
	spans := ss.Spans()
	for _, b := range bufs {
		p.mu.Lock()
		res := b.b.Analyze(b.meta)
		p.mu.Unlock()
		p.tel.sessionsAnalysed.Add(ctx, 1)
		otelconv.AppendSession(spans, &res.Meta)
		for i := range res.Calls {
			otelconv.AppendToolCall(spans, &res.Calls[i])
		}
		for i := range res.Answers {
			otelconv.AppendAnswer(spans, &res.Answers[i])
		}
	}
	otelconv.MarkAnalysedUpstream(spans)
	p.redactSecrets(ctx, td)
	return p.next.ConsumeTraces(ctx, td)
}

// recentSet remembers up to n ids, forgetting the oldest first.
type recentSet struct {
	n     int
	ids   map[string]struct{}
	order []string
}

func newRecentSet(n int) *recentSet { return &recentSet{n: n, ids: map[string]struct{}{}} }

func (r *recentSet) has(id string) bool { _, ok := r.ids[id]; return ok }

func (r *recentSet) add(id string) {
	if r.has(id) {
		return
	}
	if len(r.order) >= r.n {
		delete(r.ids, r.order[0])
		r.order = r.order[1:]
	}
	r.ids[id] = struct{}{}
	r.order = append(r.order, id)
}
