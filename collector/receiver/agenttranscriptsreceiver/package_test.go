package agenttranscriptsreceiver

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test shuts down what it starts: the poll goroutine, storage
// clients, extensions.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
