package parsers

import (
	"errors"
	"testing"

	"github.com/ctxaudit/ctxaudit/collector/transcript"
)

func TestNew(t *testing.T) {
	for _, f := range transcript.Formats {
		var got []transcript.Record
		emit := func(r transcript.Record) { got = append(got, r) }
		p, err := New(f, transcript.Options{SourceFile: "/x/s.jsonl"})
		if err != nil || p == nil {
			t.Fatalf("New(%s) = %v, %v", f, p, err)
		}
		p.Feed(1, []byte("not json"), emit)
		p.Flush(emit)
		if len(got) != 1 {
			t.Errorf("%s: a bad line gave %d records, want one skip", f, len(got))
		} else if _, ok := got[0].(*transcript.Skip); !ok {
			t.Errorf("%s: a bad line gave %T, want a skip", f, got[0])
		}
	}
	if _, err := New(transcript.FormatAuto, transcript.Options{}); !errors.Is(err, transcript.ErrUnknownFormat) {
		t.Errorf("New(auto) = %v, want ErrUnknownFormat", err)
	}
}
