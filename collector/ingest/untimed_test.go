package ingest

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/ctxaudit/ctxaudit/collector/transcript/transcripttest"
	"github.com/ctxaudit/ctxaudit/schema"
)

// A call whose line has no readable timestamp (testdata/repro/…/
// untimed-refetch: the second WebFetch, which read on from where the first
// was cut) stands where its line does. Ordered by its missing time, it stood
// before every call of the session: it could not read on from the first
// fetch, which was stored as never followed up — a record saying less
// happened than did. Its time stays unknown; every other figure is the
// recording's.
func TestRunPlacesUntimedCallByItsLine(t *testing.T) {
	w, _ := ingestDir(t, filepath.Join(reproDir(t), "claude-code@2.1.328", "untimed-refetch", "transcript"))
	rec, _ := ingestDir(t, filepath.Join(transcripttest.LabDir(t), "claude-code@2.1.328", "webfetch-paging", "transcript"))
	if len(w.calls) != 3 || len(rec.calls) != 3 {
		t.Fatalf("calls: %d from the reproduction, %d from the recording; want 3 each", len(w.calls), len(rec.calls))
	}
	var first, again *schema.ToolCall
	for i := range w.calls {
		c := &w.calls[i]
		r := rec.call(c.CallID)
		if r == nil {
			t.Fatalf("call %s is not the recording's", c.CallID)
		}
		if c.Tool == "WebFetch" && c.Truncated {
			first = c
		}
		if c.Tool == "WebFetch" && !c.Truncated {
			again = c
		}
		want := *r
		if !schema.TimeKnown(c.Timestamp) {
			want.Timestamp = c.Timestamp
		}
		want.SourceFile, want.Analysis = c.SourceFile, c.Analysis
		if !reflect.DeepEqual(*c, want) {
			t.Errorf("call %s (%s):\n got %+v\nwant %+v", c.CallID, c.Tool, *c, want)
		}
	}
	if first == nil || again == nil {
		t.Fatalf("no cut WebFetch and refetch among %+v", w.calls)
	}
	if schema.TimeKnown(again.Timestamp) {
		t.Errorf("refetch at %s; its line's timestamp is unreadable, so its time is unknown", again.Timestamp)
	}
	if !first.FollowedUp || again.ContinuationOf != first.CallID {
		t.Errorf("first fetch followed up %v, refetch continues %q; want true, %s", first.FollowedUp, again.ContinuationOf, first.CallID)
	}
	if len(w.answers) != 1 || w.answers[0].Risk != schema.RiskLow {
		t.Fatalf("answers %+v; want one rated low, as recorded", w.answers)
	}
}
