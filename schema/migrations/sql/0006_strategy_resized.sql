-- ctxaudit v6: the `resized` strategy (docs/design.md §4.5): an image the
-- harness sent at fewer pixels than the original. Before it, such a call was
-- recorded with kind `unknown`.
--
--   tool_calls.strategy          gains 'resized' = 9; the values before it
--                                keep their numbers, so stored rows read the
--                                same.
--   tool_call_rollup.strategy_resized
--                                the calls of that strategy, like the other
--                                strategy_* counts. Rollups written before
--                                this migration read 0, which is what they
--                                counted: no stored row had the value yet.
--
-- ClickHouse 18.16 has no ADD COLUMN IF NOT EXISTS nor MODIFY COLUMN IF
-- EXISTS: the migrator runs the plain forms there, takes "column already
-- exists" as done, and repeats MODIFY COLUMN to the type the column already
-- has, a no-op.

ALTER TABLE {{ident .Database}}.tool_calls MODIFY COLUMN IF EXISTS strategy Enum8('none' = 0, 'head' = 1, 'tail' = 2, 'head_tail' = 3, 'summary' = 4, 'spill_to_file' = 5, 'refused' = 6, 'cleared' = 7, 'paginated' = 8, 'resized' = 9);

ALTER TABLE {{ident .Database}}.tool_call_rollup ADD COLUMN IF NOT EXISTS strategy_resized UInt64 DEFAULT 0 AFTER strategy_cleared;
