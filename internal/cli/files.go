package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/ctxaudit/ctxaudit/collector/analysis"
	"github.com/ctxaudit/ctxaudit/collector/ingest"
	"github.com/ctxaudit/ctxaudit/collector/redact"
	"github.com/ctxaudit/ctxaudit/collector/transcript"
	"github.com/ctxaudit/ctxaudit/internal/report"
	"github.com/ctxaudit/ctxaudit/schema"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

// The file mode of sessions and postmortem: the transcripts are parsed and
// analysed by the same ingest pipeline that feeds ClickHouse, into memory
// instead of a database, so one developer can audit their own sessions with
// nothing installed and get what a database would have answered.

// memStore is an ingest.Writer that keeps every record in memory, with the
// tool output texts for --expect.
type memStore struct {
	sessions []schema.Session
	calls    []schema.ToolCall
	answers  []schema.Answer
	outputs  map[string]schema.ToolOutput
	// keepTexts holds on to the output texts (for --expect); without it
	// memory holds records, not outputs.
	keepTexts bool
}

func (m *memStore) WriteSessions(_ context.Context, rows []schema.Session) error {
	m.sessions = append(m.sessions, rows...)
	return nil
}

func (m *memStore) WriteToolCalls(_ context.Context, rows []schema.ToolCall) error {
	m.calls = append(m.calls, rows...)
	return nil
}

func (m *memStore) WriteAnswers(_ context.Context, rows []schema.Answer) error {
	m.answers = append(m.answers, rows...)
	return nil
}

func (m *memStore) WriteToolOutputs(_ context.Context, rows []schema.ToolOutput) error {
	if m.outputs == nil {
		m.outputs = map[string]schema.ToolOutput{}
	}
	for _, o := range rows {
		if !m.keepTexts {
			o.Text = ""
		}
		m.outputs[o.SHA256] = o
	}
	return nil
}

// fileOptions are the ingest options of the file mode.
type fileOptions struct {
	source       string
	maxLineBytes int
	// texts keeps the output texts (what the model saw and the originals:
	// saved outputs read through ingest's confined resolver, and the full
	// outputs the harness's metadata holds) for --expect, redacted and
	// capped exactly as ingest --store-content all would store them.
	texts    bool
	maxBytes int
}

// loadFiles runs the ingest pipeline over paths into memory. Skipped lines
// and files are reported on stderr as ingest reports them, so nothing read
// is lost silently.
func loadFiles(ctx context.Context, paths []string, o fileOptions, stderr io.Writer) (*memStore, error) {
	opts := ingest.Options{MaxLineBytes: o.maxLineBytes}
	if o.source != "" {
		f, err := parseFormat(o.source)
		if err != nil {
			return nil, err
		}
		opts.Source = f
	}
	// Outputs are hashed as ingest --store-content all hashes them, so the
	// records carry the same context_sha256 and original_sha256 as in a
	// database; the texts themselves are kept only for --expect.
	opts.Outputs = ingest.OutputOptions{Store: true, Originals: true, MaxBytes: o.maxBytes, Redact: redact.String}
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, usagef("%s: no such file or folder", p)
			}
			return nil, usagef("%s: %w", p, unwrapPath(err))
		}
	}
	m := &memStore{keepTexts: o.texts}
	sum, err := ingest.Run(ctx, paths, opts, m)
	if errors.Is(err, ingest.ErrInput) {
		return nil, UsageError{err}
	}
	if err != nil {
		return nil, fmt.Errorf("read transcripts: %w", err)
	}
	if n := sum.SkippedTotal(); n > 0 {
		fmt.Fprintf(stderr, "ctxaudit: skipped %s of the transcripts (run `ctxaudit ingest --dry-run` on them for the list)\n", plural(n, "line"))
	}
	for _, f := range sum.SkippedFiles {
		fmt.Fprintf(stderr, "ctxaudit: skipped file %s: %s\n", f.File, f.Reason)
	}
	return m, nil
}

