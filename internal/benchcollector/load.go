package benchcollector

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"iter"
	"os"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/time/rate"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ctxaudit/ctxaudit/collector/otelconv"
)

// DefaultClients is how many clients the benchmark sends from: a few agents
// at once. With one, the SDK's single export in flight bounds the floor,
// not the collector.
const DefaultClients = 4

// LoadOptions configures one load-generator run.
type LoadOptions struct {
	Endpoint string // host:port of the collector's OTLP/gRPC receiver (loopback)
	Spans    int
	// Clients is how many SDK clients send at once, each with its own
	// connection and one export in flight (the SDK's batch processor).
	Clients int
	RunID   string
	Timeout time.Duration // bound on the whole run, flush included
	// Halves sends each client's conversations in two passes: the first
	// half of every one, then the second halves — sessions that go on
	// after many others came between, which a collector holding fewer
	// sessions than that has dropped (and, with storage, parked).
	Halves bool
	// Rate paces the load: spans per second over all clients together,
	// each client sending its share; 0 sends as fast as the collector takes
	// them (the SDK's blocking queue is then the only pace). A paced load
	// measures what the collector costs at a rate it keeps up with — what a
	// deployment sized for that rate spends — instead of at the limit of a
	// machine it shares with the generator and ClickHouse.
	Rate float64
}

// paceEvery is how many spans a paced client sends per wait on its
// limiter: one wait per 25 spans instead of a timer per span. The SDK's
// batch processor gathers them into exports of up to 512 spans either way.
const paceEvery = 25

// newPacer returns the limiter of one of clients clients that share
// spansPerSec, or nil for a load that is not paced. Its bucket holds
// paceEvery spans, so the first ones go at once and every later paceEvery
// wait paceEvery/(spansPerSec/clients) seconds.
func newPacer(spansPerSec float64, clients int) *rate.Limiter {
	if spansPerSec <= 0 {
		return nil
	}
	return rate.NewLimiter(rate.Limit(spansPerSec/float64(clients)), paceEvery)
}

// LoadResult is what the load generator prints as one JSON line. A span the
// generator sent ends in exactly one of accepted, refused or unanswered —
// or, when the run's time bound stopped it, was still in its SDK's queue,
// never offered to the collector (Sent minus the three).
type LoadResult struct {
	Sent     int64 `json:"sent"`     // spans the generator ended, handed to its SDK
	Accepted int64 `json:"accepted"` // spans in export calls the collector answered with OK
	// Refused: spans in export calls that failed after the exporter's
	// retries, the collector's last answer an error status (or the call
	// failing some other way, not through the run's own time bound).
	Refused int64 `json:"refused"`
	// RefusedRetryable: the refused spans whose last answer was a status an
	// OTLP client retries (retryableCode). Every refusal is judged, not only
	// the last one seen.
	RefusedRetryable int64 `json:"refused_retryable"`
	// Unanswered: spans in export calls without the collector's answer
	// when the run ended — still in flight when its time bound stopped it,
	// or cut short by it (a context error without a gRPC status).
	Unanswered int64   `json:"unanswered"`
	Seconds    float64 `json:"seconds"` // first span started to last export answered
	LastErr    string  `json:"last_error,omitempty"`
}

// loadCounts counts spans per outcome of each export call, over every
// client, so "accepted" means acknowledged by the collector, not merely sent.
// A call's spans are in flight from its start to its outcome; one lock over
// all the counts lets a snapshot see each span in exactly one of them, even
// while calls are still ending after the run stopped.
type loadCounts struct {
	mu                                                        sync.Mutex
	accepted, refused, refusedRetryable, unanswered, inFlight int64
	lastErr                                                   string
}

// exportOutcome is how an export call that returned err ended.
type exportOutcome int

const (
	exportAccepted exportOutcome = iota
	exportRefusedRetryable
	exportRefused
	exportUnanswered
)

