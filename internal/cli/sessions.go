package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxaudit/ctxaudit/collector/analysis"
	"github.com/ctxaudit/ctxaudit/collector/transcript"
	"github.com/ctxaudit/ctxaudit/schema"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

// Output formats of sessions.
const formatTable = "table"

func (a *app) sessionsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sessions [PATH...] [--since all] [--risk high|medium|low] [--source claude_code|codex|pi|…] [--format table|json]",
		Short: "Find sessions, the most recently active first (from ClickHouse, or straight from transcript files)",
		Long: `sessions lists the sessions recorded in ClickHouse that were active in the period,
with their tool-call, truncation and answer counts and their worst answer risk.

Given transcript files or folders (PATH...), it reads them instead: no database is
needed, and the sessions are those ingest would have written.

--since takes a period back from now (90m, 24h, 7d, 2w), a date (2026-01-15), an
RFC 3339 time, or "all" (the default). --risk keeps sessions whose worst answer is at
least that risky: --risk medium lists medium and high. --source keeps one harness's
sessions. --format json prints an array of session objects. When --since or --limit
hides sessions, a note on stderr says so.

From ClickHouse, a session whose stored row counts fewer calls or answers than are
stored (a collector dropped its buffer before its end) is shown counted from its
records, marked * in the table and "recounted": true in the JSON, and the filters
apply to it as recounted.`,
		Example: `  ctxaudit sessions --risk high
  ctxaudit sessions --since 24h --source codex --format json
  ctxaudit sessions ~/.claude/projects --risk high`,
		RunE: func(cmd *cobra.Command, paths []string) error {
			f, err := a.sessionFilter(time.Now())
			if err != nil {
				return err
			}
			format := a.v.GetString("format")
			if format != formatTable && format != formatJSON {
				return usagef("%s must be table or json, not %q", a.origin("format"), format)
			}
			ctx := cmd.Context()
			// list returns the sessions matching a filter, from the files or
			// from ClickHouse; show makes the rows listed what is shown — from
			// ClickHouse, each row counting what is stored of its session,
			// and the sessions whose rows may not match although their
			// records do added (recountSessions).
			var (
				list func(chstore.SessionFilter) ([]schema.Session, error)
				show = func(sessions []schema.Session) ([]listedSession, error) { return listed(sessions), nil }
			)
			if len(paths) > 0 {
				m, err := loadFiles(ctx, paths, fileOptions{maxLineBytes: a.v.GetInt("max-line-bytes")}, cmd.ErrOrStderr())
				if err != nil {
					return err
				}
				list = func(f chstore.SessionFilter) ([]schema.Session, error) { return m.listSessions(f), nil }
			} else {
				s, err := a.openStore(ctx)
				if err != nil {
					return err
				}
				defer s.Close()
				if err := s.CheckSchema(ctx); err != nil {
					return err
				}
				list = func(f chstore.SessionFilter) ([]schema.Session, error) { return s.ListSessions(ctx, f) }
				show = func(sessions []schema.Session) ([]listedSession, error) {
					return recountSessions(ctx, s, sessions, f, cmd.ErrOrStderr())
				}
			}
			// One more than the limit tells whether the limit hid any.
			more := f
			more.Limit++
			sessions, err := list(more)
			if err != nil {
				return err
			}
			shown, err := show(sessions)
			if err != nil {
				return err
			}
			limited := len(shown) > f.Limit
			if limited {
				shown = shown[:f.Limit]
			}
			if note, err := hiddenNote(list, f, shown, limited); err != nil {
				return err
			} else if note != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "ctxaudit: %s\n", note)
			}
			if format == formatJSON {
				return writeSessionsJSON(cmd.OutOrStdout(), shown)
			}
			if n := recountedCount(shown); n > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "ctxaudit: %s marked * counted from the stored calls and answers, which the stored session row undercounts (a collector dropped part of the session's buffer before its end)\n",
					plural(n, "session"))
			}
			return writeSessionsTable(cmd.OutOrStdout(), shown, f)
		},
	}
	f := cmd.Flags()
	f.String("since", "all", "sessions active since: a period (24h, 7d, 2w), a date, an RFC 3339 time, or all")
	f.String("risk", "", "only sessions whose worst answer is at least this risky: low, medium or high")
	f.String("source", "", "only this harness's sessions: "+harnessNames())
	f.String("format", formatTable, "output format: table or json")
	f.Int("limit", 100, "list at most this many sessions")
	f.Int("max-line-bytes", transcript.DefaultMaxLineBytes, "with PATH: skip (and report) transcript lines longer than this")
	return cmd
}

