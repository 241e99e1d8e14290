package ctxauditclickhouseexporter

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/featuregate"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/ctxaudit/ctxaudit/collector/analysis"
	"github.com/ctxaudit/ctxaudit/collector/otelconv"
	"github.com/ctxaudit/ctxaudit/collector/session"
	"github.com/ctxaudit/ctxaudit/exporters/ctxauditclickhouseexporter/internal/metadata"
	"github.com/ctxaudit/ctxaudit/schema"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

// chExporter holds one exporter instance's connection. The store is opened
// lazily: a collector that starts while ClickHouse is down keeps accepting
// data (queued and retried by exporterhelper) instead of failing to start.
type chExporter struct {
	cfg    *Config
	logger *zap.Logger
	// id and rollups: the instances of one component id share one rollup
	// refresher (see rollupLeaders).
	id      component.ID
	rollups *rollupLeaders

	mu    sync.Mutex
	store *chstore.Store

	rowsWritten metric.Int64Counter
	dropped     metric.Int64Counter
	// calls recycles the call slices of pushTraces (takeCalls).
	calls sync.Pool

	// stopRollups ends the rollup refresher; rollupsDone is closed when it
	// has.
	stopRollups context.CancelFunc
	rollupsDone chan struct{}
}

func newExporter(cfg *Config, set exporter.Settings, rollups *rollupLeaders) (*chExporter, error) {
	if err := checkFeatureGates(featuregate.GlobalRegistry()); err != nil {
		return nil, err
	}
	tel, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	return &chExporter{cfg: cfg, logger: set.Logger, id: set.ID, rollups: rollups,
		rowsWritten: tel.CtxauditExporterRowsWritten, dropped: tel.CtxauditExporterRecordsDropped}, nil
}

func (e *chExporter) start(ctx context.Context, _ component.Host) error {
	if _, err := e.connect(ctx); err != nil {
		// Not fatal: ClickHouse may come up later; pushes retry until it does.
		e.logger.Warn("ClickHouse not reachable at start; will retry on the first write", zap.Error(err))
	}
	if e.cfg.RollupInterval > 0 {
		e.rollups.join(e)
	}
	return nil
}

// startRollups starts this instance's rollup refresher (it leads).
func (e *chExporter) startRollups() {
	rctx, cancel := context.WithCancel(context.Background())
	e.stopRollups, e.rollupsDone = cancel, make(chan struct{})
	go e.refreshRollups(rctx, e.cfg.RollupInterval)
}

// stopRollupRefresher ends this instance's refresher, if it runs one, and
// waits for it.
func (e *chExporter) stopRollupRefresher() {
	if e.stopRollups != nil {
		e.stopRollups()
		<-e.rollupsDone
		e.stopRollups = nil
	}
}

