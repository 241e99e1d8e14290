package benchcollector

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// processorCounter sums a counter's series under any of the names the
// collector's Prometheus exporter gives it; a counter of the processor
// that is not exposed (never added to) is 0 when the processor exposes
// others, -1 when the collector exposes none (no ctxaudit processor).
func TestProcessorCounter(t *testing.T) {
	const exposition = `# HELP otelcol_ctxaudit_processor_sessions_resumed_total Sessions resumed.
# TYPE otelcol_ctxaudit_processor_sessions_resumed_total counter
otelcol_ctxaudit_processor_sessions_resumed_total{otel_scope_name="a"} 3
otelcol_ctxaudit_processor_sessions_resumed_total{otel_scope_name="b"} 2
# HELP otelcol_process_uptime_seconds_total Uptime.
# TYPE otelcol_process_uptime_seconds_total counter
otelcol_process_uptime_seconds_total 12.5
`
	serve := func(text string) int {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/metrics" {
				http.NotFound(w, r)
				return
			}
			fmt.Fprint(w, text)
		}))
		t.Cleanup(srv.Close)
		return srv.Listener.Addr().(*net.TCPAddr).Port
	}
	withProcessor, floor := serve(exposition), serve(exposition[strings.Index(exposition, "# HELP otelcol_process"):])
	ctx := context.Background()
	for _, tc := range []struct {
		port int
		name string
		want int64
	}{
		{withProcessor, "ctxaudit_processor_sessions_resumed", 5},
		{withProcessor, "ctxaudit_processor_calls_parked", 0},
		{floor, "ctxaudit_processor_sessions_resumed", -1},
	} {
		got, err := processorCounter(ctx, tc.port, tc.name)
		if err != nil || got != tc.want {
			t.Errorf("%s on port %d: %d, %v; want %d", tc.name, tc.port, got, err, tc.want)
		}
	}
}
