package benchcollector

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// answeringTraceService is an OTLP/gRPC trace service that answers every
// export with err, or, with hang, not at all until the caller gives up.
type answeringTraceService struct {
	coltracepb.UnimplementedTraceServiceServer
	err  error
	hang bool
}

func (s *answeringTraceService) Export(ctx context.Context, _ *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	if s.hang {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if s.err != nil {
		return nil, s.err
	}
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// TestClassifyExportThroughTheSDK: the errors the load generator's own
// exporter (otlptracegrpc, retries on, as in RunLoad) returns after a
// server's answer are told apart as the report needs them — whatever the
// exporter wraps around the status.
func TestClassifyExportThroughTheSDK(t *testing.T) {
	for _, tc := range []struct {
		name string
		svc  *answeringTraceService
		want exportOutcome
	}{
		{"ok", &answeringTraceService{}, exportAccepted},
		{"unavailable", &answeringTraceService{err: status.Error(codes.Unavailable, "data refused due to high memory usage")}, exportRefusedRetryable},
		{"resource exhausted", &answeringTraceService{err: status.Error(codes.ResourceExhausted, "queue full")}, exportRefusedRetryable},
		{"invalid argument", &answeringTraceService{err: status.Error(codes.InvalidArgument, "bad span")}, exportRefused},
		{"internal", &answeringTraceService{err: status.Error(codes.Internal, "boom")}, exportRefused},
		{"no answer before the export timeout", &answeringTraceService{hang: true}, exportRefusedRetryable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			srv := grpc.NewServer()
			coltracepb.RegisterTraceServiceServer(srv, tc.svc)
			go func() { _ = srv.Serve(lis) }()
			t.Cleanup(srv.Stop)

			ctx := t.Context()
			exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(lis.Addr().String()), otlptracegrpc.WithInsecure(),
				otlptracegrpc.WithTimeout(300*time.Millisecond),
				otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{
					Enabled: true, InitialInterval: 10 * time.Millisecond, MaxInterval: 20 * time.Millisecond, MaxElapsedTime: 200 * time.Millisecond,
				}))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = exp.Shutdown(context.Background()) })
			err = exp.ExportSpans(ctx, tracetest.SpanStubs{{Name: "execute_tool Bash"}}.Snapshots())
			if got := classifyExport(err); got != tc.want {
				t.Errorf("classifyExport(%v) = %d, want %d", err, got, tc.want)
			}
		})
	}
}

// TestClassifyExportWithoutStatus: an error that carries no gRPC status is
// the run's time bound when it is a context error, and otherwise a refusal
// that is not called retryable.
func TestClassifyExportWithoutStatus(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want exportOutcome
	}{
		{fmt.Errorf("traces export: %w", context.DeadlineExceeded), exportUnanswered},
		{context.Canceled, exportUnanswered},
		{fmt.Errorf("%w: %w", errors.New("exporter export timeout"), status.Error(codes.Unavailable, "refused")), exportRefusedRetryable},
		{errors.New("the client is shutdown"), exportRefused},
		{status.Error(codes.Unknown, "unknown"), exportRefused},
	} {
		if got := classifyExport(tc.err); got != tc.want {
			t.Errorf("classifyExport(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

// TestLoadCounts: each export call's spans land in the count of its
// outcome (a retryable refusal is a refusal too), and spans of a call still
// in flight when the result is taken count as unanswered — each span in
// exactly one count.
func TestLoadCounts(t *testing.T) {
	var c loadCounts
	for _, call := range []struct {
		n   int64
		err error
	}{
		{5, nil},
		{3, status.Error(codes.Unavailable, "refused")},
		{2, status.Error(codes.InvalidArgument, "bad")},
		{7, context.DeadlineExceeded},
	} {
		c.start(call.n)
		c.end(call.n, call.err)
	}
	c.start(4) // an export still waiting for its answer
	got := c.result(30, 1.5)
	want := LoadResult{Sent: 30, Accepted: 5, Refused: 5, RefusedRetryable: 3, Unanswered: 11, Seconds: 1.5, LastErr: context.DeadlineExceeded.Error()}
	if got != want {
		t.Errorf("result = %+v, want %+v", got, want)
	}
	c.end(4, nil) // it ends after all: accepted, no longer unanswered
	if got := c.result(30, 2); got.Accepted != 9 || got.Unanswered != 7 {
		t.Errorf("after the last call ended: accepted %d, unanswered %d; want 9, 7", got.Accepted, got.Unanswered)
	}
}

// Every call is sent exactly once, by the client of its conversation, a
// conversation's calls in order; with halves, each client sends the first
// half of all its conversations before any second half.
func TestSendOrder(t *testing.T) {
	const spans, clients = 4*SpansPerConversation + 10, 2
	for _, halves := range []bool{false, true} {
		seen := map[int]int{}
		for k := range clients {
			var order []int
			for i := range sendOrder(spans, clients, k, halves) {
				if (i/SpansPerConversation)%clients != k {
					t.Errorf("halves %v: client %d sent call %d of another client's conversation", halves, k, i)
				}
				seen[i]++
				order = append(order, i)
			}
			last := map[int]int{} // conversation → last call sent
			secondHalf := false
			for _, i := range order {
				conv, pos := i/SpansPerConversation, i%SpansPerConversation
				if prev, ok := last[conv]; ok && prev > i {
					t.Errorf("halves %v: client %d sent call %d after %d", halves, k, i, prev)
				}
				last[conv] = i
				if second := pos >= SpansPerConversation/2; second {
					secondHalf = true
				} else if halves && secondHalf {
					t.Errorf("halves: client %d sent first-half call %d after a second half", k, i)
				}
			}
		}
		for i := range spans {
			if seen[i] != 1 {
				t.Errorf("halves %v: call %d sent %d times", halves, i, seen[i])
			}
		}
	}
}

// A paced client's limiter lets its first paceEvery spans go at once and
// every later paceEvery after paceEvery over its share of the rate; an
// unpaced load has none.
func TestPacer(t *testing.T) {
	if p := newPacer(0, 4); p != nil {
		t.Errorf("rate 0: a pacer %v, want none", p)
	}
	p := newPacer(1000, 4) // 250 spans/s for this client
	t0 := time.Unix(1_800_000_000, 0)
	for k, want := range []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond} {
		r := p.ReserveN(t0, paceEvery)
		if !r.OK() {
			t.Fatalf("wait %d: %d spans refused by a bucket of %d", k, paceEvery, p.Burst())
		}
		if got := r.DelayFrom(t0); got != want {
			t.Errorf("wait %d: the next %d spans go after %v, want %v", k, paceEvery, got, want)
		}
	}
}

// A paced load offers every span and each is answered; a negative rate is
// refused before anything is sent.
func TestRunLoadPaced(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, &answeringTraceService{})
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)

	opts := LoadOptions{Endpoint: lis.Addr().String(), Spans: 4*SpansPerConversation + 7, Clients: 2, RunID: "paced", Timeout: time.Minute, Rate: 4000}
	res, err := RunLoad(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(opts.Spans); res.Sent != want || res.Accepted != want || res.Refused != 0 || res.Unanswered != 0 {
		t.Errorf("paced load: %+v; want all %d spans sent and accepted", res, want)
	}
	opts.Rate = -1
	if res, err := RunLoad(t.Context(), opts); err == nil || res.Sent != 0 {
		t.Errorf("rate -1: sent %d, error %v; want nothing sent and an error", res.Sent, err)
	}
}
