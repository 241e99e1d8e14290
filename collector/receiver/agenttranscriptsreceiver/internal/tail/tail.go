// Package tail is the receiver's tailing layer: it finds the files to follow
// (Finder), follows files that grow by appended lines, checks that a file is
// still the one its checkpoint is about, yields its complete lines with
// their numbers and byte positions, and keeps per file how far a consumer
// has durably taken it (the committed position) in the collector's storage
// extension. It knows nothing of what
// the lines say: detecting formats, parsing and building sessions are the
// caller's.
//
// It is not the collector's own file tailing (pkg/stanza/fileconsumer),
// because the record needs what that does not give: a file's checkpoint
// moves only when the consumer says the lines were accepted downstream (the
// fileconsumer saves its offsets on its own schedule, after emitting); a
// line is named by its number, which the fileconsumer does not count; a line
// over the limit is reported whole as one skipped line at file:line rather
// than split into pieces; a last line still being written is held back until
// its newline arrives; and the fingerprint kept in storage is a hash, not the
// file's first bytes (a transcript starts with the user's first prompt).
package tail

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver/internal/checkpoint"
)

// Position is a place in a file: a byte offset at a line boundary and the
// number of lines before it.
type Position struct {
	Offset int64
	Line   int64
}

// File is one followed file. The lines before Committed were taken durably
// by the consumer; those between Committed and Read were yielded and are
// being consumed.
type File struct {
	Path      string
	FP        checkpoint.Fingerprint
	Committed Position
	Read      Position
	// Size and ModTime are as last seen (by a scan or Open).
	Size    int64
	ModTime time.Time
	// Stored: the file has an entry in storage; Dirty: the entry differs
	// from what storage holds (the consumer marks its own changes too).
	Stored bool
	Dirty  bool
}

// New starts following path from its beginning.
func New(path string, size int64, modTime time.Time) File {
	return File{Path: path, Size: size, ModTime: modTime}
}

// Restore resumes a file from its stored entry.
func (f *File) Restore(cp checkpoint.File) {
	f.FP = cp.Fingerprint
	f.Committed = Position{Offset: cp.Offset, Line: cp.Line}
	f.Read = f.Committed
	f.Stored = true
}

// Rewind forgets what was read and committed: the file is read from its
// start again (its entry, if stored, is overwritten at the next save).
func (f *File) Rewind() {
	f.Committed, f.Read, f.Dirty = Position{}, Position{}, true
}

// Commit records that everything read was taken durably.
func (f *File) Commit() {
	if f.Read != f.Committed {
		f.Committed, f.Dirty = f.Read, true
	}
}

// Reset reasons Open reports.
const (
	Truncated = "truncated"
	Replaced  = "replaced"
)

// Open opens the file and checks it is still the file its positions are
// about: one that shrank below what was read, or whose first bytes changed,
// is a new file under the same name — Open then rewinds it and says why in
// reset, and the caller starts its own state over. It also extends the
// fingerprint while the file is shorter than the fingerprint size.
func (f *File) Open() (fh *os.File, reset string, err error) {
	fh, err = os.Open(f.Path)
	if err != nil {
		return nil, "", err
	}
	var head []byte
	st, err := fh.Stat()
	if err == nil {
		f.Size, f.ModTime = st.Size(), st.ModTime()
		head, err = checkpoint.ReadHead(fh, f.Size)
	}
	if err != nil {
		fh.Close()
		return nil, "", err
	}
	switch {
	case f.Size < f.Read.Offset:
		reset = Truncated
	case !f.FP.IsPrefixOf(head):
		reset = Replaced
	}
	if reset != "" {
		f.FP = checkpoint.Fingerprint{}
		f.Rewind()
	}
	if len(head) > f.FP.Len {
		f.FP, f.Dirty = checkpoint.FingerprintOf(head), true
	}
	return fh, reset, nil
}

// Line is one complete line yielded by Lines.
type Line struct {
	// No is the 1-based line number.
	No int64
	// Bytes is the line without its newline; valid only during the call.
	Bytes []byte
	// TooLong: the line is over the limit and was not read; Size says how
	// long it is.
	TooLong bool
	Size    int64
}

// LineReader reads bounded lines; the transcript package's reader, which
// `ctxaudit ingest` reads files with too, is one.
type LineReader interface {
	Next() (Line, error)
}

// ctxCheckLines is how many lines pass between cancellation checks.
const ctxCheckLines = 1024

// Lines calls fn with each complete line of fh between f.Read and end, in
// order, and advances f.Read past each line once fn has returned (during the
// call f.Read is still the position before the line). It stops when fn
// returns false. A last line without its newline is still being written and
// is held back for a later call. newReader builds the line reader of a
// section of the file.
func (f *File) Lines(ctx context.Context, fh *os.File, end int64, newReader func(io.Reader) LineReader, fn func(Line) bool) (int64, error) {
	if end <= f.Read.Offset {
		return 0, nil
	}
	complete, err := endsWithNewline(fh, end)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", f.Path, err)
	}
	lr := newReader(io.NewSectionReader(fh, f.Read.Offset, end-f.Read.Offset))
	var n int64
	for {
		l, err := lr.Next()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("read %s after line %d: %w", f.Path, f.Read.Line, err)
		}
		if f.Read.Offset+l.Size >= end && !complete {
			return n, nil // the last line is still being written
		}
		if !l.TooLong && l.Size == int64(len(l.Bytes)) {
			return n, nil // no newline before end: the file shrank under us; the next poll sees it
		}
		l.No = f.Read.Line + 1
		more := fn(l)
		f.Read = Position{Offset: f.Read.Offset + l.Size, Line: l.No}
		if n++; n%ctxCheckLines == 0 {
			if err := ctx.Err(); err != nil {
				return n, err
			}
		}
		if !more {
			return n, nil
		}
	}
}

func endsWithNewline(fh *os.File, size int64) (bool, error) {
	var last [1]byte
	if _, err := fh.ReadAt(last[:], size-1); err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	return last[0] == '\n', nil
}
