package agenttranscriptsreceiver // import "github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver"

import (
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ctxaudit/ctxaudit/collector/otelconv"
	"github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver/internal/metadata"
	"github.com/ctxaudit/ctxaudit/collector/session"
	"github.com/ctxaudit/ctxaudit/schema"
)

// maxBatchSpans bounds one batch: a poll stops reading when it is reached,
// sends what it has and goes on with the next batch once that one is
// accepted. It keeps a first scan of a large history from building one
// huge request and bounds what a refused batch holds while it is retried.
const maxBatchSpans = 4096

// batch is what one ConsumeTraces call carries: records, not pdata, so a
// refused batch is rebuilt and sent again unchanged.
type batch struct {
	spans    int
	order    []string
	sessions map[string]*sessionSpans
	// analyzed are the files whose session analysis this batch carries,
	// with the line each was analysed up to; it is committed with the batch.
	analyzed map[*trackedFile]int64
	// open is, for the same files, the answer the analysis returned for
	// each file's last message (trackedFile.openAnswer), or nil.
	open map[*trackedFile]*schema.Answer
	// spawnedBy is, for the same files, the spawning call their sub-agent
	// metadata named to the analysis (trackedFile.analyzedSpawnedBy).
	spawnedBy map[*trackedFile]string
}

type sessionSpans struct {
	source     schema.Harness
	meta       *schema.Session
	notAnswers []string
	calls      []schema.ToolCall
	answers    []schema.Answer
}

func newBatch() *batch {
	return &batch{sessions: map[string]*sessionSpans{}, analyzed: map[*trackedFile]int64{}, open: map[*trackedFile]*schema.Answer{},
		spawnedBy: map[*trackedFile]string{}}
}

func (b *batch) full() bool { return b.spans >= maxBatchSpans }

func (b *batch) session(id string, source schema.Harness) *sessionSpans {
	ss, ok := b.sessions[id]
	if !ok {
		ss = &sessionSpans{source: source}
		b.sessions[id] = ss
		b.order = append(b.order, id)
	}
	if ss.source == "" {
		ss.source = source
	}
	return ss
}

func (b *batch) addCall(c schema.ToolCall) {
	ss := b.session(c.SessionID, c.Source)
	ss.calls = append(ss.calls, c)
	b.spans++
}

func (b *batch) addAnalysis(id string, r session.Result, withSession bool) {
	ss := b.session(id, r.Meta.Source)
	if withSession {
		m := r.Meta
		ss.meta = &m
		b.spans++
	}
	ss.notAnswers = append(ss.notAnswers, r.NotAnswers...)
	ss.calls = append(ss.calls, r.Calls...)
	ss.answers = append(ss.answers, r.Answers...)
	b.spans += len(r.Calls) + len(r.Answers)
}

// traces builds the request: one resource per session, naming the receiver
// as the service (the harness is ctxaudit.source on each span), spans under
// the receiver's scope.
func (b *batch) traces(version string) ptrace.Traces {
	td := ptrace.NewTraces()
	for _, id := range b.order {
		ss := b.sessions[id]
		if ss.meta == nil && len(ss.calls) == 0 && len(ss.answers) == 0 {
			continue
		}
		rs := td.ResourceSpans().AppendEmpty()
		otelconv.PutEmitterResource(rs.Resource().Attributes(), otelconv.ServiceTranscriptReceiver, version)
		scope := rs.ScopeSpans().AppendEmpty()
		scope.Scope().SetName(metadata.ScopeName)
		scope.Scope().SetVersion(version)
		spans := scope.Spans()
		spans.EnsureCapacity(len(ss.calls) + len(ss.answers) + 1)
		// The receiver analyses its sessions itself, calls as read included.
		otelconv.AppendAnalysedSession(spans, ss.meta, ss.notAnswers, ss.calls, ss.answers)
	}
	return td
}
