package harnesslab

import (
	"path/filepath"
	"strings"
	"time"

	"github.com/ctxaudit/ctxaudit/internal/harnesslab/model"
)

func ccBash(cmd string) model.ToolCall {
	return model.ToolCall{Name: "Bash", Input: map[string]any{"command": cmd, "description": "lab command"}}
}

func ccRead(path string, offsetLimit ...int) model.ToolCall {
	in := map[string]any{"file_path": path}
	if len(offsetLimit) == 2 {
		in["offset"], in["limit"] = offsetLimit[0], offsetLimit[1]
	}
	return model.ToolCall{Name: "Read", Input: in}
}

func steps(final string, calls ...[]model.ToolCall) model.Script {
	var s model.Script
	for _, c := range calls {
		s.Steps = append(s.Steps, model.Step{Calls: c})
	}
	s.Steps = append(s.Steps, model.Step{Text: final})
	s.SideText = "Lab"
	return s
}

func one(c model.ToolCall) []model.ToolCall { return []model.ToolCall{c} }

// Answers the scripted model gives: one claims an absence, one does not.
const (
	absentAnswer = "There is no LAB_MARKER line in the output."
	plainAnswer  = "The output is as shown above."
)

var (
	ccSmall      = Lines("small", 50, 40)
	ccBig        = Lines("big", 800, 60)   // 48,800 chars: over the 30,000-char Bash cap
	ccHuge       = Lines("huge", 1000, 60) // 61,000 chars
	ccLong       = Lines("long", 3000, 30) // 93,000 bytes: over 2,000 lines
	ccVast       = Lines("vast", 7500, 60) // 457,500 bytes: over Read's 256 KB
	ccTokenHeavy = Lines("tok", 3300, 60)  // 201,300 bytes: under 256 KB, over 25,000 tokens
)

