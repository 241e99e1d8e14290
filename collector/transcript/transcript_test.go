package transcript

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

func TestLineReader(t *testing.T) {
	long := strings.Repeat("x", 300<<10) // longer than the bufio buffer
	tests := []struct {
		name    string
		in      string
		max     int
		want    []string // "!" marks a too-long line
		wantErr bool
	}{
		{name: "plain", in: "a\nbb\n", max: 10, want: []string{"a", "bb"}},
		{name: "no final newline", in: "a\nbb", max: 10, want: []string{"a", "bb"}},
		{name: "crlf", in: "a\r\nb\r\n", max: 10, want: []string{"a", "b"}},
		{name: "blank lines kept", in: "\n\na\n", max: 10, want: []string{"", "", "a"}},
		{name: "exactly the limit", in: "abcd\nabcde\nab\n", max: 4, want: []string{"abcd", "!", "ab"}},
		{name: "too long last line", in: "ab\nabcdef", max: 4, want: []string{"ab", "!"}},
		{name: "long line over several reads", in: long + "\nz\n", max: len(long), want: []string{long, "z"}},
		{name: "long line skipped, reading goes on", in: long + "\nz\n", max: 1000, want: []string{"!", "z"}},
		{name: "empty", in: "", max: 10, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lr := NewLineReader(iotest.HalfReader(strings.NewReader(tt.in)), tt.max)
			var got []string
			for {
				l, err := lr.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if l.No != int64(len(got)+1) {
					t.Errorf("line number %d, want %d", l.No, len(got)+1)
				}
				if l.TooLong {
					got = append(got, "!")
					continue
				}
				got = append(got, string(l.Bytes))
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d lines, want %d", len(got), len(tt.want))
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("line %d = %.20q…, want %.20q…", i+1, got[i], tt.want[i])
				}
			}
			if lr.BytesRead() != int64(len(tt.in)) {
				t.Errorf("bytes read = %d, want %d", lr.BytesRead(), len(tt.in))
			}
		})
	}
}

func TestLineReaderError(t *testing.T) {
	lr := NewLineReader(iotest.ErrReader(errors.New("disk gone")), 0)
	if _, err := lr.Next(); err == nil || errors.Is(err, io.EOF) {
		t.Fatalf("err = %v, want the reader's error", err)
	}
}

