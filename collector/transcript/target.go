package transcript

import (
	"path"
	"strings"

	"github.com/ctxaudit/ctxaudit/collector/internal/jsonscan"
)

// targetKeys are the argument names that say what a call read, most
// specific first: a file beats a directory, a URL beats a query. Every
// harness names these the same way or nearly (Claude Code file_path, pi path,
// Codex command/cmd), so one list serves all.
var targetKeys = [...]string{
	"file_path", "notebook_path", "path", "url", "uri", "command", "cmd",
	"pattern", "query", "prompt", "description",
}

// Target returns what a call read — a file path, URL, command or search —
// from its JSON arguments, or "" when none is recognised. Session analysis
// matches later calls to earlier ones by it.
func Target(args []byte) string {
	if len(args) == 0 || args[0] != '{' {
		return ""
	}
	var found [len(targetKeys)][]byte
	it := jsonscan.Object(args)
	for it.Next() {
		for i, k := range targetKeys {
			if found[i] == nil && it.KeyIs(k) {
				found[i] = it.Value()
			}
		}
	}
	for _, v := range found {
		if s := scalarOrJoined(v); s != "" {
			return s
		}
	}
	return ""
}

// scalarOrJoined renders a string, or an array of strings joined by spaces
// (Codex's older shell tool takes ["bash","-lc","…"]).
func scalarOrJoined(raw []byte) string {
	if len(raw) == 0 {
		return ""
	}
	if raw[0] == '"' {
		return jsonscan.StringOr(raw)
	}
	if raw[0] != '[' {
		return ""
	}
	var parts []string
	it := jsonscan.Array(raw)
	for it.Next() {
		if s, ok := jsonscan.String(it.Value()); ok {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, " ")
}

// ProjectFromCwd names a project by the last element of its working
// directory, for Windows and POSIX paths alike.
func ProjectFromCwd(cwd string) string {
	cwd = strings.TrimRight(strings.ReplaceAll(cwd, `\`, "/"), "/")
	if cwd == "" {
		return ""
	}
	return path.Base(cwd)
}
