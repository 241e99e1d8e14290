// Package integrity holds the record-integrity suite: it runs every bundled
// session, every transcript fixture, every harness lab recording and the
// example harness through the paths that write ctxaudit's tables — one-shot
// `ctxaudit ingest`, the agenttranscripts receiver, a receiver stopped at
// random lines and restarted, the `ctxaudit collector` process killed with
// SIGKILL at random lines of growing transcripts (the fixtures and the lab
// recordings) and restarted, the receiver's spans replayed over OTLP through
// the ctxaudit processor, re-ingestion, and the `make run` order (ingest, then
// the collector on the same folder) — into a real ClickHouse, and compares the
// rows field by field. It also checks that FINAL, argMax and LIMIT 1 BY keep
// the same row of every id and that the postmortem renderings agree with it.
//
// The package has no code of its own outside its tests.
package integrity
