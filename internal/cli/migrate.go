package cli

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

func (a *app) migrateCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Create or upgrade the ClickHouse schema (safe to run twice)",
		Long: `migrate creates the ctxaudit database and applies the schema migrations built into
this binary, in order, recording each in <database>.schema_migrations. Running it
again is a no-op. A database migrated by a newer ctxaudit is refused.

With --retention it then drops the partitions older than the period (see prune).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			var retention time.Duration
			if r := a.v.GetString("retention"); r != "" {
				d, err := chstore.ParseRetention(r)
				if err != nil {
					return UsageError{err}
				}
				retention = d
			}
			s, err := a.openStore(ctx)
			if err != nil {
				return err
			}
			defer s.Close()
			res, err := s.Migrate(ctx)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if len(res.Applied) == 0 {
				fmt.Fprintf(w, "database %s is up to date at schema version %d\n", res.Database, res.Current)
			}
			for _, m := range res.Applied {
				fmt.Fprintf(w, "applied %04d_%s to %s\n", m.Version, m.Name, res.Database)
			}
			if retention > 0 {
				if err := a.prune(ctx, w, s, time.Now().Add(-retention), false); err != nil {
					return err
				}
			}
			if a.v.GetBool("show") {
				return showTables(ctx, w, s)
			}
			return nil
		},
	}
	cmd.Flags().String("retention", "", "after migrating, drop partitions older than this period (e.g. 30d, 2w, 720h)")
	cmd.Flags().Bool("show", true, "print the tables, their columns and row counts afterwards")
	return cmd
}

func (a *app) pruneCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "prune --older-than 30d",
		Short: "Drop whole day partitions older than a retention period",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			r := a.v.GetString("older-than")
			if r == "" {
				return usagef("prune needs --older-than, e.g. --older-than 30d")
			}
			d, err := chstore.ParseRetention(r)
			if err != nil {
				return UsageError{err}
			}
			s, err := a.openStore(ctx)
			if err != nil {
				return err
			}
			defer s.Close()
			if err := s.CheckSchema(ctx); err != nil {
				return err
			}
			return a.prune(ctx, cmd.OutOrStdout(), s, time.Now().Add(-d), a.v.GetBool("dry-run"))
		},
	}
	cmd.Flags().String("older-than", "", "retention period: partitions whose day ends before now minus this are dropped (e.g. 30d)")
	cmd.Flags().Bool("dry-run", false, "only list the partitions that would be dropped")
	return cmd
}

func (a *app) prune(ctx context.Context, w io.Writer, s *chstore.Store, cutoff time.Time, dryRun bool) error {
	dropped, err := s.Prune(ctx, cutoff, dryRun)
	verb := "dropped"
	if dryRun {
		verb = "would drop"
	}
	for _, d := range dropped {
		fmt.Fprintf(w, "%s partition %s of %s.%s (%d rows)\n", verb, d.Partition, s.Database(), d.Table, d.Rows)
	}
	if err != nil {
		return err
	}
	if len(dropped) == 0 {
		fmt.Fprintf(w, "no partitions before %s\n", cutoff.UTC().Format("2006-01-02"))
	}
	return nil
}

// showTables prints the schema as the server sees it: what `make run` shows a
// newcomer. One small query per table, because ClickHouse 18.16 cannot join
// more than two tables in one query.
func showTables(ctx context.Context, w io.Writer, s *chstore.Store) error {
	rows, err := s.Conn().Query(ctx, "SELECT name, engine FROM system.tables WHERE database = ? ORDER BY name", s.Database())
	if err != nil {
		return fmt.Errorf("list tables of %s: %w", s.Database(), err)
	}
	type table struct{ name, engine string }
	var tables []table
	for rows.Next() {
		var t table
		if err := rows.Scan(&t.name, &t.engine); err != nil {
			rows.Close()
			return fmt.Errorf("list tables of %s: %w", s.Database(), err)
		}
		tables = append(tables, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("list tables of %s: %w", s.Database(), err)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "\nTABLE\tENGINE\tCOLUMNS\tROWS (before dedup)\n")
	for _, t := range tables {
		var cols, n uint64
		if err := s.Conn().QueryRow(ctx, "SELECT count() FROM system.columns WHERE database = ? AND table = ?", s.Database(), t.name).Scan(&cols); err != nil {
			return fmt.Errorf("columns of %s.%s: %w", s.Database(), t.name, err)
		}
		if err := s.Conn().QueryRow(ctx, "SELECT toUInt64(sum(rows)) FROM system.parts WHERE database = ? AND table = ? AND active", s.Database(), t.name).Scan(&n); err != nil {
			return fmt.Errorf("rows of %s.%s: %w", s.Database(), t.name, err)
		}
		fmt.Fprintf(tw, "%s.%s\t%s\t%d\t%d\n", s.Database(), t.name, t.engine, cols, n)
	}
	return tw.Flush()
}
