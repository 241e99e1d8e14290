package agenttranscriptsreceiver // import "github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver"

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"go.uber.org/zap"

	"github.com/ctxaudit/ctxaudit/collector/ingest"
	"github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver/internal/checkpoint"
	"github.com/ctxaudit/ctxaudit/collector/transcript"
	"github.com/ctxaudit/ctxaudit/collector/transcript/parsers"
	"github.com/ctxaudit/ctxaudit/schema"
)

// position is a place in a file: a byte offset at a line boundary and the
// number of lines before it.
type position struct {
	offset int64
	line   int64
}

// trackedFile is one transcript file the receiver follows.
//
// Its parser, when loaded, has consumed exactly the lines before read. The
// lines before committed were accepted downstream; those between committed
// and read are in the batch being sent. A file is unloaded (parser nil) when
// its session goes idle or is evicted; loading it again re-parses the lines
// before read without emitting, which rebuilds exactly the parser state a
// never-unloaded parser would have — the same mechanism that makes a restart
// neither lose nor repeat a call.
type trackedFile struct {
	path string
	fp   checkpoint.Fingerprint
	// format is "" until detected; unknownFormat marks a file whose first
	// lines match no format (it is not read until it is replaced).
	format        transcript.Format
	unknownFormat bool

	committed position
	read      position
	// refusedUpTo is the last line whose refused saved output was reported.
	refusedUpTo int64
	// analyzed is the line up to which the file's session was analysed and
	// the result accepted.
	analyzed  int64
	sessionID string

	parser  transcript.Parser
	meta    schema.Session
	agentID string // Claude Code sub-agent id; "" for a main thread

	// startAtEnd: found at the first scan without a checkpoint and
	// start_at is end — skip to the last complete line without emitting.
	startAtEnd bool
	size       int64
	// drainedAt is the size at which the file was last read to its end
	// (or found undecidable), so an unchanged file is not opened again.
	drainedAt int64
	modTime   time.Time
	// lastGrowth is the modification time of the file when lines were last
	// read from it: session_idle counts from there.
	lastGrowth time.Time

	stored bool // has an entry in storage
	dirty  bool // the entry differs from what storage holds
}

func (f *trackedFile) checkpoint() checkpoint.File {
	return checkpoint.File{
		Fingerprint: f.fp, Offset: f.committed.offset, Line: f.committed.line,
		AnalyzedLine: min(f.analyzed, f.committed.line), SessionID: f.sessionID, Format: string(f.format),
	}
}

// needsAnalysis reports a file with lines its session's last accepted
// analysis did not cover.
func (f *trackedFile) needsAnalysis() bool {
	return f.format != "" && f.sessionID != "" && f.analyzed < f.read.line
}

// feedMode says what the records of one Feed or Flush call are; it is
// given with the call's sink (see sink), never kept between calls.
type feedMode uint8

const (
	// modeRebuild: lines read before (in this process or the previous
	// one) are fed again to rebuild the parser; their records go to the
	// session but are not emitted again.
	modeRebuild feedMode = iota
	// modeNew: new lines; their calls are emitted and skips counted.
	modeNew
	// modeFlush: the parser is flushed because its session went idle; its
	// records are new, but its skips (calls still waiting for a result)
	// are not final and are not counted.
	modeFlush
)

// readFile reads the file's new complete lines into b, detecting its format
// and loading its parser first when needed.
func (r *agentReceiver) readFile(ctx context.Context, f *trackedFile, b *batch) error {
	if !f.startAtEnd && (f.size == f.read.offset || f.size == f.drainedAt) {
		return nil
	}
	fh, size, ok := r.open(ctx, f)
	if !ok {
		return nil
	}
	defer fh.Close()

	if f.format == "" {
		if f.unknownFormat {
			f.drainedAt = size
			return nil
		}
		format, decided, err := r.detect(fh, size)
		if err != nil {
			return err
		}
		if !decided {
			f.drainedAt = size // wait for more lines
			return nil
		}
		if format == "" {
			f.unknownFormat, f.drainedAt = true, size
			r.logger.Warn("No known transcript format in the file's first lines; not tailing it (set source to force one)",
				zap.String("path", f.path), zap.Int("lines", transcript.DetectMaxLines))
			return nil
		}
		f.format, f.dirty = format, true
	}
	if f.parser == nil {
		if err := r.load(ctx, f, fh); err != nil {
			return err
		}
	}
	if f.startAtEnd {
		// History feeds the session (turns, pairing) but is not emitted,
		// and counts as analysed.
		if err := r.advance(ctx, f, fh, size, nil); err != nil {
			return err
		}
		f.startAtEnd = false
		b.analyzed[f] = f.read.line
		f.drainedAt = size
		return nil
	}
	if err := r.advance(ctx, f, fh, size, b); err != nil {
		return err
	}
	if !b.full() {
		f.drainedAt = size
	}
	return nil
}

