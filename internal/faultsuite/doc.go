// Package faultsuite holds the end-to-end fault and security tests of the
// ctxaudit binary: it builds cmd/ctxaudit once, runs `ctxaudit ingest` and
// `ctxaudit collector` as separate processes against a real ClickHouse, kills
// them with SIGKILL at arbitrary points, and checks what the tables and the
// collector's storage hold afterwards — every acknowledged record
// stored exactly once, every session analysed, and no secret stored
// anywhere.
//
// The package has no code of its own; everything is in its tests.
package faultsuite
