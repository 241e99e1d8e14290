-- ctxaudit v5: answers that were taken back (docs/design.md §5).
--
--   retracted  1: the message proved not to be an answer (it went on to call a
--              tool after an analysis had already returned its text as one,
--              because the harness paused mid-message for longer than
--              session_idle). The row, written with a higher version than the
--              answer it replaces, is what FINAL keeps for that message; every
--              reader skips it. Rows written before this migration read 0.
--
-- ClickHouse 18.16 has no ADD COLUMN IF NOT EXISTS: the migrator runs the
-- plain ADD COLUMN there and takes "column already exists" as done.

ALTER TABLE {{ident .Database}}.answers ADD COLUMN IF NOT EXISTS retracted UInt8 DEFAULT 0 AFTER verdict;
