package ingest

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/ctxaudit/ctxaudit/collector/transcript"
)

// DefaultMaxSavedBytes caps how much of one saved output is read.
const DefaultMaxSavedBytes = 64 << 20

var errNotSidecar = errors.New("not a Claude Code tool-results file")

// savedReader reads the full outputs Claude Code spills to
// <project>/<session>/tool-results/<name>. Notices name them by absolute
// path on the machine that recorded the session; when that path is not
// readable here (a transcript copied from another machine), the same name is
// looked up beside the transcript.
//
// Only files directly inside a tool-results folder are read: a transcript is
// untrusted input, and a notice must not be able to make ctxaudit read (and
// store) an arbitrary file.
type savedReader struct {
	// projectDir holds <session>.jsonl and <session>/.
	projectDir string
	sessionID  string
	maxBytes   int64
}

// newSavedReader returns the reader for a Claude Code transcript file (main
// thread or sub-agent), or nil for other formats.
func newSavedReader(f file, sessionID string, maxBytes int64) func(string) ([]byte, error) {
	if f.format != transcript.FormatClaudeCode {
		return nil
	}
	dir := filepath.Dir(f.path)
	if main, ok := mainThreadOf(f.path); ok {
		dir = filepath.Dir(main)
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxSavedBytes
	}
	r := &savedReader{projectDir: dir, sessionID: sessionID, maxBytes: maxBytes}
	return r.read
}

func (r *savedReader) read(ref string) ([]byte, error) {
	// Notices may come from Windows or POSIX machines.
	slashed := strings.ReplaceAll(ref, `\`, "/")
	name := path.Base(slashed)
	parent := path.Dir(slashed)
	if path.Base(parent) != "tool-results" || name == "." || name == "/" || name == ".." {
		return nil, fmt.Errorf("%s: %w", ref, errNotSidecar)
	}
	sessionID := path.Base(path.Dir(parent))
	var candidates []string
	if filepath.IsAbs(filepath.FromSlash(slashed)) {
		candidates = append(candidates, filepath.FromSlash(slashed))
	}
	for _, sid := range []string{sessionID, r.sessionID} {
		if sid != "" && sid != "." && sid != "/" && sid != ".." {
			candidates = append(candidates, filepath.Join(r.projectDir, sid, "tool-results", name))
		}
	}
	var firstErr error
	for _, c := range candidates {
		b, err := readCapped(c, r.maxBytes)
		if err == nil {
			return b, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	if firstErr == nil {
		firstErr = fmt.Errorf("%s: %w", ref, os.ErrNotExist)
	}
	return nil, firstErr
}

func readCapped(p string, max int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", p)
	}
	if st.Size() > max {
		return nil, fmt.Errorf("%s: %d bytes exceeds the %d-byte limit for saved outputs", p, st.Size(), max)
	}
	return io.ReadAll(io.LimitReader(f, max))
}

// SavedFileReader returns the reader of saved full outputs for one transcript
// file (Claude Code main thread or sub-agent; nil for formats that spill
// nothing ctxaudit reads), for callers outside a Run such as the collector's
// transcript receiver. The session id is taken from the file's place in the
// Claude Code layout (a sub-agent file belongs to its main thread's session);
// maxBytes <= 0 means DefaultMaxSavedBytes.
func SavedFileReader(path string, format transcript.Format, maxBytes int64) func(string) ([]byte, error) {
	return newSavedReader(file{path: path, format: format}, layoutSessionID(path), maxBytes)
}

// layoutSessionID is the session id a Claude Code transcript path implies.
func layoutSessionID(p string) string {
	if main, ok := mainThreadOf(p); ok {
		return transcript.SessionIDFromPath(main)
	}
	return transcript.SessionIDFromPath(p)
}
