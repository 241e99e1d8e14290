-- ctxaudit v2: how exact an original size is, the second shown range of a
-- head+tail cut, and continuations that fetched their source again.
--
-- One column per statement. ClickHouse 18.16 has no ADD COLUMN IF NOT
-- EXISTS, so the migration runner sends each of these without IF NOT EXISTS
-- and takes "column with this name already exists" as done: a run
-- interrupted half-way can be repeated on every server version.
--
-- Rows written before this migration read back with original_precision
-- 'unknown' (the precision of their sizes was not recorded) and the other
-- columns at their defaults (no tail range, not refetched).

-- exact | approximate (a rounded size label) | lower_bound (the output hit a
-- cap before it was measured); 'unknown' when no original size is known.
ALTER TABLE {{ident .Database}}.tool_calls ADD COLUMN IF NOT EXISTS original_precision Enum8('unknown' = 0, 'exact' = 1, 'approximate' = 2, 'lower_bound' = 3) DEFAULT 'unknown' AFTER original_source;

-- The tail range of a head+tail cut (shown is the head), in shown_unit.
ALTER TABLE {{ident .Database}}.tool_calls ADD COLUMN IF NOT EXISTS shown_tail_start Nullable(UInt64) AFTER shown_unit;
ALTER TABLE {{ident .Database}}.tool_calls ADD COLUMN IF NOT EXISTS shown_tail_end Nullable(UInt64) AFTER shown_tail_start;
ALTER TABLE {{ident .Database}}.tool_calls ADD COLUMN IF NOT EXISTS shown_tail_unit String AFTER shown_tail_end;
-- 1 only when the tail is known to end where the original output ends.
ALTER TABLE {{ident .Database}}.tool_calls ADD COLUMN IF NOT EXISTS shown_tail_is_end UInt8 AFTER shown_tail_unit;

-- The call continued an earlier one by fetching its source again.
ALTER TABLE {{ident .Database}}.tool_calls ADD COLUMN IF NOT EXISTS refetched_source UInt8 AFTER ref_version;

-- session_coverage was computed against a lower-bound original (an upper
-- bound on the share seen), and its pieces came from separate fetches.
ALTER TABLE {{ident .Database}}.tool_calls ADD COLUMN IF NOT EXISTS coverage_upper_bound UInt8 AFTER session_coverage;
ALTER TABLE {{ident .Database}}.tool_calls ADD COLUMN IF NOT EXISTS coverage_mixed_versions UInt8 AFTER coverage_upper_bound;
