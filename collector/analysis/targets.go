package analysis

import (
	"encoding/json"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/ctxaudit/ctxaudit/schema"
)

// AccessMode is how a call touched a target.
type AccessMode uint8

const (
	// AccessRead: (part of) the target's content entered the context.
	AccessRead AccessMode = iota + 1
	// AccessSearch: the target was searched or processed as a whole; only
	// what matched was shown, so it counts as searched, not as read.
	AccessSearch
	// AccessMeta: the target was named (ls, wc, rm) but its content not shown.
	AccessMeta
	// AccessWrite: the target was changed (Edit, Write).
	AccessWrite
)

func (m AccessMode) String() string {
	switch m {
	case AccessRead:
		return "read"
	case AccessSearch:
		return "search"
	case AccessMeta:
		return "meta"
	case AccessWrite:
		return "write"
	}
	return "unknown"
}

// TargetKind says what a target is.
type TargetKind string

const (
	TargetFile    TargetKind = "file"
	TargetURL     TargetKind = "url"
	TargetSearch  TargetKind = "search"  // a search's own result list (Grep pattern in path)
	TargetCommand TargetKind = "command" // a shell command's own output
	TargetOutput  TargetKind = "output"  // any other tool's own output
)

// Target is one thing a call touched.
type Target struct {
	Kind TargetKind
	// Ref is the path, URL, "pattern in path" or command, as a person reads it.
	Ref  string
	Mode AccessMode
	// Self: the call's own output is this target's content, so the call's
	// forensics (shown, total) describe it. A saved_ref is a Self target.
	Self bool
	// Recursive: a search over a directory, reaching every file below Ref.
	Recursive bool
}

// access is a Target with its identity key and the view it asked for.
type access struct {
	Target
	// key identifies the target across calls: "file:/abs/path",
	// "url:https://host/p", "search:{…}", "cmd:dir\x00command", "out:…".
	key  string
	view view
}

// Targets lists what a call touched, in a stable order: the target its own
// output belongs to (the file, URL or search result list; for a shell call,
// the command, which is the target itself unless the command merely prints
// one file), then the files a write, search or command names, then the saved
// full output (saved_ref), which is also a Self target.
func Targets(c schema.ToolCall) []Target {
	acc := accessesOf(&c)
	out := make([]Target, len(acc))
	for i, a := range acc {
		out[i] = a.Target
	}
	return out
}

// TargetLabel is the one-line description of what a call read — the file,
// URL, search or command — for ToolCall.Target and for verdict sentences.
func TargetLabel(c schema.ToolCall) string {
	if c.Target != "" {
		return c.Target
	}
	return labelOf(accessesOf(&c))
}

func labelOf(acc []access) string {
	for _, a := range acc {
		if a.Kind == TargetCommand {
			return a.Ref
		}
	}
	for _, a := range acc {
		if a.Self && a.Kind != TargetOutput {
			return a.Ref
		}
	}
	for _, a := range acc {
		if a.Kind != TargetOutput {
			return a.Ref
		}
	}
	return ""
}

// accessesOf extracts the targets of one call from its tool name and
// arguments. It never fails: arguments it cannot read leave only the call's
// own output as its target.
func accessesOf(c *schema.ToolCall) []access {
	spec := specFor(c.Tool)
	a := parseArgs(c.Arguments)
	if spec.class == classOutput && a.str("url") != "" {
		spec = specWebFetch // an unknown tool given a URL reads that URL
	}
	var acc []access
	switch spec.class {
	case classRead, classFetch:
		acc = readAccess(c, spec, a)
	case classWrite:
		if p := resolvePath(a.str(spec.pathArgs...), c.Cwd); p != "" {
			acc = append(acc, access{Target: Target{Kind: TargetFile, Ref: p, Mode: AccessWrite}, key: "file:" + p})
		}
	case classSearch:
		acc = searchAccess(c, spec, a)
	case classShell:
		acc = shellCallAccess(c, spec, a)
	}
	if !hasSelf(acc) {
		acc = append([]access{{
			Target: Target{Kind: TargetOutput, Ref: c.Tool, Mode: AccessRead, Self: true},
			key:    "out:" + c.Tool + "\x00" + c.Arguments,
			view:   wholeView,
		}}, acc...)
	}
	if ref := strings.TrimSpace(c.SavedRef); ref != "" {
		// The saved file is the whole original; the call's Shown counts in it.
		k, kind := "file:"+resolvePath(ref, c.Cwd), TargetFile
		if isURL(ref) {
			k, kind = "url:"+normalizeURL(ref), TargetURL
		}
		acc = append(acc, access{Target: Target{Kind: kind, Ref: ref, Mode: AccessRead, Self: true}, key: k, view: wholeView})
	}
	return acc
}

