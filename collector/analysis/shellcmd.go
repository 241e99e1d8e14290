package analysis

import (
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/ctxaudit/ctxaudit/schema"
)

// fileAccess is one file a shell command touched, and how.
type fileAccess struct {
	path      string
	mode      AccessMode
	view      view
	recursive bool
}

// stageKind is what a command does with the files it names or with its stdin.
type stageKind uint8

const (
	stageNone   stageKind = iota // prints nothing read from a file (echo, cd)
	stageRead                    // prints (part of) the content: cat, head, sed -n 'a,bp'
	stageSearch                  // prints what matched or was computed: grep, awk, jq '.x'
	stageMeta                    // names files without printing their content: wc, ls, rm
)

type stageInfo struct {
	kind      stageKind
	op        rangeOp
	files     []string
	recursive bool
	// readsStdin: with no file operands the command filters its stdin.
	readsStdin bool
}

// Commands by what they do with their input. Extending this table is how
// ctxaudit learns a new command.
var (
	wholeReaders = setOf("cat", "bat", "batcat", "less", "more", "nl", "tac", "sort", "uniq",
		"column", "rev", "fold", "fmt", "xxd", "od", "hexdump", "zcat", "expand", "unexpand")
	processors = setOf("awk", "gawk", "mawk", "cut", "diff", "cmp", "comm", "strings", "tr",
		"python", "python3", "node", "perl", "ruby", "php", "deno", "bun", "yq", "xmllint", "csvlook")
	metaCommands = setOf("wc", "ls", "stat", "file", "du", "md5sum", "sha1sum", "sha256sum",
		"shasum", "cksum", "test", "[", "realpath", "readlink", "basename", "dirname", "touch",
		"rm", "mv", "cp", "mkdir", "rmdir", "chmod", "chown", "ln", "find", "tree", "base64", "open")
	silentCommands = setOf("echo", "printf", "true", "false", "export", "set", "unset", "cd",
		"pushd", "popd", "sleep", "wait", ":", "source", ".")
	shells   = setOf("bash", "sh", "zsh", "dash", "ksh")
	wrappers = setOf("sudo", "command", "builtin", "exec", "nohup", "time", "nice", "env",
		"stdbuf", "timeout", "ionice")
)

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// maxShellDepth bounds "bash -c '…bash -c …'" recursion.
const maxShellDepth = 3

// shellAccesses returns the files cmd touches and how, resolving relative
// paths against dir (following cd). pure reports that the command's output is
// nothing but one view of one file — "cat f", "cd d && sed -n '1,9p' f" — so
// the call's own forensics describe that file.
func shellAccesses(cmd, dir string) (acc []fileAccess, pure bool) {
	acc, outputs := shellAccessesDepth(cmd, dir, 0)
	pure = outputs == 1 && len(acc) == 1 && acc[0].mode == AccessRead
	return acc, pure
}

// shellAccessesDepth also returns how many pipelines may print something.
func shellAccessesDepth(cmd, dir string, depth int) ([]fileAccess, int) {
	var acc []fileAccess
	outputs := 0
	for _, pl := range parseShell(cmd) {
		if len(pl) == 1 {
			args := stripWrappers(pl[0].args)
			if len(args) > 0 {
				switch path.Base(args[0]) {
				case "cd", "pushd":
					if len(args) > 1 && args[1] != "-" {
						dir = resolvePath(args[1], dir)
					}
					continue
				}
				if script, ok := shellScript(args); ok {
					if depth < maxShellDepth {
						sub, n := shellAccessesDepth(script, dir, depth+1)
						acc = append(acc, sub...)
						outputs += n
					}
					continue
				}
				if silentCommands[path.Base(args[0])] {
					continue
				}
			}
		}
		if !pl[len(pl)-1].stdoutAway {
			outputs++
		}
		acc = append(acc, pipelineAccesses(pl, dir)...)
	}
	return acc, outputs
}

