package schema

import "testing"

func TestTokensEstimated(t *testing.T) {
	tests := []struct {
		s    Sizes
		want bool
	}{
		{Sizes{Bytes: Known(73200), Tokens: Known(18300)}, true},
		{Sizes{Bytes: Known(51253), Tokens: Known(12814)}, true}, // ceil(51253/4)
		{Sizes{Bytes: Known(0), Tokens: Known(0)}, true},
		{Sizes{Bytes: Known(73200), Tokens: Known(17011)}, false}, // a tokenizer's count
		{Sizes{Tokens: Known(50155)}, false},                      // a count with no bytes to estimate from
		{Sizes{Bytes: Known(73200)}, false},
	}
	for _, tt := range tests {
		if got := tt.s.TokensEstimated(); got != tt.want {
			t.Errorf("%+v.TokensEstimated() = %v, want %v", tt.s, got, tt.want)
		}
	}
}