func hasSelf(acc []access) bool {
	for _, a := range acc {
		if a.Self {
			return true
		}
	}
	return false
}

// readAccess is a Read of a file or a fetch of a URL, with its paging.
func readAccess(c *schema.ToolCall, spec toolSpec, a args) []access {
	ref := a.str(spec.pathArgs...)
	if a == nil && c.Target != "" {
		ref = c.Target // no arguments recorded (e.g. an OTel span): trust the parser
	}
	var t Target
	var key string
	switch {
	case ref == "":
		return nil
	case isURL(ref):
		u := normalizeURL(ref)
		t, key = Target{Kind: TargetURL, Ref: ref}, "url:"+u
	case spec.class == classFetch:
		return nil
	default:
		p := resolvePath(ref, c.Cwd)
		t, key = Target{Kind: TargetFile, Ref: p}, "file:"+p
	}
	t.Mode, t.Self = AccessRead, true
	return []access{{Target: t, key: key, view: pagedView(spec, spec.unit, a)}}
}

// pagedView is the window a paging call asked for; no paging argument means
// the whole target.
func pagedView(spec toolSpec, unit schema.Unit, a args) view {
	off, hasOff := a.num(spec.offsetArg)
	lim, hasLim := a.num(spec.limitArg)
	if !hasOff && !hasLim {
		return view{whole: true, page: spec.defaultLimit}
	}
	v := view{known: unit != schema.UnitNone, unit: unit, page: spec.defaultLimit}
	if hasLim && lim > 0 {
		v.page = lim
	}
	lo := off - min(off, spec.firstOffset)
	v.sp = span{lo, openEnd}
	if v.page > 0 {
		v.sp.hi = satAdd(lo, v.page)
	}
	return v
}

// searchAccess is a Grep: its own result list, paged by offset/head_limit,
// and a search over every file below its path.
func searchAccess(c *schema.ToolCall, spec toolSpec, a args) []access {
	pattern := a.str(spec.patternArg)
	p := resolvePath(a.str(spec.pathArgs...), c.Cwd)
	if p == "" {
		p = path.Clean(c.Cwd)
	}
	// The result list's identity is every argument except the paging ones.
	ident := make(map[string]json.RawMessage, len(a))
	for k, v := range a {
		if k != spec.offsetArg && k != spec.limitArg {
			ident[k] = v
		}
	}
	ident[" path"] = json.RawMessage(strconv.Quote(p))
	idJSON, _ := json.Marshal(ident) // keys sorted: a stable identity

	unit := spec.unit
	if unit == schema.UnitNone {
		unit = grepUnit(a.str(spec.modeArg))
	}
	v := pagedView(spec, unit, a)
	label := pattern + " in " + p
	acc := []access{{Target: Target{Kind: TargetSearch, Ref: label, Mode: AccessRead, Self: true},
		key: "search:" + string(idJSON), view: v}}
	if p != "" && p != "." {
		acc = append(acc, access{Target: Target{Kind: TargetFile, Ref: p, Mode: AccessSearch, Recursive: true},
			key: "file:" + p, view: wholeView})
	}
	return acc
}

