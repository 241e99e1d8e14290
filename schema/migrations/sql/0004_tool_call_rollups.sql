-- ctxaudit v4: verified rollups of tool_calls for the dashboards.
--
-- Why not a materialized view: an MV sees every inserted row, including
-- versions a later row supersedes, so its sums would count a re-written call
-- twice. These tables are snapshots instead: ctxaudit computes them from
-- tool_calls FINAL, one day partition at a time (chstore.RefreshRollups), and
-- records with each the partition's max_block_number (system.parts) read
-- BEFORE the snapshot. Any later INSERT into that partition raises its
-- max_block_number; merges never do. A dashboard uses a day's rollup rows
-- only while tool_call_rollup_days holds (day, current max_block_number), and
-- reads every other day from tool_calls FINAL, so a panel's figure always
-- equals the exact FINAL query's (docs/design.md §7.5).
--
-- Rows of one snapshot:
--   scope 0, period 3600    one row per hour × source, tool, model, project
--   scope 0, period 86400   one row per day × source, tool, model, project
--   scope 1, period 3600    one row per hour, every call (dimensions '')
-- period_start/period_end are the first and last whole second covered;
-- day_start/day_end those of the day partition (server time zone). day is
-- the partition of tool_calls the row was computed from.
--
-- The counts are exactly the conditions the panels count (countIf(...));
-- coverage_* are the 11 coverage buckets (0–10 %, …, 100 %) at call time and
-- by the end of the session; truncated_original/_context are the known sizes
-- of truncated calls, kept whole so that medians stay exact.

CREATE TABLE IF NOT EXISTS {{ident .Database}}.tool_call_rollup
(
    day                 UInt32,
    scope               UInt8,
    period              UInt32,
    period_start        DateTime,
    period_end          DateTime,
    day_start           DateTime,
    day_end             DateTime,
    source              String,
    tool                String,
    model               String,
    project             String,
    base_block          UInt64,
    calls               UInt64,
    truncated_calls     UInt64,
    silent_calls        UInt64,
    suspected_calls     UInt64,
    explicit_calls      UInt64,
    truncated_silent    UInt64,
    truncated_range     UInt64,
    truncated_reason    UInt64,
    truncated_next      UInt64,
    truncated_full      UInt64,
    truncated_followed  UInt64,
    understated_markers UInt64,
    sized_calls         UInt64,
    dropped_bytes       UInt64,
    delivered_bytes     UInt64,
    strategy_head       UInt64,
    strategy_tail       UInt64,
    strategy_head_tail  UInt64,
    strategy_summary    UInt64,
    strategy_spill      UInt64,
    strategy_paginated  UInt64,
    strategy_refused    UInt64,
    strategy_cleared    UInt64,
    coverage_at_call    Array(UInt64),
    coverage_by_end     Array(UInt64),
    truncated_original  Array(UInt64),
    truncated_context   Array(UInt64)
)
ENGINE = ReplacingMergeTree(base_block)
PARTITION BY day
ORDER BY (scope, period, period_start, source, tool, model, project);

-- One row per finished snapshot, written after its rows.
CREATE TABLE IF NOT EXISTS {{ident .Database}}.tool_call_rollup_days
(
    day          UInt32,
    base_block   UInt64,
    refreshed_at DateTime
)
ENGINE = ReplacingMergeTree(base_block)
PARTITION BY day
ORDER BY (day, base_block);
