-- ctxaudit v10: a session says how many of its risky answers rest on
-- uncertain inputs (docs/design.md §5.1, §7).
--
--   risky_answers_uncertain
--                     Nullable(UInt32): of risky_answers, the answers whose
--                     inputs are only the calls they may rest on
--                     (answers.inputs_uncertain = 1). They are graded at
--                     their worst, so risky_answers and max_risk count them;
--                     this says how many of those are "may". NULL for rows
--                     written before this migration, which nobody counted;
--                     the next analysis of their session writes them again.
--
-- ClickHouse 18.16 has no ADD COLUMN IF NOT EXISTS: the migrator runs the
-- plain ADD COLUMN there and takes "column already exists" as done.

ALTER TABLE {{ident .Database}}.sessions ADD COLUMN IF NOT EXISTS risky_answers_uncertain Nullable(UInt32) AFTER risky_answers;
