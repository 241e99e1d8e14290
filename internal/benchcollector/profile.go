package benchcollector

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"

	"go.yaml.in/yaml/v3"
)

// pprofExtension is the collector's pprof extension (contrib's
// pprofextension, built into the distribution): with save_to_file it writes
// a CPU profile of the whole process from its start to its shutdown, and
// its endpoint serves the runtime's other profiles.
const pprofExtension = "pprof"

// overlay is the configuration merged over a run's own (a second --config):
// every listener on a free loopback port and, when profiling, the pprof
// extension added to the service's extensions.
type overlay struct {
	Extensions map[string]any `yaml:"extensions"`
	Receivers  map[string]any `yaml:"receivers"`
	Service    map[string]any `yaml:"service"`
}

// overlayPorts are the listeners a run moves to free ports; 0 leaves one
// out (an HTTP receiver only where the pipeline writes somewhere, pprof
// only when profiling).
type overlayPorts struct {
	grpc, http, health, metrics, pprof int
}

// renderOverlay is the overlay for a run of cfg. Lists replace lists when
// the collector merges configurations, so the service's extensions are
// cfg's own with pprof added, not pprof alone.
func renderOverlay(cfg string, p overlayPorts, cpuProfile string) ([]byte, error) {
	protocols := map[string]any{"grpc": map[string]any{"endpoint": loopback(p.grpc)}}
	if p.http != 0 {
		protocols["http"] = map[string]any{"endpoint": loopback(p.http)}
	}
	o := overlay{
		Extensions: map[string]any{"health_check": map[string]any{"endpoint": loopback(p.health)}},
		Receivers:  map[string]any{"otlp": map[string]any{"protocols": protocols}},
		Service: map[string]any{"telemetry": map[string]any{"metrics": map[string]any{"readers": []any{
			map[string]any{"pull": map[string]any{"exporter": map[string]any{"prometheus": map[string]any{
				"host": "127.0.0.1", "port": p.metrics}}}},
		}}}},
	}
	if cpuProfile != "" {
		exts, err := serviceExtensions(cfg)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(exts, pprofExtension) {
			exts = append(exts, pprofExtension)
		}
		o.Extensions[pprofExtension] = map[string]any{"endpoint": loopback(p.pprof), "save_to_file": cpuProfile}
		o.Service["extensions"] = exts
	}
	return yaml.Marshal(o)
}

func loopback(port int) string { return fmt.Sprintf("127.0.0.1:%d", port) }

// serviceExtensions reads the extensions a configuration file's service
// starts.
func serviceExtensions(cfg string) ([]string, error) {
	b, err := os.ReadFile(cfg)
	if err != nil {
		return nil, fmt.Errorf("bench: read %s: %w", cfg, err)
	}
	var c struct {
		Service struct {
			Extensions []string `yaml:"extensions"`
		} `yaml:"service"`
	}
	if err := yaml.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("bench: %s: %w", cfg, err)
	}
	return c.Service.Extensions, nil
}

// saveAllocsProfile writes the collector's allocation profile (every
// allocation since it started, by call stack) from its pprof endpoint to
// path.
func saveAllocsProfile(ctx context.Context, port int, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://%s/debug/pprof/allocs", loopback(port)), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("allocation profile: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("allocation profile: %s", resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("allocation profile: %w", err)
	}
	return f.Close()
}