// classifyExport tells an export call's outcome from the error the SDK's
// exporter returned. The exporter wraps the last gRPC status it got (after
// its retries) in its own errors — "traces export: exporter export
// timeout: rpc error: code = Unavailable ..." — and status.FromError finds
// it through the wrapping. An error with no status at all and a context
// error in it is the run's own time bound ending the call before the
// collector answered; anything else counts as a refusal that is not
// retryable, so the report never calls a failure retryable by accident.
func classifyExport(err error) exportOutcome {
	if err == nil {
		return exportAccepted
	}
	if st, ok := status.FromError(err); ok && st.Code() != codes.Unknown {
		if retryableCode(st.Code()) {
			return exportRefusedRetryable
		}
		return exportRefused
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return exportUnanswered
	}
	return exportRefused
}

// retryableCode: a status an OTLP client retries — UNAVAILABLE and
// RESOURCE_EXHAUSTED, the collector's refusals, and DEADLINE_EXCEEDED, the
// client's own export timeout running out while it waited or backed off
// (the OTLP specification counts it retryable: the data stays with the
// client).
func retryableCode(c codes.Code) bool {
	switch c {
	case codes.Unavailable, codes.ResourceExhausted, codes.DeadlineExceeded:
		return true
	}
	return false
}

// clientExporter is one client's exporter, counted in the run's totals.
type clientExporter struct {
	sdktrace.SpanExporter
	counts *loadCounts
}

func (e *clientExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	n := int64(len(spans))
	e.counts.start(n)
	err := e.SpanExporter.ExportSpans(ctx, spans)
	e.counts.end(n, err)
	return err
}

// start counts n spans of an export call as in flight.
func (c *loadCounts) start(n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.inFlight += n
}

// end moves the n spans of an export call that returned err from in flight
// to its outcome.
func (c *loadCounts) end(n int64, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.inFlight -= n
	switch classifyExport(err) {
	case exportAccepted:
		c.accepted += n
	case exportRefusedRetryable:
		c.refused += n
		c.refusedRetryable += n
	case exportRefused:
		c.refused += n
	case exportUnanswered:
		c.unanswered += n
	}
	if err != nil {
		c.lastErr = err.Error()
	}
}

// result is the counts as they stand, into a LoadResult: the spans still
// in flight count as unanswered.
func (c *loadCounts) result(sent int64, seconds float64) LoadResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	return LoadResult{
		Sent: sent, Accepted: c.accepted, Refused: c.refused, RefusedRetryable: c.refusedRetryable,
		Unanswered: c.unanswered + c.inFlight, Seconds: seconds, LastErr: c.lastErr,
	}
}

// RunLoad sends opts.Spans execute_tool spans with the OTel Go SDK over
// OTLP/gRPC, from opts.Clients tracer providers at once, each with its own
// exporter and connection: the agents of a team, each sending its own
// sessions. A conversation's spans all go through one client, in order. The
// batch span processor blocks instead of dropping when its queue is full, so
// a run that completes offers every span, and each is accepted or refused.
// A run stopped by opts.Timeout (the outage's time bound) leaves what its
// SDKs still queued unoffered, and an export call it cuts short unanswered
// (LoadResult).
func RunLoad(ctx context.Context, opts LoadOptions) (LoadResult, error) {
	if opts.Spans <= 0 {
		return LoadResult{}, errors.New("load: spans must be positive")
	}
	if opts.Clients <= 0 {
		opts.Clients = 1
	}
	if opts.Rate < 0 {
		return LoadResult{}, fmt.Errorf("load: rate %g spans/s is negative", opts.Rate)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	counting := &loadCounts{}
	clients := make([]*sdktrace.TracerProvider, opts.Clients)
	for k := range clients {
		exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(opts.Endpoint), otlptracegrpc.WithInsecure())
		if err != nil {
			for _, tp := range clients[:k] {
				_ = tp.Shutdown(ctx) // nothing was sent yet
			}
			return LoadResult{}, fmt.Errorf("load: otlp exporter for %s: %w", opts.Endpoint, err)
		}
		clients[k] = sdktrace.NewTracerProvider(
			sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "ctxaudit-benchload"))),
			sdktrace.WithSampler(sdktrace.AlwaysSample()),
			sdktrace.WithBatcher(&clientExporter{SpanExporter: exp, counts: counting},
				sdktrace.WithBlocking(),
				sdktrace.WithMaxQueueSize(8192),
				sdktrace.WithMaxExportBatchSize(512),
				sdktrace.WithBatchTimeout(200*time.Millisecond)),
		)
	}
	payload := NewPayload(opts.RunID)
	start := time.Now()
	var (
		sent atomic.Int64
		wg   sync.WaitGroup
	)
	shutdownErrs := make([]error, len(clients))
	for k, tp := range clients {
		wg.Go(func() {
			tracer := tp.Tracer("github.com/ctxaudit/ctxaudit/internal/benchcollector")
			pacer := newPacer(opts.Rate, len(clients))
			n := 0
			for i := range sendOrder(opts.Spans, len(clients), k, opts.Halves) {
				if pacer != nil && n%paceEvery == 0 {
					// An error is the run's time bound, which a wait
					// would outlast: stop as the unpaced load does.
					if pacer.WaitN(ctx, paceEvery) != nil {
						break
					}
				}
				if ctx.Err() != nil {
					break
				}
				sendCall(ctx, tracer, payload.Call(i))
				sent.Add(1)
				n++
			}
			shutdownErrs[k] = tp.Shutdown(ctx) // flushes what is queued, bounded by ctx
		})
	}
	wg.Wait()
	out := counting.result(sent.Load(), time.Since(start).Seconds())
	if err := errors.Join(shutdownErrs...); err != nil && out.LastErr == "" {
		out.LastErr = err.Error()
	}
	if ctx.Err() != nil {
		return out, fmt.Errorf("load: stopped after %s: %w", opts.Timeout, ctx.Err())
	}
	return out, nil
}

