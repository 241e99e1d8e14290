package cli

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxaudit/ctxaudit/collector/ingest"
	"github.com/ctxaudit/ctxaudit/collector/transcript"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

// Values of store_content: which tool output texts go to ctxaudit.tool_outputs.
const (
	storeNone    = "none"
	storeContext = "context"
	storeAll     = "all"
)

func (a *app) ingestCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ingest [--source auto|claude-code|codex|pi] PATH...",
		Short: "Parse agent transcripts and write their tool calls, answers and sessions to ClickHouse",
		Long: `ingest reads transcript files and folders (recursively; the Claude Code layout with
subagents/ and tool-results/ is understood), runs truncation forensics on every tool
result and session analysis on every session, and writes the rows to ClickHouse,
creating the schema if needed. Re-ingesting the same files changes no query result.

Bad lines are counted and reported with file:line, never fatal. A missing path is an
error (exit 2), found before anything connects. A forced --source that finds no
session in the files is an error too. With --dry-run nothing is written: --format
jsonl prints one tool-call record per line.

On a terminal a progress line on stderr shows the files, MB and calls done, the rate
and an ETA; --quiet hides it, and it is never drawn into a pipe or a file.`,
		Example: `  ctxaudit ingest ~/.claude/projects --store-content all
  ctxaudit ingest --dry-run --format jsonl examples/sessions > calls.jsonl`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("ingest needs at least one transcript file or folder, e.g. `ctxaudit ingest ~/.claude/projects` or `ctxaudit ingest examples/sessions`")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, paths []string) error {
			ctx := cmd.Context()
			rawSource := a.v.GetString("source")
			source, err := transcript.ParseFormat(rawSource)
			if err != nil {
				return usagef("%s: %w", a.origin("source"), err)
			}
			if source != transcript.FormatAuto && string(source) != strings.ToLower(strings.TrimSpace(rawSource)) {
				fmt.Fprintf(cmd.ErrOrStderr(), "ctxaudit: %s %s reads every file as %s\n", a.origin("source"), rawSource, source)
			}
			// Every path must exist before anything connects or writes:
			// a typo is a usage error, not an empty ingest.
			for _, p := range paths {
				if _, err := os.Stat(p); err != nil {
					if errors.Is(err, os.ErrNotExist) {
						return usagef("%s: no such file or folder", p)
					}
					return usagef("%s: %w", p, unwrapPath(err))
				}
			}
			opts := ingest.Options{
				Source:       source,
				MaxLineBytes: a.v.GetInt("max-line-bytes"),
				BatchSize:    a.v.GetInt("batch-size"),
			}
			red, err := a.redactor()
			if err != nil {
				return err
			}
			switch store := a.v.GetString("store-content"); store {
			case storeNone:
			case storeContext, storeAll:
				opts.Outputs = ingest.OutputOptions{Store: true, Originals: store == storeAll,
					MaxBytes: a.v.GetInt("max-content-bytes"), Redact: red.String}
			default:
				return usagef("%s must be none, context or all, not %q", a.origin("store-content"), store)
			}
			format := a.v.GetString("format")
			if format != "text" && format != "jsonl" {
				return usagef("%s must be text or jsonl, not %q", a.origin("format"), format)
			}
			summaryOut := cmd.OutOrStdout()
			var w ingest.Writer
			if a.v.GetBool("dry-run") {
				opts.Redactor = red
				if format == "jsonl" {
					opts.DryRun = cmd.OutOrStdout()
					summaryOut = cmd.ErrOrStderr() // keep stdout pure JSON lines
				} else {
					opts.DryRun = discard{}
				}
			} else {
				if format == "jsonl" {
					return usagef("--format jsonl goes with --dry-run")
				}
				s, err := a.openStore(ctx)
				if err != nil {
					return err
				}
				defer s.Close()
				if _, err := s.Migrate(ctx); err != nil {
					return err
				}
				w = s
			}
			var bar *progress
			if !a.v.GetBool("quiet") && isTerminal(cmd.ErrOrStderr()) {
				files, bytes := transcriptTotals(paths)
				bar = newProgress(cmd.ErrOrStderr(), files, bytes, time.Now)
				opts.Progress = bar.update
			}
			sum, err := ingest.Run(ctx, paths, opts, w)
			if bar != nil {
				bar.finish()
			}
			if errors.Is(err, ingest.ErrInput) {
				// Nothing was ingested: an all-zero summary would only
				// bury the reason.
				return UsageError{err}
			}
			if werr := sum.WriteText(summaryOut); werr != nil && err == nil {
				err = werr
			}
			if err != nil {
				return fmt.Errorf("ingest: %w", err)
			}
			if rs, ok := w.(*chstore.Store); ok && sum.Files > 0 {
				// The dashboards read each day from its rollup while that is
				// current; snapshot the days just written. A failure costs
				// only speed (those days are read from tool_calls), so it is
				// reported, not fatal.
				if _, rerr := rs.RefreshRollups(ctx); rerr != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "warning: refreshing the dashboard rollups: %v (panels read these days from tool_calls until the next refresh)\n", rerr)
				}
			}
			if source != transcript.FormatAuto && sum.Files > 0 && sum.Sessions == 0 {
				return usagef("%s %s read %s but found no session in them: are they %s transcripts? Without --source the format is detected per file",
					a.origin("source"), rawSource, plural(sum.Files, "file"), source)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.String("source", "auto", "transcript format: auto, claude-code, codex or pi")
	f.Bool("dry-run", false, "parse and analyse, but write nothing to ClickHouse")
	f.String("format", "text", "with --dry-run: text (summary only) or jsonl (one tool-call record per line on stdout)")
	f.Int("max-line-bytes", transcript.DefaultMaxLineBytes, "skip (and report) transcript lines longer than this")
	f.Int("batch-size", ingest.DefaultBatchSize, "rows per INSERT")
	f.String("store-content", storeNone, "store tool output texts (redacted, capped) in tool_outputs: none, context or all")
	f.Int("max-content-bytes", 4<<20, "cap on each stored output text")
	f.Bool("quiet", false, "no progress line (it is drawn only on a terminal anyway)")
	return cmd
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// unwrapPath drops the path an *os.PathError repeats.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