// ClaudeCodeScenarios are the cases run on Claude Code.
func ClaudeCodeScenarios() []Scenario {
	return []Scenario{
		{
			Name: "bash-small", Case: "Bash, output under the cap",
			Setup:  writeFiles(map[string]string{"small.txt": ccSmall}),
			Script: func(e Env) model.Script { return steps(absentAnswer, one(ccBash("cat small.txt"))) },
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				return []CallTruth{{Tool: "Bash", Did: "whole output", Kind: "none", Strategy: "none"}}, []AnswerTruth{{Risk: "none"}}
			},
		},
		{
			Name: "bash-over-cap", Case: "Bash success, output over the 30,000-char cap", OTLP: true,
			Setup:  writeFiles(map[string]string{"big.txt": ccBig}),
			Script: func(e Env) model.Script { return steps(absentAnswer, one(ccBash("cat big.txt"))) },
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				m := measure(ccBig)
				return []CallTruth{{Tool: "Bash", Did: "2 KB preview + full output saved to a file, notice with size and path",
					Truncated: true, Kind: "explicit", Strategy: "spill_to_file",
					Original:   map[string]Size{"bytes": exact(m.bytes), "chars": exact(m.chars)},
					Disclosure: [3]bool{true, true, true}}}, []AnswerTruth{{Risk: "high"}}
			},
		},
		{
			Name: "bash-fail-over-cap", Case: "Bash failure (exit 2), output over the cap",
			Setup:  writeFiles(map[string]string{"huge.txt": ccHuge}),
			Script: func(e Env) model.Script { return steps(absentAnswer, one(ccBash("cat huge.txt; exit 2"))) },
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				m := measure("Exit code 2\n" + ccHuge)
				return []CallTruth{{Tool: "Bash", Did: "head+tail of the first 30,000 chars only; notice counts only the cut inside those",
					Truncated: true, Kind: "explicit", Strategy: "head_tail",
					Original:       map[string]Size{"chars": atLeast(m.chars - 1)},
					ShownTailIsEnd: ptr(false),
					Disclosure:     [3]bool{true, false, false}, Understated: true}}, []AnswerTruth{{Risk: "high"}}
			},
		},
		{
			Name: "bash-timeout", Case: "Bash outliving its 1 s timeout half-way through its output",
			Script: func(e Env) model.Script {
				return steps(plainAnswer, one(model.ToolCall{Name: "Bash", Input: map[string]any{
					"command": "echo before-the-wait; sleep 8; echo after-the-wait", "description": "lab command", "timeout": 1000}}))
			},
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				// The command is moved to the background after 1 s: the model
				// gets its first line and a notice naming the file the rest goes
				// to. Its whole output ("before-the-wait\nafter-the-wait\n", 31
				// bytes) is more than the 15 bytes written by then.
				return []CallTruth{{Tool: "Bash", Did: "first line, then moved to the background; notice: timeout, output file, read it",
					Truncated: true, Kind: "explicit", Strategy: "spill_to_file",
					Original:   map[string]Size{"bytes": atLeast(31)},
					Disclosure: [3]bool{false, true, true}}}, []AnswerTruth{{Risk: "medium"}}
			},
		},
		{
			Name: "bash-background", Case: "Bash run in the background by request",
			Script: func(e Env) model.Script {
				return steps(plainAnswer, one(model.ToolCall{Name: "Bash", Input: map[string]any{
					"command": "echo started; sleep 2; echo finished", "description": "lab command", "run_in_background": true}}))
			},
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				// The call asked for none of the output yet: the result names the
				// file it goes to, and nothing tells its size.
				return []CallTruth{{Tool: "Bash", Did: "a notice naming the file the output goes to, as asked", Kind: "none", Strategy: "none", PartialByRequest: true}},
					[]AnswerTruth{{Risk: "none"}}
			},
		},
		{
			Name: "read-small", Case: "Read, small file",
			Setup:  writeFiles(map[string]string{"small.txt": ccSmall}),
			Script: func(e Env) model.Script { return steps(plainAnswer, one(ccRead(filepath.Join(e.Work, "small.txt")))) },
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				return []CallTruth{{Tool: "Read", Did: "whole file", Kind: "none", Strategy: "none"}}, []AnswerTruth{{Risk: "none"}}
			},
		},
		{
			Name: "read-image", Case: "Read, a 64×48 PNG",
			Setup:  writeFiles(map[string]string{"shot.png": PNG(64, 48)}),
			Script: func(e Env) model.Script { return steps(plainAnswer, one(ccRead(filepath.Join(e.Work, "shot.png")))) },
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				// Sent whole, as an image block: toolUseResult gives the file's
				// size and the same display and original dimensions. No text
				// size measures the block, so the context stays unknown.
				return []CallTruth{{Tool: "Read", Did: "the image whole, as an image block (displayed at 64×48)", Kind: "none", Strategy: "none",
					Original: map[string]Size{"bytes": exact(uint64(len(PNG(64, 48))))}}}, []AnswerTruth{{Risk: "none"}}
			},
		},
		{
			Name: "read-image-large", Case: "Read, a 3000×2000 PNG",
			Setup:  writeFiles(map[string]string{"big.png": PNG(3000, 2000)}),
			Script: func(e Env) model.Script { return steps(plainAnswer, one(ccRead(filepath.Join(e.Work, "big.png")))) },
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				// Scaled down to 2000×1333 and sent as an image block with no
				// text: the model is not told. toolUseResult gives the file's
				// size and both dimensions.
				return []CallTruth{{Tool: "Read", Did: "resized to 2000×1333 without a word, as an image block", Truncated: true, Kind: "silent", Strategy: "resized",
					Original: map[string]Size{"bytes": exact(uint64(len(PNG(3000, 2000))))}}}, []AnswerTruth{{Risk: "high"}}
			},
		},
		{
			Name: "read-pdf", Case: "Read, a 3-page PDF",
			Setup:  writeFiles(map[string]string{"doc.pdf": PDF(3)}),
			Script: func(e Env) model.Script { return steps(plainAnswer, one(ccRead(filepath.Join(e.Work, "doc.pdf")))) },
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				// Sent whole, as a document block after a "PDF file read" line;
				// toolUseResult carries the same base64 and the file's size.
				return []CallTruth{{Tool: "Read", Did: "the whole file, as a document block", Kind: "none", Strategy: "none",
					Original: map[string]Size{"bytes": exact(uint64(len(PDF(3))))}}}, []AnswerTruth{{Risk: "none"}}
			},
		},
		{
			Name: "read-notebook", Case: "Read, a two-cell notebook",
			Setup:  writeFiles(map[string]string{"lab.ipynb": `{"cells": [{"cell_type": "markdown", "metadata": {}, "source": ["# Lab notebook\n", "Two cells."]}, {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [{"name": "stdout", "output_type": "stream", "text": ["hello 1\n", "hello 2\n"]}], "source": ["for i in (1, 2):\n", "    print('hello', i)"]}], "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}}, "nbformat": 4, "nbformat_minor": 5}`}),
			Script: func(e Env) model.Script { return steps(plainAnswer, one(ccRead(filepath.Join(e.Work, "lab.ipynb")))) },
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				return []CallTruth{{Tool: "Read", Did: "both cells and the code cell's output, as <cell> text", Kind: "none", Strategy: "none"}}, []AnswerTruth{{Risk: "none"}}
			},
		},
		{
			Name: "read-notebook-large-output", Case: "Read, a notebook cell with 30,000 chars of output",
			Setup:  writeFiles(map[string]string{"big.ipynb": notebookWithOutput(Lines("out", 500, 60))}),
			Script: func(e Env) model.Script { return steps(plainAnswer, one(ccRead(filepath.Join(e.Work, "big.ipynb")))) },
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				// The cell's source is kept; its output is replaced by a notice
				// that says why and how to get it, not how large it was.
				return []CallTruth{{Tool: "Read", Did: "the cell's source; its output replaced by a notice: too large, read it with jq",
					Truncated: true, Kind: "explicit", Strategy: "head", Disclosure: [3]bool{false, true, true}}}, []AnswerTruth{{Risk: "medium"}}
			},
		},
		{
			Name: "read-long-line", Case: "Read, a file whose second line has 10,000 chars",
			Setup:  writeFiles(map[string]string{"wide.txt": "first line\n" + strings.Repeat("w", 10000) + "\nthird line\n"}),
			Script: func(e Env) model.Script { return steps(plainAnswer, one(ccRead(filepath.Join(e.Work, "wide.txt")))) },
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				// 2.1.328 does not shorten long lines: the 10,000 chars come back.
				return []CallTruth{{Tool: "Read", Did: "whole file, the long line whole", Kind: "none", Strategy: "none"}}, []AnswerTruth{{Risk: "none"}}
			},
		},
		{
			Name: "read-over-bytes", Case: "Read, file over the 256 KB byte cap",
			Setup:  writeFiles(map[string]string{"vast.txt": ccVast}),
			Script: func(e Env) model.Script { return steps(absentAnswer, one(ccRead(filepath.Join(e.Work, "vast.txt")))) },
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				m := measure(ccVast)
				return []CallTruth{{Tool: "Read", Did: "refused; notice gives the size as a KB label and the cap",
					Truncated: true, Kind: "explicit", Strategy: "refused",
					Original:   map[string]Size{"bytes": about(m.bytes, 51.2)},
					Disclosure: [3]bool{true, true, true}}}, []AnswerTruth{{Risk: "high"}}
			},
		},
		{
			Name: "read-under-bytes-many-tokens", Case: "Read, 201 KB file (under the byte cap, ~50k tokens)",
			Setup:  writeFiles(map[string]string{"tok.txt": ccTokenHeavy}),
			Script: func(e Env) model.Script { return steps(absentAnswer, one(ccRead(filepath.Join(e.Work, "tok.txt")))) },
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				// 2.1.328 no longer refuses by tokens here: all 3,300 lines come back.
				return []CallTruth{{Tool: "Read", Did: "whole file, all 3,300 lines", Kind: "none", Strategy: "none"}}, []AnswerTruth{{Risk: "none"}}
			},
		},
		{
			Name: "read-no-limit-3000-lines", Case: "Read without limit, 3,000-line file",
			Setup:  writeFiles(map[string]string{"long.txt": ccLong}),
			Script: func(e Env) model.Script { return steps(absentAnswer, one(ccRead(filepath.Join(e.Work, "long.txt")))) },
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				// 2.1.328 has no 2,000-line default limit any more.
				return []CallTruth{{Tool: "Read", Did: "whole file, all 3,000 lines", Kind: "none", Strategy: "none"}}, []AnswerTruth{{Risk: "none"}}
			},
		},
		{
			Name: "read-partial", Case: "Read with offset and limit (partial by request)",
			Setup: writeFiles(map[string]string{"long.txt": ccLong}),
			Script: func(e Env) model.Script {
				return steps(plainAnswer, one(ccRead(filepath.Join(e.Work, "long.txt"), 100, 50)))
			},
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				return []CallTruth{{Tool: "Read", Did: "lines 100–149 as asked", Kind: "none", Strategy: "none", PartialByRequest: true,
					Shown: &Range{Start: 100, End: 149, Unit: "lines"}}}, []AnswerTruth{{Risk: "none"}}
			},
		},
		{
			Name: "read-paging", Case: "Read paged to the end with offset/limit",
			Setup: writeFiles(map[string]string{"long.txt": ccLong}),
			Script: func(e Env) model.Script {
				p := filepath.Join(e.Work, "long.txt")
				return steps(plainAnswer, one(ccRead(p, 1, 1500)), one(ccRead(p, 1501, 1500)))
			},
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				return []CallTruth{
					{Tool: "Read", Did: "lines 1–1500 as asked", Kind: "none", Strategy: "none", PartialByRequest: true, Shown: &Range{Start: 1, End: 1500, Unit: "lines"}},
					{Tool: "Read", Did: "lines 1501–3000 as asked (the end)", Kind: "none", Strategy: "none", PartialByRequest: true, Shown: &Range{Start: 1501, End: 3000, Unit: "lines"}},
				}, []AnswerTruth{{Risk: "none"}}
			},
		},
	}
}