// listSessions filters and orders the sessions read from files as
// chstore.ListSessions does in ClickHouse: latest activity first.
func (m *memStore) listSessions(f chstore.SessionFilter) []schema.Session {
	var out []schema.Session
	for _, s := range m.sessions {
		if f.Matches(&s) {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, byLastActive)
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out
}

// postmortem builds the postmortem of one session read from files, with
// the same scoping, ordering and --expect search as from ClickHouse.
func (m *memStore) postmortem(q postmortemQuery) (*report.Postmortem, []string, error) {
	var (
		sess    schema.Session
		haveRow bool
		calls   []schema.ToolCall
		answers []schema.Answer
	)
	for _, s := range m.sessions {
		if s.SessionID == q.session {
			sess, haveRow = s, true
		}
	}
	for _, c := range m.calls {
		if c.SessionID == q.session {
			calls = append(calls, c)
		}
	}
	for _, a := range m.answers {
		if a.SessionID == q.session {
			answers = append(answers, a)
		}
	}
	if !haveRow && len(calls) == 0 && len(answers) == 0 {
		return nil, nil, usagef("session %q is not in these transcripts; they hold: %s", q.session, m.sessionIDs())
	}
	sortCalls(calls)
	sort.SliceStable(answers, func(i, j int) bool {
		if !answers[i].Timestamp.Equal(answers[j].Timestamp) {
			return answers[i].Timestamp.Before(answers[j].Timestamp)
		}
		return answers[i].MessageID < answers[j].MessageID
	})
	order := analysis.OrderOf(calls) // of every call, before the scope
	if q.answer != "" {
		a, ok := findAnswer(answers, q.answer)
		if !ok {
			return nil, nil, usagef("answer %q is not in session %s; its answers are: %s", q.answer, q.session, answerIDs(answers))
		}
		inputs := map[string]bool{}
		for _, id := range a.InputCallIDs {
			inputs[id] = true
		}
		var scoped []schema.ToolCall
		for _, c := range calls {
			if c.Turn == a.Turn || inputs[c.CallID] {
				scoped = append(scoped, c)
			}
		}
		calls, answers = scoped, []schema.Answer{a}
	}
	if !haveRow {
		sess = analysis.SessionFromRecords(q.session, calls, answers)
	}
	pm := report.Build(report.Input{Session: sess, Calls: calls, Answers: answers, AnswerID: q.answer, SessionStored: haveRow, Order: order})
	var warnings []string
	if q.expect != "" {
		stored := map[string]report.StoredText{}
		for _, sha := range report.OutputHashes(calls) {
			if o, ok := m.outputs[sha]; ok {
				stored[sha] = report.StoredText{Contains: strings.Contains(o.Text, q.expect), Capped: o.Capped}
			}
		}
		pm.Expect = report.FindExpected(q.expect, calls, stored)
	}
	return &pm, warnings, nil
}

// sortCalls orders calls as chstore returns them: by time, then by their
// line in the transcript, then by id.
func sortCalls(calls []schema.ToolCall) {
	sort.SliceStable(calls, func(i, j int) bool {
		a, b := &calls[i], &calls[j]
		if !a.Timestamp.Equal(b.Timestamp) {
			return a.Timestamp.Before(b.Timestamp)
		}
		if a.SourceLine != b.SourceLine {
			return a.SourceLine < b.SourceLine
		}
		return a.CallID < b.CallID
	})
}

func (m *memStore) sessionIDs() string {
	if len(m.sessions) == 0 {
		return "no sessions"
	}
	var ids []string
	for i, s := range m.sessions {
		if i == 5 {
			ids = append(ids, fmt.Sprintf("and %d more", len(m.sessions)-5))
			break
		}
		ids = append(ids, s.SessionID)
	}
	return strings.Join(ids, ", ")
}

// parseFormat reads a --source transcript format as a usage error.
func parseFormat(s string) (transcript.Format, error) {
	f, err := transcript.ParseFormat(s)
	if err != nil {
		return "", UsageError{err}
	}
	return f, nil
}
