package benchcollector

import "testing"

// TestRetryableStatus: the refusals an OTLP client retries count as
// retryable, the ones it drops do not.
func TestRetryableStatus(t *testing.T) {
	for lastErr, want := range map[string]bool{
		"traces export: rpc error: code = Unavailable desc = data refused due to high memory usage":                   true,
		"traces export: rpc error: code = ResourceExhausted desc = queue full":                                        true,
		"traces export: exporter export timeout: rpc error: code = DeadlineExceeded desc = context deadline exceeded": true,
		"traces export: rpc error: code = InvalidArgument desc = bad span":                                            false,
		"traces export: rpc error: code = Internal desc = boom":                                                       false,
		"": false,
	} {
		if got := retryableStatus(lastErr); got != want {
			t.Errorf("retryableStatus(%q) = %v, want %v", lastErr, got, want)
		}
	}
}
