package ingest

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// The ways readChecked refuses a file it was asked to read.
var (
	// errLinked: the name is a symbolic link (the open refused to follow it).
	errLinked = errors.New("a symbolic link")
	// errReplaced: what was opened is not the file Lstat described.
	errReplaced = errors.New("replaced while being opened")
)

// notRegularError: what was opened is a FIFO, device, socket or folder.
type notRegularError struct{ mode fs.FileMode }

func (e *notRegularError) Error() string {
	return fmt.Sprintf("not a regular file (%s)", e.mode.Type())
}

// tooLargeError: the file grew past the limit while it was read.
type tooLargeError struct{ limit int64 }

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("grew past the %d-byte limit while read", e.limit)
}

// readChecked reads a file a harness wrote beside a transcript, which may be
// anything: info is what Lstat said of it (the caller has refused a link or
// a non-regular file by then), and open opens it with the flags given. It
// opens without following a symbolic link and without blocking on a FIFO,
// makes sure the file opened is the regular file info describes — not one
// swapped in since — and reads at most limit bytes. Errors are
// errLinked, errReplaced, *notRegularError, *tooLargeError, or the
// system's (a path error, unwrapped by the caller as it likes).
func readChecked(open func(flag int) (*os.File, error), info fs.FileInfo, limit int64) ([]byte, error) {
	f, err := open(os.O_RDONLY | noFollowNonBlock)
	if err != nil {
		if isSymlinkLoop(err) {
			return nil, errLinked
		}
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, &notRegularError{st.Mode()}
	}
	if !os.SameFile(info, st) {
		return nil, errReplaced
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &tooLargeError{limit}
	}
	return b, nil
}
