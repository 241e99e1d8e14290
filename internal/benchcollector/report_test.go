package benchcollector

import (
	"bytes"
	"strings"
	"testing"
)

// The collector's figures are divided by the floor's; ClickHouse's are not:
// the floor writes nothing there, and its figure is the server's background
// work.
func TestWriteTextRatios(t *testing.T) {
	r := Report{
		Default: Pipeline{CollectorPer: 4.0, ClickHousePer: 1.2, AcceptedPerSec: 30000},
		Floor:   Pipeline{CollectorPer: 1.0, ClickHousePer: 0.01, AcceptedPerSec: 60000},
	}
	var b bytes.Buffer
	r.WriteText(&b)
	want := map[string][]string{
		"collector CPU-s per 100k spans":  {"4.00", "1.00", "4.00"},
		"ClickHouse CPU-s per 100k spans": {"1.20", "0.01", "-"},
		"accepted spans/s":                {"30000", "60000", "0.50"},
	}
	for _, line := range strings.Split(b.String(), "\n") {
		for name, fields := range want {
			if !strings.HasPrefix(line, name+" ") {
				continue
			}
			if got := strings.Fields(strings.TrimPrefix(line, name)); strings.Join(got, " ") != strings.Join(fields, " ") {
				t.Errorf("%s: %q, want %q", name, got, fields)
			}
			delete(want, name)
		}
	}
	for name := range want {
		t.Errorf("no %q row in:\n%s", name, b.String())
	}
}
