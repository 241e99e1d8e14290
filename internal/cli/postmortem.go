package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ctxaudit/ctxaudit/collector/analysis"
	"github.com/ctxaudit/ctxaudit/collector/transcript"
	"github.com/ctxaudit/ctxaudit/internal/report"
	"github.com/ctxaudit/ctxaudit/schema"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

// Output formats of postmortem.
const (
	formatText     = "text"
	formatMarkdown = "markdown"
	formatJSON     = "json"
	formatHTML     = "html"
)

func (a *app) postmortemCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "postmortem [PATH...] [--session ID] [--answer MESSAGE_ID] [--expect TEXT] [--format text|markdown|json|html]",
		Short: "Explain which incomplete inputs a session's answers were built on (from ClickHouse, or straight from transcript files)",
		Long: `postmortem reads one session from ClickHouse and lays out, turn by turn, every tool
call: the original output size against what entered the model's context, how it was
cut, whether the model was told where, why and how to get the rest, the notice it saw,
and whether it went back. Then each answer's risk and reasons, and a verdict in one
sentence per answer.

Given transcript files or folders (PATH...), it reads them instead of ClickHouse:
nothing needs to be installed or running, and the report is the one the database
would give after ingest --store-content all. --session may then be left out when
the files hold one session.

--answer narrows it to one answer and the calls of its turn. --expect TEXT searches the
output texts for the string the right answer contained: a call whose original has it
but whose context does not is listed under "cut from": the answer was in the part the
model never saw. From ClickHouse this needs the texts stored at ingestion (ingest
--store-content all); from files, the saved full outputs are read from disk (Claude
Code's tool-results folder, only there). The search is case-sensitive.

--format markdown is ready to paste into a postmortem document; --format json is one
object with session_id, source, answers[], tool_calls[] and, with --expect, expect{}
(unknown sizes are null, never 0); --format html is one self-contained page (no
network) with a bar per call showing what of the original entered the context.
Turns are numbered from 0, as in the records; a record whose source did not say
its turn (a span without ctxaudit.turn) is in turn "unknown" (null in JSON).

A session or answer id that does not exist is a usage error (exit 2).`,
		Example: `  ctxaudit postmortem examples/sessions/claude-code --session 55555555-0005-4005-8005-000000000005 --expect UPLOAD_DISABLED
  ctxaudit sessions --risk high
  ctxaudit postmortem --session 55555555-0005-4005-8005-000000000005 --expect UPLOAD_DISABLED
  ctxaudit postmortem --session 55555555-0005-4005-8005-000000000005 --format html > postmortem.html`,
		RunE: func(cmd *cobra.Command, paths []string) error {
			q := postmortemQuery{
				session: strings.TrimSpace(a.v.GetString("session")),
				answer:  strings.TrimSpace(a.v.GetString("answer")),
				expect:  a.v.GetString("expect"),
			}
			if q.session == "" && len(paths) == 0 {
				return usagef("postmortem needs --session ID (find one with `ctxaudit sessions`), or transcript files: ctxaudit postmortem PATH...")
			}
			if cmd.Flags().Changed("expect") && q.expect == "" {
				return usagef("--expect needs a non-empty text")
			}
			render, err := postmortemRenderer(a.v.GetString("format"))
			if err != nil {
				return UsageError{fmt.Errorf("%s%s", a.origin("format"), strings.TrimPrefix(err.Error(), "--format"))}
			}
			ctx := cmd.Context()
			var (
				pm       *report.Postmortem
				warnings []string
			)
			if len(paths) > 0 {
				m, err := loadFiles(ctx, paths, fileOptions{
					source: a.v.GetString("source"), maxLineBytes: a.v.GetInt("max-line-bytes"),
					texts: q.expect != "", maxBytes: a.v.GetInt("max-content-bytes"),
				}, cmd.ErrOrStderr())
				if err != nil {
					return err
				}
				if q.session == "" {
					if len(m.sessions) != 1 {
						return usagef("these transcripts hold %s; name one with --session (list them with `ctxaudit sessions %s`): %s",
							plural(len(m.sessions), "session"), strings.Join(paths, " "), m.sessionIDs())
					}
					q.session = m.sessions[0].SessionID
				}
				pm, warnings, err = m.postmortem(q)
				if err != nil {
					return err
				}
			} else {
				s, err := a.openStore(ctx)
				if err != nil {
					return err
				}
				defer s.Close()
				if err := s.CheckSchema(ctx); err != nil {
					return err
				}
				pm, warnings, err = loadPostmortem(ctx, s, q)
				if err != nil {
					return err
				}
			}
			for _, w := range warnings {
				fmt.Fprintf(cmd.ErrOrStderr(), "ctxaudit: %s\n", w)
			}
			return render(cmd.OutOrStdout(), pm)
		},
	}
	f := cmd.Flags()
	f.String("session", "", "session id (required unless PATH holds one session)")
	f.String("answer", "", "only this answer (assistant message id) and the calls of its turn")
	f.String("expect", "", "text the right answer contained: find the calls whose cut-away part held it")
	f.String("format", formatText, "output format: text, markdown, json or html")
	f.String("source", "auto", "with PATH: transcript format, auto, claude-code, codex or pi")
	f.Int("max-line-bytes", transcript.DefaultMaxLineBytes, "with PATH: skip (and report) transcript lines longer than this")
	f.Int("max-content-bytes", 4<<20, "with PATH and --expect: how much of each output text is searched, as ingest would store it")
	return cmd
}

