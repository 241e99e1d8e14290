package session

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/schema"
)

// An answer's fingerprint is over its fields as they were encoded before
// schema.Answer had a JSON form of its own: the fingerprints a processor
// stored before still match (no answer emitted again after an upgrade),
// whatever its time.
func TestAnswerFingerprintIsOverItsFields(t *testing.T) {
	type fields schema.Answer // the encoding hashAnswer has always used
	for _, at := range []time.Time{{}, time.Unix(0, 0).UTC(), time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)} {
		a := schema.Answer{SessionID: "s", MessageID: "m", Timestamp: at, Text: "No such setting.", InputCallIDs: []string{"c1"},
			Risk: schema.RiskHigh, Analysis: schema.Analysis{Done: true, Records: 3}}
		h := fnv.New64a()
		if err := json.NewEncoder(h).Encode((*fields)(&a)); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%+v", a.Analysis)
		if got, want := hashAnswer(&a), h.Sum64(); got != want {
			t.Errorf("time %v: fingerprint %x, want %x (the fields' encoding)", at, got, want)
		}
	}
}
