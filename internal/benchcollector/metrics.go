package benchcollector

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// processorCounter reads a counter of the ctxaudit processor (name starts
// with "ctxaudit_processor_") from the collector's Prometheus endpoint
// (service::telemetry::metrics on port), summed over its series. A counter
// never added to is not exposed: it reads 0 when the processor exposes
// others, and -1 when the collector has no ctxaudit processor (the floor).
func processorCounter(ctx context.Context, port int, name string) (int64, error) {
	families, err := scrapeMetrics(ctx, port)
	if err != nil {
		return 0, err
	}
	if f, ok := family(families, name); ok {
		sum := 0.0
		for _, m := range f.GetMetric() {
			sum += m.GetCounter().GetValue()
		}
		return int64(sum), nil
	}
	for n := range families {
		if strings.HasPrefix(strings.TrimPrefix(n, "otelcol_"), "ctxaudit_processor_") {
			return 0, nil
		}
	}
	return -1, nil
}

// family finds a metric under any of the names the collector's Prometheus
// exporter gives it: with or without its "otelcol_" namespace, and a
// counter with a "_total" suffix.
func family(families map[string]*dto.MetricFamily, name string) (*dto.MetricFamily, bool) {
	for _, n := range []string{name, name + "_total", "otelcol_" + name, "otelcol_" + name + "_total"} {
		if f, ok := families[n]; ok {
			return f, true
		}
	}
	return nil, false
}

// scrapeMetrics reads the collector's own metrics.
func scrapeMetrics(ctx context.Context, port int) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://%s/metrics", loopback(port)), nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("collector metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("collector metrics: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("collector metrics: %w", err)
	}
	return families, nil
}
