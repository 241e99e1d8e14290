package tail

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

	"github.com/bmatcuk/doublestar/v4"
)

// The include and exclude patterns use doublestar syntax: `*`, `?`, `[...]`,
// `{a,b}` and `\` escapes within one path element, and `**` as a whole
// element for zero or more folders. Patterns are matched on absolute,
// slash-separated paths; a relative pattern is taken against the working
// directory; expanding a leading `~` is the caller's.

// filePattern is one validated pattern, split into the static folder it
// starts below and the part doublestar walks.
type filePattern struct {
	raw     string // as written (after ~ expansion)
	slashed string // absolute, slash-separated: what paths are matched against
	base    string // static folder prefix, OS form
	rest    string // the pattern below base, slash-separated
}

// compilePattern checks a pattern's syntax and prepares it for matching.
func compilePattern(p string) (filePattern, error) {
	if strings.TrimSpace(p) == "" {
		return filePattern{}, errors.New("empty pattern")
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return filePattern{}, fmt.Errorf("%q: %w", p, err)
	}
	slashed := filepath.ToSlash(abs)
	if !doublestar.ValidatePattern(slashed) {
		return filePattern{}, fmt.Errorf("%q: %w", p, doublestar.ErrBadPattern)
	}
	base, rest := doublestar.SplitPattern(slashed)
	if rest == "" {
		return filePattern{}, fmt.Errorf("%q: matches no file", p)
	}
	return filePattern{raw: p, slashed: slashed, base: filepath.FromSlash(base), rest: rest}, nil
}

// CheckPattern checks a pattern's syntax and returns the static folder it
// starts below (what a walk of it would read).
func CheckPattern(p string) (base string, err error) {
	c, err := compilePattern(p)
	return c.base, err
}

func (p filePattern) match(name string) bool {
	return doublestar.MatchUnvalidated(p.slashed, filepath.ToSlash(name))
}

// Finder finds the files to follow: a set of include and exclude patterns.
type Finder struct {
	include []filePattern
	exclude []filePattern
}

// NewFinder compiles include and exclude patterns (already ~-expanded);
// the error names the list of the first bad one.
func NewFinder(include, exclude []string) (*Finder, error) {
	m := &Finder{}
	for _, p := range include {
		c, err := compilePattern(p)
		if err != nil {
			return nil, fmt.Errorf("include: %w", err)
		}
		m.include = append(m.include, c)
	}
	for _, p := range exclude {
		c, err := compilePattern(p)
		if err != nil {
			return nil, fmt.Errorf("exclude: %w", err)
		}
		m.exclude = append(m.exclude, c)
	}
	return m, nil
}

// match reports whether a file path is included and not excluded.
func (m *Finder) match(name string) bool {
	included := false
	for _, p := range m.include {
		if p.match(name) {
			included = true
			break
		}
	}
	if !included {
		return false
	}
	for _, p := range m.exclude {
		if p.match(name) {
			return false
		}
	}
	return true
}

// Find returns the regular files (or symlinks to regular files) that an
// include pattern matches and no exclude pattern does, sorted and without
// duplicates. doublestar walks only the folders a pattern can reach and does
// not descend into symlinked folders (no loops). Folders that do not exist
// or cannot be read are skipped: a harness that is not installed is not an
// error. Only cancellation fails it; it is checked per pattern and per match.
func (m *Finder) Find(ctx context.Context) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, inc := range m.include {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		err := doublestar.GlobWalk(os.DirFS(inc.base), inc.rest, func(rel string, d fs.DirEntry) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			p := filepath.Join(inc.base, filepath.FromSlash(path.Clean(rel)))
			if seen[p] || d.IsDir() || !m.match(p) {
				return nil
			}
			if !d.Type().IsRegular() {
				st, err := os.Stat(p) // a symlink counts if it leads to a regular file
				if err != nil || !st.Mode().IsRegular() {
					return nil
				}
			}
			seen[p] = true
			out = append(out, p)
			return nil
		}, doublestar.WithNoFollow())
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return nil, ctxErr
			}
			return nil, fmt.Errorf("include %q: %w", inc.raw, err)
		}
	}
	sort.Strings(out)
	return out, nil
}