// pipelineAccesses follows what each stage reads down the pipe: "cat f | head
// -n 5" reads lines 1–5 of f; "cat f | grep x" only searches it.
func pipelineAccesses(pl pipeline, dir string) []fileAccess {
	var settled, flowing []fileAccess
	for k, st := range pl {
		args := stripWrappers(st.args)
		var info stageInfo
		if len(args) > 0 {
			info = classify(path.Base(args[0]), args[1:])
		} else {
			info = stageInfo{kind: stageRead, readsStdin: true} // bare "< f"
		}
		files := info.files
		if len(files) == 0 && st.stdin != "" && info.readsStdin {
			files = []string{st.stdin}
		}
		switch {
		case len(files) > 0:
			// A stage reading its own files ignores the pipe: what flowed
			// into it was never shown.
			settled = append(settled, demote(flowing)...)
			flowing = flowing[:0:0]
			for _, f := range files {
				flowing = append(flowing, stageAccess(info, resolvePath(f, dir)))
			}
		case k > 0 && info.readsStdin:
			for i := range flowing {
				flowing[i] = filterThrough(info, flowing[i])
			}
		case k > 0:
			settled = append(settled, demote(flowing)...)
			flowing = nil
		}
		if st.stdoutAway {
			settled = append(settled, demote(flowing)...)
			flowing = nil
		}
	}
	return append(settled, flowing...)
}

// stageAccess is how a stage touches one of its own file operands.
func stageAccess(info stageInfo, p string) fileAccess {
	fa := fileAccess{path: p, recursive: info.recursive}
	switch info.kind {
	case stageRead:
		fa.mode = AccessRead
		fa.view = info.op.apply(wholeView)
	case stageSearch:
		fa.mode = AccessSearch
		fa.view = wholeView
	default:
		fa.mode = AccessMeta
	}
	return fa
}

// filterThrough is what remains of an upstream access after a stage that
// reads it on stdin.
func filterThrough(info stageInfo, fa fileAccess) fileAccess {
	switch info.kind {
	case stageRead:
		fa.view = info.op.apply(fa.view)
	case stageSearch:
		if fa.mode == AccessRead {
			fa.mode = AccessSearch
		}
	default:
		fa.mode = AccessMeta
	}
	return fa
}

func demote(fas []fileAccess) []fileAccess {
	for i := range fas {
		fas[i].mode = AccessMeta
	}
	return fas
}

// stripWrappers drops leading variable assignments and wrappers such as
// sudo, env, timeout and time, returning the real command and its arguments.
func stripWrappers(args []string) []string {
	for range 8 {
		for len(args) > 0 && isAssignment(args[0]) {
			args = args[1:]
		}
		if len(args) == 0 || !wrappers[path.Base(args[0])] {
			return args
		}
		name := path.Base(args[0])
		args = args[1:]
		for len(args) > 0 && (strings.HasPrefix(args[0], "-") || isAssignment(args[0])) {
			takesValue := (name == "sudo" && (args[0] == "-u" || args[0] == "-g")) ||
				(name == "nice" && args[0] == "-n") || (name == "timeout" && (args[0] == "-s" || args[0] == "-k"))
			args = args[1:]
			if takesValue && len(args) > 0 {
				args = args[1:]
			}
		}
		if name == "timeout" && len(args) > 0 {
			args = args[1:] // the duration
		}
	}
	return args
}

