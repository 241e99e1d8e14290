package agenttranscriptsreceiver // import "github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver"

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"go.uber.org/zap"

	"github.com/ctxaudit/ctxaudit/collector/ingest"
	"github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver/internal/checkpoint"
	"github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver/internal/tail"
	"github.com/ctxaudit/ctxaudit/collector/transcript"
	"github.com/ctxaudit/ctxaudit/collector/transcript/parsers"
	"github.com/ctxaudit/ctxaudit/schema"
)

// trackedFile is one transcript file the receiver follows: the tailing
// layer's file (positions, fingerprint, checkpoint state) and what the
// receiver knows of it as a transcript.
//
// Its parser, when loaded, has consumed exactly the lines before Read. A
// file is unloaded (parser nil) when its session goes idle or is evicted;
// loading it again re-parses the lines before Read without emitting, which
// rebuilds exactly the parser state a never-unloaded parser would have — the
// same mechanism that makes a restart neither lose nor repeat a call.
type trackedFile struct {
	tail.File

	// format is "" until detected; unknownFormat marks a file whose first
	// lines match no format (it is not read until it is replaced).
	format        transcript.Format
	unknownFormat bool

	// refusedUpTo is the last line whose refused saved output was reported.
	refusedUpTo int64
	// analyzed is the line up to which the file's session was analysed and
	// the result accepted.
	analyzed  int64
	sessionID string
	// openAnswer is the answer the session's last accepted analysis
	// returned for the file's last message, which a later line may prove no
	// answer (checkpoint.File.OpenAnswer); flushed is the one the parser's
	// flush gave the analysis under way.
	openAnswer, flushed *schema.Answer

	parser  transcript.Parser
	meta    schema.Session
	agentID string // Claude Code sub-agent id; "" for a main thread

	// agentMeta is what the metadata file beside a Claude Code sub-agent
	// thread says of the call that spawned the agent (see agentmeta.go);
	// analyzedSpawnedBy is what the last accepted analysis was given.
	agentMeta         agentMetaState
	analyzedSpawnedBy string

	// startAtEnd: found at the first scan without a checkpoint and
	// start_at is end — skip to the last complete line without emitting.
	startAtEnd bool
	// drainedAt is the size at which the file was last read to its end
	// (or found undecidable), so an unchanged file is not opened again.
	drainedAt int64
	// lastGrowth is the modification time of the file when lines were last
	// read from it: session_idle counts from there.
	lastGrowth time.Time
}

func (f *trackedFile) checkpoint() checkpoint.File {
	return checkpoint.File{
		Fingerprint: f.FP, Offset: f.Committed.Offset, Line: f.Committed.Line,
		AnalyzedLine: min(f.analyzed, f.Committed.Line), SessionID: f.sessionID, Format: string(f.format),
		OpenAnswer: f.openAnswer, SpawnedBy: f.analyzedSpawnedBy, BadAgentMeta: f.agentMeta.reportedBad.version(),
	}
}

// needsAnalysis reports a file with lines its session's last accepted
// analysis did not cover, or whose sub-agent metadata, as read by this
// process, names another spawning call than that analysis was given.
func (f *trackedFile) needsAnalysis() bool {
	m := &f.agentMeta
	return f.format != "" && f.sessionID != "" &&
		(f.analyzed < f.Read.Line || m.read && m.spawnedBy != f.analyzedSpawnedBy)
}

