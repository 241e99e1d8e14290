package harnesslab

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestServeMCP(t *testing.T) {
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"lab_dump","arguments":{"n":3}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"resources/list"}`,
	}, "\n")
	var out bytes.Buffer
	if err := ServeMCP(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	var replies []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("reply %q: %v", l, err)
		}
		replies = append(replies, m)
	}
	if len(replies) != 4 {
		t.Fatalf("%d replies, want 4 (none to the notification)", len(replies))
	}
	if v := replies[0]["result"].(map[string]any)["protocolVersion"]; v != "2025-06-18" {
		t.Errorf("protocol version %v", v)
	}
	text := replies[2]["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]
	if text != Lines("mcp", 3, 60) {
		t.Errorf("lab_dump text %q", text)
	}
	if replies[3]["error"] == nil {
		t.Error("an unknown method got no error")
	}
}

func TestLinesSizes(t *testing.T) {
	s := Lines("big", 800, 60)
	m := measure(s)
	if m.bytes != 48800 || m.chars != 48800 || m.lines != 800 || !strings.HasPrefix(s, "big 000001 xxx") {
		t.Fatalf("Lines: %+v %q", m, s[:20])
	}
	if got := piKeptLines(Lines("long", 3000, 30)); got != 1651 {
		t.Fatalf("piKeptLines = %d, want 1651 (50 KB of 31-byte lines)", got)
	}
}
