package ingest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/ctxaudit/ctxaudit/collector/transcript"
)

// DefaultMaxSavedBytes caps how much of one saved output is read.
const DefaultMaxSavedBytes = 64 << 20

// Reasons a saved-output reference is refused (SavedRefusal.Reason). A
// transcript is untrusted input: a notice must not make ctxaudit read — and
// store — any file but a saved output of the transcript's own session, nor
// hang on one that is not a regular file.
const (
	// RefuseNotToolResults: the reference does not name a file directly
	// inside a tool-results folder.
	RefuseNotToolResults = "not_tool_results"
	// RefuseSymlink: the session folder, its tool-results folder or the file
	// is a symbolic link.
	RefuseSymlink = "symlink"
	// RefuseNotRegular: the file is a FIFO, device, socket or folder.
	RefuseNotRegular = "not_regular_file"
	// RefuseTooLarge: the file is larger than the saved-output cap.
	RefuseTooLarge = "too_large"
)

// ErrSavedRefused marks a reference the resolver will not read.
var ErrSavedRefused = errors.New("saved output refused")

// RefusalError says why a saved output was not read.
type RefusalError struct {
	Ref    string // the reference as the notice gave it
	Path   string // the local path it resolved to, if it got that far
	Reason string // one of the Refuse* reasons
	Detail string
}

func (e *RefusalError) Error() string {
	msg := fmt.Sprintf("%s: %s (%s)", e.Ref, ErrSavedRefused, e.Reason)
	if e.Path != "" && e.Path != e.Ref {
		msg += " at " + e.Path
	}
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

func (e *RefusalError) Unwrap() error { return ErrSavedRefused }

// savedReader reads the full outputs Claude Code spills to
// <project>/<session>/tool-results/<name>. Notices name them by absolute
// path on the machine that recorded the session; the path is never opened as
// given. Only the file name is taken from it and looked up in the
// transcript's own session folder, so the same notice resolves alike on the
// recording machine and on a copy elsewhere, and nothing outside that folder
// is ever read.
//
// Every component below the project folder (session folder, tool-results,
// the file) is checked with Lstat and must not be a symlink; the file is
// opened without following links and without blocking (a FIFO would hang the
// reader), inside an os.Root of the project folder, and must be the regular
// file that was checked.
type savedReader struct {
	// projectDir holds <session>.jsonl and <session>/.
	projectDir string
	sessionID  string
	maxBytes   int64
	// refused, when set, hears of every refusal.
	refused func(*RefusalError)
}

// newSavedReader returns the reader for a Claude Code transcript file (main
// thread or sub-agent), or nil for other formats.
func newSavedReader(f file, sessionID string, maxBytes int64, refused func(*RefusalError)) func(string) ([]byte, error) {
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
	r := &savedReader{projectDir: dir, sessionID: sessionID, maxBytes: maxBytes, refused: refused}
	return r.read
}

func (r *savedReader) read(ref string) ([]byte, error) {
	b, err := r.resolve(ref)
	var re *RefusalError
	if errors.As(err, &re) && r.refused != nil {
		r.refused(re)
	}
	return b, err
}

func (r *savedReader) resolve(ref string) ([]byte, error) {
	// Notices may come from Windows or POSIX machines.
	slashed := strings.ReplaceAll(ref, `\`, "/")
	name := path.Base(slashed)
	if path.Base(path.Dir(slashed)) != "tool-results" || name == "." || name == "/" || name == ".." || strings.ContainsRune(name, 0) {
		return nil, &RefusalError{Ref: ref, Reason: RefuseNotToolResults}
	}
	sid := r.sessionID
	if sid == "" || sid == "." || sid == ".." || strings.ContainsAny(sid, `/\`) {
		return nil, fmt.Errorf("%s: %w (no session folder for this transcript)", ref, os.ErrNotExist)
	}
	rel := []string{sid, "tool-results", name}
	local := filepath.Join(r.projectDir, filepath.Join(rel...))

	root, err := os.OpenRoot(r.projectDir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	// Lstat every component: a symlinked session or tool-results folder
	// could point anywhere, and so could the file.
	var info fs.FileInfo
	for i := range rel {
		p := filepath.Join(rel[:i+1]...)
		info, err = root.Lstat(p)
		if err != nil {
			return nil, err
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			return nil, &RefusalError{Ref: ref, Path: filepath.Join(r.projectDir, p), Reason: RefuseSymlink}
		}
		if i < len(rel)-1 && !info.IsDir() {
			return nil, fmt.Errorf("%s: %w", filepath.Join(r.projectDir, p), os.ErrNotExist)
		}
	}
	if !info.Mode().IsRegular() {
		return nil, &RefusalError{Ref: ref, Path: local, Reason: RefuseNotRegular, Detail: info.Mode().Type().String()}
	}
	if info.Size() > r.maxBytes {
		return nil, &RefusalError{Ref: ref, Path: local, Reason: RefuseTooLarge,
			Detail: fmt.Sprintf("%d bytes, limit %d", info.Size(), r.maxBytes)}
	}
	b, err := readChecked(func(flag int) (*os.File, error) { return root.OpenFile(filepath.Join(rel...), flag, 0) }, info, r.maxBytes)
	var notRegular *notRegularError
	switch {
	case errors.Is(err, errLinked):
		return nil, &RefusalError{Ref: ref, Path: local, Reason: RefuseSymlink}
	case errors.Is(err, errReplaced):
		return nil, &RefusalError{Ref: ref, Path: local, Reason: RefuseSymlink, Detail: err.Error()}
	case errors.As(err, &notRegular):
		return nil, &RefusalError{Ref: ref, Path: local, Reason: RefuseNotRegular, Detail: notRegular.mode.Type().String()}
	case errors.As(err, new(*tooLargeError)):
		return nil, &RefusalError{Ref: ref, Path: local, Reason: RefuseTooLarge, Detail: err.Error()}
	}
	return b, err
}

// SavedFileReader returns the reader of saved full outputs for one transcript
// file (Claude Code main thread or sub-agent; nil for formats that spill
// nothing ctxaudit reads), for callers outside a Run such as the collector's
// transcript receiver. The session id is taken from the file's place in the
// Claude Code layout (a sub-agent file belongs to its main thread's session);
// maxBytes <= 0 means DefaultMaxSavedBytes. refused, if not nil, hears of
// every reference the reader will not read.
func SavedFileReader(path string, format transcript.Format, maxBytes int64, refused func(*RefusalError)) func(string) ([]byte, error) {
	return newSavedReader(file{path: path, format: format}, layoutSessionID(path), maxBytes, refused)
}

// layoutSessionID is the session id a Claude Code transcript path implies.
func layoutSessionID(p string) string {
	if main, ok := mainThreadOf(p); ok {
		return transcript.SessionIDFromPath(main)
	}
	return transcript.SessionIDFromPath(p)
}
