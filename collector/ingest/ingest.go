// Package ingest is the one-shot import pipeline behind `ctxaudit ingest`:
// walk paths, detect each file's format, parse it line by line, group the
// files of one session, run session analysis, and hand sessions, tool calls
// and answers to a Writer in batches.
//
// It is the file-system-aware layer over the pure parsers in
// collector/transcript: it knows the Claude Code folder layout (sub-agent
// threads join their session; saved outputs live in tool-results/) and reads
// files; the parsers never do.
package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
	"unicode/utf8"

	"github.com/ctxaudit/ctxaudit/collector/redact"
	"github.com/ctxaudit/ctxaudit/collector/session"
	"github.com/ctxaudit/ctxaudit/collector/transcript"
	"github.com/ctxaudit/ctxaudit/collector/transcript/parsers"
	"github.com/ctxaudit/ctxaudit/schema"
)

// Writer stores ingested records. The ClickHouse writer implements it; every
// id is stable (the harness's own ids), so writing the same records twice
// must not change query results.
type Writer interface {
	WriteSessions(ctx context.Context, sessions []schema.Session) error
	WriteToolCalls(ctx context.Context, calls []schema.ToolCall) error
	WriteAnswers(ctx context.Context, answers []schema.Answer) error
	WriteToolOutputs(ctx context.Context, outputs []schema.ToolOutput) error
}

// AnswerReader is a Writer that can say which of a session's messages it
// holds as answers. A transcript ingested while the harness was writing it
// can end with a message's text, which is then stored as an answer; when a
// later ingest of the whole file shows that message to call a tool, the
// answer must be taken back (docs/design.md §5.1). The parser never offers
// the message as an answer again, so only the store can say one was stored:
// Run asks a Writer that implements AnswerReader about the messages each
// session shows not to be answers, and writes a retraction for each answer
// it still holds. A Writer without it keeps such answers.
type AnswerReader interface {
	// StandingAnswers returns, of the messages named (message ids by
	// session id), those whose latest stored row is an answer, with at
	// least what session.Retractable keeps of it.
	StandingAnswers(ctx context.Context, messages map[string][]string) ([]schema.Answer, error)
}

// Defaults.
const (
	DefaultBatchSize      = 1000
	DefaultMaxSkipDetails = 1000
	DefaultMaxOutputBytes = 1 << 20
)

// maxPendingNotAnswers is the most messages known not to be answers that
// are gathered before they are looked up in the store: one query's worth
// (the store bounds an IN list at 1,000 ids). A smaller batch size gathers
// fewer.
const maxPendingNotAnswers = 1000

// Options configure a run. The zero value ingests with auto-detection and
// default limits.
type Options struct {
	// Source forces a format; "" or auto detects it per file from its first lines.
	Source transcript.Format
	// MaxLineBytes skips longer lines (default transcript.DefaultMaxLineBytes).
	MaxLineBytes int
	// BatchSize is the number of rows per Writer call (default DefaultBatchSize).
	BatchSize int
	// DryRun, when set, receives one JSON tool-call record per line and
	// nothing is written to the Writer (which may then be nil).
	DryRun io.Writer
	// Redactor removes secrets from every string of a dry-run record, as
	// the store does for every column it writes (nil: the built-in rules).
	Redactor *redact.Redactor
	// MaxSkipDetails bounds Summary.Skipped; counts stay exact.
	MaxSkipDetails int
	// MaxSavedBytes caps one saved output read (default DefaultMaxSavedBytes).
	MaxSavedBytes int64
	// Outputs configures storing the text of tool outputs.
	Outputs OutputOptions
	// Progress, when set, is called after each file is read with the
	// totals so far; it runs on the ingest goroutine and must be quick.
	Progress func(Progress)
}

// Progress is how far a run is: files read, their bytes, and the tool
// calls parsed from them.
type Progress struct {
	Files int
	Bytes int64
	Calls int
}

