package analysis

import (
	"reflect"
	"testing"

	"github.com/ctxaudit/ctxaudit/schema"
)

func lines(lo, hi uint64) view {
	return view{known: true, unit: schema.UnitLines, sp: span{lo, hi}, relative: true}
}

func TestShellAccesses(t *testing.T) {
	read := func(p string, v view) fileAccess { return fileAccess{path: p, mode: AccessRead, view: v} }
	search := func(p string) fileAccess { return fileAccess{path: p, mode: AccessSearch, view: wholeView} }
	meta := func(p string, v view) fileAccess { return fileAccess{path: p, mode: AccessMeta, view: v} }
	tests := []struct {
		name string
		cmd  string
		want []fileAccess
		pure bool
	}{
		{"cat one file", "cat /x/a.txt", []fileAccess{read("/x/a.txt", wholeView)}, true},
		{"relative path against cwd", "cat a.txt", []fileAccess{read("/repo/a.txt", wholeView)}, true},
		{"cd then relative", "cd /x/tool-results && cat abc.txt", []fileAccess{read("/x/tool-results/abc.txt", wholeView)}, true},
		{"sed line range", "sed -n '2001,4000p' /x/a.txt", []fileAccess{read("/x/a.txt", lines(2000, 4000))}, true},
		{"sed to the end", `sed -n "10,\$p" /x/a.txt`, []fileAccess{read("/x/a.txt", lines(9, openEnd))}, true},
		{"sed bundled -nE", "sed -nE '5p' f", []fileAccess{read("/repo/f", lines(4, 5))}, true},
		{"sed substitution reads an unknown part", "sed 's/a/b/' f", []fileAccess{read("/repo/f", view{relative: true})}, true},
		{"sed -n with a pattern only searches", "sed -n '/err/p' f", []fileAccess{search("/repo/f")}, false},
		{"sed -i edits", "sed -i 's/a/b/' f", []fileAccess{meta("/repo/f", view{})}, false},
		{"head -n", "head -n 100 f", []fileAccess{read("/repo/f", lines(0, 100))}, true},
		{"head -N", "head -50 f", []fileAccess{read("/repo/f", lines(0, 50))}, true},
		{"head default ten", "head f", []fileAccess{read("/repo/f", lines(0, 10))}, true},
		{"head -c bytes", "head -c 2000 f", []fileAccess{read("/repo/f", view{known: true, unit: schema.UnitBytes, sp: span{0, 2000}, relative: true})}, true},
		{"tail -n from the end", "tail -n 20 f", []fileAccess{read("/repo/f", view{known: true, unit: schema.UnitLines, fromEnd: 20, relative: true})}, true},
		{"tail -n +N to the end", "tail -n +2001 f", []fileAccess{read("/repo/f", lines(2000, openEnd))}, true},
		{"cat piped to head", "cat f | head -n 5", []fileAccess{read("/repo/f", lines(0, 5))}, true},
		{"cat -n piped to sed", "cat -n f | sed -n '11,20p'", []fileAccess{read("/repo/f", lines(10, 20))}, true},
		{"sed then head composes", "sed -n '101,200p' f | head -n 10", []fileAccess{read("/repo/f", lines(100, 110))}, true},
		{"cat piped to grep searches", "cat f | grep -i foo", []fileAccess{search("/repo/f")}, false},
		{"grep with options and paths", "grep -rn -A 3 --include=*.go Timeout /repo/pkg /repo/cmd",
			[]fileAccess{{path: "/repo/pkg", mode: AccessSearch, view: wholeView, recursive: true},
				{path: "/repo/cmd", mode: AccessSearch, view: wholeView, recursive: true}}, false},
		{"grep -e pattern", "grep -e foo -e bar f", []fileAccess{search("/repo/f")}, false},
		{"rg defaults to the cwd", "rg foo", []fileAccess{{path: "/repo", mode: AccessSearch, view: wholeView, recursive: true}}, false},
		{"rg -g glob path", "rg -g '*.txt' foo /x", []fileAccess{{path: "/x", mode: AccessSearch, view: wholeView, recursive: true}}, false},
		{"grep stdin from a file", "grep foo < /x/a.txt", []fileAccess{search("/x/a.txt")}, false},
		{"output redirected away is not seen", "cat f > /tmp/out", []fileAccess{meta("/repo/f", wholeView)}, false},
		{"stderr redirect keeps stdout", "cat f 2>/dev/null", []fileAccess{read("/repo/f", wholeView)}, true},
		{"merged streams keep stdout", "cat f 2>&1", []fileAccess{read("/repo/f", wholeView)}, true},
		{"wc only counts", "wc -l /x/a.txt", []fileAccess{meta("/x/a.txt", view{})}, false},
		{"cat piped to wc", "cat f | wc -l", []fileAccess{meta("/repo/f", wholeView)}, false},
		{"bash -lc script", `bash -lc "cd /x && sed -n '1,9p' a.txt"`, []fileAccess{read("/x/a.txt", lines(0, 9))}, true},
		{"env and sudo wrappers", "FOO=1 sudo -u root timeout 5 cat /etc/hosts", []fileAccess{read("/etc/hosts", wholeView)}, true},
		{"two outputs are not pure", "echo start; cat a; cat b",
			[]fileAccess{read("/repo/a", wholeView), read("/repo/b", wholeView)}, false},
		{"jq dot reads whole", "jq . data.json", []fileAccess{read("/repo/data.json", wholeView)}, true},
		{"jq filter searches", "jq '.items[0]' data.json", []fileAccess{search("/repo/data.json")}, false},
		{"awk processes", "awk 'NR>5' f", []fileAccess{search("/repo/f")}, false},
		{"python processes its files", "python3 parse.py /x/a.txt", []fileAccess{search("/repo/parse.py"), search("/x/a.txt")}, false},
		{"heredoc body is data", "cat <<'EOF' > /tmp/x.txt\ncat /secret/file\nEOF\ncat /x/a.txt",
			[]fileAccess{read("/x/a.txt", wholeView)}, true},
		{"comment ignored", "cat /x/a.txt # and /y/b.txt", []fileAccess{read("/x/a.txt", wholeView)}, true},
		{"unknown command names files", "make -f build/Makefile test", []fileAccess{meta("/repo/build/Makefile", view{})}, false},
		{"command substitution is one word", "cat $(ls /x | head -1)", []fileAccess{read("/repo/$(ls /x | head -1)", wholeView)}, true},
		{"git grep searches the tree", "git grep -n Timeout", []fileAccess{{path: "/repo", mode: AccessSearch, view: wholeView, recursive: true}}, false},
		{"empty", "", nil, false},
		{"unterminated quote does not panic", `cat "a.txt`, []fileAccess{read("/repo/a.txt", wholeView)}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, pure := shellAccesses(tc.cmd, "/repo")
			if !reflect.DeepEqual(got, tc.want) || pure != tc.pure {
				t.Errorf("shellAccesses(%q)\n got %+v pure=%v\nwant %+v pure=%v", tc.cmd, got, pure, tc.want, tc.pure)
			}
		})
	}
}

