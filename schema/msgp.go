package schema

// The records are also written as MessagePack, by code generated with
// github.com/tinylib/msgp (msgp_gen.go, `make generate`): the ctxaudit
// processor stores every call it holds before it answers the request that
// brought it, and a generated encoder takes a fourteenth of the time JSON
// does (BenchmarkStoredRecords in the processor). The keys are the JSON
// names (a msg tag overrides one where MessagePack needs more), so a
// stored value reads as the contract does; like JSON, it leaves out
// Analysis, which a held (not yet analysed) record does not have. A call's
// fields are written only when they are not zero (the msg tags'
// omitempty, and omitzero for a Turn, which msgp knows only by its
// IsZero; an unknown Count, Ratio or Turn is the zero one, a known zero is
// not), which halves a held call (976 → 460 bytes for a call of the
// collector benchmark): session.Builder holds its calls encoded. Values
// written before, with every key, read the same
// (TestStoredRecordsOfEveryKeyReadBack in the processor); a turn is an
// integer or nil (turn.go), so one written as a plain integer reads back.
// Times come back in UTC: the instant is what every store keeps.

//go:generate go tool msgp -file . -o msgp_gen.go -io=false -tests=false

//msgp:tags msg,json
//msgp:clearomitted
//msgp:timezone utc
//msgp:ignore Session ToolOutput Turn
