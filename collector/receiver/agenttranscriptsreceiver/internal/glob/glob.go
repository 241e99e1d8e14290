// Package glob matches file paths against include/exclude patterns with
// `**` and finds the matching files by walking only the folders a pattern
// can reach.
//
// A pattern is a path whose elements use path.Match syntax (`*`, `?`,
// `[...]`, `\` escapes) within one element, plus `**` as a whole element,
// which matches zero or more elements: `/home/u/.claude/projects/**/*.jsonl`
// matches every .jsonl file at any depth below projects.
package glob

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Pattern is a compiled glob.
type Pattern struct {
	raw   string
	elems []string // slash-separated elements, consecutive "**" collapsed
	root  string   // the static folder the pattern starts below (OS form)
}

// ErrEmpty is returned for an empty pattern.
var ErrEmpty = errors.New("empty pattern")

// Compile checks a pattern's syntax and prepares it for matching. Relative
// patterns are made absolute against the working directory.
func Compile(p string) (Pattern, error) {
	if strings.TrimSpace(p) == "" {
		return Pattern{}, ErrEmpty
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return Pattern{}, fmt.Errorf("%q: %w", p, err)
	}
	slashed := filepath.ToSlash(abs)
	var elems []string
	for _, e := range strings.Split(slashed, "/") {
		if e == "" {
			continue
		}
		if e == "**" && len(elems) > 0 && elems[len(elems)-1] == "**" {
			continue
		}
		if e != "**" {
			if _, err := path.Match(e, ""); err != nil {
				return Pattern{}, fmt.Errorf("%q: %w", p, err)
			}
		}
		elems = append(elems, e)
	}
	if len(elems) == 0 {
		return Pattern{}, fmt.Errorf("%q: matches no file", p)
	}
	static := 0
	for static < len(elems) && !hasMeta(elems[static]) {
		static++
	}
	root := rootOf(slashed, elems[:static])
	return Pattern{raw: p, elems: elems, root: root}, nil
}

// rootOf rebuilds the static prefix as an OS path, keeping a leading slash
// (POSIX) or volume (Windows).
func rootOf(slashed string, static []string) string {
	joined := strings.Join(static, "/")
	if strings.HasPrefix(slashed, "/") {
		joined = "/" + joined
	}
	if vol := filepath.VolumeName(filepath.FromSlash(slashed)); vol != "" && len(static) == 1 {
		joined += "/" // "C:" alone is the current folder of drive C
	}
	return filepath.FromSlash(joined)
}

func hasMeta(e string) bool { return strings.ContainsAny(e, `*?[\`) }

// String returns the pattern as written.
func (p Pattern) String() string { return p.raw }

// Root is the deepest folder that contains every path the pattern matches.
func (p Pattern) Root() string { return p.root }

// Match reports whether the file path name matches the pattern.
func (p Pattern) Match(name string) bool {
	if len(p.elems) == 0 {
		return false
	}
	return matchElems(p.elems, splitPath(name))
}

// mayMatchBelow reports whether some file below the folder dir could match.
func (p Pattern) mayMatchBelow(dir []string) bool {
	for i, d := range dir {
		if i >= len(p.elems) {
			return false
		}
		e := p.elems[i]
		if e == "**" {
			return true
		}
		if ok, _ := path.Match(e, d); !ok {
			return false
		}
	}
	return len(p.elems) > len(dir)
}

func splitPath(name string) []string {
	var out []string
	for _, e := range strings.Split(filepath.ToSlash(name), "/") {
		if e != "" {
			out = append(out, e)
		}
	}
	return out
}

func matchElems(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			rest := pat[1:]
			if len(rest) == 0 {
				return true
			}
			for i := 0; i < len(name); i++ {
				if matchElems(rest, name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// Matcher is a set of include and exclude patterns.
type Matcher struct {
	Include []Pattern
	Exclude []Pattern
}

// NewMatcher compiles include and exclude patterns; the error names the
// first bad one.
func NewMatcher(include, exclude []string) (*Matcher, error) {
	m := &Matcher{}
	for _, p := range include {
		c, err := Compile(p)
		if err != nil {
			return nil, fmt.Errorf("include: %w", err)
		}
		m.Include = append(m.Include, c)
	}
	for _, p := range exclude {
		c, err := Compile(p)
		if err != nil {
			return nil, fmt.Errorf("exclude: %w", err)
		}
		m.Exclude = append(m.Exclude, c)
	}
	return m, nil
}

// Match reports whether a file path is included and not excluded.
func (m *Matcher) Match(name string) bool {
	included := false
	for _, p := range m.Include {
		if p.Match(name) {
			included = true
			break
		}
	}
	if !included {
		return false
	}
	for _, p := range m.Exclude {
		if p.Match(name) {
			return false
		}
	}
	return true
}

// checkEvery is how many walked entries pass between context checks.
const checkEvery = 256

// Find walks the roots of the include patterns and returns the regular files
// (or symlinks to regular files) that match, sorted and without duplicates.
// Roots that do not exist and folders that cannot be read are skipped: a
// harness that is not installed is not an error. Only cancellation fails it.
func (m *Matcher) Find(ctx context.Context) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	n := 0
	for _, inc := range m.Include {
		root := inc.Root()
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if n++; n%checkEvery == 0 {
				if cerr := ctx.Err(); cerr != nil {
					return cerr
				}
			}
			if err != nil {
				if d != nil && d.IsDir() && p != root {
					return fs.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				if p != root && !inc.mayMatchBelow(splitPath(p)) {
					return fs.SkipDir
				}
				return nil
			}
			if seen[p] || !m.Match(p) {
				return nil
			}
			if !d.Type().IsRegular() {
				if d.Type()&fs.ModeSymlink == 0 {
					return nil
				}
				st, err := os.Stat(p)
				if err != nil || !st.Mode().IsRegular() {
					return nil
				}
			}
			seen[p] = true
			out = append(out, p)
			return nil
		})
		if err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
			return nil, err
		}
	}
	sort.Strings(out)
	return out, nil
}
