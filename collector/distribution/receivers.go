package distribution

import "go.opentelemetry.io/collector/receiver"

// receiverFactories are ctxaudit's own receivers besides OTLP.
func receiverFactories() []receiver.Factory {
	return nil
}