func isAssignment(w string) bool {
	eq := strings.IndexByte(w, '=')
	if eq <= 0 {
		return false
	}
	for i := 0; i < eq; i++ {
		c := w[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// shellScript returns the script of "bash -c SCRIPT" / "sh -lc SCRIPT".
func shellScript(args []string) (string, bool) {
	if len(args) < 3 || !shells[path.Base(args[0])] {
		return "", false
	}
	for i := 1; i+1 < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || strings.HasPrefix(a, "--") {
			return "", false
		}
		if strings.ContainsRune(a, 'c') {
			return args[i+1], true
		}
	}
	return "", false
}

// classify describes one simple command.
func classify(name string, args []string) stageInfo {
	switch {
	case name == "head" || name == "tail":
		op, files := parseHeadTail(args, name == "tail")
		return stageInfo{kind: stageRead, op: op, files: files, readsStdin: true}
	case name == "sed":
		return classifySed(args)
	case name == "grep" || name == "egrep" || name == "fgrep" || name == "zgrep":
		return classifyGrep(args, grepValueOpts, false)
	case name == "rg" || name == "ag" || name == "ack":
		return classifyGrep(args, rgValueOpts, true)
	case name == "git" && len(args) > 0 && args[0] == "grep":
		info := classifyGrep(args[1:], grepValueOpts, true)
		if len(info.files) == 0 {
			info.files = []string{"."}
		}
		return info
	case name == "jq":
		return classifyJq(args)
	case name == "tee":
		return stageInfo{kind: stageRead, readsStdin: true} // its operands are outputs
	case wholeReaders[name]:
		return stageInfo{kind: stageRead, files: operands(args), readsStdin: true}
	case processors[name]:
		return stageInfo{kind: stageSearch, files: processorFiles(name, args), readsStdin: true}
	case silentCommands[name]:
		return stageInfo{kind: stageNone}
	case metaCommands[name]:
		return stageInfo{kind: stageMeta, files: pathLike(args)}
	}
	// Unknown commands: the files they name are recorded, not counted as read.
	return stageInfo{kind: stageMeta, files: pathLike(args)}
}

// processorFiles are the files a processor reads: its operands, less an
// inline program (awk's script, python -c CODE) and option values.
func processorFiles(name string, args []string) []string {
	var valueOpts map[string]bool
	inlineScript := false
	switch name {
	case "awk", "gawk", "mawk":
		valueOpts, inlineScript = setOf("-F", "-v", "-f"), true
	case "python", "python3", "node", "perl", "ruby", "php", "deno", "bun":
		valueOpts = setOf("-c", "-e", "-m", "-W", "-X", "-r", "--eval", "--require")
	case "cut":
		valueOpts = setOf("-b", "-c", "-d", "-f")
	}
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i+1:]...)
		}
		if valueOpts[a] {
			if a == "-f" && inlineScript {
				inlineScript = false // the program comes from a file
			}
			i++
			continue
		}
		if strings.HasPrefix(a, "-") && a != "-" {
			continue
		}
		if inlineScript {
			inlineScript = false
			continue
		}
		out = append(out, a)
	}
	return out
}

// operands are the non-option arguments.
func operands(args []string) []string {
	var out []string
	for i, a := range args {
		if a == "--" {
			return append(out, args[i+1:]...)
		}
		if strings.HasPrefix(a, "-") && a != "-" {
			continue
		}
		if a != "-" {
			out = append(out, a)
		}
	}
	return out
}

// pathLike are the arguments that look like file paths.
func pathLike(args []string) []string {
	var out []string
	for _, a := range args {
		if a == "" || strings.HasPrefix(a, "-") || strings.ContainsAny(a, " \t\n$*?{}=") {
			continue
		}
		if strings.Contains(a, "/") || strings.Contains(strings.TrimPrefix(a, "."), ".") {
			out = append(out, a)
		}
	}
	return out
}