// OutputOptions configure ctxaudit.tool_outputs rows: the context text of
// each call and, when a saved full output was read, the original.
type OutputOptions struct {
	Store bool
	// Originals also stores full originals (store_content: all): the saved
	// output a notice pointed to (unless it holds only the output's first
	// part), else the full output the harness's metadata
	// carries (transcript.Call.OriginalText), and — for a call that was not
	// cut — the context itself, which then is the original. Without it only what the
	// model saw is stored (store_content: context).
	Originals bool
	// MaxBytes caps each stored text (default DefaultMaxOutputBytes); the hash
	// is always of the full text.
	MaxBytes int
	// Redact removes secrets and returns the text and the number of
	// redactions. Storing requires it: unredacted output never leaves here.
	Redact func(string) (string, int)
}

func (o Options) withDefaults() Options {
	if o.Source == "" {
		o.Source = transcript.FormatAuto
	}
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = transcript.DefaultMaxLineBytes
	}
	if o.BatchSize <= 0 {
		o.BatchSize = DefaultBatchSize
	}
	if o.MaxSkipDetails <= 0 {
		o.MaxSkipDetails = DefaultMaxSkipDetails
	}
	if o.Outputs.MaxBytes <= 0 {
		o.Outputs.MaxBytes = DefaultMaxOutputBytes
	}
	return o
}

// Run ingests the transcript files and folders in paths. Problems with the
// input (a missing path, an unreadable folder, a named file in no known
// format) are reported before anything is written, as errors matching
// ErrInput. Bad lines never fail a run: they are counted in the summary.
func Run(ctx context.Context, paths []string, opts Options, w Writer) (Summary, error) {
	opts = opts.withDefaults()
	sum := newSummary()
	if len(paths) == 0 {
		return sum, fmt.Errorf("%w: no paths to ingest", ErrInput)
	}
	if w == nil && opts.DryRun == nil {
		return sum, errors.New("ingest: no writer and no dry-run output")
	}
	if opts.Outputs.Store && opts.Outputs.Redact == nil {
		return sum, errors.New("ingest: storing tool outputs needs a Redact function")
	}
	if opts.Source != transcript.FormatAuto {
		if _, err := transcript.ParseFormat(string(opts.Source)); err != nil {
			return sum, fmt.Errorf("%w: %w", ErrInput, err)
		}
	}

	files, err := findFiles(paths)
	if err != nil {
		return sum, err
	}
	var usable []file
	for _, f := range files {
		if opts.Source != transcript.FormatAuto {
			f.format = opts.Source
			usable = append(usable, f)
			continue
		}
		format, empty, err := detectFormat(f.path, opts.MaxLineBytes)
		switch {
		case empty:
			sum.SkippedFiles = append(sum.SkippedFiles, SkippedFile{File: f.path, Reason: "empty"})
			continue
		case err != nil && f.explicit:
			return sum, err
		case err != nil:
			sum.SkippedFiles = append(sum.SkippedFiles, SkippedFile{File: f.path, Reason: skipReason(err)})
			continue
		}
		f.format = format
		usable = append(usable, f)
	}

	r := &run{opts: opts, w: w, sum: &sum}
	for _, u := range groupUnits(usable) {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		if err := r.unit(ctx, u); err != nil {
			return sum, err
		}
	}
	if err := r.flush(ctx, true); err != nil {
		return sum, err
	}
	return sum, nil
}

// run holds one Run's batches.
type run struct {
	opts     Options
	w        Writer
	sum      *Summary
	sessions []schema.Session
	calls    []schema.ToolCall
	answers  []schema.Answer
	outputs  []schema.ToolOutput
	outSeen  map[string]bool
	// notAnswers are the messages of the sessions analysed since the last
	// look-up that are known not to be answers, to be looked up in the
	// store (takeBack); notAnswerIDs counts them.
	notAnswers   []session.NotAnswers
	notAnswerIDs int
}

// unitState gathers one session's records across its files.
type unitState struct {
	b     *session.Builder
	metas []schema.Session // per file, main thread first
}