// grepUnit is the unit of a Claude Code Grep result list by output_mode:
// file names by default, lines for content and count.
func grepUnit(mode string) schema.Unit {
	switch mode {
	case "content", "count":
		return schema.UnitLines
	}
	return schema.UnitFiles
}

// shellCallAccess is a shell command: when its output is one view of one
// file ("cat f", "sed -n '1,9p' f") that file is its own target; otherwise
// the command's output is, and the files it names are touched as it says.
func shellCallAccess(c *schema.ToolCall, spec toolSpec, a args) []access {
	cmd := a.str(spec.commandArgs...)
	if cmd == "" {
		if argv := a.strs(spec.commandArgs...); len(argv) > 0 {
			if script, ok := shellScript(argv); ok {
				cmd = script
			} else {
				cmd = strings.Join(argv, " ")
			}
		}
	}
	if cmd == "" && a == nil {
		cmd = c.Target
	}
	cmd = strings.TrimSpace(cmd)
	if cmd == "" {
		return nil
	}
	dir := c.Cwd
	if d := a.str(spec.dirArgs...); d != "" {
		dir = resolvePath(d, c.Cwd)
	}
	files, pure := shellAccesses(cmd, dir)
	// The command's own output is the target unless it is nothing but a
	// view of one file; either way the command labels the call.
	mode := AccessRead
	if pure {
		mode = AccessMeta
	}
	acc := []access{{Target: Target{Kind: TargetCommand, Ref: cmd, Mode: mode, Self: !pure},
		key: "cmd:" + dir + "\x00" + cmd, view: wholeView}}
	for _, f := range files {
		if f.path == "" {
			continue
		}
		acc = append(acc, access{
			Target: Target{Kind: TargetFile, Ref: f.path, Mode: f.mode, Self: pure, Recursive: f.recursive},
			key:    "file:" + f.path, view: f.view,
		})
	}
	return acc
}

// args is a call's JSON input, decoded one level deep.
type args map[string]json.RawMessage

// parseArgs decodes a JSON object; anything else gives nil.
func parseArgs(s string) args {
	s = strings.TrimSpace(s)
	if s == "" || s[0] != '{' {
		return nil
	}
	var a args
	if json.Unmarshal([]byte(s), &a) != nil {
		return nil
	}
	return a
}

// str is the first of names holding a non-empty string.
func (a args) str(names ...string) string {
	for _, n := range names {
		raw, ok := a[n]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// strs is the first of names holding an array of strings.
func (a args) strs(names ...string) []string {
	for _, n := range names {
		raw, ok := a[n]
		if !ok {
			continue
		}
		var s []string
		if json.Unmarshal(raw, &s) == nil && len(s) > 0 {
			return s
		}
	}
	return nil
}

// num reads a non-negative integer given as a JSON number or numeric string.
func (a args) num(name string) (uint64, bool) {
	raw, ok := a[name]
	if name == "" || !ok {
		return 0, false
	}
	text := strings.Trim(strings.TrimSpace(string(raw)), `"`)
	if n, err := strconv.ParseUint(text, 10, 64); err == nil {
		return n, true
	}
	if f, err := strconv.ParseFloat(text, 64); err == nil && f >= 0 && f < 1<<53 {
		return uint64(f), true
	}
	return 0, false
}

// resolvePath makes p absolute against dir and cleans it; "~" paths and
// paths with no directory to resolve against stay as written (cleaned).
func resolvePath(p, dir string) string {
	p = strings.TrimSpace(p)
	if p == "" {
		return ""
	}
	if !path.IsAbs(p) && !strings.HasPrefix(p, "~") && dir != "" && !looksWindows(p) {
		p = path.Join(dir, p)
	}
	return path.Clean(p)
}

func looksWindows(p string) bool {
	return len(p) >= 2 && p[1] == ':' || strings.HasPrefix(p, `\\`)
}

func isURL(s string) bool {
	l := strings.ToLower(s)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

// normalizeURL lower-cases scheme and host and drops the fragment, which the
// server never sees, so that one page has one key.
func normalizeURL(s string) string {
	s = strings.TrimSpace(s)
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return s
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}
