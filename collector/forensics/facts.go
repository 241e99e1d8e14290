package forensics

import (
	"strconv"
	"strings"

	"github.com/ctxaudit/ctxaudit/schema"
)

// capFact is one known output cap of a harness: an output cut there without
// a notice has the shape of a truncation ("suspected"). Each harness keeps its
// caps in one table in its own file, so a harness release that changes a
// limit is a one-line edit.
type capFact struct {
	// tools the cap applies to; nil means every tool of the harness.
	tools []string
	unit  schema.Unit
	n     uint64
	// reason is the machine word for this cap (cap_bytes, cap_lines, …).
	reason string
	// versions limits the cap to harness versions in [min, max); empty
	// bounds are open.
	versions versionRange
}

func (c capFact) appliesTo(tool, version string) bool {
	if !c.versions.contains(version) {
		return false
	}
	if c.tools == nil {
		return true
	}
	for _, t := range c.tools {
		if strings.EqualFold(t, tool) {
			return true
		}
	}
	return false
}

// versionRange is a half-open range of dotted versions, [Min, Max). An
// unknown version (empty) is in every range: a cap we cannot rule out counts.
type versionRange struct{ Min, Max string }

func (r versionRange) contains(v string) bool {
	if v == "" {
		return true
	}
	if r.Min != "" && compareVersions(v, r.Min) < 0 {
		return false
	}
	if r.Max != "" && compareVersions(v, r.Max) >= 0 {
		return false
	}
	return true
}

// compareVersions compares dotted numeric versions ("2.1.6" < "2.1.20");
// a pre-release or build suffix on a component is ignored.
func compareVersions(a, b string) int {
	pa, pb := strings.Split(strings.TrimPrefix(a, "v"), "."), strings.Split(strings.TrimPrefix(b, "v"), ".")
	for i := 0; i < max(len(pa), len(pb)); i++ {
		x, y := versionPart(pa, i), versionPart(pb, i)
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

func versionPart(parts []string, i int) int {
	if i >= len(parts) {
		return 0
	}
	p := parts[i]
	end := 0
	for end < len(p) && p[end] >= '0' && p[end] <= '9' {
		end++
	}
	n, err := strconv.Atoi(p[:end])
	if err != nil {
		return 0
	}
	return n
}

// harnessCaps lists each harness's caps for the suspected-shape check.
var harnessCaps = map[schema.Harness][]capFact{
	schema.HarnessClaudeCode: claudeCodeCaps,
	schema.HarnessCodex:      codexCaps,
	schema.HarnessPi:         piCaps,
	schema.HarnessGeminiCLI:  geminiCaps,
	schema.HarnessOpenCode:   openCodeCaps,
	schema.HarnessOpenHands:  openHandsCaps,
	schema.HarnessOpenClaw:   openClawCaps,
}

// roundCaps are sizes a hand-written or unknown harness plausibly caps at.
// For them an exact hit is not enough: the text must also end mid-line, as a
// byte or char cap cuts, because round-sized complete outputs do occur.
var roundCaps = []uint64{
	1000, 1024, 2000, 2048, 4000, 4096, 5000, 8000, 8192, 10000, 10240, 16000, 16384,
	20000, 20480, 25000, 30000, 32000, 32768, 40000, 50000, 51200, 64000, 65536,
	100000, 102400, 128000, 131072, 200000, 262144, 500000, 524288, 1000000, 1048576,
}