func (r *run) unit(ctx context.Context, u unit) error {
	st := &unitState{b: session.New(u.key)}
	for _, f := range u.files {
		if err := r.file(ctx, f, st); err != nil {
			return err
		}
	}
	meta := session.MergeMeta(st.metas...)
	if st.b.Empty(&meta) {
		// Nothing in these files makes a session (a file of stray lines):
		// its lines are counted, but an empty session row would be noise.
		return nil
	}
	res := st.b.Analyze(meta)

	r.sum.Sessions++
	r.sum.Turns += int(res.Meta.Turns.N)             // a transcript counts its turns: known
	r.sum.Compactions += int(res.Meta.Compactions.N) // a transcript shows them: known
	r.sum.ToolCalls += len(res.Calls)
	r.sum.Answers += len(res.Answers)
	for i := range res.Calls {
		if c := &res.Calls[i]; c.Truncated {
			r.sum.Truncated++
			r.sum.TruncatedByKind[c.Kind]++
		}
	}
	for i := range res.Answers {
		r.sum.AnswersByRisk[res.Answers[i].Risk]++
	}

	if r.opts.DryRun != nil {
		enc := json.NewEncoder(r.opts.DryRun)
		enc.SetEscapeHTML(false)
		red := r.opts.Redactor
		if red == nil {
			red = redact.Default()
		}
		for i := range res.Calls {
			red.Record(&res.Calls[i])
			if err := enc.Encode(&res.Calls[i]); err != nil {
				return fmt.Errorf("write dry-run record: %w", err)
			}
		}
		return nil
	}
	r.sessions = append(r.sessions, res.Meta)
	r.calls = append(r.calls, res.Calls...)
	r.answers = append(r.answers, res.Answers...)
	r.noteNotAnswers(res.Meta, res.NotAnswers)
	return r.flush(ctx, false)
}

// noteNotAnswers queues the messages of session meta known not to be
// answers (its one Result's NotAnswers: all of them) for takeBack, when the
// Writer can look them up.
func (r *run) noteNotAnswers(meta schema.Session, ids []string) {
	if _, ok := r.w.(AnswerReader); !ok || len(ids) == 0 {
		return
	}
	r.notAnswers = append(r.notAnswers, session.NotAnswers{SessionID: meta.SessionID, MessageIDs: ids, By: meta.Analysis})
	r.notAnswerIDs += len(ids)
}

// takeBack writes a retraction for every answer the store holds for a
// message queued by noteNotAnswers — one an earlier ingest of a
// half-written file stored — and for every such answer of this run not yet
// written, then empties the queue. It looks the messages up in batches
// (a batch's worth, at most maxPendingNotAnswers, and what is left at the
// end of the run), so a large ingest costs a query per batch, not per
// session.
func (r *run) takeBack(ctx context.Context, final bool) error {
	if r.notAnswerIDs == 0 || (!final && r.notAnswerIDs < min(r.opts.BatchSize, maxPendingNotAnswers)) {
		return nil
	}
	queued := r.notAnswers
	r.notAnswers, r.notAnswerIDs = nil, 0
	lookup := session.Lookup(queued)
	standing, err := r.w.(AnswerReader).StandingAnswers(ctx, lookup)
	if err != nil {
		return fmt.Errorf("look up answers stored for messages that proved not to be answers: %w", err)
	}
	// Answers of this run still waiting for their batch are not in the
	// store yet; Retractions takes back only those of messages queued.
	for _, a := range r.answers {
		if !a.Retracted {
			standing = append(standing, a)
		}
	}
	retractions := session.Retractions(queued, standing)
	taken := make(map[[2]string]bool, len(retractions))
	for _, a := range retractions {
		taken[[2]string{a.SessionID, a.MessageID}] = true
	}
	r.answers = append(r.answers, retractions...)
	r.sum.AnswersRetracted += len(taken)
	return nil
}

