package benchcollector

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
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
}

// LoadResult is what the load generator prints as one JSON line.
type LoadResult struct {
	Sent     int64   `json:"sent"`     // spans handed to the exporter
	Accepted int64   `json:"accepted"` // spans in export calls the collector answered with OK
	Refused  int64   `json:"refused"`  // spans in export calls that failed after the exporter's retries
	Seconds  float64 `json:"seconds"`  // first span started to last export answered
	LastErr  string  `json:"last_error,omitempty"`
}

// loadCounts counts spans per outcome of each export call, over every
// client, so "accepted" means acknowledged by the collector, not merely sent.
type loadCounts struct {
	accepted, refused atomic.Int64
	lastErr           atomic.Value
}

// clientExporter is one client's exporter, counted in the run's totals.
type clientExporter struct {
	sdktrace.SpanExporter
	counts *loadCounts
}

func (e *clientExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := e.SpanExporter.ExportSpans(ctx, spans)
	if err != nil {
		e.counts.refused.Add(int64(len(spans)))
		e.counts.lastErr.Store(err.Error())
		return err
	}
	e.counts.accepted.Add(int64(len(spans)))
	return nil
}

// RunLoad sends opts.Spans execute_tool spans with the OTel Go SDK over
// OTLP/gRPC, from opts.Clients tracer providers at once, each with its own
// exporter and connection: the agents of a team, each sending its own
// sessions. A conversation's spans all go through one client, in order. The
// batch span processor blocks instead of dropping when its queue is full, so
// every span is either accepted or refused, never lost in the generator.
func RunLoad(ctx context.Context, opts LoadOptions) (LoadResult, error) {
	if opts.Spans <= 0 {
		return LoadResult{}, errors.New("load: spans must be positive")
	}
	if opts.Clients <= 0 {
		opts.Clients = 1
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
			for i := range opts.Spans {
				if (i/SpansPerConversation)%len(clients) != k {
					continue
				}
				if ctx.Err() != nil {
					break
				}
				sendCall(ctx, tracer, payload.Call(i))
				sent.Add(1)
			}
			shutdownErrs[k] = tp.Shutdown(ctx) // flushes what is queued, bounded by ctx
		})
	}
	wg.Wait()
	out := LoadResult{
		Sent:     sent.Load(),
		Accepted: counting.accepted.Load(),
		Refused:  counting.refused.Load(),
		Seconds:  time.Since(start).Seconds(),
	}
	if s, ok := counting.lastErr.Load().(string); ok {
		out.LastErr = s
	}
	if err := errors.Join(shutdownErrs...); err != nil && out.LastErr == "" {
		out.LastErr = err.Error()
	}
	if ctx.Err() != nil {
		return out, fmt.Errorf("load: stopped after %s: %w", opts.Timeout, ctx.Err())
	}
	return out, nil
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