func postmortemRenderer(format string) (func(io.Writer, *report.Postmortem) error, error) {
	switch format {
	case formatText:
		return report.WriteText, nil
	case formatMarkdown, "md":
		return report.WriteMarkdown, nil
	case formatJSON:
		return report.WriteJSON, nil
	case formatHTML:
		return report.WriteHTML, nil
	}
	return nil, usagef("--format must be text, markdown, json or html, not %q", format)
}

// postmortemQuery is what the user asked for.
type postmortemQuery struct {
	session, answer, expect string
}

// loadPostmortem reads the records in scope and builds the postmortem. The
// reads are bounded to the session's days and paged (see chstore/queries.go).
// warnings are for stderr: things the user should know that do not fail it.
func loadPostmortem(ctx context.Context, s *chstore.Store, q postmortemQuery) (*report.Postmortem, []string, error) {
	var (
		sp      chstore.SessionSpan
		sess    schema.Session
		haveRow bool
	)
	// The span and the session row are independent lookups, each about a
	// granule per part: run them side by side.
	err := concurrently(ctx,
		func(ctx context.Context) (err error) { sp, err = s.SessionSpan(ctx, q.session); return err },
		func(ctx context.Context) (err error) { sess, haveRow, err = s.SessionRow(ctx, q.session); return err },
	)
	if err != nil {
		return nil, nil, err
	}
	if !sp.Found() && !haveRow {
		return nil, nil, usagef("session %q not found in database %s (list sessions with `ctxaudit sessions --since all`)", q.session, s.Database())
	}
	var (
		answers []schema.Answer
		calls   []schema.ToolCall
		order   analysis.CallOrder
	)
	if q.answer == "" {
		err = concurrently(ctx,
			func(ctx context.Context) (err error) { answers, err = s.SessionAnswers(ctx, sp); return err },
			func(ctx context.Context) (err error) {
				calls, err = s.SessionToolCalls(ctx, sp, chstore.CallFilter{})
				order = analysis.OrderOf(calls)
				return err
			},
		)
	} else {
		answers, calls, order, err = loadAnswerScope(ctx, s, sp, q)
	}
	if err != nil {
		return nil, nil, err
	}
	if !haveRow {
		sess = analysis.SessionFromRecords(q.session, calls, answers)
	}
	pm := report.Build(report.Input{Session: sess, Calls: calls, Answers: answers, AnswerID: q.answer, SessionStored: haveRow, Order: order})
	var warnings []string
	if q.expect != "" {
		found, err := s.SearchToolOutputs(ctx, report.OutputHashes(calls), q.expect)
		if err != nil {
			return nil, nil, err
		}
		stored := make(map[string]report.StoredText, len(found))
		for sha, m := range found {
			stored[sha] = report.StoredText{Contains: m.Contains, Capped: m.Capped}
		}
		pm.Expect = report.FindExpected(q.expect, calls, stored)
		if len(calls) > 0 && len(found) == 0 {
			warnings = append(warnings, "no output texts are stored for these calls, so --expect found nothing; ingest with --store-content all to store them")
		}
	}
	return &pm, warnings, nil
}

