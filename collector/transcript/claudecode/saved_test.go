package claudecode

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// stringify2 reproduces JSON.stringify(v, null, 2), which Claude Code uses
// to save a content array: two-space indent, no HTML escaping.
func stringify2(t *testing.T, v any) []byte {
	t.Helper()
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return []byte(strings.TrimSuffix(b.String(), "\n"))
}

func TestSavedContentReader(t *testing.T) {
	type block struct {
		Type string `json:"type"`
		Text string `json:"text,omitempty"`
		Data string `json:"data,omitempty"`
	}
	text := strings.Repeat("mcp 000001 <x> & \"quoted\" ü\n", 40)
	files := map[string][]byte{
		"/p/s/tool-results/one.json":   stringify2(t, []block{{Type: "text", Text: text}}),
		"/p/s/tool-results/two.json":   stringify2(t, []block{{Type: "text", Text: "first"}, {Type: "text", Text: "second"}}),
		"/p/s/tool-results/image.json": stringify2(t, []block{{Type: "image", Data: "AAAA"}}),
		"/p/s/tool-results/obj.json":   []byte(`{"rows":[1,2,3]}`),
		"/p/s/tool-results/cut.json":   stringify2(t, []block{{Type: "text", Text: text}})[:300],
		"/p/s/tool-results/b.txt":      []byte(`[{"type":"text","text":"a string output that looks like JSON"}]`),
	}
	read := savedContentReader(func(ref string) ([]byte, error) {
		b, ok := files[ref]
		if !ok {
			return nil, errors.New("no such file")
		}
		return b, nil
	})
	for _, tc := range []struct {
		ref     string
		want    string
		wantErr bool
	}{
		// The text of the block, not the JSON envelope around it.
		{ref: "/p/s/tool-results/one.json", want: text},
		// Blocks joined as an inline tool_result's are (TextBlocks).
		{ref: "/p/s/tool-results/two.json", want: "first\nsecond"},
		// Not a text-only content array: the file as it is.
		{ref: "/p/s/tool-results/image.json", want: string(files["/p/s/tool-results/image.json"])},
		{ref: "/p/s/tool-results/obj.json", want: `{"rows":[1,2,3]}`},
		// A content array cut at the persist limit measures nothing.
		{ref: "/p/s/tool-results/cut.json", wantErr: true},
		// A string result saved as .txt is never decoded.
		{ref: "/p/s/tool-results/b.txt", want: string(files["/p/s/tool-results/b.txt"])},
		{ref: "/p/s/tool-results/missing.json", wantErr: true},
	} {
		got, err := read(tc.ref)
		if tc.wantErr {
			if err == nil {
				t.Errorf("%s: got %q, want an error", tc.ref, got)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.ref, err)
			continue
		}
		if string(got) != tc.want {
			t.Errorf("%s: got %q, want %q", tc.ref, got, tc.want)
		}
	}
	if savedContentReader(nil) != nil {
		t.Error("a nil reader must stay nil (saved files not readable)")
	}
}
