// Command harness is an example instrumented agent harness: it emits one
// session's tool calls as GenAI execute_tool spans with ctxaudit.* attributes
// (and a Claude Code style tool_result log event) over OTLP.
//
//	go run ./examples/harness --endpoint 127.0.0.1:4317 --protocol grpc
//	go run ./examples/harness --endpoint 127.0.0.1:4318 --protocol http
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/ctxaudit/ctxaudit/examples/harness/agentsim"
)

func main() {
	endpoint := flag.String("endpoint", "127.0.0.1:4317", "collector OTLP endpoint host:port")
	protocol := flag.String("protocol", "grpc", "grpc or http")
	session := flag.String("session", fmt.Sprintf("example-%d", time.Now().Unix()), "session (conversation) id")
	token := flag.String("token", "", "bearer token, if the collector requires one")
	flag.Parse()
	if err := run(context.Background(), *endpoint, *protocol, *session, *token); err != nil {
		fmt.Fprintln(os.Stderr, "harness:", err)
		os.Exit(1)
	}
	fmt.Println("sent session", *session)
}

func run(ctx context.Context, endpoint, protocol, session, token string) error {
	headers := map[string]string{}
	if token != "" {
		headers["Authorization"] = "Bearer " + token
	}
	var (
		spanExp sdktrace.SpanExporter
		logExp  sdklog.Exporter
		err     error
	)
	switch protocol {
	case "grpc":
		if spanExp, err = otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(endpoint), otlptracegrpc.WithInsecure(), otlptracegrpc.WithHeaders(headers)); err != nil {
			return err
		}
		logExp, err = otlploggrpc.New(ctx, otlploggrpc.WithEndpoint(endpoint), otlploggrpc.WithInsecure(), otlploggrpc.WithHeaders(headers))
	case "http":
		if spanExp, err = otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(endpoint), otlptracehttp.WithInsecure(), otlptracehttp.WithHeaders(headers)); err != nil {
			return err
		}
		logExp, err = otlploghttp.New(ctx, otlploghttp.WithEndpoint(endpoint), otlploghttp.WithInsecure(), otlploghttp.WithHeaders(headers))
	default:
		return fmt.Errorf("unknown protocol %q (want grpc or http)", protocol)
	}
	if err != nil {
		return err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spanExp))
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(logExp)))
	now := time.Now()
	agentsim.EmitTraces(ctx, tp, agentsim.Scenario(session), now)
	agentsim.EmitClaudeCodeToolResult(ctx, lp, session+"-cc", "Read", 12_345, now)
	if err := tp.Shutdown(ctx); err != nil {
		return fmt.Errorf("flush spans: %w", err)
	}
	if err := lp.Shutdown(ctx); err != nil {
		return fmt.Errorf("flush logs: %w", err)
	}
	return nil
}
