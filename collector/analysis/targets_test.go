package analysis

import (
	"reflect"
	"testing"

	"github.com/ctxaudit/ctxaudit/schema"
)

func TestTargets(t *testing.T) {
	self := func(k TargetKind, ref string) Target { return Target{Kind: k, Ref: ref, Mode: AccessRead, Self: true} }
	tests := []struct {
		name      string
		tool      string
		args      string
		cwd       string
		savedRef  string
		target    string
		want      []Target
		wantLabel string
	}{
		{name: "Claude Code Read", tool: "Read", args: `{"file_path":"/repo/a.go","offset":10,"limit":5}`,
			want: []Target{self(TargetFile, "/repo/a.go")}, wantLabel: "/repo/a.go"},
		{name: "relative path resolves against cwd", tool: "read", args: `{"path":"src/../a.go"}`, cwd: "/repo",
			want: []Target{self(TargetFile, "/repo/a.go")}, wantLabel: "/repo/a.go"},
		{name: "Edit writes its file; its own output is the target", tool: "Edit", args: `{"file_path":"/repo/a.go","old_string":"x","new_string":"y"}`,
			want: []Target{self(TargetOutput, "Edit"), {Kind: TargetFile, Ref: "/repo/a.go", Mode: AccessWrite}}, wantLabel: "/repo/a.go"},
		{name: "WebFetch", tool: "WebFetch", args: `{"url":"https://Example.com/p#frag","prompt":"x"}`,
			want: []Target{self(TargetURL, "https://Example.com/p#frag")}, wantLabel: "https://Example.com/p#frag"},
		{name: "MCP fetch", tool: "mcp__fetch__fetch", args: `{"url":"https://example.com/","start_index":5000,"max_length":5000}`,
			want: []Target{self(TargetURL, "https://example.com/")}, wantLabel: "https://example.com/"},
		{name: "Grep: its result list and a search of the path", tool: "Grep", args: `{"pattern":"Timeout","path":"/repo/pkg","output_mode":"content"}`,
			want:      []Target{self(TargetSearch, "Timeout in /repo/pkg"), {Kind: TargetFile, Ref: "/repo/pkg", Mode: AccessSearch, Recursive: true}},
			wantLabel: "Timeout in /repo/pkg"},
		{name: "Grep without a path searches the cwd", tool: "Grep", args: `{"pattern":"x"}`, cwd: "/repo",
			want:      []Target{self(TargetSearch, "x in /repo"), {Kind: TargetFile, Ref: "/repo", Mode: AccessSearch, Recursive: true}},
			wantLabel: "x in /repo"},
		{name: "Bash cat: the file is the target", tool: "Bash", args: `{"command":"cat /x/a.txt"}`,
			want:      []Target{{Kind: TargetCommand, Ref: "cat /x/a.txt", Mode: AccessMeta}, self(TargetFile, "/x/a.txt")},
			wantLabel: "cat /x/a.txt"},
		{name: "Bash with saved ref", tool: "Bash", args: `{"command":"make test"}`, savedRef: "/x/tool-results/abc.txt",
			want: []Target{self(TargetCommand, "make test"), self(TargetFile, "/x/tool-results/abc.txt")}, wantLabel: "make test"},
		{name: "Codex shell_command with workdir", tool: "shell_command", args: `{"command":"grep -n foo a.txt","workdir":"sub"}`, cwd: "/repo",
			want:      []Target{self(TargetCommand, "grep -n foo a.txt"), {Kind: TargetFile, Ref: "/repo/sub/a.txt", Mode: AccessSearch}},
			wantLabel: "grep -n foo a.txt"},
		{name: "Codex exec_command", tool: "exec_command", args: `{"cmd":"sed -n '5,9p' /x/a.txt"}`,
			want:      []Target{{Kind: TargetCommand, Ref: "sed -n '5,9p' /x/a.txt", Mode: AccessMeta}, self(TargetFile, "/x/a.txt")},
			wantLabel: "sed -n '5,9p' /x/a.txt"},
		{name: "Codex shell argv", tool: "shell", args: `{"command":["bash","-lc","cat /x/a.txt"]}`,
			want:      []Target{{Kind: TargetCommand, Ref: "cat /x/a.txt", Mode: AccessMeta}, self(TargetFile, "/x/a.txt")},
			wantLabel: "cat /x/a.txt"},
		{name: "unknown tool with a url reads it", tool: "mcp__browser__open", args: `{"url":"https://example.com/x"}`,
			want: []Target{self(TargetURL, "https://example.com/x")}, wantLabel: "https://example.com/x"},
		{name: "unknown tool: its own output", tool: "TodoWrite", args: `{"todos":[]}`,
			want: []Target{self(TargetOutput, "TodoWrite")}, wantLabel: ""},
		{name: "no arguments: the parser's target", tool: "Read", args: "", target: "/repo/a.go",
			want: []Target{self(TargetFile, "/repo/a.go")}, wantLabel: "/repo/a.go"},
		{name: "bad JSON", tool: "Read", args: `{"file_path":`,
			want: []Target{self(TargetOutput, "Read")}, wantLabel: ""},
		{name: "numbers as strings", tool: "Read", args: `{"file_path":"/a","offset":"10"}`,
			want: []Target{self(TargetFile, "/a")}, wantLabel: "/a"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := schema.ToolCall{Tool: tc.tool, Arguments: tc.args, Cwd: tc.cwd, Target: tc.target}
			c.SavedRef = tc.savedRef
			if got := Targets(c); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Targets\n got %+v\nwant %+v", got, tc.want)
			}
			if got := TargetLabel(c); got != tc.wantLabel {
				t.Errorf("TargetLabel = %q, want %q", got, tc.wantLabel)
			}
		})
	}
}