// refreshRollups keeps the dashboards' rollups current: every interval it
// snapshots the days written since their last snapshot. A failure costs only
// speed (panels read a stale day from tool_calls), so it is logged and tried
// again at the next tick.
func (e *chExporter) refreshRollups(ctx context.Context, interval time.Duration) {
	defer close(e.rollupsDone)
	t := time.NewTicker(interval)
	defer t.Stop()
	// The first refresh right away: it is also the backfill of a database
	// that just got the rollups, in the background rather than at start.
	for first := true; ; first = false {
		if !first {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
		e.mu.Lock()
		s := e.store
		e.mu.Unlock()
		if s == nil {
			continue // not connected yet; the next write connects
		}
		days, err := s.RefreshRollups(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			e.logger.Warn("refreshing the dashboard rollups failed; will retry", zap.Error(err))
		case len(days) > 0:
			e.logger.Debug("refreshed the dashboard rollups", zap.Int("days", len(days)))
		}
	}
}

func (e *chExporter) shutdown(context.Context) error {
	e.rollups.leave(e)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.store == nil {
		return nil
	}
	err := e.store.Close()
	e.store = nil
	return err
}

// connect returns the open store, opening (and migrating) it if needed.
func (e *chExporter) connect(ctx context.Context) (*chstore.Store, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.store != nil {
		return e.store, nil
	}
	red, err := e.cfg.Redact.Redactor()
	if err != nil {
		return nil, err
	}
	s, err := chstore.Open(ctx, e.cfg.Endpoint, chstore.Options{Database: e.cfg.Database, DialTimeout: e.cfg.DialTimeout, Redactor: red})
	if err != nil {
		return nil, err
	}
	if e.cfg.CreateSchema {
		_, err = s.Migrate(ctx)
	} else {
		err = s.CheckSchema(ctx)
	}
	if err != nil {
		_ = s.Close()
		return nil, err
	}
	e.store = s
	e.logger.Info("connected to ClickHouse", zap.String("addr", s.Addr()), zap.String("database", s.Database()))
	return s, nil
}

func (e *chExporter) pushTraces(ctx context.Context, td ptrace.Traces) error {
	r := otelconv.Rows{Calls: e.takeCalls(td.SpanCount())}
	r.AddTraces(td)
	err := e.write(ctx, &r)
	e.releaseCalls(r.Calls)
	return err
}

// takeCalls is an empty slice with room for n calls. Most spans of a batch
// are calls: room for all of them at once spares the slice of ~800-byte
// records its regrowth and copies, and reusing it (an emission's 6,000
// calls are 5 MB) spares the allocation, about 3 % of the collector's
// under the benchmark's load. Nothing refers to the rows once they are
// written (write) or refused.
func (e *chExporter) takeCalls(n int) []schema.ToolCall {
	if calls, ok := e.calls.Get().(*[]schema.ToolCall); ok && cap(*calls) >= n {
		return (*calls)[:0]
	}
	return make([]schema.ToolCall, 0, n)
}

// releaseCalls gives calls back to the pool, emptied: no string of a
// written row stays reachable from the pool.
func (e *chExporter) releaseCalls(calls []schema.ToolCall) {
	clear(calls)
	calls = calls[:0]
	e.calls.Put(&calls)
}

func (e *chExporter) pushLogs(ctx context.Context, ld plog.Logs) error {
	var r otelconv.Rows
	otelconv.EachLogRecord(ld, func(res pcommon.Map, lr plog.LogRecord) {
		if !otelconv.IsToolResultLog(lr) {
			return
		}
		t := lr.Timestamp().AsTime()
		if lr.Timestamp() == 0 {
			t = lr.ObservedTimestamp().AsTime()
		}
		c := otelconv.ToolCallFromAttributes(lr.Attributes(), res, t)
		if c.Source == "" {
			c.Source = schema.HarnessClaudeCode
		}
		if otelconv.IsClaudeCodeToolResult(lr) {
			// The verdict the processor gives such an event (sizes only, no
			// text): the same row with or without it.
			if f, ok := otelconv.ClaudeCodeEventForensics(lr.Attributes()); ok {
				c.Forensics = f
			}
		}
		if c.CallID == "" {
			c.CallID = LogCallID(lr, res)
		}
		r.AddCall(c)
	})
	return e.write(ctx, &r)
}

// LogCallID derives a stable id for a tool-result log record that names no
// call id: the same record always gets the same id, so a replay dedupes.
func LogCallID(lr plog.LogRecord, res pcommon.Map) string {
	h := sha256.New()
	attrs := lr.Attributes()
	for _, k := range []string{otelconv.ClaudeCodeSessionID, otelconv.AttrConversationID, "event.sequence", "prompt.id", otelconv.ClaudeCodeToolName, "event.timestamp"} {
		v, ok := attrs.Get(k)
		if !ok {
			v, ok = res.Get(k)
		}
		if ok {
			h.Write([]byte(k + "=" + v.AsString() + "\x00"))
		}
	}
	h.Write([]byte(strconv.FormatUint(uint64(lr.Timestamp()), 10)))
	return "log-" + hex.EncodeToString(h.Sum(nil)[:12])
}

func (e *chExporter) write(ctx context.Context, r *otelconv.Rows) error {
	if r.Dropped > 0 {
		e.dropped.Add(ctx, int64(r.Dropped))
		e.logger.Debug("records without session or call id were not stored", zap.Int("count", r.Dropped))
	}
	if len(r.Sessions)+len(r.Calls)+len(r.Answers) == 0 {
		return nil
	}
	s, err := e.connect(ctx)
	if err != nil {
		return permanentIfHopeless(fmt.Errorf("ctxaudit_clickhouse: %w", err))
	}
	if err := e.takeBack(ctx, s, r); err != nil {
		return permanentIfHopeless(fmt.Errorf("ctxaudit_clickhouse: %w", err))
	}
	// Sessions first, answers last: a partly written push that is retried
	// rewrites the same ids, which the tables collapse.
	steps := []struct {
		table string
		n     int
		write func() error
	}{
		{"sessions", len(r.Sessions), func() error { return s.WriteSessions(ctx, r.Sessions) }},
		{"tool_calls", len(r.Calls), func() error { return s.WriteToolCalls(ctx, r.Calls) }},
		{"answers", len(r.Answers), func() error { return s.WriteAnswers(ctx, r.Answers) }},
	}
	for _, st := range steps {
		if st.n == 0 {
			continue
		}
		written := st.n
		if err := st.write(); err != nil {
			var rejected *chstore.RejectedRowsError
			switch {
			case errors.As(err, &rejected):
				// The rest of the push is written; retrying would not make
				// these rows writable.
				written -= rejected.Rows
				e.dropped.Add(ctx, int64(rejected.Rows))
				e.logger.Warn("records with a value their table cannot hold were not stored", zap.Error(err))
			case errors.Is(err, context.Canceled):
				return err
			default:
				return permanentIfHopeless(fmt.Errorf("ctxaudit_clickhouse: %w", err))
			}
		}
		e.rowsWritten.Add(ctx, int64(written), metric.WithAttributes(attribute.String("table", st.table)))
	}
	n, err := recountPartial(ctx, s, r.Sessions)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return err
		}
		return permanentIfHopeless(fmt.Errorf("ctxaudit_clickhouse: %w", err))
	}
	if n > 0 {
		e.rowsWritten.Add(ctx, int64(n), metric.WithAttributes(attribute.String("table", "sessions")))
	}
	return nil
}