// hiddenNote says what --since or --limit left out, so an empty or short
// list is never mistaken for all there is: limited reports that the limit
// cut the list; otherwise one more query without the period finds whether
// older sessions match.
func hiddenNote(list func(chstore.SessionFilter) ([]schema.Session, error), f chstore.SessionFilter, shown []listedSession, limited bool) (string, error) {
	if limited {
		if f.Limit == 1 {
			return "showing the most recently active session; --limit lists more", nil
		}
		return fmt.Sprintf("showing the %d most recently active sessions; --limit lists more", f.Limit), nil
	}
	if f.ActiveSince.IsZero() {
		return "", nil
	}
	wide := f
	wide.ActiveSince = time.Time{}
	wide.Limit = len(shown) + 1
	all, err := list(wide)
	if err != nil {
		return "", err
	}
	// The first one not shown and active before the period: a session
	// shown recounted may come later in the list by rows.
	isShown := make(map[string]bool, len(shown))
	for _, l := range shown {
		isShown[l.SessionID] = true
	}
	i := slices.IndexFunc(all, func(s schema.Session) bool {
		return !isShown[s.SessionID] && s.LastActive().Before(f.ActiveSince)
	})
	if i < 0 {
		return "", nil
	}
	older := all[i]
	return fmt.Sprintf("older sessions are hidden by --since (active before %s; the latest of them was active %s); --since all lists them",
		f.ActiveSince.UTC().Format("2006-01-02 15:04 UTC"), older.LastActive().UTC().Format("2006-01-02 15:04 UTC")), nil
}

// byLastActive orders sessions as ListSessions does: the most recently
// active first, then by id.
func byLastActive(a, b schema.Session) int {
	if c := b.LastActive().Compare(a.LastActive()); c != 0 {
		return c
	}
	return strings.Compare(a.SessionID, b.SessionID)
}

// sessionFilter reads the filter flags, naming where a bad value came from.
func (a *app) sessionFilter(now time.Time) (chstore.SessionFilter, error) {
	f, err := sessionFilter(a.v.GetString("since"), a.v.GetString("risk"), a.v.GetString("source"), a.v.GetInt("limit"), now)
	var ue UsageError
	if errors.As(err, &ue) {
		for _, name := range []string{"since", "risk", "source", "limit"} {
			if flag := "--" + name; strings.HasPrefix(ue.Error(), flag) {
				if o := a.origin(name); o != flag {
					return f, usagef("%s%s", o, strings.TrimPrefix(ue.Error(), flag))
				}
			}
		}
	}
	return f, err
}

// sessionFilter validates the flags of sessions.
func sessionFilter(since, risk, source string, limit int, now time.Time) (chstore.SessionFilter, error) {
	var f chstore.SessionFilter
	t, err := parseSince(since, now)
	if err != nil {
		return f, err
	}
	f.ActiveSince = t
	switch r := schema.Risk(strings.ToLower(risk)); r {
	case "":
	case schema.RiskLow, schema.RiskMedium, schema.RiskHigh, schema.RiskNone:
		f.MinRisk = r
	default:
		return f, usagef("--risk must be low, medium or high, not %q", risk)
	}
	if source != "" {
		h := schema.Harness(strings.ReplaceAll(strings.ToLower(source), "-", "_"))
		known := false
		for _, x := range schema.Harnesses {
			known = known || x == h
		}
		if !known {
			return f, usagef("--source must be one of %s, not %q", harnessNames(), source)
		}
		f.Source = h
	}
	if limit <= 0 {
		return f, usagef("--limit must be positive, not %d", limit)
	}
	f.Limit = limit
	return f, nil
}

