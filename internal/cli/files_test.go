package cli

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/collector/transcript/transcripttest"
	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/internal/report"
	"github.com/ctxaudit/ctxaudit/schema"
)

// What a postmortem from ClickHouse and one from files may legitimately
// disagree on: the sessions table keeps started_at and ended_at in whole
// seconds (DateTime), so from ClickHouse a session's span is to the second
// while the files know its milliseconds. Calls and answers keep theirs in
// both. Nothing else may differ.
func sessionToSeconds(s *schema.Session) {
	s.StartedAt = s.StartedAt.Truncate(time.Second)
	s.EndedAt = s.EndedAt.Truncate(time.Second)
}

var sessionTimeFields = []string{"started_at", "ended_at"}

// For every bundled example session, the postmortem read straight from the
// transcript files is the one ClickHouse gives after ingest --store-content
// all: the same JSON, --expect included.
func TestPostmortemFromFilesEqualsClickHouse(t *testing.T) {
	addr := chtest.Address(t)
	examples := transcripttest.ExamplesDir(t)
	if code, out, errOut := run(t, "ingest", "--clickhouse", addr, "--store-content", "all", examples); code != ExitOK {
		t.Fatalf("ingest: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut := run(t, "sessions", examples, "--format", "json")
	if code != ExitOK {
		t.Fatalf("sessions from files: exit %d: %s", code, errOut)
	}
	var fromFiles []schema.Session
	if err := json.Unmarshal([]byte(out), &fromFiles); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = run(t, "sessions", "--clickhouse", addr, "--format", "json")
	if code != ExitOK {
		t.Fatalf("sessions from ClickHouse: exit %d: %s", code, errOut)
	}
	var fromDB []schema.Session
	if err := json.Unmarshal([]byte(out), &fromDB); err != nil {
		t.Fatal(err)
	}
	for i := range fromFiles {
		sessionToSeconds(&fromFiles[i])
	}
	if len(fromFiles) != 7 || !reflect.DeepEqual(fromFiles, fromDB) {
		t.Fatalf("sessions from files (%d) differ from ClickHouse (%d):\nfiles %+v\ndb    %+v", len(fromFiles), len(fromDB), fromFiles, fromDB)
	}

	for _, s := range fromFiles {
		t.Run(s.SessionID[:8], func(t *testing.T) {
			expect := expectedTextOf(s.SessionID)
			args := []string{"--session", s.SessionID, "--format", "json", "--expect", expect}
			code, dbJSON, errOut := run(t, append([]string{"postmortem", "--clickhouse", addr}, args...)...)
			if code != ExitOK {
				t.Fatalf("from ClickHouse: exit %d: %s", code, errOut)
			}
			code, fileJSON, errOut := run(t, append([]string{"postmortem", examples}, args...)...)
			if code != ExitOK {
				t.Fatalf("from files: exit %d: %s", code, errOut)
			}
			db, files := comparable(t, dbJSON), comparable(t, fileJSON)
			if !reflect.DeepEqual(db, files) {
				t.Fatalf("postmortem JSON differs:\n%s", jsonDiff(db, files))
			}
			// The HTML page too (it shows the session's span to the second).
			htmlArgs := []string{"--session", s.SessionID, "--format", "html", "--expect", expect}
			_, dbHTML, _ := run(t, append([]string{"postmortem", "--clickhouse", addr}, htmlArgs...)...)
			_, fileHTML, _ := run(t, append([]string{"postmortem", examples}, htmlArgs...)...)
			if dbHTML != fileHTML || !strings.Contains(dbHTML, `data-call-id=`) {
				t.Errorf("HTML from ClickHouse and from files differ (or are empty)")
			}
			var pm report.Postmortem
			if err := json.Unmarshal([]byte(fileJSON), &pm); err != nil {
				t.Fatal(err)
			}
			if len(pm.ToolCalls) == 0 || len(pm.Answers) == 0 {
				t.Fatalf("an empty postmortem proves nothing: %d calls, %d answers", len(pm.ToolCalls), len(pm.Answers))
			}
			// Every answer scope agrees too.
			for _, a := range pm.Answers {
				_, dbOne, _ := run(t, append([]string{"postmortem", "--clickhouse", addr, "--answer", a.MessageID}, args...)...)
				_, fileOne, _ := run(t, append([]string{"postmortem", examples, "--answer", a.MessageID}, args...)...)
				if d, f := comparable(t, dbOne), comparable(t, fileOne); !reflect.DeepEqual(d, f) {
					t.Fatalf("--answer %s differs:\n%s", a.MessageID, jsonDiff(d, f))
				}
			}
		})
	}
}

// expectedTextOf is the text --expect looks for: the persisted-output
// example's UPLOAD_DISABLED (cut from its Grep), else "the", which the
// examples' outputs hold in their context, in a searched original, or in a
// truncated original nobody kept — so every class of the search is compared.
func expectedTextOf(session string) string {
	if strings.HasPrefix(session, "55555555") {
		return "UPLOAD_DISABLED"
	}
	return "the"
}

// comparable decodes a postmortem JSON with the session's span in whole
// seconds.
func comparable(t *testing.T, js string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(js), &m); err != nil {
		t.Fatalf("decode: %v\n%s", err, js)
	}
	sess, _ := m["session"].(map[string]any)
	for _, k := range sessionTimeFields {
		v, ok := sess[k].(string)
		if !ok {
			t.Fatalf("session.%s missing in %s", k, js)
		}
		ts, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			t.Fatal(err)
		}
		sess[k] = ts.Truncate(time.Second).Format(time.RFC3339)
	}
	return m
}

// jsonDiff lists the top-level paths that differ, for a readable failure.
func jsonDiff(a, b map[string]any) string {
	var out []string
	var walk func(path string, x, y any)
	walk = func(path string, x, y any) {
		switch xv := x.(type) {
		case map[string]any:
			yv, ok := y.(map[string]any)
			if !ok {
				out = append(out, path+": types differ")
				return
			}
			keys := map[string]bool{}
			for k := range xv {
				keys[k] = true
			}
			for k := range yv {
				keys[k] = true
			}
			for k := range keys {
				walk(path+"."+k, xv[k], yv[k])
			}
		case []any:
			yv, ok := y.([]any)
			if !ok || len(xv) != len(yv) {
				out = append(out, path+": lengths differ")
				return
			}
			for i := range xv {
				walk(path+"["+string(rune('0'+i%10))+"]", xv[i], yv[i])
			}
		default:
			if !reflect.DeepEqual(x, y) {
				xb, _ := json.Marshal(x)
				yb, _ := json.Marshal(y)
				out = append(out, path+": db "+string(xb)+" files "+string(yb))
			}
		}
	}
	walk("", a, b)
	sort.Strings(out)
	return strings.Join(out, "\n")
}