// loadAnswerScope reads one answer, the calls of its turn, and what every
// call of the session says of their order.
func loadAnswerScope(ctx context.Context, s *chstore.Store, sp chstore.SessionSpan, q postmortemQuery) ([]schema.Answer, []schema.ToolCall, analysis.CallOrder, error) {
	var (
		answers []schema.Answer
		places  []schema.ToolCall
	)
	// The answer's verdict and its calls' follow-ups are worded by what is
	// known of the order of every call of the session, not only of those
	// in scope: read that beside the answers.
	err := concurrently(ctx,
		func(ctx context.Context) (err error) { answers, err = s.SessionAnswers(ctx, sp); return err },
		func(ctx context.Context) (err error) { places, err = s.SessionCallPlaces(ctx, sp); return err },
	)
	if err != nil {
		return nil, nil, analysis.CallOrder{}, err
	}
	a, ok := findAnswer(answers, q.answer)
	if !ok {
		return nil, nil, analysis.CallOrder{}, usagef("answer %q is not in session %s; its answers are: %s", q.answer, q.session, answerIDs(answers))
	}
	calls, err := s.SessionToolCalls(ctx, sp, chstore.CallFilter{Turns: []schema.Turn{a.Turn}})
	if err != nil {
		return nil, nil, analysis.CallOrder{}, err
	}
	// An answer's inputs are the calls of its turn; should a writer have
	// placed one elsewhere, fetch it by id rather than leave it out.
	calls, err = addMissingInputs(ctx, s, sp, calls, a)
	if err != nil {
		return nil, nil, analysis.CallOrder{}, err
	}
	return []schema.Answer{a}, calls, analysis.OrderOf(places), nil
}

// concurrently runs the functions side by side and returns the first error;
// a failure cancels the context the others run with.
func concurrently(ctx context.Context, fns ...func(context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, len(fns))
	for _, fn := range fns {
		go func() { errs <- fn(ctx) }()
	}
	var first error
	for range fns {
		if err := <-errs; err != nil && first == nil {
			first = err
			cancel()
		}
	}
	return first
}

func findAnswer(answers []schema.Answer, id string) (schema.Answer, bool) {
	for _, a := range answers {
		if a.MessageID == id {
			return a, true
		}
	}
	return schema.Answer{}, false
}

// answerIDs lists a session's answer ids for an error message, a few at most.
func answerIDs(answers []schema.Answer) string {
	if len(answers) == 0 {
		return "none"
	}
	const show = 5
	var ids []string
	for i, a := range answers {
		if i == show {
			ids = append(ids, fmt.Sprintf("and %d more", len(answers)-show))
			break
		}
		ids = append(ids, a.MessageID)
	}
	return strings.Join(ids, ", ")
}

func addMissingInputs(ctx context.Context, s *chstore.Store, sp chstore.SessionSpan, calls []schema.ToolCall, a schema.Answer) ([]schema.ToolCall, error) {
	have := make(map[string]bool, len(calls))
	for _, c := range calls {
		have[c.CallID] = true
	}
	var missing []string
	for _, id := range a.InputCallIDs {
		if !have[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return calls, nil
	}
	more, err := s.SessionToolCalls(ctx, sp, chstore.CallFilter{CallIDs: missing})
	if err != nil {
		return nil, err
	}
	calls = append(calls, more...)
	sort.SliceStable(calls, func(i, j int) bool {
		if !calls[i].Timestamp.Equal(calls[j].Timestamp) {
			return calls[i].Timestamp.Before(calls[j].Timestamp)
		}
		return calls[i].SourceLine < calls[j].SourceLine
	})
	return calls, nil
}
