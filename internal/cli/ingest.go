package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ctxaudit/ctxaudit/collector/ingest"
	"github.com/ctxaudit/ctxaudit/collector/transcript"
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
error (exit 2). With --dry-run nothing is written: --format jsonl prints one tool-call
record per line.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, paths []string) error {
			ctx := cmd.Context()
			source, err := transcript.ParseFormat(a.v.GetString("source"))
			if err != nil {
				return UsageError{err}
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
				return usagef("--store-content must be none, context or all, not %q", store)
			}
			format := a.v.GetString("format")
			if format != "text" && format != "jsonl" {
				return usagef("--format must be text or jsonl, not %q", format)
			}
			summaryOut := cmd.OutOrStdout()
			var w ingest.Writer
			if a.v.GetBool("dry-run") {
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
			sum, err := ingest.Run(ctx, paths, opts, w)
			if werr := sum.WriteText(summaryOut); werr != nil && err == nil {
				err = werr
			}
			if errors.Is(err, ingest.ErrInput) {
				return UsageError{err}
			}
			if err != nil {
				return fmt.Errorf("ingest: %w", err)
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
	return cmd
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
