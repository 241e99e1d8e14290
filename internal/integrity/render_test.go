package integrity

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ctxaudit/ctxaudit/internal/report"
	"github.com/ctxaudit/ctxaudit/schema"
)

func yesNo(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func countText(c schema.Count) string {
	if !c.Known {
		return "NULL"
	}
	return fmt.Sprint(c.N)
}

// TestPostmortemsAgreeWithFinal renders every stored session as text,
// markdown and JSON and checks the three against a FINAL query: the same
// calls with the same verdicts, the same answers with the same risks and
// verdicts, and the same calls the model never went back to.
func TestPostmortemsAgreeWithFinal(t *testing.T) {
	dir := inputs(t)
	addr, s, recs := ingested(t, dir)
	if len(recs["sessions"]) == 0 {
		t.Fatal("nothing ingested")
	}
	for id := range recs["sessions"] {
		t.Run(id, func(t *testing.T) {
			base := []string{"postmortem", "--clickhouse", addr, "--session", id}
			var pm report.Postmortem
			if err := json.Unmarshal([]byte(runCLI(t, append(base, "--format", "json")...)), &pm); err != nil {
				t.Fatal(err)
			}
			text := strings.Join(strings.Fields(runCLI(t, append(base, "--format", "text")...)), " ")
			md := strings.Join(strings.Fields(runCLI(t, append(base, "--format", "markdown")...)), " ")

			final := map[string]string{}
			rows, err := s.Conn().Query(context.Background(), "SELECT call_id, concat(toString(truncated), ' ', toString(truncation_kind), ' ', toString(strategy), ' ', toString(followed_up), ' ', ifNull(toString(session_coverage), 'NULL'), ' ', ifNull(toString(original_bytes), 'NULL'), ' ', ifNull(toString(context_bytes), 'NULL'), ' ', toString(original_source)) FROM "+s.Database()+".tool_calls FINAL WHERE session_id = ?", id)
			if err != nil {
				t.Fatal(err)
			}
			neverBack := 0
			for rows.Next() {
				var call, v string
				if err := rows.Scan(&call, &v); err != nil {
					t.Fatal(err)
				}
				final[call] = v
				if f := strings.Fields(v); f[0] == "1" && f[3] == "0" {
					neverBack++
				}
			}
			rows.Close()
			if len(pm.ToolCalls) != len(final) {
				t.Errorf("JSON has %d calls, FINAL %d", len(pm.ToolCalls), len(final))
			}
			for _, c := range pm.ToolCalls {
				cov := "NULL"
				if c.SessionCoverage.Known {
					cov = fmt.Sprint(c.SessionCoverage.V)
				}
				got := strings.Join([]string{yesNo(c.Truncated), string(c.Kind), string(c.Strategy), yesNo(c.FollowedUp), cov,
					countText(c.Original.Bytes), countText(c.Context.Bytes), string(c.Original.Source)}, " ")
				if got != final[c.CallID] {
					t.Errorf("call %s: JSON %q, FINAL %q", c.CallID, got, final[c.CallID])
				}
				if !strings.Contains(text, c.CallID) || !strings.Contains(md, c.CallID) {
					t.Errorf("call %s missing from the text or markdown postmortem", c.CallID)
				}
			}
			const never = "the model never went back for the rest"
			if n := strings.Count(text, never); n != neverBack {
				t.Errorf("text says %d times %q, FINAL has %d truncated calls not followed up", n, never, neverBack)
			}
			if n := strings.Count(md, never); n != neverBack {
				t.Errorf("markdown says %d times %q, FINAL has %d truncated calls not followed up", n, never, neverBack)
			}

			answers := map[string]string{}
			rows, err = s.Conn().Query(context.Background(), "SELECT message_id, concat(toString(risk), ' ', verdict) FROM "+s.Database()+".answers FINAL WHERE session_id = ?", id)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var m, v string
				if err := rows.Scan(&m, &v); err != nil {
					t.Fatal(err)
				}
				answers[m] = v
			}
			rows.Close()
			if len(pm.Answers) != len(answers) {
				t.Errorf("JSON has %d answers, FINAL %d", len(pm.Answers), len(answers))
			}
			for _, a := range pm.Answers {
				if got := string(a.Risk) + " " + a.Verdict; got != answers[a.MessageID] {
					t.Errorf("answer %s: JSON %q, FINAL %q", a.MessageID, got, answers[a.MessageID])
				}
				risk := a.MessageID + " at "
				if !strings.Contains(text, risk) || !strings.Contains(md, a.MessageID) {
					t.Errorf("answer %s missing from the text or markdown postmortem", a.MessageID)
				}
				if v := strings.Join(strings.Fields(a.Verdict), " "); !strings.Contains(text, v) || !strings.Contains(md, v) {
					t.Errorf("answer %s: verdict %q not in both the text and the markdown postmortem", a.MessageID, v)
				}
			}
		})
	}
}
