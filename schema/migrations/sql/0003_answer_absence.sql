-- ctxaudit v3: what each answer claims is missing (docs/design.md §5.3).
--
--   absence         the strongest absence claim: 'none', 'scoped' (names the
--                   part it is about: "in the first 2,000 lines there is no …"),
--                   'unscoped' ("there is no such setting"). Rows written
--                   before this migration read 'unknown': they were never
--                   judged by the clause-level detector. absence_claim stays
--                   and means absence IN ('scoped', 'unscoped') for new rows.
--   absence_clause  the clause that makes the claim, as the answer wrote it.
--   absence_scope   the scope phrase of a scoped claim ("in the first 2,000 lines").
--
-- Each statement adds one column. ClickHouse 18.16 has no ADD COLUMN IF NOT
-- EXISTS: the migrator runs the plain ADD COLUMN there and takes "column
-- already exists" as done, so a run interrupted half-way can be repeated.

ALTER TABLE {{ident .Database}}.answers ADD COLUMN IF NOT EXISTS absence Enum8('unknown' = 0, 'none' = 1, 'scoped' = 2, 'unscoped' = 3) DEFAULT 'unknown' AFTER absence_claim;

ALTER TABLE {{ident .Database}}.answers ADD COLUMN IF NOT EXISTS absence_clause String AFTER absence;

ALTER TABLE {{ident .Database}}.answers ADD COLUMN IF NOT EXISTS absence_scope String AFTER absence_clause;
