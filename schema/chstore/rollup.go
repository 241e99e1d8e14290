package chstore

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Rollups: verified snapshots of tool_calls for the dashboards
// (migrations/sql/0004_tool_call_rollups.sql, docs/design.md §7.5).
//
// A snapshot of one day partition is computed from tool_calls FINAL, so it
// counts every call once at its winning version, and is tagged with the
// partition's max_block_number read before the computation. An INSERT into
// the partition afterwards raises that number (merges keep it), which makes
// the snapshot stale: readers then take the day from tool_calls FINAL again.
// A snapshot can therefore lag, never be wrong, and RefreshRollups may run
// at any time, from any number of processes: two snapshots of the same
// block number are computed from the same rows and are identical.
//
// A snapshot's base_block is that block number plus RollupBlockBase, the
// generation of what a snapshot holds. A snapshot of an older generation
// (taken before the figures it lacks were added, by an older release, or by
// one still running) then never equals a partition's current tagged number:
// readers take its day from tool_calls FINAL and the next refresh takes it
// again, and since its base_block is smaller, a merge of the two keeps the
// new one whatever order they were written in.

// RollupBlockBase is added to a partition's max_block_number to give the
// base_block of its snapshots: 10^15 times the snapshots' generation. The
// generation is 1 since migration 0008, which added truncated_analysed and
// made truncated_followed count analysed calls only; generation 0 (the
// untagged numbers of 0004–0007) lacks them. Every dashboard panel compares
// base_block with max(max_block_number) + this value (docs/design.md §7.7).
// A change to what a snapshot holds raises the generation, so that no
// snapshot taken before it is read after it. 10^15 blocks are far more
// INSERTs than a table ever gets.
const RollupBlockBase uint64 = 1_000_000_000_000_000

// RollupDay is one day partition RefreshRollups brought up to date.
type RollupDay struct {
	Day   uint32 // YYYYMMDD, the partition of tool_calls
	Block uint64 // its max_block_number when the snapshot was taken, plus RollupBlockBase
}

// RefreshRollups recomputes the rollup of every day partition of tool_calls
// that changed since its last snapshot (or has none) and returns those days,
// oldest first.
func (s *Store) RefreshRollups(ctx context.Context) ([]RollupDay, error) {
	current, err := s.partitionBlocks(ctx)
	if err != nil {
		return nil, err
	}
	done, err := s.rollupBlocks(ctx)
	if err != nil {
		return nil, err
	}
	var stale []RollupDay
	for day, block := range current {
		if done[day] != block {
			stale = append(stale, RollupDay{Day: day, Block: block})
		}
	}
	sort.Slice(stale, func(i, j int) bool { return stale[i].Day < stale[j].Day })
	for i, d := range stale {
		if err := s.refreshRollupDay(ctx, d); err != nil {
			return stale[:i], err
		}
	}
	return stale, nil
}

// partitionBlocks returns each day partition of tool_calls with its highest
// block number, tagged with the snapshots' generation (RollupBlockBase).
func (s *Store) partitionBlocks(ctx context.Context) (map[uint32]uint64, error) {
	rows, err := s.conn.Query(ctx,
		"SELECT partition, max(max_block_number) FROM system.parts WHERE database = ? AND table = 'tool_calls' AND active GROUP BY partition",
		s.database)
	if err != nil {
		return nil, fmt.Errorf("list partitions of %s.tool_calls: %w", s.database, err)
	}
	defer rows.Close()
	out := map[uint32]uint64{}
	for rows.Next() {
		var p string
		var block int64
		if err := rows.Scan(&p, &block); err != nil {
			return nil, fmt.Errorf("list partitions of %s.tool_calls: %w", s.database, err)
		}
		day, err := strconv.ParseUint(p, 10, 32)
		if err != nil {
			continue // not a day partition
		}
		out[uint32(day)] = uint64(block) + RollupBlockBase
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list partitions of %s.tool_calls: %w", s.database, err)
	}
	return out, nil
}

// rollupBlocks returns, for each day with a finished snapshot, the block
// number of its newest one.
func (s *Store) rollupBlocks(ctx context.Context) (map[uint32]uint64, error) {
	rows, err := s.conn.Query(ctx, "SELECT day, max(base_block) FROM "+s.table("tool_call_rollup_days")+" GROUP BY day")
	if err != nil {
		return nil, fmt.Errorf("read %s.tool_call_rollup_days: %w", s.database, err)
	}
	defer rows.Close()
	out := map[uint32]uint64{}
	for rows.Next() {
		var day uint32
		var block uint64
		if err := rows.Scan(&day, &block); err != nil {
			return nil, fmt.Errorf("read %s.tool_call_rollup_days: %w", s.database, err)
		}
		out[day] = block
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read %s.tool_call_rollup_days: %w", s.database, err)
	}
	return out, nil
}