func TestDetectLines(t *testing.T) {
	tests := []struct {
		name    string
		lines   []string
		want    Format
		wantErr bool
	}{
		{"claude code user", []string{`{"parentUuid":null,"type":"user","sessionId":"s","uuid":"u","message":{}}`}, FormatClaudeCode, false},
		{"claude code snapshot first", []string{`{"type":"file-history-snapshot","messageId":"m"}`}, FormatClaudeCode, false},
		{"claude code unknown new type", []string{`{"type":"marble-origami-commit","sessionId":"s"}`}, FormatClaudeCode, false},
		{"codex", []string{`{"timestamp":"t","type":"session_meta","payload":{"id":"x"}}`}, FormatCodex, false},
		{"pi", []string{`{"type":"session","id":"x","cwd":"/"}`}, FormatPi, false},
		{"pi message", []string{`{"type":"message","message":{"role":"toolResult"}}`}, FormatPi, false},
		{"first decisive line wins", []string{``, `garbage`, `{"a":1}`, `{"type":"event_msg","payload":{}}`}, FormatCodex, false},
		{"unknown", []string{`{"hello":"world"}`, `not json`}, "", true},
		{"codex type without payload is not codex", []string{`{"type":"event_msg"}`}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var lines [][]byte
			for _, l := range tt.lines {
				lines = append(lines, []byte(l))
			}
			got, err := DetectLines(lines)
			if tt.wantErr {
				if !errors.Is(err, ErrUnknownFormat) {
					t.Fatalf("err = %v, want ErrUnknownFormat", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]Format{"": FormatAuto, "auto": FormatAuto, "claude-code": FormatClaudeCode, "Codex": FormatCodex, "pi": FormatPi} {
		if got, err := ParseFormat(in); err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseFormat("aider"); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("ParseFormat(aider) err = %v", err)
	}
}

func TestTargetAndIDs(t *testing.T) {
	tests := []struct{ args, want string }{
		{`{"file_path":"/a/b.go","offset":10}`, "/a/b.go"},
		{`{"pattern":"foo","path":"/src"}`, "/src"},
		{`{"url":"https://x.test/doc","prompt":"find the setting"}`, "https://x.test/doc"},
		{`{"command":["bash","-lc","ls"]}`, "bash -lc ls"},
		{`{"cmd":"rg foo"}`, "rg foo"},
		{`"*** Begin Patch"`, ""},
		{`{"file_path":`, ""},
		{``, ""},
	}
	for _, tt := range tests {
		if got := Target([]byte(tt.args)); got != tt.want {
			t.Errorf("Target(%s) = %q, want %q", tt.args, got, tt.want)
		}
	}
	ids := map[string]string{
		"/x/rollout-2025-11-22T21-45-35-019aad50-a7e6-7422-b7a8-0b384290624f.jsonl": "019aad50-a7e6-7422-b7a8-0b384290624f",
		"/x/2025-12-09T00-52-54-397Z_d97339c6-6c10-4827-846b-9ff1d9c3dc37.jsonl":    "d97339c6-6c10-4827-846b-9ff1d9c3dc37",
		"/p/agent-a4d534b.jsonl": "agent-a4d534b",
		"":                       "",
	}
	for in, want := range ids {
		if got := SessionIDFromPath(in); got != want {
			t.Errorf("SessionIDFromPath(%q) = %q, want %q", in, got, want)
		}
	}
	if got := ProjectFromCwd(`C:\Users\me\proj\`); got != "proj" {
		t.Errorf("ProjectFromCwd = %q", got)
	}
}

func TestDetect(t *testing.T) {
	cc := `{"type":"user","sessionId":"s","uuid":"u"}`
	for _, tc := range []struct {
		name    string
		in      string
		growing bool
		want    Detection
		decided bool
	}{
		{"finished file", "\n\n" + cc + "\n", false, Detection{Format: FormatClaudeCode, Lines: 1}, true},
		{"last line without newline, finished", cc, false, Detection{Format: FormatClaudeCode, Lines: 1}, true},
		{"last line without newline, growing", cc, true, Detection{}, false},
		{"empty", "\n \n", false, Detection{}, false},
		{"nothing decisive yet", strings.Repeat("{}\n", 3), true, Detection{Lines: 3}, false},
		{"nothing decisive in the first lines", strings.Repeat("{}\n", DetectMaxLines) + cc + "\n", false, Detection{Lines: DetectMaxLines}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Detect(strings.NewReader(tc.in), 0, tc.growing)
			if err != nil || got != tc.want || got.Decided() != tc.decided {
				t.Errorf("Detect = %+v (decided %v), %v; want %+v (decided %v)", got, got.Decided(), err, tc.want, tc.decided)
			}
		})
	}
}

// A timestamp no DateTime column holds is read as no time, like a malformed
// one: stored, it would fail its batch or come back as another year.
func TestParseTime(t *testing.T) {
	for in, want := range map[string]string{
		"2026-01-02T03:04:05.678Z":  "2026-01-02T03:04:05.678Z",
		"2026-01-02T04:04:05+01:00": "2026-01-02T03:04:05Z",
		"1970-01-01T00:00:00Z":      "1970-01-01T00:00:00Z",
		"2106-02-07T06:28:15Z":      "2106-02-07T06:28:15Z",
		"2106-02-07T06:28:16Z":      "",
		"1969-12-31T23:59:59Z":      "",
		"0001-01-01T00:00:00Z":      "",
		"9999-12-31T23:59:59Z":      "",
		"2026-13-01T00:00:00Z":      "",
		"":                          "",
		"yesterday":                 "",
	} {
		got := ParseTime(in)
		s := ""
		if !got.IsZero() {
			s = got.Format(time.RFC3339Nano)
		}
		if s != want {
			t.Errorf("ParseTime(%q) = %q, want %q", in, s, want)
		}
	}
}