// file parses one transcript file into st.
func (r *run) file(ctx context.Context, f file, st *unitState) error {
	fh, err := os.Open(f.path)
	if err != nil {
		return &InputError{Path: f.path, Err: unwrapPathError(err)}
	}
	defer fh.Close()

	r.sum.Files++
	r.sum.Formats[f.format]++
	// Records name their file by its absolute path, as the receiver (which
	// tails absolute patterns) does: the same input gives the same rows.
	source := f.path
	if abs, err := filepath.Abs(f.path); err == nil {
		source = abs
	}
	popts := transcript.Options{SourceFile: source, KeepOriginalText: r.opts.Outputs.Store && r.opts.Outputs.Originals}
	// The session id is needed to resolve saved outputs; for Claude Code the
	// main thread's file name is it.
	var line int64 // the line being parsed, for refusal reports
	popts.ReadSaved = newSavedReader(f, layoutSessionID(f.path), r.opts.MaxSavedBytes,
		func(e *RefusalError) { r.refuseSaved(f.path, line, e) })

	p, err := parsers.New(f.format, popts)
	if err != nil {
		return &InputError{Path: f.path, Err: err}
	}
	emit := func(rec transcript.Record) { r.record(f, rec, st) }

	lr := transcript.NewLineReader(fh, r.opts.MaxLineBytes)
	for {
		l, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read %s after line %d: %w", f.path, r.sum.Lines, err)
		}
		r.sum.Lines++
		if l.No%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if l.TooLong {
			r.skip(f.path, &transcript.Skip{Line: l.No, Reason: transcript.SkipTooLong,
				Detail: fmt.Sprintf("%d bytes, limit %d", l.Size, r.opts.MaxLineBytes)})
			continue
		}
		line = l.No
		p.Feed(l.No, l.Bytes, emit)
	}
	p.Flush(emit)
	r.sum.Bytes += lr.BytesRead()
	st.metas = append(st.metas, p.Session())
	if f.format == transcript.FormatClaudeCode {
		r.agentMeta(f, st)
	}
	if r.opts.Progress != nil {
		r.opts.Progress(Progress{Files: r.sum.Files, Bytes: r.sum.Bytes, Calls: r.sum.ToolCalls + st.b.Calls()})
	}
	return nil
}

// agentMeta gives the session what a Claude Code sub-agent thread's
// metadata file says of the call that spawned the agent (AgentMetaPath). A
// file that cannot be used is reported, like a bad line, and places
// nothing; the thread's records stay as read.
func (r *run) agentMeta(f file, st *unitState) {
	path, agentID, ok := AgentMetaPath(f.path)
	if !ok {
		return
	}
	m, _, err := ReadAgentMeta(path)
	if err != nil {
		r.skip(path, &transcript.Skip{Reason: transcript.SkipBadAgentMeta, Detail: err.Error()})
	}
	st.b.SpawnedBy(agentID, m.ToolUseID)
}

// savedIsOriginal reports whether the saved output read while detecting is
// the whole original: forensics measured the original from it, and not as
// a lower bound (a file the harness cut before saving it is only the
// output's first part).
func savedIsOriginal(o schema.Original) bool {
	return o.Source == schema.SourceSavedFile && o.Precision != schema.PrecisionLowerBound
}

// record takes one parser record.
func (r *run) record(f file, rec transcript.Record, st *unitState) {
	switch v := rec.(type) {
	case *transcript.Call:
		if r.opts.Outputs.Store && r.opts.DryRun == nil {
			v.Call.ContextSHA256 = r.keepOutput(v.ContextText, v.Call.Timestamp)
			switch {
			case !r.opts.Outputs.Originals:
			case v.SavedText != nil && savedIsOriginal(v.Call.Original):
				v.Call.OriginalSHA256 = r.keepOutput(string(v.SavedText), v.Call.Timestamp)
			case v.OriginalText != "":
				v.Call.OriginalSHA256 = r.keepOutput(v.OriginalText, v.Call.Timestamp)
			case !v.Call.Truncated && v.Call.Kind == schema.KindNone:
				v.Call.OriginalSHA256 = v.Call.ContextSHA256
			}
		}
		// Only the row is kept: the texts are not needed past this point,
		// so memory holds records, not outputs.
		st.b.AddCall(v.Call, v.SpawnedAgentID, false)
	case *transcript.Answer:
		st.b.AddAnswer(v.Answer)
	case *transcript.Unpaired:
		st.b.Unpaired(v)
	case *transcript.NotAnswer:
		// The parser read the whole message and offered no answer for it,
		// so the builder holds none to drop; but the message counts in
		// what the analysis saw (its extent, schema.Analysis.Records), as
		// in the collector's.
		st.b.NotAnswer(v.MessageID)
	case *transcript.Skip:
		r.skip(f.path, v)
	}
}

func (r *run) skip(path string, s *transcript.Skip) {
	r.sum.SkippedLines[s.Reason]++
	if len(r.sum.Skipped) >= r.opts.MaxSkipDetails {
		r.sum.SkippedOmitted++
		return
	}
	r.sum.Skipped = append(r.sum.Skipped, SkippedLine{File: path, Line: s.Line, Reason: s.Reason, Detail: s.Detail})
}