// parseSince reads --since: "all" (no bound), a period back from now, a
// date or an RFC 3339 time.
func parseSince(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" || strings.EqualFold(s, "all") {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	d, err := chstore.ParseRetention(s)
	if err != nil {
		return time.Time{}, usagef("--since %q: want a period (24h, 7d, 2w), a date (2026-01-15), an RFC 3339 time or all", s)
	}
	return now.Add(-d).UTC(), nil
}

func harnessNames() string {
	names := make([]string, len(schema.Harnesses))
	for i, h := range schema.Harnesses {
		names[i] = string(h)
	}
	return strings.Join(names, ", ")
}

// listedSession is a session as sessions shows it: its stored row, or,
// when that counts fewer calls or answers than are stored, the row
// recounted from the records (analysis.Recount).
type listedSession struct {
	schema.Session
	Recounted bool
}

// MarshalJSON is the session's object with "recounted" added.
func (l listedSession) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(l.Session)
	if err != nil || len(b) < 2 || b[len(b)-1] != '}' {
		return b, err
	}
	b = append(b[:len(b)-1], `,"recounted":`...)
	return append(strconv.AppendBool(b, l.Recounted), '}'), nil
}

// listed shows the sessions as their rows.
func listed(sessions []schema.Session) []listedSession {
	out := make([]listedSession, len(sessions))
	for i, s := range sessions {
		out[i] = listedSession{Session: s}
	}
	return out
}

// maxContinuedSessions bounds how many sessions that went on after a
// dropped buffer recountSessions looks at beyond the rows listed: each may
// cost a read of the whole session.
const maxContinuedSessions = 1000

// recountSessions shows each session as its row, unless the store holds
// more of its calls or answers than the row counts: a collector that
// dropped the session's buffer before its end wrote the row of what it
// held first, and the later buffer's row ranks below it (docs/design.md
// §10.3); its exporter writes the row recounted once the later part is
// stored, but a row written before that recount existed, or whose recount
// is still to be retried, undercounts. Such a session is read whole and
// recounted as its postmortem recounts it. One query counts what is stored
// of every session shown; those undercounted are read together
// (chstore.CountedRecords).
//
// The rows were selected by the filter, but a session whose row undercounts
// may match it although its row does not — active later than its row
// ends, riskier than its row says. Every such session has a record
// analysed by a later, partial buffer (chstore.ContinuedSessions), so
// those are looked at too: their rows are read, recounted and kept if the
// recount matches the filter. A recount can only add records, and so move
// a session later or make it riskier, but the filter is applied to every
// recounted session again in case the stored answers grade it lower than
// its row did. The list is sorted again as ListSessions sorts it.
func recountSessions(ctx context.Context, s *chstore.Store, rows []schema.Session, f chstore.SessionFilter, warn io.Writer) ([]listedSession, error) {
	continued, err := s.ContinuedSessions(ctx, f.ActiveSince, f.Source, maxContinuedSessions+1)
	if err != nil {
		return nil, err
	}
	if len(continued) > maxContinuedSessions {
		continued = continued[:maxContinuedSessions]
		fmt.Fprintf(warn, "ctxaudit: more than %d sessions went on after a collector dropped their buffer; only the %d most recently active of them are looked at beyond their rows, others are listed by their rows alone\n",
			maxContinuedSessions, maxContinuedSessions)
	}
	listedIDs := make(map[string]bool, len(rows))
	for _, r := range rows {
		listedIDs[r.SessionID] = true
	}
	var extra []string
	for _, id := range continued {
		if !listedIDs[id] {
			extra = append(extra, id)
		}
	}
	if len(extra) > 0 {
		more, err := s.SessionRows(ctx, extra)
		if err != nil {
			return nil, err
		}
		rows = append(slices.Clone(rows), more...)
	}
	out := listed(rows)
	if len(rows) == 0 {
		return out, nil
	}
	ids := make([]string, len(rows))
	for i, sess := range rows {
		ids[i] = sess.SessionID
	}
	since := schema.EarliestStart(rows)
	stored, err := s.StoredRecordCounts(ctx, ids, since)
	if err != nil {
		return nil, err
	}
	var under []string
	for _, sess := range rows {
		if n := stored[sess.SessionID]; n.Calls > sess.ToolCalls || n.Answers > sess.Answers {
			under = append(under, sess.SessionID)
		}
	}
	var records map[string]chstore.StoredRecords
	if len(under) > 0 {
		if records, err = s.CountedRecords(ctx, under, since); err != nil {
			return nil, err
		}
	}
	kept := out[:0]
	for _, l := range out {
		if r, ok := records[l.SessionID]; ok {
			l.Session, l.Recounted = analysis.Recount(l.Session, r.Calls, r.Answers)
		}
		if (l.Recounted || !listedIDs[l.SessionID]) && !f.Matches(&l.Session) {
			continue
		}
		kept = append(kept, l)
	}
	slices.SortStableFunc(kept, func(a, b listedSession) int { return byLastActive(a.Session, b.Session) })
	return kept, nil
}

