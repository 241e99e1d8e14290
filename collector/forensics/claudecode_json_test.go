package forensics

import "testing"

// TestCCJSONPreviewText: the text a preview of a saved content array shows,
// from previews cut the way Claude Code cuts them (the first 2 KB of
// JSON.stringify(blocks, null, 2)), escapes included.
func TestCCJSONPreviewText(t *testing.T) {
	head := "[\n  {\n    \"type\": \"text\",\n    \"text\": \""
	for _, tc := range []struct{ name, preview, want string }{
		{"plain, cut mid-string", head + "abc\\ndef", "abc\ndef"},
		{"escapes", head + `q\"b\\s\/t\tu\u00fcv`, "q\"b\\s/t\tuüv"},
		{"surrogate pair is one char", head + `x\ud83d\ude00y`, "x😀y"},
		{"escape cut short is left out", head + `ab\u00`, "ab"},
		{"backslash at the end", head + `ab\`, "ab"},
		{"lone high surrogate at the end", head + `ab\ud83d`, "ab"},
		{"the block ends inside the preview", head + "whole\"\n  },\n  {\n    \"type\": \"text\",\n    \"text\": \"next", "whole"},
		{"not a content array", "plain text", ""},
	} {
		if got := ccJSONPreviewText(tc.preview); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
