package cli

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxaudit/ctxaudit/schema/chstore"
	"github.com/ctxaudit/ctxaudit/schema/migrations"
)

func (a *app) migrateCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Create or upgrade the ClickHouse schema (safe to run twice)",
		Long: `migrate creates the ctxaudit database and applies the schema migrations built into
this binary, in order, recording each in <database>.schema_migrations. Running it
again is a no-op. A database migrated by a newer ctxaudit is refused.

The DDL is rendered for the server's version: ClickHouse 22.8 and later get
the modern storage (LowCardinality, DateTime64(3), codecs, skipping indices),
older servers the 18.16 schema; both hold the same columns and answer every
query alike (see README, "ClickHouse versions").

With --retention it then drops the partitions older than the period (see
prune); on servers that have TTL it also sets the period as the tables' TTL, so
the server keeps dropping them.

With --print it changes nothing and prints the statements it would run, one
per block ending in ';': for the connected server and the database's state,
or, with --server-version, for a new database on that version without
connecting.`,
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
			if sv := a.v.GetString("server-version"); sv != "" && !a.v.GetBool("print") {
				return usagef("--server-version %s needs --print (migrate itself reads the version from the server)", sv)
			}
			if a.v.GetBool("print") {
				return a.printMigration(ctx, cmd.OutOrStdout(), retention)
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
			// The rollups' backfill: snapshot every day that has no current
			// snapshot (nothing on a new database, every day after 0004).
			if _, err := s.RefreshRollups(ctx); err != nil {
				return fmt.Errorf("migrate %s: refreshing the dashboard rollups: %w", res.Database, err)
			}
			w := cmd.OutOrStdout()
			if len(res.Applied) == 0 {
				fmt.Fprintf(w, "database %s is up to date at schema version %d\n", res.Database, res.Current)
			}
			for _, m := range res.Applied {
				fmt.Fprintf(w, "applied %04d_%s to %s\n", m.Version, m.Name, res.Database)
			}
			if retention > 0 {
				ttl, err := s.SetRetention(ctx, retention)
				if err != nil {
					return err
				}
				if ttl {
					fmt.Fprintf(w, "set a TTL of %s on the audit tables and rollups of %s\n", a.v.GetString("retention"), res.Database)
				}
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
	cmd.Flags().Bool("print", false, "print the statements migrate would run and change nothing")
	cmd.Flags().String("server-version", "", "with --print: render for this ClickHouse version (e.g. 26.7 or 18.16) and a new database, without connecting")
	return cmd
}

// printMigration prints the plan of a migrate run as SQL a DBA can review
// and run: one statement per block, each ending in ';'.
func (a *app) printMigration(ctx context.Context, w io.Writer, retention time.Duration) error {
	var (
		v       migrations.ServerVersion
		db      string
		applied map[uint32]string
		source  string
	)
	if sv := a.v.GetString("server-version"); sv != "" {
		var err error
		if v, err = migrations.ParseServerVersion(sv); err != nil {
			return UsageError{err}
		}
		if _, db, err = chstore.ParseAddress(a.v.GetString("clickhouse")); err != nil {
			return err
		}
		source = "given with --server-version; a new database"
	} else {
		s, err := a.openStore(ctx)
		if err != nil {
			return err
		}
		defer s.Close()
		if v, err = s.RenderingVersion(); err != nil {
			return err
		}
		if applied, err = s.AppliedMigrations(ctx); err != nil {
			return err
		}
		db = s.Database()
		source = "read from the server at " + s.Addr()
	}
	steps, err := migrations.Plan(db, v, applied)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "-- ctxaudit migrate: database %s, ClickHouse %s (%s), %s rendering.\n", db, v, source, v.Rendering())
	var current uint32
	pending := 0
	for _, st := range steps {
		if st.Migration.Version != current {
			if current != 0 {
				printRecord(w, db, migrationByVersion(steps, current))
			}
			current = st.Migration.Version
			pending++
			fmt.Fprintf(w, "\n-- %04d_%s\n", st.Migration.Version, st.Migration.Name)
		}
		fmt.Fprintf(w, "%s;\n\n", st.SQL)
	}
	if current != 0 {
		printRecord(w, db, migrationByVersion(steps, current))
	}
	if pending == 0 {
		fmt.Fprintf(w, "-- every migration is applied already.\n")
	}
	if retention > 0 {
		stmts := migrations.RetentionStatements(db, v, retention)
		if len(stmts) == 0 {
			fmt.Fprintf(w, "\n-- retention %s: ClickHouse %s has no TTL; migrate drops the older partitions instead (see prune).\n", a.v.GetString("retention"), v)
		} else {
			fmt.Fprintf(w, "\n-- retention %s (migrate also drops the older partitions at once, see prune)\n", a.v.GetString("retention"))
		}
		for _, q := range stmts {
			fmt.Fprintf(w, "%s;\n\n", q)
		}
	}
	return nil
}

func migrationByVersion(steps []migrations.Step, v uint32) migrations.Migration {
	for _, s := range steps {
		if s.Migration.Version == v {
			return s.Migration
		}
	}
	return migrations.Migration{}
}

// printRecord prints the row migrate records once a migration's statements
// ran, so that the printed SQL, run by hand, leaves a database ctxaudit
// recognises as migrated.
func printRecord(w io.Writer, db string, m migrations.Migration) {
	fmt.Fprintf(w, "INSERT INTO %s.schema_migrations (version, name, checksum, applied_at) VALUES (%d, '%s', '%s', now());\n\n",
		migrations.QuoteIdent(db), m.Version, m.Name, m.Checksum)
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