// open opens a file and checks it is still the file its checkpoint is
// about: one that shrank below what was read, or whose first bytes changed,
// is a new file and is read again from the start. ok is false when the file
// cannot be read now (it is tried again next poll).
func (r *agentReceiver) open(ctx context.Context, f *trackedFile) (fh *os.File, size int64, ok bool) {
	fh, err := os.Open(f.path)
	if err != nil {
		r.logger.Debug("Cannot open transcript; will retry", zap.String("path", f.path), zap.Error(err))
		return nil, 0, false
	}
	var head []byte
	st, err := fh.Stat()
	if err == nil {
		size, f.modTime = st.Size(), st.ModTime()
		head, err = checkpoint.ReadHead(fh, size)
	}
	if err != nil {
		fh.Close()
		r.logger.Debug("Cannot read transcript; will retry", zap.String("path", f.path), zap.Error(err))
		return nil, 0, false
	}
	switch {
	case size < f.read.offset:
		r.reset(ctx, f, "truncated", size)
	case !f.fp.IsPrefixOf(head):
		r.reset(ctx, f, "replaced", size)
	}
	if len(head) > f.fp.Len {
		f.fp, f.dirty = checkpoint.FingerprintOf(head), true
	}
	f.size = size
	return fh, size, true
}

// reset starts a file over: it was truncated or replaced under its name.
func (r *agentReceiver) reset(ctx context.Context, f *trackedFile, reason string, size int64) {
	r.logger.Info("Transcript was "+reason+"; reading it again from the start",
		zap.String("path", f.path), zap.Int64("size", size), zap.Int64("offset", f.read.offset), zap.Int64("line", f.read.line))
	r.tel.FileReset(ctx, reason)
	r.setSession(f, "")
	*f = trackedFile{
		path: f.path, format: r.format, size: size, drainedAt: -1, modTime: f.modTime, lastGrowth: f.modTime,
		stored: f.stored, dirty: true,
	}
}

// detect guesses the format from the first complete non-blank lines;
// decided is false while there are too few of them to tell.
func (r *agentReceiver) detect(fh *os.File, size int64) (transcript.Format, bool, error) {
	if size == 0 {
		return "", false, nil
	}
	d, err := transcript.Detect(io.NewSectionReader(fh, 0, size), r.cfg.MaxLineBytes, true)
	if err != nil {
		return "", false, err
	}
	return d.Format, d.Decided(), nil
}

func endsWithNewline(fh *os.File, size int64) (bool, error) {
	var last [1]byte
	if _, err := fh.ReadAt(last[:], size-1); err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	return last[0] == '\n', nil
}

// load creates the file's parser and re-parses the lines already read
// without emitting them; their records still reach the session.
func (r *agentReceiver) load(ctx context.Context, f *trackedFile, fh *os.File) error {
	p, err := r.newParser(f)
	if err != nil {
		return err
	}
	target := f.read
	f.parser, f.read = p, position{}
	if err := r.advance(ctx, f, fh, target.offset, nil); err != nil {
		f.parser, f.read = nil, target
		return err
	}
	if f.read != target {
		// The lines before the checkpoint changed without changing the
		// file's first bytes; go on from where the checkpoint is.
		r.logger.Warn("Transcript changed before its checkpoint; continuing after it",
			zap.String("path", f.path), zap.Int64("checkpoint_line", target.line), zap.Int64("lines_found", f.read.line))
		f.read = target
	}
	return nil
}

func (r *agentReceiver) newParser(f *trackedFile) (transcript.Parser, error) {
	// Saved full outputs (Claude Code tool-results/) are read through the
	// same confined resolver as `ctxaudit ingest`, so both paths measure the
	// original from the saved file alike.
	opts := transcript.Options{
		SourceFile: f.path,
		ReadSaved:  ingest.SavedFileReader(f.path, f.format, 0, r.savedRefused(f)),
	}
	p, err := parsers.New(f.format, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.path, err)
	}
	return p, nil
}

// ctxCheckLines is how many lines pass between cancellation checks.
const ctxCheckLines = 1024