func recountedCount(sessions []listedSession) int {
	n := 0
	for _, s := range sessions {
		if s.Recounted {
			n++
		}
	}
	return n
}

func writeSessionsJSON(w io.Writer, sessions []listedSession) error {
	if sessions == nil {
		sessions = []listedSession{}
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(sessions); err != nil {
		return fmt.Errorf("write sessions: %w", err)
	}
	return nil
}

func writeSessionsTable(w io.Writer, sessions []listedSession, f chstore.SessionFilter) error {
	if len(sessions) == 0 {
		what := "no sessions"
		if !f.ActiveSince.IsZero() {
			what += " active since " + f.ActiveSince.Format("2006-01-02 15:04 UTC")
		}
		if f.Source != "" {
			what += " from " + string(f.Source)
		}
		if f.MinRisk != "" {
			what += " with risk " + string(f.MinRisk) + " or worse"
		}
		if !f.ActiveSince.IsZero() {
			what += " (try --since all)"
		}
		_, err := fmt.Fprintln(w, what)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LAST ACTIVE (UTC)\tSESSION\tSOURCE\tTURNS\tCALLS\tTRUNCATED\tSILENT\tANSWERS\tRISKY\tMAX RISK\tPROJECT")
	for _, s := range sessions {
		last := s.LastActive()
		turns := "?" // unknown: the calls' source did not say their turns
		if s.Turns.Known {
			turns = s.Turns.String()
		}
		when := "unknown" // no record of the session had a time
		if schema.TimeKnown(last) {
			when = last.UTC().Format("2006-01-02 15:04")
		}
		calls := strconv.Itoa(s.ToolCalls)
		if s.Recounted {
			calls += "*" // counted from the records: the note on stderr says why
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\n",
			when, s.SessionID, s.Source, turns, calls, s.TruncatedCalls,
			s.SilentCalls, s.Answers, riskyText(s.Session), s.MaxRisk, orDash(firstNonEmpty(s.Cwd, s.Project)))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write sessions: %w", err)
	}
	return nil
}

// riskyText is the session's risky answers, with how many of them only may
// be that risky — their inputs are uncertain, graded at their worst — when
// any are: "3 (2 may)".
func riskyText(s schema.Session) string {
	n := strconv.Itoa(s.RiskyAnswers)
	if u := s.RiskyAnswersUncertain; u.Known && u.N > 0 {
		n += " (" + u.String() + " may)"
	}
	return n
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