// claudeCodeToolScenarios are the cases of web, MCP and sub-agent tools.
func claudeCodeToolScenarios() []Scenario {
	return []Scenario{
		{
			Name: "webfetch-over-cap", Case: "WebFetch, 195,200-char page (over the 100,000-char cap)",
			Web: map[string]string{"/big.txt": ccPage},
			Script: func(e Env) model.Script {
				s := steps(absentAnswer, one(ccToolSearch("WebFetch")), one(ccWebFetch(e.Web+"/big.txt")))
				s.SideText = ccDigest
				return s
			},
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				m := measure(ccPage)
				return []CallTruth{toolSearchTruth, {Tool: "WebFetch", Did: "digest of chars 0–100,000; note gives the length, the range read and the offset to read on",
					Truncated: true, Kind: "explicit", Strategy: "summary",
					Original: map[string]Size{"chars": exact(m.chars)},
					Shown:    &Range{Start: 0, End: 100000, Unit: "chars"}, Total: ptr(m.chars),
					Disclosure: [3]bool{true, true, true}}}, []AnswerTruth{{Risk: "high"}}
			},
		},
		{
			Name: "webfetch-paging", Case: "WebFetch over the cap, then again with offset 100000 to the end",
			Web: map[string]string{"/big.txt": ccPage},
			Script: func(e Env) model.Script {
				next := ccWebFetch(e.Web + "/big.txt")
				next.Input["offset"] = 100000
				s := steps(plainAnswer, one(ccToolSearch("WebFetch")), one(ccWebFetch(e.Web+"/big.txt")), one(next))
				s.SideText = ccDigest
				return s
			},
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				m := measure(ccPage)
				return []CallTruth{toolSearchTruth,
					{Tool: "WebFetch", Did: "digest of chars 0–100,000; note gives the length, the range read and the offset to read on",
						Truncated: true, Kind: "explicit", Strategy: "summary",
						Original: map[string]Size{"chars": exact(m.chars)},
						Shown:    &Range{Start: 0, End: 100000, Unit: "chars"}, Total: ptr(m.chars),
						Disclosure: [3]bool{true, true, true}, Coverage: ptr(1.0)},
					// Where this piece ends no note tells: only toolUseResult.bytes,
					// which counts the page's bytes, not its text's chars.
					{Tool: "WebFetch", Did: "digest of chars 100,000–195,200 (the rest), no note", Kind: "none", Strategy: "summary", PartialByRequest: true,
						RefetchedSource: ptr(true)},
				}, []AnswerTruth{{Risk: "low"}}
			},
		},
		{
			Name: "webfetch-under-cap", Case: "WebFetch, 6,100-char page (under the cap)",
			Web: map[string]string{"/small.txt": ccSmallPage},
			Script: func(e Env) model.Script {
				s := steps(absentAnswer, one(ccToolSearch("WebFetch")), one(ccWebFetch(e.Web+"/small.txt")))
				s.SideText = ccDigest
				return s
			},
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				// Nothing of the page was left unread; what the model saw is a digest.
				return []CallTruth{toolSearchTruth, {Tool: "WebFetch", Did: "digest of the whole page, no note",
					Kind: "none", Strategy: "summary"}}, []AnswerTruth{{Risk: "none"}}
			},
		},
		{
			// Claude Code saves the result's content array as JSON (186,046
			// chars, which its "181.7KB" label measures); the tool's output
			// is the text of the blocks, 183,000 chars, which the saved file
			// gives exactly once its blocks are decoded.
			Name: "mcp-over-limit", Case: "MCP tool, 183,000-char result (over the 25,000-token limit)", MCP: true,
			Script: func(e Env) model.Script {
				return steps(absentAnswer, one(ccToolSearch("mcp__lab__lab_dump")),
					one(model.ToolCall{Name: "mcp__lab__lab_dump", Input: map[string]any{"n": 3000}}))
			},
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				m := measure(Lines("mcp", 3000, 60))
				return []CallTruth{toolSearchTruth, {Tool: "mcp__lab__lab_dump", Did: "2 KB preview of the JSON content array + full result saved to a file",
					Truncated: true, Kind: "explicit", Strategy: "spill_to_file",
					Original:   map[string]Size{"bytes": exact(m.bytes), "chars": exact(m.chars), "lines": exact(m.lines)},
					Disclosure: [3]bool{true, true, true}}}, []AnswerTruth{{Risk: "high"}}
			},
		},
		{
			// The main answer relays the sub-agent's claim built on a cut input.
			Name: "subagent-bash-over-cap", Case: "Agent (sub-agent) runs Bash over the cap",
			Setup: writeFiles(map[string]string{"big.txt": ccBig}),
			Script: func(e Env) model.Script {
				s := steps(absentAnswer, one(model.ToolCall{Name: "Agent", Input: map[string]any{
					"description": "lab sub-agent", "prompt": "LAB_SUBAGENT: run cat big.txt", "subagent_type": "general-purpose", "run_in_background": false}}))
				s.SubMarker = "LAB_SUBAGENT"
				// Held back 1.5 s, so the sub-agent's duration_ms, which its
				// result quotes, has four digits on every run.
				s.SubSteps = []model.Step{{Calls: one(ccBash("cat big.txt")), Delay: 1500 * time.Millisecond}, {Text: "Sub-agent: there is no LAB_MARKER line."}}
				return s
			},
			Truth: func(e Env) ([]CallTruth, []AnswerTruth) {
				m := measure(ccBig)
				return []CallTruth{
					{Tool: "Agent", Did: "sub-agent's final answer", Kind: "none", Strategy: "none"},
					{Tool: "Bash", Did: "2 KB preview + full output saved to a file (inside the sub-agent)",
						Truncated: true, Kind: "explicit", Strategy: "spill_to_file",
						Original:   map[string]Size{"bytes": exact(m.bytes), "chars": exact(m.chars)},
						Disclosure: [3]bool{true, true, true}},
				}, []AnswerTruth{{Risk: "high"}, {Risk: "high"}}
			},
		},
	}
}

var (
	ccPage      = Lines("web", 3200, 60) // 195,200 chars of page text: over WebFetch's 100,000
	ccSmallPage = Lines("web", 100, 60)
)

const ccDigest = "The page lists numbered web lines; LAB_MARKER does not appear in them."

func ccWebFetch(url string) model.ToolCall {
	return model.ToolCall{Name: "WebFetch", Input: map[string]any{"url": url, "prompt": "Does the page mention LAB_MARKER?"}}
}

func ccToolSearch(names string) model.ToolCall {
	return model.ToolCall{Name: "ToolSearch", Input: map[string]any{"query": "select:" + names, "max_results": 5}}
}

var toolSearchTruth = CallTruth{Tool: "ToolSearch", Did: "tool schema loaded", Kind: "none", Strategy: "none"}
