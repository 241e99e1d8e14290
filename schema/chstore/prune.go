package chstore

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/ctxaudit/ctxaudit/schema/migrations"
)

// Dropped is one partition removed by Prune.
type Dropped struct {
	Table     string
	Partition string // YYYYMMDD
	Rows      uint64
}

// Prune drops every partition whose day ends before cutoff. Dropping whole
// partitions is the retention mechanism that works on every server version
// (table TTL needs 19.6+). With dryRun it only reports what it would drop.
func (s *Store) Prune(ctx context.Context, cutoff time.Time, dryRun bool) ([]Dropped, error) {
	cutoffDay, err := s.dayOf(ctx, cutoff)
	if err != nil {
		return nil, err
	}
	var out []Dropped
	for _, table := range migrations.DayPartitionedTables() {
		rows, err := s.conn.Query(ctx,
			"SELECT partition, sum(rows) FROM system.parts WHERE database = ? AND table = ? AND active GROUP BY partition ORDER BY partition",
			s.database, table)
		if err != nil {
			return out, fmt.Errorf("list partitions of %s.%s: %w", s.database, table, err)
		}
		var parts []Dropped
		for rows.Next() {
			var p string
			var n uint64
			if err := rows.Scan(&p, &n); err != nil {
				rows.Close()
				return out, fmt.Errorf("list partitions of %s.%s: %w", s.database, table, err)
			}
			day, err := strconv.ParseUint(p, 10, 32)
			if err != nil {
				continue // not one of our day partitions; leave it alone
			}
			if day < cutoffDay {
				parts = append(parts, Dropped{Table: table, Partition: p, Rows: n})
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return out, fmt.Errorf("list partitions of %s.%s: %w", s.database, table, err)
		}
		for _, p := range parts {
			if !dryRun {
				// The partition value is a validated integer, so it is safe to splice.
				if err := s.conn.Exec(ctx, "ALTER TABLE "+s.table(table)+" DROP PARTITION "+p.Partition); err != nil {
					return out, fmt.Errorf("drop partition %s of %s.%s: %w", p.Partition, s.database, table, err)
				}
			}
			out = append(out, p)
		}
	}
	return out, nil
}

// ParseRetention parses a retention period such as "30d", "12h" or "2w".
func ParseRetention(s string) (time.Duration, error) {
	if s == "" {
		return 0, fmt.Errorf("empty retention period")
	}
	unit := s[len(s)-1]
	mult := map[byte]time.Duration{'d': 24 * time.Hour, 'w': 7 * 24 * time.Hour}[unit]
	if mult != 0 {
		n, err := strconv.ParseUint(s[:len(s)-1], 10, 32)
		if err != nil || n == 0 {
			return 0, fmt.Errorf("invalid retention period %q: want e.g. 30d, 2w or 720h", s)
		}
		return time.Duration(n) * mult, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("invalid retention period %q: want e.g. 30d, 2w or 720h", s)
	}
	return d, nil
}

// dayOf is the day partition t falls in (YYYYMMDD), in the server's time
// zone, which the partitions are computed in: a day partition ends before t
// exactly when it is lower. (t's date in UTC would, on a server west of UTC,
// name a day that ends after t, and drop rows younger than the cut-off.)
func (s *Store) dayOf(ctx context.Context, t time.Time) (uint64, error) {
	sec := t.Unix()
	if sec < 2*86400 {
		return 0, nil // before every day a DateTime holds: no day ends before it
	}
	sec = min(sec, 1<<32-1) // DateTime's last second
	var day uint32
	if err := s.conn.QueryRow(ctx, "SELECT toYYYYMMDD(toDateTime(?))", sec).Scan(&day); err != nil {
		return 0, fmt.Errorf("the day of %s on the server: %w", t.UTC().Format(time.RFC3339), err)
	}
	return uint64(day), nil
}