func TestParseShell(t *testing.T) {
	tests := []struct {
		name string
		cmd  string
		want []pipeline
	}{
		{"quotes and escapes", `grep "a b" 'c d' e\ f`, []pipeline{{{args: []string{"grep", "a b", "c d", "e f"}}}}},
		{"lists and pipes", "a && b | c; d || e & f",
			[]pipeline{{{args: []string{"a"}}}, {{args: []string{"b"}}, {args: []string{"c"}}}, {{args: []string{"d"}}}, {{args: []string{"e"}}}, {{args: []string{"f"}}}}},
		{"redirections", "cmd < in.txt > out.txt 2>&1",
			[]pipeline{{{args: []string{"cmd"}, stdin: "in.txt", stdoutAway: true}}}},
		{"fd 2 only", "cmd 2> err.txt", []pipeline{{{args: []string{"cmd"}}}}},
		{"both streams away", "cmd &> /dev/null", []pipeline{{{args: []string{"cmd"}, stdoutAway: true}}}},
		{"a quoted 2 is an argument", `echo "2" > f`, []pipeline{{{args: []string{"echo", "2"}, stdoutAway: true}}}},
		{"line continuation", "cat \\\n  a.txt", []pipeline{{{args: []string{"cat", "a.txt"}}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseShell(tc.cmd); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("parseShell(%q)\n got %+v\nwant %+v", tc.cmd, got, tc.want)
			}
		})
	}
}
