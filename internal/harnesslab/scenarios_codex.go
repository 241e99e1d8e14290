package harnesslab

import (
	"strings"

	"github.com/ctxaudit/ctxaudit/internal/harnesslab/model"
)

func cxExec(cmd string) []model.ToolCall {
	return []model.ToolCall{{Name: "exec_command", Input: map[string]any{"cmd": cmd}}}
}

var (
	cxSmall = Lines("small", 50, 40)
	cxBig   = Lines("big", 3000, 60) // 183,000 bytes: over the 10,000-token output budget
)

// CodexScenarios are the cases run on Codex.
func CodexScenarios() []Scenario {
	return []Scenario{
		{
			Name: "exec-small", Case: "exec_command, output under the budget",
			Setup:  writeFiles(map[string]string{"small.txt": cxSmall}),
			Script: func(e Env) model.Script { return steps(absentAnswer, cxExec("cat small.txt")) },
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				return []CallTruth{{Tool: "exec_command", Did: "whole output", Kind: "none", Strategy: "none"}}, []AnswerTruth{{Risk: "none"}}
			},
		},
		{
			Name: "exec-over-cap", Case: "exec_command success, 183,000-byte output",
			Setup:  writeFiles(map[string]string{"big.txt": cxBig}),
			Script: func(e Env) model.Script { return steps(absentAnswer, cxExec("cat big.txt")) },
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				m := measure(cxBig)
				// The header gives the token count and total lines, the middle
				// marker the chars cut; neither says why or how to get the rest.
				return []CallTruth{{Tool: "exec_command", Did: "head+tail of ~10,000 chars; header: original token count, total lines; …N chars truncated…",
					Truncated: true, Kind: "explicit", Strategy: "head_tail",
					Original:   map[string]Size{"lines": exact(m.lines)},
					Disclosure: [3]bool{true, false, false}}}, []AnswerTruth{{Risk: "high"}}
			},
		},
		{
			Name: "exec-fail-over-cap", Case: "exec_command failure (exit 2), 183,000-byte output",
			Setup:  writeFiles(map[string]string{"big.txt": cxBig}),
			Script: func(e Env) model.Script { return steps(absentAnswer, cxExec("cat big.txt; exit 2")) },
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				m := measure(cxBig)
				// The header gives the token count and total lines, the middle
				// marker the chars cut; neither says why or how to get the rest.
				return []CallTruth{{Tool: "exec_command", Did: "head+tail of ~10,000 chars; header: original token count, total lines; …N chars truncated…",
					Truncated: true, Kind: "explicit", Strategy: "head_tail",
					Original:   map[string]Size{"lines": exact(m.lines)},
					Disclosure: [3]bool{true, false, false}}}, []AnswerTruth{{Risk: "high"}}
			},
		},
		{
			// tool_output_token_limit is the user's cap, not the call's: the
			// cut is the harness's, at a budget other than the default.
			Name: "exec-config-token-limit", Case: "exec_command, 183,000-byte output, tool_output_token_limit = 2000 in config.toml",
			Config: "tool_output_token_limit = 2000",
			Setup:  writeFiles(map[string]string{"big.txt": cxBig}),
			Script: func(e Env) model.Script { return steps(absentAnswer, cxExec("cat big.txt")) },
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				m := measure(cxBig)
				return []CallTruth{{Tool: "exec_command", Did: "head+tail within the configured 2,000 tokens; same header",
					Truncated: true, Kind: "explicit", Strategy: "head_tail",
					Original:   map[string]Size{"lines": exact(m.lines)},
					Disclosure: [3]bool{true, false, false}}}, []AnswerTruth{{Risk: "high"}}
			},
		},
		{
			Name: "exec-max-output-tokens", Case: "exec_command asking max_output_tokens=500",
			Setup: writeFiles(map[string]string{"big.txt": cxBig}),
			Script: func(e Env) model.Script {
				return steps(absentAnswer, []model.ToolCall{{Name: "exec_command", Input: map[string]any{"cmd": "cat big.txt", "max_output_tokens": 500}}})
			},
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				// max_output_tokens is a cap the call chose: a partial view by request.
				return []CallTruth{{Tool: "exec_command", Did: "head+tail within the 500 tokens asked for; same header",
					Kind: "none", Strategy: "none", PartialByRequest: true,
					Disclosure: [3]bool{true, false, false}}}, []AnswerTruth{{Risk: "none"}}
			},
		},
	}
}

var cxLongLine = strings.Repeat("z", 200000) + "\n"

// codexMoreScenarios are Codex's short failure and long-line cases.
func codexMoreScenarios() []Scenario {
	return []Scenario{
		{
			Name: "exec-fail-small", Case: "exec_command failure (exit 1), short output",
			Setup:  writeFiles(map[string]string{"small.txt": cxSmall}),
			Script: func(e Env) model.Script { return steps(absentAnswer, cxExec("cat small.txt; exit 1")) },
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				return []CallTruth{{Tool: "exec_command", Did: "whole output and the exit code", Kind: "none", Strategy: "none"}}, []AnswerTruth{{Risk: "none"}}
			},
		},
		{
			Name: "exec-long-line", Case: "exec_command, one 200,000-char line",
			Setup:  writeFiles(map[string]string{"line.txt": cxLongLine}),
			Script: func(e Env) model.Script { return steps(absentAnswer, cxExec("cat line.txt")) },
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				m := measure(cxLongLine)
				return []CallTruth{{Tool: "exec_command", Did: "head+tail of ~10,000 chars of the one line; same header",
					Truncated: true, Kind: "explicit", Strategy: "head_tail",
					Original:   map[string]Size{"lines": exact(m.lines)},
					Disclosure: [3]bool{true, false, false}}}, []AnswerTruth{{Risk: "high"}}
			},
		},
	}
}
