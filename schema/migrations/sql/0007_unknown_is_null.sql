-- ctxaudit v7: a turn or token total nobody knows is NULL
-- (docs/design.md §3.2, §5.1). A transcript always shows its turns, but a
-- span without ctxaudit.turn does not; before this migration such a call
-- or answer was stored as turn 0, the session's first turn, which nothing
-- measured, and its session's turn count as if the turns were known. A
-- session the ctxaudit processor analyses from spans was stored as having
-- had no compaction and used 0 tokens, which no span tells.
--
--   tool_calls.turn   Nullable(UInt32): NULL when the call's turn is unknown.
--   answers.turn      Nullable(UInt32): likewise.
--   sessions.turns    Nullable(UInt32): NULL when a call or answer of the
--                     session has an unknown turn and the source did not
--                     count its turns.
--   sessions.compactions
--                     Nullable(UInt32): NULL when the source does not show
--                     compactions (spans do not).
--   sessions.input_tokens, sessions.output_tokens
--                     Nullable(UInt64): NULL when no message reported
--                     usage, or the total would pass 2^63 - 1.
--
-- Rows written before keep their values: a 0 among them may be a turn no
-- one knew, and nothing tells which; a later analysis of the same session
-- replaces them (docs/design.md §7.2).
--
-- ClickHouse 18.16 has no MODIFY COLUMN IF EXISTS: the migrator runs the
-- plain form there, and repeating it on a column already of the new type
-- is a no-op.

ALTER TABLE {{ident .Database}}.tool_calls MODIFY COLUMN IF EXISTS turn Nullable(UInt32);

ALTER TABLE {{ident .Database}}.answers MODIFY COLUMN IF EXISTS turn Nullable(UInt32);

ALTER TABLE {{ident .Database}}.sessions MODIFY COLUMN IF EXISTS turns Nullable(UInt32);

ALTER TABLE {{ident .Database}}.sessions MODIFY COLUMN IF EXISTS input_tokens Nullable(UInt64);

ALTER TABLE {{ident .Database}}.sessions MODIFY COLUMN IF EXISTS output_tokens Nullable(UInt64);

ALTER TABLE {{ident .Database}}.sessions MODIFY COLUMN IF EXISTS compactions Nullable(UInt32);
