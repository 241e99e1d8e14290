-- ctxaudit v9: an answer says whether its inputs are known (docs/design.md §5.1).
--
--   inputs_uncertain  1: input_call_ids are the calls the answer may rest on,
--                     not calls known to be its inputs. No source named its
--                     inputs (a chat span without ctxaudit.answer.inputs), and
--                     its turn or one of theirs is unknown, so the analysis
--                     took every call of its thread, made up to it, that may
--                     be of its turn; its verdict says "may have been built
--                     on". Rows written before this migration read 0, as
--                     their verdicts read "was built on"; the next analysis
--                     of their session writes them again.
--
-- ClickHouse 18.16 has no ADD COLUMN IF NOT EXISTS: the migrator runs the
-- plain ADD COLUMN there and takes "column already exists" as done.

ALTER TABLE {{ident .Database}}.answers ADD COLUMN IF NOT EXISTS inputs_uncertain UInt8 DEFAULT 0 AFTER retracted;
