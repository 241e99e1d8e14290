package ctxauditprocessor

import (
	"time"

	"github.com/ctxaudit/ctxaudit/schema"
)

// The records a request adds are stored before the request is answered, so
// they are encoded as MessagePack by generated code (stored_records_gen.go,
// `make generate`), not as JSON: BenchmarkStoredRecords. The keys are the
// JSON names; times read back in UTC.

//go:generate go tool msgp -file stored_records.go -o stored_records_gen.go -io=false -tests=false -unexported

//msgp:tags msg,json
//msgp:timezone utc

// storedRecords are records of one buffer, with when they were added.
type storedRecords struct {
	At time.Time `json:"at"`
	// Calls are pointers so that a request's calls are copied into its
	// records once, in one slab (added.reserve), not once more per buffer.
	Calls   []*schema.ToolCall `json:"calls,omitempty"`
	Answers []schema.Answer    `json:"answers,omitempty"`
}