// sendOrder yields the calls client k of clients sends, in order: those
// of every clients-th conversation, each conversation's in a row — or,
// with halves, the first half of each conversation, then the second halves.
func sendOrder(spans, clients, k int, halves bool) iter.Seq[int] {
	return func(yield func(int) bool) {
		passes := 1
		if halves {
			passes = 2
		}
		for pass := range passes {
			for i := range spans {
				if (i/SpansPerConversation)%clients != k {
					continue
				}
				if halves && (i%SpansPerConversation >= SpansPerConversation/2) != (pass == 1) {
					continue
				}
				if !yield(i) {
					return
				}
			}
		}
	}
}

// sendCall starts and ends the span of one call.
func sendCall(ctx context.Context, tracer trace.Tracer, c Call) {
	attrs := []attribute.KeyValue{
		attribute.String(otelconv.AttrOperationName, otelconv.OperationExecuteTool),
		attribute.String(otelconv.AttrToolName, c.Tool),
		attribute.String(otelconv.AttrToolCallID, c.CallID),
		attribute.String(otelconv.AttrConversationID, c.ConversationID),
		attribute.String(otelconv.AttrSource, "claude_code"),
		attribute.String(otelconv.AttrToolCallResult, c.Result),
	}
	if c.OriginalBytes > 0 {
		attrs = append(attrs, attribute.Int64("ctxaudit.output.original.bytes", c.OriginalBytes))
	}
	_, span := tracer.Start(ctx, "execute_tool "+c.Tool, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	span.End()
}

// LoadMain is the load generator's command line: it runs RunLoad and prints
// the LoadResult as one JSON line on stdout. It returns the exit code.
func LoadMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o LoadOptions
	fs.StringVar(&o.Endpoint, "endpoint", "127.0.0.1:4317", "collector OTLP/gRPC endpoint")
	fs.IntVar(&o.Spans, "spans", 200_000, "number of execute_tool spans")
	fs.IntVar(&o.Clients, "clients", DefaultClients, "SDK clients sending at once, each with its own connection")
	fs.StringVar(&o.RunID, "run-id", "bench", "prefix of call and conversation ids")
	fs.DurationVar(&o.Timeout, "timeout", 30*time.Minute, "bound on the whole run")
	fs.BoolVar(&o.Halves, "halves", false, "send the first half of every conversation, then the second halves")
	fs.Float64Var(&o.Rate, "rate", 0, "spans per second over all clients; 0: as fast as the collector takes them")
	cpuProfile := fs.String("cpuprofile", "", "write the generator's own CPU profile to this file")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintln(stderr, "load:", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(stderr, "load:", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	res, err := RunLoad(ctx, o)
	if jerr := json.NewEncoder(stdout).Encode(res); jerr != nil {
		fmt.Fprintln(stderr, "load:", jerr)
		return 1
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}