// recountPartial writes, for each of the sessions written that has records
// from a partial buffer — a processor dropped the session's buffer before
// its end and held what came after in a new one, whose row ranks below the
// first buffer's (docs/design.md §10.3) — the session's latest row
// recounted from every record now stored (analysis.Recount, by which
// `ctxaudit sessions` and `postmortem` recount). The recount ranks above
// the row it recounts, so every reader of the sessions table, the
// dashboards included, counts the whole session. It runs whichever of the
// two buffers' rows is written last, so it does not depend on the order in
// which their pushes land; a push it fails for is retried whole. It
// returns how many rows it wrote.
func recountPartial(ctx context.Context, s *chstore.Store, written []schema.Session) (int, error) {
	if len(written) == 0 {
		return 0, nil
	}
	ids := make([]string, 0, len(written))
	for i := range written {
		ids = append(ids, written[i].SessionID)
	}
	slices.Sort(ids)
	// A partial buffer's records lie after the start of either buffer's row.
	partial, err := s.PartialSessions(ctx, slices.Compact(ids), schema.EarliestStart(written))
	if err != nil || len(partial) == 0 {
		return 0, err
	}
	rows, err := s.SessionRows(ctx, partial)
	if err != nil || len(rows) == 0 {
		return 0, err
	}
	// A session's records lie at or after its latest row's start: the first
	// buffer's, which outranks a partial one.
	records, err := s.CountedRecords(ctx, partial, schema.EarliestStart(rows))
	if err != nil {
		return 0, fmt.Errorf("recount sessions: %w", err)
	}
	var recounted []schema.Session
	for _, row := range rows {
		r := records[row.SessionID]
		if sess, ok := analysis.Recount(row, r.Calls, r.Answers); ok {
			recounted = append(recounted, sess)
		}
	}
	if len(recounted) == 0 {
		return 0, nil
	}
	if err := s.WriteSessions(ctx, recounted); err != nil {
		return 0, fmt.Errorf("write recounted sessions: %w", err)
	}
	return len(recounted), nil
}

// takeBack adds to r's answers the retraction of every answer the store
// holds for a message r's sessions learned not to be one
// (otelconv.AttrSessionNotAnswers): one an earlier process that did not
// know, or `ctxaudit ingest` of the file while it was being written, stored
// (docs/design.md §5.1). One look-up for the whole push; none when no
// session of it learned any.
func (e *chExporter) takeBack(ctx context.Context, s *chstore.Store, r *otelconv.Rows) error {
	if len(r.NotAnswers) == 0 {
		return nil
	}
	standing, err := s.StandingAnswers(ctx, session.Lookup(r.NotAnswers))
	if err != nil {
		return fmt.Errorf("look up answers stored for messages that proved not to be answers: %w", err)
	}
	if len(standing) == 0 {
		return nil
	}
	r.Answers = append(r.Answers, session.Retractions(r.NotAnswers, standing)...)
	messages := make([]string, len(standing))
	for i := range standing {
		messages[i] = standing[i].SessionID + "/" + standing[i].MessageID
	}
	e.logger.Warn("Answers stored earlier were not answers: their messages went on to call a tool; taking them back",
		zap.Strings("messages", messages))
	return nil
}

// rollupLeaders gives the running exporter instances of one component id a
// single rollup refresher. A collector builds one instance per pipeline
// signal — the example's traces and logs pipelines make two of
// ctxaudit_clickhouse, with one configuration — and each refresher would
// snapshot the same stale days again. The first instance to start leads and
// runs the refresher on its connection; when it shuts down, the next one
// still running takes over.
type rollupLeaders struct {
	mu      sync.Mutex
	running map[component.ID][]*chExporter // in start order; the first leads
}

func newRollupLeaders() *rollupLeaders {
	return &rollupLeaders{running: map[component.ID][]*chExporter{}}
}

func (l *rollupLeaders) join(e *chExporter) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.running[e.id] = append(l.running[e.id], e)
	if len(l.running[e.id]) == 1 {
		e.startRollups()
	}
}

// leave takes e out; if it led, its refresher stops and the next instance
// of its id, if any, starts its own. Nothing happens for an e that never
// joined (rollup_interval 0, or shut down without a start).
func (l *rollupLeaders) leave(e *chExporter) {
	l.mu.Lock()
	defer l.mu.Unlock()
	rs := l.running[e.id]
	i := slices.Index(rs, e)
	if i < 0 {
		return
	}
	l.running[e.id] = slices.Delete(rs, i, i+1)
	if i > 0 {
		return
	}
	e.stopRollupRefresher()
	if next := l.running[e.id]; len(next) > 0 {
		next[0].startRollups()
	} else {
		delete(l.running, e.id)
	}
}
