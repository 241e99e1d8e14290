package componentmeta

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component"
)

// The checked-in documentation.md files and README sections are what
// `make generate` renders from the metadata.yaml files.
func TestGeneratedDocsAreCurrent(t *testing.T) {
	root := filepath.Join("..", "..")
	files, err := Generate(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 6 {
		t.Fatalf("generated %d files; want documentation.md and README.md for each of the three components", len(files))
	}
	for _, f := range files {
		got, err := os.ReadFile(f.Path)
		if err != nil {
			t.Errorf("%s: %v (run make generate)", f.Path, err)
			continue
		}
		if string(got) != string(f.Content) {
			t.Errorf("%s is not what metadata.yaml renders; run make generate", f.Path)
		}
	}
}

func TestLoadRejectsMistakes(t *testing.T) {
	for name, body := range map[string]string{
		"unknown key":         "type: x\nstatus:\n  class: receiver\n  stabilty:\n    alpha: [traces]\n",
		"unknown level":       "type: x\nstatus:\n  class: receiver\n  stability:\n    gamma: [traces]\n",
		"undefined attribute": "type: x\nstatus:\n  class: receiver\ntelemetry:\n  metrics:\n    m:\n      description: d\n      unit: \"1\"\n      sum: {value_type: int, monotonic: true}\n      attributes: [nope]\n",
		"no instrument kind":  "type: x\nstatus:\n  class: receiver\ntelemetry:\n  metrics:\n    m:\n      description: d\n      unit: \"1\"\n",
	} {
		p := filepath.Join(t.TempDir(), "metadata.yaml")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: err = %v; want an error naming the file", name, err)
		}
	}
}

func TestStabilityAndStatusTable(t *testing.T) {
	md := &Metadata{Type: "x", Status: Status{Class: "exporter", Stability: map[string][]string{
		"beta": {"traces"}, "alpha": {"logs"},
	}, Distributions: []string{"ctxaudit"}}}
	if md.Stability("traces") != component.StabilityLevelBeta || md.Stability("logs") != component.StabilityLevelAlpha ||
		md.Stability("metrics") != component.StabilityLevelUndefined {
		t.Fatalf("stability per signal wrong: %v %v %v", md.Stability("traces"), md.Stability("logs"), md.Stability("metrics"))
	}
	table := md.StatusTable("../..")
	if !strings.Contains(table, "| Stability     | [beta]: traces <br> [alpha]: logs |") || !strings.Contains(table, "[ctxaudit]: ../../README.md") {
		t.Fatalf("status table:\n%s", table)
	}
}