// rollupColumns are the columns every rollup INSERT writes, in order.
const rollupColumns = "day, scope, period, period_start, period_end, day_start, day_end, source, tool, model, project, base_block, " +
	"calls, truncated_calls, silent_calls, suspected_calls, explicit_calls, " +
	"truncated_silent, truncated_range, truncated_reason, truncated_next, truncated_full, truncated_followed, truncated_analysed, " +
	"understated_markers, sized_calls, dropped_bytes, delivered_bytes, " +
	"strategy_head, strategy_tail, strategy_head_tail, strategy_summary, strategy_spill, strategy_paginated, strategy_refused, strategy_cleared, strategy_resized, " +
	"coverage_at_call, coverage_by_end, truncated_original, truncated_context"

// bucketVector is an 11-element array with a 1 at the coverage bucket b
// (0–10) and 0 elsewhere (all 0 for b = 255, no bucket). Written out, not
// with arrayMap: ClickHouse 18.16 does not resolve an alias inside a lambda.
func bucketVector(b string) string {
	parts := make([]string, 11)
	for i := range parts {
		parts[i] = fmt.Sprintf("toUInt64(%s = %d)", b, i)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// analysedCall is true for a row the session's analysis wrote (bit 63 of
// version, schema/chstore/version.go). Until then a call's follow-through
// (followed_up, session_coverage, searched) is not known, whatever the row
// holds: the collector writes a call as it reads it, with followed_up 0.
const analysedCall = "version >= 9223372036854775808"

// hourlyRollupSQL computes the scope-0 hourly rows of one day partition
// from tool_calls FINAL. Every count is the same condition the dashboards
// count; the coverage buckets are those of the "Coverage of truncated
// outputs" panel. The follow-up counts and the coverage by the end of the
// session count analysed calls only: truncated_analysed is the follow-up
// rate's denominator, so a call no analysis has judged is neither followed
// up nor not, and neither is one whose followed_up the analysis found not
// known (NULL).
func (s *Store) hourlyRollupSQL() string {
	return "INSERT INTO " + s.table("tool_call_rollup") + " (" + rollupColumns + ")\n" +
		`SELECT toUInt32(?), 0, 3600, rollup_hour, toDateTime(toUInt32(rollup_hour) + 3599), any(rollup_day_start), any(rollup_day_end),
  source, tool, model, project, toUInt64(?),
  count(), countIf(truncated = 1), countIf(truncation_kind = 'silent'), countIf(truncation_kind = 'suspected'), countIf(truncation_kind = 'explicit'),
  countIf(truncated = 1 AND truncation_kind = 'silent'), countIf(truncated = 1 AND disclosure_range = 1), countIf(truncated = 1 AND disclosure_reason = 1),
  countIf(truncated = 1 AND disclosure_next = 1), countIf(truncated = 1 AND disclosure_score = 3),
  countIf(truncated = 1 AND ifNull(followed_up, 0) = 1 AND analysed), countIf(truncated = 1 AND analysed AND isNotNull(followed_up)),
  countIf(marker_understated = 1), countIf(isNotNull(original_bytes) AND isNotNull(context_bytes)),
  toUInt64(ifNull(sum(if(original_bytes > context_bytes, original_bytes - context_bytes, 0)), 0)), toUInt64(ifNull(sum(ifNull(context_bytes, 0)), 0)),
  countIf(strategy = 'head'), countIf(strategy = 'tail'), countIf(strategy = 'head_tail'), countIf(strategy = 'summary'),
  countIf(strategy = 'spill_to_file'), countIf(strategy = 'paginated'), countIf(strategy = 'refused'), countIf(strategy = 'cleared'), countIf(strategy = 'resized'),
  sumForEach(at_call_vector), sumForEach(by_end_vector),
  groupArrayIf(assumeNotNull(original_bytes), truncated = 1 AND isNotNull(original_bytes)),
  groupArrayIf(assumeNotNull(context_bytes), truncated = 1 AND isNotNull(context_bytes))
FROM
(
  SELECT source, tool, model, project, truncated, truncation_kind, strategy, disclosure_range, disclosure_reason, disclosure_next, disclosure_score,
    followed_up, marker_understated, original_bytes, context_bytes,
    ` + analysedCall + ` AS analysed,
    toDateTime(intDiv(toUInt32(ts), 3600) * 3600) AS rollup_hour,
    toDateTime(toDate(ts)) AS rollup_day_start,
    toDateTime(toDate(ts) + 1) - 1 AS rollup_day_end,
    truncated = 1 AND ifNull(original_bytes, 0) > 0 AND isNotNull(context_bytes) AS coverable,
    if(coverable, toUInt8(least(floor(toFloat64(assumeNotNull(context_bytes)) / assumeNotNull(original_bytes) * 10), 10)), 255) AS at_call_bucket,
    if(coverable AND analysed AND isNotNull(session_coverage), toUInt8(least(floor(assumeNotNull(session_coverage) * 10), 10)), 255) AS by_end_bucket,
    ` + bucketVector("at_call_bucket") + ` AS at_call_vector,
    ` + bucketVector("by_end_bucket") + ` AS by_end_vector
  FROM ` + s.table("tool_calls") + ` FINAL
  WHERE toYYYYMMDD(ts) = ?
)
GROUP BY rollup_hour, source, tool, model, project`
}

// derivedRollupSQL computes rows from the day's scope-0 hourly rows of one
// snapshot: scope 0 by day (dims kept) or scope 1 by hour (dims merged).
func (s *Store) derivedRollupSQL(byDay bool) string {
	scope, period, start, end, dims, group := "1", "3600", "period_start", "any(period_end)", "'', '', '', ''", "period_start"
	arrays := "emptyArrayUInt64(), emptyArrayUInt64(), emptyArrayUInt64(), emptyArrayUInt64()"
	if byDay {
		scope, period, start, end, dims, group = "0", "86400", "any(day_start)", "any(day_end)", "source, tool, model, project", "source, tool, model, project"
		arrays = "sumForEach(coverage_at_call), sumForEach(coverage_by_end), groupArrayArray(truncated_original), groupArrayArray(truncated_context)"
	}
	return "INSERT INTO " + s.table("tool_call_rollup") + " (" + rollupColumns + ")\n" +
		"SELECT day, " + scope + ", " + period + ", " + start + ", " + end + ", any(day_start), any(day_end), " + dims + ", base_block,\n" +
		`  sum(calls), sum(truncated_calls), sum(silent_calls), sum(suspected_calls), sum(explicit_calls),
  sum(truncated_silent), sum(truncated_range), sum(truncated_reason), sum(truncated_next), sum(truncated_full), sum(truncated_followed), sum(truncated_analysed),
  sum(understated_markers), sum(sized_calls), sum(dropped_bytes), sum(delivered_bytes),
  sum(strategy_head), sum(strategy_tail), sum(strategy_head_tail), sum(strategy_summary), sum(strategy_spill), sum(strategy_paginated), sum(strategy_refused), sum(strategy_cleared), sum(strategy_resized),
  ` + arrays + `
FROM ` + s.table("tool_call_rollup") + ` FINAL
WHERE day = ? AND scope = 0 AND period = 3600 AND base_block = ?
GROUP BY day, base_block, ` + group
}

// refreshRollupDay writes one snapshot of day d and then its row in
// tool_call_rollup_days, which is what makes readers use it.
func (s *Store) refreshRollupDay(ctx context.Context, d RollupDay) error {
	if err := s.conn.Exec(ctx, s.hourlyRollupSQL(), d.Day, d.Block, d.Day); err != nil {
		return fmt.Errorf("roll up %s.tool_calls day %d: %w", s.database, d.Day, err)
	}
	for _, byDay := range []bool{true, false} {
		if err := s.conn.Exec(ctx, s.derivedRollupSQL(byDay), d.Day, d.Block); err != nil {
			return fmt.Errorf("roll up %s.tool_calls day %d: %w", s.database, d.Day, err)
		}
	}
	if err := s.conn.Exec(ctx, "INSERT INTO "+s.table("tool_call_rollup_days")+" (day, base_block, refreshed_at) SELECT toUInt32(?), toUInt64(?), now()",
		d.Day, d.Block); err != nil {
		return fmt.Errorf("record rollup of %s.tool_calls day %d: %w", s.database, d.Day, err)
	}
	return nil
}
