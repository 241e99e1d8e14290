package benchcollector

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/google/pprof/profile"
	"go.yaml.in/yaml/v3"
)

// The overlay adds pprof to the extensions a configuration starts, keeping
// its own: the collector replaces lists when it merges configurations, so
// an overlay naming pprof alone would stop file_storage from starting.
func TestRenderOverlayKeepsTheConfigsExtensions(t *testing.T) {
	withPprof := filepath.Join(t.TempDir(), "with-pprof.yaml")
	if err := os.WriteFile(withPprof, []byte("service:\n  extensions: [pprof, health_check]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cfg, profile string
		http         int
		want         []string // service.extensions; nil: the overlay sets none
	}{
		{"../../examples/collector.yaml", "", 4, nil},
		{"../../examples/collector.yaml", "/p/round1-default.cpu.pprof", 4, []string{"health_check", "file_storage", "pprof"}},
		{"testdata/floor.yaml", "/p/round1-floor.cpu.pprof", 0, []string{"health_check", "pprof"}},
		{withPprof, "/p/x.cpu.pprof", 0, []string{"pprof", "health_check"}},
	} {
		b, err := renderOverlay(tc.cfg, overlayPorts{grpc: 1, http: tc.http, health: 3, metrics: 5, pprof: 6}, tc.profile)
		if err != nil {
			t.Fatalf("%s: %v", tc.cfg, err)
		}
		var got struct {
			Extensions map[string]map[string]string `yaml:"extensions"`
			Receivers  struct {
				OTLP struct {
					Protocols map[string]map[string]string `yaml:"protocols"`
				} `yaml:"otlp"`
			} `yaml:"receivers"`
			Service struct {
				Extensions []string `yaml:"extensions"`
			} `yaml:"service"`
		}
		if err := yaml.Unmarshal(b, &got); err != nil {
			t.Fatalf("%s: %v\n%s", tc.cfg, err, b)
		}
		if !reflect.DeepEqual(got.Service.Extensions, tc.want) {
			t.Errorf("%s, profile %q: service extensions %q, want %q", tc.cfg, tc.profile, got.Service.Extensions, tc.want)
		}
		pprof, profiled := got.Extensions["pprof"]
		if profiled != (tc.profile != "") || profiled && (pprof["save_to_file"] != tc.profile || pprof["endpoint"] != "127.0.0.1:6") {
			t.Errorf("%s, profile %q: pprof extension %v", tc.cfg, tc.profile, pprof)
		}
		if got.Extensions["health_check"]["endpoint"] != "127.0.0.1:3" || got.Receivers.OTLP.Protocols["grpc"]["endpoint"] != "127.0.0.1:1" {
			t.Errorf("%s: listeners not moved:\n%s", tc.cfg, b)
		}
		if _, ok := got.Receivers.OTLP.Protocols["http"]; ok != (tc.http != 0) {
			t.Errorf("%s: OTLP/HTTP listener %v, want one only with a port:\n%s", tc.cfg, ok, b)
		}
	}
}

// checkProfile fails t unless path is a profile of binary, with a sample
// type named sampleType.
func checkProfile(t *testing.T, path, binary, sampleType string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Error(err)
		return
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Errorf("%s: %v", path, err)
		return
	}
	var types []string
	for _, st := range p.SampleType {
		types = append(types, st.Type)
	}
	if !slices.Contains(types, sampleType) {
		t.Errorf("%s: sample types %q, want %s", path, types, sampleType)
	}
	// The first mapping is the executable: the profile is of the build run.
	if len(p.Mapping) == 0 || filepath.Base(p.Mapping[0].File) != filepath.Base(binary) {
		var file string
		if len(p.Mapping) > 0 {
			file = p.Mapping[0].File
		}
		t.Errorf("%s: a profile of %q, want %s", path, file, binary)
	}
}
