package analysis

import (
	"strings"

	"github.com/ctxaudit/ctxaudit/schema"
)

// toolClass is what a tool does with its target.
type toolClass uint8

const (
	classOutput toolClass = iota // anything else: only its own output is known
	classRead                    // shows (part of) a file
	classWrite                   // changes a file
	classFetch                   // shows (part of) a URL
	classSearch                  // searches a path for a pattern
	classShell                   // runs a shell command
)

// toolSpec is how to read one tool's arguments (transcript-formats.md).
type toolSpec struct {
	class toolClass
	// pathArgs name the target (path or URL); the first present wins.
	pathArgs   []string
	patternArg string
	// offsetArg/limitArg page through the target; firstOffset is the offset
	// that addresses the first unit (1 for 1-based line numbers).
	offsetArg, limitArg string
	firstOffset         uint64
	// defaultLimit is the window used when limitArg is absent (0: none).
	defaultLimit uint64
	unit         schema.Unit
	// modeArg (Grep output_mode) decides the unit of a search's result list.
	modeArg     string
	commandArgs []string
	dirArgs     []string
}

var (
	// Claude Code Read {file_path, offset, limit}: offset is a 1-based line
	// number, the default window 2000 lines. pi read {path, offset, limit}
	// numbers the same way; OpenCode read uses filePath.
	specRead = toolSpec{class: classRead, pathArgs: []string{"file_path", "path", "filePath", "absolute_path"},
		offsetArg: "offset", limitArg: "limit", firstOffset: 1, defaultLimit: 2000, unit: schema.UnitLines}
	// Gemini CLI read_file counts offset from 0.
	specGeminiRead = toolSpec{class: classRead, pathArgs: []string{"absolute_path", "file_path", "path"},
		offsetArg: "offset", limitArg: "limit", firstOffset: 0, defaultLimit: 2000, unit: schema.UnitLines}
	specWrite = toolSpec{class: classWrite, pathArgs: []string{"file_path", "notebook_path", "path", "filePath"}}
	// Claude Code Grep {pattern, path, output_mode, head_limit, offset}.
	specGrep = toolSpec{class: classSearch, pathArgs: []string{"path"}, patternArg: "pattern",
		offsetArg: "offset", limitArg: "head_limit", defaultLimit: 250, modeArg: "output_mode"}
	// pi grep {pattern, path, limit}: limit counts matches, default 100.
	specPiGrep = toolSpec{class: classSearch, pathArgs: []string{"path"}, patternArg: "pattern",
		limitArg: "limit", defaultLimit: 100, unit: schema.UnitMatches}
	// Claude Code WebFetch {url, prompt, offset}: offset (2.1.328) is a
	// character position in the page text to read on from.
	specWebFetch = toolSpec{class: classFetch, pathArgs: []string{"url"}, offsetArg: "offset", unit: schema.UnitChars}
	// MCP reference fetch server {url, max_length = 5000, start_index = 0}, in chars.
	specMCPFetch = toolSpec{class: classFetch, pathArgs: []string{"url"}, offsetArg: "start_index",
		limitArg: "max_length", defaultLimit: 5000, unit: schema.UnitChars}
	// Claude Code Bash {command}, Codex shell_command {command, workdir} and
	// exec_command {cmd, workdir}, Codex shell {command: [argv]}, pi bash.
	specShell = toolSpec{class: classShell, commandArgs: []string{"command", "cmd"},
		dirArgs: []string{"workdir", "cwd", "dir_path", "directory"}}
)

// toolSpecs maps tool names, as the harnesses spell them, to their spec.
var toolSpecs = map[string]toolSpec{
	// Claude Code
	"Read": specRead, "Grep": specGrep, "WebFetch": specWebFetch, "Bash": specShell,
	"Edit": specWrite, "MultiEdit": specWrite, "Write": specWrite, "NotebookEdit": specWrite,
	"mcp__fetch__fetch": specMCPFetch,
	// Codex
	"shell_command": specShell, "shell": specShell, "exec_command": specShell, "local_shell": specShell,
	// pi (and OpenCode, which shares the lower-case names)
	"read": specRead, "bash": specShell, "grep": specPiGrep, "edit": specWrite, "write": specWrite,
	"webfetch": specWebFetch,
	// Gemini CLI
	"read_file": specGeminiRead, "run_shell_command": specShell, "write_file": specWrite,
	"replace": specWrite, "search_file_content": specPiGrep,
	// MCP fetch servers exposed under their bare name
	"fetch": specMCPFetch,
}

// specFor returns the spec of a tool; MCP fetch servers are recognised by
// their "mcp__<server>__fetch" name.
func specFor(tool string) toolSpec {
	if s, ok := toolSpecs[tool]; ok {
		return s
	}
	if strings.HasPrefix(tool, "mcp__") && strings.HasSuffix(tool, "__fetch") {
		return specMCPFetch
	}
	return toolSpec{class: classOutput}
}