// reconcile brings the tracked files in line with a scan and returns the
// scanned ones in path order.
func (r *agentReceiver) reconcile(paths []string) []*trackedFile {
	present := make(map[string]bool, len(paths))
	scanned := make([]*trackedFile, 0, len(paths))
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			continue
		}
		present[p] = true
		f := r.files[p]
		if f == nil {
			f = &trackedFile{File: tail.New(p, st.Size(), st.ModTime()), format: r.format, drainedAt: -1, lastGrowth: st.ModTime()}
			if cp, ok := r.stored[p]; ok {
				delete(r.stored, p)
				r.restore(f, cp)
			} else if r.firstScan && r.cfg.StartAt == StartAtEnd {
				f.startAtEnd = true
			}
			r.files[p] = f
		}
		f.Size = st.Size()
		scanned = append(scanned, f)
	}
	for p, f := range r.files {
		if present[p] {
			continue
		}
		// Forget only files that are gone, not ones a folder error hid.
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			r.forget(f)
		}
	}
	if r.firstScan {
		resumed := 0
		for _, f := range scanned {
			if f.Stored {
				resumed++
			}
		}
		r.logger.Info("Found transcript files", zap.Int("files", len(scanned)),
			zap.Int("resumed_from_checkpoint", resumed))
		// Entries of files that disappeared (or are no longer included)
		// while the collector was down.
		for p := range r.stored {
			r.checkpoints.Forget(p)
		}
		clear(r.stored)
		r.firstScan = false
	}
	return scanned
}

func (r *agentReceiver) restore(f *trackedFile, cp checkpoint.File) {
	f.Restore(cp)
	f.analyzed, f.openAnswer, f.analyzedSpawnedBy = cp.AnalyzedLine, cp.OpenAnswer, cp.SpawnedBy
	f.agentMeta.reportedBad = metaStampOf(cp.BadAgentMeta)
	if r.format == "" && cp.Format != "" {
		if format, err := transcript.ParseFormat(cp.Format); err == nil && format != transcript.FormatAuto {
			f.format = format
		}
	}
	if f.format == "" {
		// Without a format the file is detected and read from the start.
		f.Rewind()
		f.analyzed, f.openAnswer, f.analyzedSpawnedBy = 0, nil, ""
	}
	r.setSession(f, cp.SessionID)
	f.Dirty = false
}

func (r *agentReceiver) forget(f *trackedFile) {
	delete(r.files, f.Path)
	r.setSession(f, "")
	if f.Stored {
		r.checkpoints.Forget(f.Path)
	}
}

