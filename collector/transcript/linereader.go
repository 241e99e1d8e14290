package transcript

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// DefaultMaxLineBytes is the default longest line a reader returns. Claude
// Code lines carry a tool result twice (as shown and as produced); 64 MiB is
// far beyond any real line yet bounds what one bad line can cost.
const DefaultMaxLineBytes = 64 << 20

// readBufferSize is the bufio buffer: most lines fit, long ones are
// assembled from several reads.
const readBufferSize = 256 << 10

// LineReader reads newline-terminated lines with a size limit and without
// reading the whole input: memory is one buffer plus the longest accepted line.
type LineReader struct {
	r       *bufio.Reader
	max     int
	lineNo  int64
	buf     []byte
	bytesIn int64
}

// NewLineReader returns a reader of r's lines; maxLineBytes <= 0 means
// DefaultMaxLineBytes.
func NewLineReader(r io.Reader, maxLineBytes int) *LineReader {
	if maxLineBytes <= 0 {
		maxLineBytes = DefaultMaxLineBytes
	}
	return &LineReader{r: bufio.NewReaderSize(r, readBufferSize), max: maxLineBytes}
}

// Line is one line read.
type Line struct {
	// No is the 1-based line number.
	No int64
	// Bytes is the line without its newline (and without a trailing \r). It
	// is valid only until the next call to Next.
	Bytes []byte
	// TooLong reports a line over the limit: it was consumed and discarded,
	// Bytes is empty, and Size says how long it was.
	TooLong bool
	Size    int64
}

// Next returns the next line, or io.EOF after the last one. A final line
// without a newline is returned like any other. Errors other than io.EOF come
// from the underlying reader.
func (lr *LineReader) Next() (Line, error) {
	lr.buf = lr.buf[:0]
	var size int64
	tooLong := false
	for {
		chunk, err := lr.r.ReadSlice('\n')
		size += int64(len(chunk))
		lr.bytesIn += int64(len(chunk))
		if !tooLong {
			if size > int64(lr.max)+1 { // +1: the newline itself does not count
				tooLong = true
				lr.buf = lr.buf[:0]
			} else if err == nil && len(lr.buf) == 0 {
				// Fast path: the whole line is in the bufio buffer.
				lr.lineNo++
				return Line{No: lr.lineNo, Bytes: trimEOL(chunk), Size: size}, nil
			} else {
				lr.buf = append(lr.buf, chunk...)
			}
		}
		switch {
		case err == nil:
			lr.lineNo++
			return lr.finish(tooLong, size), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if size == 0 {
				return Line{}, io.EOF
			}
			lr.lineNo++
			return lr.finish(tooLong, size), nil
		default:
			return Line{}, err
		}
	}
}

func (lr *LineReader) finish(tooLong bool, size int64) Line {
	if tooLong {
		return Line{No: lr.lineNo, TooLong: true, Size: size}
	}
	b := trimEOL(lr.buf)
	if len(b) > lr.max {
		return Line{No: lr.lineNo, TooLong: true, Size: size}
	}
	return Line{No: lr.lineNo, Bytes: b, Size: size}
}

// BytesRead is the number of bytes consumed so far.
func (lr *LineReader) BytesRead() int64 { return lr.bytesIn }

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	return bytes.TrimSuffix(b, []byte{'\r'})
}
