package agenttranscriptsreceiver // import "github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver"

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
// directory and a leading `~` is the home folder (expandHome, applied by the
// caller).

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

func (p filePattern) match(name string) bool {
	return doublestar.MatchUnvalidated(p.slashed, filepath.ToSlash(name))
}

// fileMatcher is the receiver's set of include and exclude patterns.
type fileMatcher struct {
	include []filePattern
	exclude []filePattern
}

// newFileMatcher compiles include and exclude patterns (already ~-expanded);
// the error names the list of the first bad one.
func newFileMatcher(include, exclude []string) (*fileMatcher, error) {
	m := &fileMatcher{}
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
func (m *fileMatcher) match(name string) bool {
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

// find returns the regular files (or symlinks to regular files) that an
// include pattern matches and no exclude pattern does, sorted and without
// duplicates. doublestar walks only the folders a pattern can reach and does
// not descend into symlinked folders (no loops). Folders that do not exist
// or cannot be read are skipped: a harness that is not installed is not an
// error. Only cancellation fails it; it is checked per pattern and per match.
func (m *fileMatcher) find(ctx context.Context) ([]string, error) {
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

// matcherFor builds the matcher of a configuration, with `~` expanded to the
// current user's home folder.
func matcherFor(cfg *Config) (*fileMatcher, error) {
	home, _ := os.UserHomeDir()
	expand := func(ps []string) []string {
		out := make([]string, len(ps))
		for i, p := range ps {
			out[i] = expandHome(p, home)
		}
		return out
	}
	include, _ := cfg.patterns(home)
	return newFileMatcher(include, expand(cfg.Exclude))
}
