-- ctxaudit audit tables, v1.
--
-- Rules every statement here follows (DESIGN §7): it must run on ClickHouse
-- 18.16 and on 24.x–26.x, so no DateTime64, Map, LowCardinality, CODEC, TTL,
-- skipping indices or JSON functions. Time is DateTime (seconds) plus a
-- sub-second column where order matters.
--
-- Idempotent re-ingestion: every table is a ReplacingMergeTree keyed on the
-- record's stable id and versioned by the write time in nanoseconds, so a
-- re-ingested or re-analysed record replaces the older one. Queries read with
-- FINAL (or argMax by version) so a not-yet-merged duplicate never counts twice.
--
-- Retention: tables are partitioned by day of the record's own time, so
-- `ctxaudit prune --older-than 30d` drops whole partitions.

CREATE TABLE IF NOT EXISTS {{ident .Database}}.tool_calls
(
    session_id         String,
    call_id            String,
    ts                 DateTime,
    ts_ns              UInt32,
    tool               String,
    source             String,
    harness_version    String,
    model              String,
    project            String,
    cwd                String,
    git_branch         String,
    agent_id           String,
    sidechain          UInt8,
    turn               UInt32,
    message_id         String,
    arguments          String,
    target             String,
    is_error           UInt8,
    original_bytes     Nullable(UInt64),
    original_chars     Nullable(UInt64),
    original_lines     Nullable(UInt64),
    original_tokens    Nullable(UInt64),
    original_source    Enum8('unknown' = 0, 'harness_metadata' = 1, 'marker' = 2, 'saved_file' = 3, 'otel_attribute' = 4, 'sdk' = 5, 'estimate' = 6),
    context_bytes      Nullable(UInt64),
    context_chars      Nullable(UInt64),
    context_lines      Nullable(UInt64),
    context_tokens     Nullable(UInt64),
    truncated          UInt8,
    truncation_kind    Enum8('none' = 0, 'explicit' = 1, 'silent' = 2, 'suspected' = 3, 'unknown' = 4),
    strategy           Enum8('none' = 0, 'head' = 1, 'tail' = 2, 'head_tail' = 3, 'summary' = 4, 'spill_to_file' = 5, 'refused' = 6, 'cleared' = 7, 'paginated' = 8),
    partial_by_request UInt8,
    shown_start        Nullable(UInt64),
    shown_end          Nullable(UInt64),
    shown_unit         String,
    total              Nullable(UInt64),
    reason             String,
    disclosure_range   UInt8,
    disclosure_reason  UInt8,
    disclosure_next    UInt8,
    disclosure_score   UInt8,
    next_hint          String,
    saved_ref          String,
    ref_version        String,
    marker             String,
    marker_understated UInt8,
    detector           String,
    followed_up        UInt8,
    continuation_of    String,
    session_coverage   Nullable(Float64),
    searched           UInt8,
    original_sha256    String,
    context_sha256     String,
    source_file        String,
    source_line        UInt64,
    version            UInt64
)
ENGINE = ReplacingMergeTree(version)
PARTITION BY toYYYYMMDD(ts)
ORDER BY (session_id, call_id);

CREATE TABLE IF NOT EXISTS {{ident .Database}}.answers
(
    session_id        String,
    message_id        String,
    ts                DateTime,
    ts_ns             UInt32,
    turn              UInt32,
    source            String,
    model             String,
    agent_id          String,
    sidechain         UInt8,
    text              String,
    input_call_ids    Array(String),
    incomplete_inputs Array(String),
    absence_claim     UInt8,
    risk              Enum8('none' = 0, 'low' = 1, 'medium' = 2, 'high' = 3),
    reasons           Array(String),
    reason_calls      Array(Array(String)),
    verdict           String,
    version           UInt64
)
ENGINE = ReplacingMergeTree(version)
PARTITION BY toYYYYMMDD(ts)
ORDER BY (session_id, message_id);

CREATE TABLE IF NOT EXISTS {{ident .Database}}.sessions
(
    session_id      String,
    source          String,
    harness_version String,
    model           String,
    project         String,
    cwd             String,
    git_branch      String,
    started_at      DateTime,
    ended_at        DateTime,
    source_file     String,
    turns           UInt32,
    tool_calls      UInt32,
    truncated_calls UInt32,
    silent_calls    UInt32,
    answers         UInt32,
    risky_answers   UInt32,
    compactions     UInt32,
    max_risk        Enum8('none' = 0, 'low' = 1, 'medium' = 2, 'high' = 3),
    input_tokens    UInt64,
    output_tokens   UInt64,
    version         UInt64
)
ENGINE = ReplacingMergeTree(version)
PARTITION BY toYYYYMMDD(started_at)
ORDER BY session_id;

CREATE TABLE IF NOT EXISTS {{ident .Database}}.tool_outputs
(
    sha256     String,
    bytes      UInt64,
    text       String,
    capped     UInt8,
    redactions UInt32,
    first_seen DateTime,
    version    UInt64
)
ENGINE = ReplacingMergeTree(version)
PARTITION BY toYYYYMMDD(first_seen)
ORDER BY sha256;
