package forensics

import (
	"github.com/ctxaudit/ctxaudit/schema"
)

// rule recognises one notice or metadata shape. match fills the finding and
// returns true when the rule decides the verdict; the first rule that
// decides wins, so each harness lists its most specific rules first.
type rule struct {
	// name is the Detector value, "<harness>.<notice>".
	name string
	// anchor, when set, is a literal the notice always contains somewhere in
	// the text; without it the rule is skipped before any regexp runs.
	anchor anchor
	match  func(s *scan, fd *finding) bool
}

// toolServerRules recognise tool servers that run under any harness (MCP
// servers), and the generic structured shape any tool may return.
var toolServerRules = concat(mcpFetchRules, githubRules, structuredRules)

// harnessRules maps each harness to its rules. OpenClaw runs on pi, so pi's
// notices follow its own.
var harnessRules = map[schema.Harness][]rule{
	schema.HarnessClaudeCode: concat(claudeCodeRules, toolServerRules),
	schema.HarnessCodex:      concat(codexRules, toolServerRules),
	schema.HarnessPi:         concat(piRules, toolServerRules),
	schema.HarnessGeminiCLI:  concat(geminiRules, toolServerRules),
	schema.HarnessOpenCode:   concat(openCodeRules, toolServerRules),
	schema.HarnessOpenHands:  concat(openHandsRules, toolServerRules),
	schema.HarnessOpenClaw:   concat(openClawRules, piRules, toolServerRules),
	schema.HarnessMCP:        toolServerRules,
}

// anyHarnessRules serve generic and unrecognised harnesses: every notice we
// know, tool servers first (their notices are the most specific).
var anyHarnessRules = concat(toolServerRules, claudeCodeRules, codexRules, piRules,
	geminiRules, openCodeRules, openHandsRules, openClawRules)

func rulesFor(h schema.Harness) []rule {
	if r, ok := harnessRules[h]; ok {
		return r
	}
	return anyHarnessRules
}

func concat(lists ...[]rule) []rule {
	var out []rule
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}