func TestPagedView(t *testing.T) {
	tests := []struct {
		name string
		tool string
		args string
		want view
	}{
		{"Read offset and limit, 1-based", "Read", `{"file_path":"/a","offset":2001,"limit":2000}`,
			view{known: true, unit: schema.UnitLines, sp: span{2000, 4000}, page: 2000}},
		{"Read offset only uses the default window", "Read", `{"file_path":"/a","offset":2001}`,
			view{known: true, unit: schema.UnitLines, sp: span{2000, 4000}, page: 2000}},
		{"Read offset 0 is the first line", "Read", `{"file_path":"/a","offset":0,"limit":10}`,
			view{known: true, unit: schema.UnitLines, sp: span{0, 10}, page: 10}},
		{"Read without paging is the whole file", "Read", `{"file_path":"/a"}`, view{whole: true, page: 2000}},
		{"Gemini read_file counts from 0", "read_file", `{"absolute_path":"/a","offset":100,"limit":50}`,
			view{known: true, unit: schema.UnitLines, sp: span{100, 150}, page: 50}},
		{"fetch start_index, default max_length", "mcp__fetch__fetch", `{"url":"https://e.com","start_index":5000}`,
			view{known: true, unit: schema.UnitChars, sp: span{5000, 10000}, page: 5000}},
		{"Grep content mode pages lines", "Grep", `{"pattern":"x","output_mode":"content","offset":250,"head_limit":250}`,
			view{known: true, unit: schema.UnitLines, sp: span{250, 500}, page: 250}},
		{"Grep default mode pages files", "Grep", `{"pattern":"x","offset":10}`,
			view{known: true, unit: schema.UnitFiles, sp: span{10, 260}, page: 250}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			acc := accessesOf(&schema.ToolCall{Tool: tc.tool, Arguments: tc.args})
			if len(acc) == 0 || !reflect.DeepEqual(acc[0].view, tc.want) {
				t.Errorf("view of %s %s\n got %+v\nwant %+v", tc.tool, tc.args, acc, tc.want)
			}
		})
	}
}
