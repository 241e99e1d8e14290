package forensics

import (
	"strings"
	"testing"

	"github.com/ctxaudit/ctxaudit/schema"
)

// pi's grep, find and ls build their output after their item limit (grep
// also cuts every line to 500 chars) and only then cut it at 50 KB, so
// details.truncation.totalBytes is the size of what was left after those
// limits (pi-mono grep.ts, find.ts, ls.ts). With a limit reached the tool's
// output was larger: totalBytes is a lower bound. With only the byte cap it
// is the output's exact size.
func TestPiListingTotalBytesAfterLimits(t *testing.T) {
	kept := strings.Repeat("src/a.go:1: "+strings.Repeat("x", 500)+"... [truncated]\n", 99)
	truncation := `"truncation":{"content":"","truncated":true,"truncatedBy":"bytes","totalLines":100,"totalBytes":80000,"outputLines":99,"outputBytes":51000,"lastLinePartial":false,"firstLineExceedsLimit":false}`
	tests := []struct {
		name, tool, details, notice string
		want                        schema.Precision
	}{
		{"grep match limit and long lines", "grep", `{` + truncation + `,"matchLimitReached":100,"linesTruncated":true}`,
			"[100 matches limit reached. Use limit=200 for more, or refine pattern. 50.0KB limit reached. Some lines truncated to 500 chars. Use read tool to see full lines]",
			schema.PrecisionLowerBound},
		{"grep long lines only", "grep", `{` + truncation + `,"linesTruncated":true}`,
			"[50.0KB limit reached. Some lines truncated to 500 chars. Use read tool to see full lines]",
			schema.PrecisionLowerBound},
		{"find results limit", "find", `{` + truncation + `,"resultLimitReached":1000}`,
			"[1000 results limit reached. Use limit=2000 for more, or refine pattern. 50.0KB limit reached]",
			schema.PrecisionLowerBound},
		{"ls entries limit", "ls", `{` + truncation + `,"entryLimitReached":500}`,
			"[500 entries limit reached. Use limit=1000 for more. 50.0KB limit reached]",
			schema.PrecisionLowerBound},
		{"grep limits told only by the notice", "grep", `{` + truncation + `}`,
			"[100 matches limit reached. Use limit=200 for more, or refine pattern. 50.0KB limit reached]",
			schema.PrecisionLowerBound},
		{"grep byte limit only", "grep", `{` + truncation + `}`, "[50.0KB limit reached]", schema.PrecisionExact},
		{"find byte limit only", "find", `{` + truncation + `}`, "[50.0KB limit reached]", schema.PrecisionExact},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := Detect(Input{Harness: schema.HarnessPi, Tool: tt.tool, Arguments: []byte(`{"pattern":"x"}`),
				Context: kept + "\n" + tt.notice, Details: []byte(tt.details)})
			o := f.Original
			if o.Bytes != schema.Known(80000) || o.Source != schema.SourceHarnessMetadata || o.Precision != tt.want {
				t.Errorf("original %v bytes from %s, precision %q; want 80000 bytes from harness_metadata, %q",
					o.Bytes, o.Source, o.Precision, tt.want)
			}
			if !f.Truncated || f.Kind != schema.KindExplicit {
				t.Errorf("truncated %v kind %s, want an explicit cut", f.Truncated, f.Kind)
			}
		})
	}
}
