package analysis

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// A clipped quote ends at a word boundary, never mid-word; text without
// spaces is still clipped to the limit.
func TestClipAtWordBoundary(t *testing.T) {
	answer := "UPLOAD_DISABLED is not found anywhere in the repository, so uploads cannot be switched off by configuration at all"
	got := clip(answer, 100)
	if utf8.RuneCountInString(got) > 100 || !strings.HasSuffix(got, "…") {
		t.Fatalf("clip = %q: want at most 100 runes ending in …", got)
	}
	kept := strings.TrimSuffix(got, "…")
	if !strings.HasPrefix(answer, kept) || answer[len(kept)] != ' ' {
		t.Errorf("clip = %q cuts a word: the original goes on with %q", got, answer[len(kept):])
	}
	if got := clip(strings.Repeat("x", 150), 100); utf8.RuneCountInString(got) != 100 {
		t.Errorf("unbroken text: %d runes, want 100", utf8.RuneCountInString(got))
	}
	if got := clip("short answer", 100); got != "short answer" {
		t.Errorf("clip of a short text = %q", got)
	}
}
