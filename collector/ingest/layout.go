package ingest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ctxaudit/ctxaudit/collector/transcript"
)

// ErrInput marks a problem with what the user asked to ingest — a missing
// file, an unreadable folder, a file in no known format — as opposed to a
// failure while ingesting. The CLI maps it to exit code 2.
var ErrInput = errors.New("bad input")

// InputError names the path that could not be ingested. errors.Is(err,
// ErrInput) holds for it.
type InputError struct {
	Path string
	Err  error
}

func (e *InputError) Error() string        { return e.Path + ": " + e.Err.Error() }
func (e *InputError) Unwrap() error        { return e.Err }
func (e *InputError) Is(target error) bool { return target == ErrInput }

// file is one transcript file to ingest.
type file struct {
	path   string
	format transcript.Format
	// explicit: named on the command line rather than found by walking, so
	// an unknown format is an error rather than a skipped file.
	explicit bool
}

// unit is a group of files that form one session and must be analysed
// together: a Claude Code main thread and its sub-agent threads, or a single
// Codex or pi file.
type unit struct {
	key   string
	files []file // main thread first, then sub-agents in name order
}

// findFiles expands paths into transcript files: files as given, folders
// walked recursively for *.jsonl (skipping Claude Code tool-results sidecars).
func findFiles(paths []string) ([]file, error) {
	seen := map[string]bool{}
	var out []file
	add := func(p string, explicit bool) {
		if abs, err := filepath.Abs(p); err == nil {
			if seen[abs] {
				return
			}
			seen[abs] = true
		}
		out = append(out, file{path: p, explicit: explicit})
	}
	for _, root := range paths {
		st, err := os.Stat(root)
		if err != nil {
			return nil, &InputError{Path: root, Err: unwrapPathError(err)}
		}
		if !st.IsDir() {
			if !st.Mode().IsRegular() {
				// A FIFO or device would block the read (or never end).
				return nil, &InputError{Path: root, Err: fmt.Errorf("not a regular file (%s)", st.Mode().Type())}
			}
			add(root, true)
			continue
		}
		err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return &InputError{Path: p, Err: unwrapPathError(err)}
			}
			if d.IsDir() {
				if d.Name() == "tool-results" {
					return filepath.SkipDir
				}
				return nil
			}
			if strings.HasSuffix(d.Name(), ".jsonl") && d.Type().IsRegular() {
				add(p, false)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// groupUnits groups files into sessions by the Claude Code layout:
// <dir>/<session>/subagents/agent-*.jsonl joins <dir>/<session>.jsonl.
// Units come out sorted, so runs over the same paths are identical.
func groupUnits(files []file) []unit {
	byKey := map[string]*unit{}
	var keys []string
	for _, f := range files {
		key := f.path
		if f.format == transcript.FormatClaudeCode {
			if main, ok := mainThreadOf(f.path); ok {
				key = main
			}
		}
		u, ok := byKey[key]
		if !ok {
			u = &unit{key: key}
			byKey[key] = u
			keys = append(keys, key)
		}
		u.files = append(u.files, f)
	}
	sort.Strings(keys)
	units := make([]unit, 0, len(keys))
	for _, k := range keys {
		u := byKey[k]
		sort.SliceStable(u.files, func(i, j int) bool {
			mi, mj := u.files[i].path == u.key, u.files[j].path == u.key
			if mi != mj {
				return mi
			}
			return u.files[i].path < u.files[j].path
		})
		units = append(units, *u)
	}
	return units
}

// mainThreadOf returns the main-thread file a Claude Code sub-agent file
// belongs to: <dir>/<session>/subagents/agent-x.jsonl -> <dir>/<session>.jsonl.
func mainThreadOf(p string) (string, bool) {
	subDir := filepath.Dir(p)
	if filepath.Base(subDir) != "subagents" || !strings.HasPrefix(filepath.Base(p), "agent-") {
		return "", false
	}
	sessDir := filepath.Dir(subDir)
	return sessDir + ".jsonl", true
}

// detectFormat reads the first lines of a file to tell its format. empty
// reports a file with no non-blank line.
func detectFormat(path string, maxLineBytes int) (f transcript.Format, empty bool, err error) {
	fh, err := os.Open(path)
	if err != nil {
		return "", false, &InputError{Path: path, Err: unwrapPathError(err)}
	}
	defer fh.Close()
	d, err := transcript.Detect(fh, maxLineBytes, false)
	switch {
	case err != nil:
		return "", false, &InputError{Path: path, Err: err}
	case d.Lines == 0:
		return "", true, nil
	case d.Format == "":
		first := "line"
		if d.Lines > 1 {
			first = fmt.Sprintf("%d lines", d.Lines)
		}
		return "", false, &InputError{Path: path, Err: fmt.Errorf("%w in its first %s (use --source)", transcript.ErrUnknownFormat, first)}
	}
	return d.Format, false, nil
}