// parseHeadTail reads head/tail options: -n N, -N, -n +N (tail: from line
// N), -c N (bytes), --lines=N, --bytes=N.
func parseHeadTail(args []string, tail bool) (rangeOp, []string) {
	count, unit := "10", schema.UnitLines
	var files []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			files = append(files, args[i+1:]...)
			i = len(args)
		case a == "-n" || a == "-c" || a == "--lines" || a == "--bytes":
			if i+1 < len(args) {
				count = args[i+1]
				i++
			}
			unit = headTailUnit(a)
		case strings.HasPrefix(a, "--lines=") || strings.HasPrefix(a, "--bytes="):
			count = a[strings.IndexByte(a, '=')+1:]
			unit = headTailUnit(a)
		case len(a) > 2 && (strings.HasPrefix(a, "-n") || strings.HasPrefix(a, "-c")):
			count, unit = a[2:], headTailUnit(a)
		case len(a) > 1 && a[0] == '-' && allDigits(a[1:]):
			count, unit = a[1:], schema.UnitLines
		case tail && len(a) > 1 && a[0] == '+' && allDigits(a[1:]):
			count, unit = a, schema.UnitLines
		case strings.HasPrefix(a, "-") && a != "-":
			// -q, -v, -f, -F, --follow…: no effect on what is shown
		default:
			files = append(files, a)
		}
	}
	fromStart := strings.HasPrefix(count, "+")
	n, err := strconv.ParseUint(strings.TrimPrefix(count, "+"), 10, 64)
	switch {
	case err != nil:
		return rangeOp{kind: opUnknown}, files // "-n -5", "1K": not modelled
	case tail && fromStart:
		return rangeOp{kind: opLines, unit: unit, a: n, b: openEnd}, files
	case tail:
		return rangeOp{kind: opTail, unit: unit, n: n}, files
	}
	return rangeOp{kind: opHead, unit: unit, n: n}, files
}

func headTailUnit(opt string) schema.Unit {
	if strings.HasPrefix(opt, "-c") || strings.HasPrefix(opt, "--bytes") {
		return schema.UnitBytes
	}
	return schema.UnitLines
}

// sedPrintRange matches a sed -n script printing a line range: "10p",
// "2001,4000p", "10,$p".
var sedPrintRange = regexp.MustCompile(`^\s*(\d+)\s*(?:,\s*(\d+|\$)\s*)?p\s*$`)

// sedQuit matches "100q", which prints lines 1–100 when -n is absent.
var sedQuit = regexp.MustCompile(`^\s*(\d+)\s*q\s*$`)

func classifySed(args []string) stageInfo {
	quiet, inPlace := false, false
	var scripts, rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			rest = append(rest, args[i+1:]...)
			i = len(args)
		case a == "-e" || a == "--expression" || a == "-f" || a == "--file" || a == "-l":
			if i+1 < len(args) {
				if a == "-e" || a == "--expression" {
					scripts = append(scripts, args[i+1])
				} else if a != "-l" {
					scripts = append(scripts, "") // script file: content unknown
				}
				i++
			}
		case strings.HasPrefix(a, "--expression="):
			scripts = append(scripts, a[len("--expression="):])
		case a == "-n" || a == "--quiet" || a == "--silent":
			quiet = true
		case strings.HasPrefix(a, "-i") || strings.HasPrefix(a, "--in-place"):
			inPlace = true
		case strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && len(a) > 1:
			quiet = quiet || strings.ContainsRune(a, 'n') // "-nE"
			inPlace = inPlace || strings.ContainsRune(a, 'i')
		case strings.HasPrefix(a, "-") && a != "-":
		default:
			rest = append(rest, a)
		}
	}
	if len(scripts) == 0 && len(rest) > 0 {
		scripts, rest = rest[:1], rest[1:]
	}
	if inPlace {
		return stageInfo{kind: stageMeta, files: rest}
	}
	info := stageInfo{kind: stageRead, files: rest, readsStdin: true, op: rangeOp{kind: opUnknown}}
	script := strings.Join(scripts, ";")
	if m := sedPrintRange.FindStringSubmatch(script); quiet && m != nil {
		a, _ := strconv.ParseUint(m[1], 10, 64)
		b := a
		switch {
		case m[2] == "$":
			b = openEnd
		case m[2] != "":
			b, _ = strconv.ParseUint(m[2], 10, 64)
		}
		if a == 0 && b == 0 || b < a {
			return info
		}
		info.op = rangeOp{kind: opLines, unit: schema.UnitLines, a: a, b: b}
		return info
	}
	if m := sedQuit.FindStringSubmatch(script); !quiet && m != nil {
		n, _ := strconv.ParseUint(m[1], 10, 64)
		info.op = rangeOp{kind: opHead, unit: schema.UnitLines, n: n}
		return info
	}
	if quiet {
		info.kind = stageSearch // prints only what its script selects
	}
	return info
}