// advance feeds the parser the complete lines between f.read and end. With
// a batch the records are new and emitted into it (and reading stops when
// it is full); without one they only rebuild state. A last line without its
// newline is still being written and is left for a later poll.
func (r *agentReceiver) advance(ctx context.Context, f *trackedFile, fh *os.File, end int64, b *batch) error {
	if end <= f.read.offset {
		return nil
	}
	complete, err := endsWithNewline(fh, end)
	if err != nil {
		return fmt.Errorf("read %s: %w", f.path, err)
	}
	lr := transcript.NewLineReader(io.NewSectionReader(fh, f.read.offset, end-f.read.offset), r.cfg.MaxLineBytes)
	mode := modeRebuild
	if b != nil {
		mode = modeNew
	}
	sink := r.sink(f, mode, b)

	var n int64
	for b == nil || !b.full() {
		l, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read %s after line %d: %w", f.path, f.read.line, err)
		}
		if f.read.offset+l.Size >= end && !complete {
			break // the last line is still being written
		}
		if !l.TooLong && l.Size == int64(len(l.Bytes)) {
			break // no newline before end: the file shrank under us; the next poll sees it
		}
		no := f.read.line + 1
		if l.TooLong {
			sink(&transcript.Skip{Line: no, Reason: transcript.SkipTooLong,
				Detail: fmt.Sprintf("%d bytes, limit %d", l.Size, r.cfg.MaxLineBytes)})
		} else {
			f.parser.Feed(no, l.Bytes, sink)
		}
		f.read = position{offset: f.read.offset + l.Size, line: no}
		if n++; n%ctxCheckLines == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
	if b != nil && n > 0 {
		r.tel.LinesRead(ctx, n, string(f.format))
		f.lastGrowth = f.modTime
		if now := time.Now(); f.lastGrowth.After(now) {
			f.lastGrowth = now // a clock ahead of ours must not postpone analysis
		}
	}
	r.snapshot(f)
	return nil
}

// snapshot records the file's session metadata and the session it belongs to.
func (r *agentReceiver) snapshot(f *trackedFile) {
	if f.parser == nil {
		return
	}
	f.meta = f.parser.Session()
	if a, ok := f.parser.(interface{ AgentID() string }); ok {
		f.agentID = a.AgentID()
	}
	sid := f.meta.SessionID
	if sid == "" {
		sid = transcript.SessionIDFromPath(f.path)
	}
	r.setSession(f, sid)
}

// savedRefused reports a saved output of f that the resolver would not read
// (a symlink, a FIFO, a file outside the session's tool-results folder):
// counted and logged when its line is read for the first time.
func (r *agentReceiver) savedRefused(f *trackedFile) func(*ingest.RefusalError) {
	return func(e *ingest.RefusalError) {
		// Lines up to the checkpoint were read (and reported) before a
		// restart; a line is reported once however often it is re-parsed.
		line := f.read.line + 1
		if line <= f.committed.line || line <= f.refusedUpTo {
			return
		}
		f.refusedUpTo = line
		r.tel.SavedRefused(context.Background(), e.Reason)
		r.logger.Warn("Refused to read a saved tool output", zap.String("at", fmt.Sprintf("%s:%d", f.path, line)),
			zap.String("path", f.path), zap.Int64("line", line),
			zap.String("ref", e.Ref), zap.String("reason", e.Reason), zap.String("detail", e.Detail))
	}
}

// sink is where the records of one Feed or Flush call of f's parser go:
// always to the session; with a batch, and unless they only rebuild what was
// read before, also emitted into it.
func (r *agentReceiver) sink(f *trackedFile, mode feedMode, b *batch) transcript.Emit {
	return func(rec transcript.Record) { r.onRecord(f, mode, b, rec) }
}

// onRecord takes one parser record of file f.
func (r *agentReceiver) onRecord(f *trackedFile, mode feedMode, b *batch, rec transcript.Record) {
	switch v := rec.(type) {
	case *transcript.Call:
		if v.Call.SessionID == "" {
			v.Call.SessionID = transcript.SessionIDFromPath(f.path)
		}
		s := r.session(v.Call.SessionID)
		emit := mode != modeRebuild && b != nil
		c := s.AddCall(v.Call, v.SpawnedAgentID, emit)
		if emit {
			b.addCall(c)
			r.tel.ToolCall(context.Background(), string(c.Kind), string(f.format))
		}
	case *transcript.Answer:
		if v.Answer.SessionID == "" {
			v.Answer.SessionID = transcript.SessionIDFromPath(f.path)
		}
		r.session(v.Answer.SessionID).AddAnswer(v.Answer)
	case *transcript.Skip:
		// Skips while re-reading were counted when first read; those from
		// an idle flush (calls still waiting for a result) are not final.
		// Logged at Warn so the default level names file:line; the
		// collector's log sampling (service.telemetry.logs.sampling) bounds
		// how many of these a flood of bad lines writes.
		if mode == modeNew {
			r.tel.LineSkipped(context.Background(), v.Reason)
			r.logger.Warn("Skipped transcript line", zap.String("at", fmt.Sprintf("%s:%d", f.path, v.Line)),
				zap.String("path", f.path), zap.Int64("line", v.Line),
				zap.String("reason", v.Reason), zap.String("detail", v.Detail))
		}
	}
}

// setSession files f under session id (or under none).
func (r *agentReceiver) setSession(f *trackedFile, id string) {
	if f.sessionID == id {
		return
	}
	if set := r.bySession[f.sessionID]; set != nil {
		delete(set, f)
		if len(set) == 0 {
			delete(r.bySession, f.sessionID)
		}
	}
	f.sessionID = id
	f.dirty = true
	if id == "" {
		return
	}
	set := r.bySession[id]
	if set == nil {
		set = map[*trackedFile]struct{}{}
		r.bySession[id] = set
	}
	set[f] = struct{}{}
}