func (r *run) refuseSaved(path string, line int64, e *RefusalError) {
	r.sum.SavedRefused[e.Reason]++
	if len(r.sum.SavedRefusals) < r.opts.MaxSkipDetails {
		r.sum.SavedRefusals = append(r.sum.SavedRefusals, SavedRefusal{File: path, Line: line, Ref: e.Ref, Reason: e.Reason, Detail: e.Detail})
	}
}

// keepOutput queues a tool_outputs row for text (hashed and measured in
// full, then redacted and capped) and returns its hash.
func (r *run) keepOutput(text string, seen time.Time) string {
	sum := sha256.Sum256([]byte(text))
	id := hex.EncodeToString(sum[:])
	if r.outSeen == nil {
		r.outSeen = map[string]bool{}
	}
	if r.outSeen[id] {
		return id
	}
	r.outSeen[id] = true
	// Redact before capping, so the cap never cuts a secret into a piece
	// too short for its rule to recognise; the margin past the cap holds
	// the longest secret a rule matches (a private-key block).
	stored := text
	if limit := r.opts.Outputs.MaxBytes + redactMargin; len(stored) > limit {
		stored = truncateUTF8(stored, limit)
	}
	stored, n := r.opts.Outputs.Redact(stored)
	capped := len(text) > r.opts.Outputs.MaxBytes
	if len(stored) > r.opts.Outputs.MaxBytes {
		stored = truncateUTF8(stored, r.opts.Outputs.MaxBytes)
	}
	r.outputs = append(r.outputs, schema.ToolOutput{
		SHA256: id, Bytes: uint64(len(text)), Text: stored, Capped: capped,
		Redactions: n, FirstSeen: seen,
	})
	r.sum.ToolOutputsKept++
	return id
}

// redactMargin is how far past the cap a text is redacted before it is cut.
const redactMargin = 16 << 10

func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// flush writes full batches, or everything when final.
func (r *run) flush(ctx context.Context, final bool) error {
	if r.opts.DryRun != nil {
		return nil
	}
	if err := r.takeBack(ctx, final); err != nil {
		return err
	}
	n := r.opts.BatchSize
	var err error
	if r.sessions, err = writeBatches(ctx, r.sessions, n, final, r.w.WriteSessions, "sessions"); err != nil {
		return err
	}
	// The texts go before the calls that link to them, all of them when a
	// batch of calls goes: a stored link always names a stored text, and a
	// store holding no text holds no link (chstore skips looking for links
	// to carry over then).
	callsGo := len(r.calls) >= n || (final && len(r.calls) > 0)
	if r.outputs, err = writeBatches(ctx, r.outputs, n, final || callsGo, r.w.WriteToolOutputs, "tool outputs"); err != nil {
		return err
	}
	if r.calls, err = writeBatches(ctx, r.calls, n, final, r.w.WriteToolCalls, "tool calls"); err != nil {
		return err
	}
	if r.answers, err = writeBatches(ctx, r.answers, n, final, r.w.WriteAnswers, "answers"); err != nil {
		return err
	}
	if final {
		r.outSeen = nil
	}
	return nil
}

// writeBatches writes rows in batches of n and returns what is left: fewer
// than n rows, or none when final.
func writeBatches[T any](ctx context.Context, rows []T, n int, final bool, write func(context.Context, []T) error, what string) ([]T, error) {
	for len(rows) >= n || (final && len(rows) > 0) {
		k := min(n, len(rows))
		if err := write(ctx, rows[:k]); err != nil {
			return rows, fmt.Errorf("write %d %s: %w", k, what, err)
		}
		rows = rows[k:]
	}
	if len(rows) == 0 {
		return nil, nil
	}
	// Keep the remainder in a fresh slice so written rows can be collected.
	return append([]T(nil), rows...), nil
}

// skipReason is why a file was skipped, without the path SkippedFile
// already names.
func skipReason(err error) string {
	var ie *InputError
	if errors.As(err, &ie) {
		return ie.Err.Error()
	}
	return err.Error()
}