// Options that take a separate value, per grep dialect; every other option
// is a flag (short flags may be bundled, "-rn").
var (
	grepValueOpts = setOf("-e", "-f", "-m", "-A", "-B", "-C", "-d", "-D", "--regexp", "--file",
		"--max-count", "--after-context", "--before-context", "--context", "--label", "--devices",
		"--directories", "--binary-files", "--include", "--exclude", "--exclude-dir", "--group-separator")
	rgValueOpts = setOf("-e", "-f", "-g", "-t", "-T", "-m", "-A", "-B", "-C", "-M", "-j", "-r", "-E",
		"-d", "--regexp", "--file", "--glob", "--iglob", "--type", "--type-not", "--max-count",
		"--after-context", "--before-context", "--context", "--max-columns", "--threads",
		"--replace", "--encoding", "--max-depth", "--sort", "--sortr", "--max-filesize",
		"--type-add", "--pre", "--pre-glob", "--engine", "--path-separator", "--ignore-file",
		"--context-separator", "--field-match-separator", "--colors", "--color", "-G", "--ignore-dir")
)

// classifyGrep reads a grep-like command: the first operand is the pattern
// unless -e/-f gave one, the rest are the paths searched.
func classifyGrep(args []string, valueOpts map[string]bool, recursive bool) stageInfo {
	patternGiven, listOnly := false, false
	var ops []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "--"):
			name := a
			if eq := strings.IndexByte(a, '='); eq >= 0 {
				name = a[:eq]
			} else if valueOpts[a] && i+1 < len(args) {
				i++
			}
			switch name {
			case "--regexp", "--file":
				patternGiven = true
			case "--recursive", "--dereference-recursive":
				recursive = true
			case "--files":
				listOnly = true
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			// Bundled short options; the first that takes a value takes the
			// rest of the word or the next argument.
			for j := 1; j < len(a); j++ {
				opt := "-" + a[j:j+1]
				switch a[j] {
				case 'r', 'R':
					if !valueOpts[opt] {
						recursive = true
					}
				}
				if valueOpts[opt] {
					if opt == "-e" || opt == "-f" {
						patternGiven = true
					}
					if j == len(a)-1 && i+1 < len(args) {
						i++
					}
					break
				}
			}
		default:
			ops = append(ops, a)
		}
	}
	if !patternGiven && len(ops) > 0 {
		ops = ops[1:]
	}
	if listOnly {
		return stageInfo{kind: stageMeta, files: ops}
	}
	info := stageInfo{kind: stageSearch, files: ops, recursive: recursive, readsStdin: !recursive}
	if recursive && len(ops) == 0 {
		info.files = []string{"."}
	}
	return info
}

// classifyJq: "jq . f" prints the whole document; any other filter selects.
func classifyJq(args []string) stageInfo {
	var ops []string
	filterGiven := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch a {
		case "--arg", "--argjson", "--slurpfile", "--rawfile":
			i += 2
			continue
		case "-f", "--from-file", "--indent":
			if a != "--indent" {
				filterGiven = true
			}
			i++
			continue
		case "--args", "--jsonargs":
			i = len(args)
			continue
		}
		if strings.HasPrefix(a, "-") && a != "-" {
			continue
		}
		ops = append(ops, a)
	}
	info := stageInfo{kind: stageSearch, readsStdin: true}
	if !filterGiven && len(ops) > 0 {
		if strings.TrimSpace(ops[0]) == "." {
			info.kind = stageRead
		}
		ops = ops[1:]
	}
	info.files = ops
	return info
}
