package claudecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxaudit/ctxaudit/collector/forensics"
	"github.com/ctxaudit/ctxaudit/collector/transcript"
	"github.com/ctxaudit/ctxaudit/schema"
)

func loadSession216(b *testing.B) []byte {
	b.Helper()
	data, err := os.ReadFile(filepath.Join(session216Dir(b), session216+".jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// parseAll is what ingest does per file: detect the format from the first
// lines, then read every line through the bounded line reader into a parser.
func parseAll(b *testing.B, data []byte, opts transcript.Options) int {
	lr := transcript.NewLineReader(bytes.NewReader(data), 0)
	var head [][]byte
	for i, l := 0, data; i < 5 && len(l) > 0; i++ {
		j := bytes.IndexByte(l, '\n')
		if j < 0 {
			j = len(l)
		}
		head, l = append(head, l[:j]), l[min(j+1, len(l)):]
	}
	if f, err := transcript.DetectLines(head); err != nil || f != transcript.FormatClaudeCode {
		b.Fatalf("detected %q, %v", f, err)
	}
	calls := 0
	emit := func(r transcript.Record) {
		if _, ok := r.(*transcript.Call); ok {
			calls++
		}
	}
	p := New(opts)
	for {
		l, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		p.Feed(l.No, l.Bytes, emit)
	}
	p.Flush(emit)
	return calls
}

// BenchmarkParseDetect measures format detection + parsing + truncation
// forensics (forensics.Detect on every result) on the real 2.1.6 session.
func BenchmarkParseDetect(b *testing.B) {
	data := loadSession216(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if n := parseAll(b, data, transcript.Options{}); n != 19 {
			b.Fatalf("calls = %d", n)
		}
	}
}

// BenchmarkParseOnly is the parser alone: forensics replaced by a no-op.
func BenchmarkParseOnly(b *testing.B) {
	data := loadSession216(b)
	noop := func(forensics.Input) schema.Forensics { return schema.Forensics{} }
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if n := parseAll(b, data, transcript.Options{Detect: noop}); n != 19 {
			b.Fatalf("calls = %d", n)
		}
	}
}

// BenchmarkEncodingJSONBaseline decodes every line with encoding/json, for
// comparison with the selective scanner.
func BenchmarkEncodingJSONBaseline(b *testing.B) {
	data := loadSession216(b)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		for _, l := range bytes.Split(data, []byte("\n")) {
			if len(l) == 0 {
				continue
			}
			var v map[string]any
			if err := json.Unmarshal(l, &v); err != nil {
				b.Fatal(err)
			}
		}
	}
}