// readFile reads the file's new complete lines into b, detecting its format
// and loading its parser first when needed.
func (r *agentReceiver) readFile(ctx context.Context, f *trackedFile, b *batch) error {
	if !f.startAtEnd && (f.Size == f.Read.Offset || f.Size == f.drainedAt) {
		return nil
	}
	fh, ok := r.open(ctx, f)
	if !ok {
		return nil
	}
	defer fh.Close()
	size := f.Size

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
				zap.String("path", f.Path), zap.Int("lines", transcript.DetectMaxLines))
			return nil
		}
		f.format, f.Dirty = format, true
	}
	if f.parser == nil {
		if err := r.load(ctx, f, fh); err != nil {
			return err
		}
	}
	if f.startAtEnd {
		// History feeds the session (turns, pairing) but is not emitted,
		// and counts as analysed — with what a sub-agent thread's metadata
		// file says now, which is history too: else it would make the
		// session due and send the whole of it.
		if err := r.advance(ctx, f, fh, size, nil); err != nil {
			return err
		}
		f.startAtEnd = false
		b.analyzed[f] = f.Read.Line
		r.checkAgentMeta(f)
		b.spawnedBy[f] = f.agentMeta.spawnedBy
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

// open opens a file through the tailing layer, which checks it is still the
// file its checkpoint is about; one truncated or replaced under its name is
// started over here too. ok is false when the file cannot be read now (it is
// tried again next poll).
func (r *agentReceiver) open(ctx context.Context, f *trackedFile) (fh *os.File, ok bool) {
	before := f.Read
	fh, reset, err := f.Open()
	if err != nil {
		r.logger.Debug("Cannot read transcript; will retry", zap.String("path", f.Path), zap.Error(err))
		return nil, false
	}
	if reset != "" {
		r.reset(ctx, f, reset, before)
	}
	return fh, true
}

// reset starts a file's transcript state over: the tailing layer found it
// truncated or replaced under its name and rewound it.
func (r *agentReceiver) reset(ctx context.Context, f *trackedFile, reason string, was tail.Position) {
	r.logger.Info("Transcript was "+reason+"; reading it again from the start",
		zap.String("path", f.Path), zap.Int64("size", f.Size), zap.Int64("offset", was.Offset), zap.Int64("line", was.Line))
	r.tel.FileReset(ctx, reason)
	r.setSession(f, "")
	*f = trackedFile{File: f.File, format: r.format, drainedAt: -1, lastGrowth: f.ModTime}
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

// load creates the file's parser and re-parses the lines already read
// without emitting them; their records still reach the session.
func (r *agentReceiver) load(ctx context.Context, f *trackedFile, fh *os.File) error {
	p, err := r.newParser(f)
	if err != nil {
		return err
	}
	target := f.Read
	f.parser, f.Read = p, tail.Position{}
	if err := r.advance(ctx, f, fh, target.Offset, nil); err != nil {
		f.parser, f.Read = nil, target
		return err
	}
	if f.Read != target {
		// The lines before the checkpoint changed without changing the
		// file's first bytes; go on from where the checkpoint is.
		r.logger.Warn("Transcript changed before its checkpoint; continuing after it",
			zap.String("path", f.Path), zap.Int64("checkpoint_line", target.Line), zap.Int64("lines_found", f.Read.Line))
		f.Read = target
	}
	return nil
}

func (r *agentReceiver) newParser(f *trackedFile) (transcript.Parser, error) {
	// Saved full outputs (Claude Code tool-results/) are read through the
	// same confined resolver as `ctxaudit ingest`, so both paths measure the
	// original from the saved file alike.
	opts := transcript.Options{
		SourceFile: f.Path,
		ReadSaved:  ingest.SavedFileReader(f.Path, f.format, 0, r.savedRefused(f)),
	}
	p, err := parsers.New(f.format, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Path, err)
	}
	return p, nil
}

// advance feeds the parser the complete lines between f.Read and end. With
// a batch the records are new and emitted into it (and reading stops when
// it is full); without one they only rebuild state.
func (r *agentReceiver) advance(ctx context.Context, f *trackedFile, fh *os.File, end int64, b *batch) error {
	if end <= f.Read.Offset {
		return nil
	}
	sink := r.rebuildSink(f)
	if b != nil {
		sink = r.readSink(f, b)
	}
	n, err := f.Lines(ctx, fh, end, r.lineReader, func(l tail.Line) bool {
		if l.TooLong {
			sink(&transcript.Skip{Line: l.No, Reason: transcript.SkipTooLong,
				Detail: fmt.Sprintf("%d bytes, limit %d", l.Size, r.cfg.MaxLineBytes)})
		} else {
			f.parser.Feed(l.No, l.Bytes, sink)
		}
		return b == nil || !b.full()
	})
	if err != nil {
		return err
	}
	if b != nil && n > 0 {
		r.tel.LinesRead(ctx, n, string(f.format))
		f.lastGrowth = f.ModTime
		if now := r.now(); f.lastGrowth.After(now) {
			f.lastGrowth = now // a clock ahead of ours must not postpone analysis
		}
	}
	r.snapshot(f)
	return nil
}

// lineReader reads a section of a file with the bounded line reader that
// `ctxaudit ingest` uses too.
func (r *agentReceiver) lineReader(section io.Reader) tail.LineReader {
	return transcriptLines{transcript.NewLineReader(section, r.cfg.MaxLineBytes)}
}

type transcriptLines struct{ lr *transcript.LineReader }

func (t transcriptLines) Next() (tail.Line, error) {
	l, err := t.lr.Next()
	return tail.Line{Bytes: l.Bytes, TooLong: l.TooLong, Size: l.Size}, err
}
