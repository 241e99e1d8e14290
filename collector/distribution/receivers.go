package distribution

import (
	"go.opentelemetry.io/collector/receiver"

	"github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver"
)

// receiverFactories are ctxaudit's own receivers besides OTLP.
func receiverFactories() []receiver.Factory {
	return []receiver.Factory{agenttranscriptsreceiver.NewFactory()}
}
