package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/collector/analysis"
	"github.com/ctxaudit/ctxaudit/collector/transcript/transcripttest"
	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/internal/report"
	"github.com/ctxaudit/ctxaudit/schema"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/postmortem")

// scenariosDir holds the sessions examples/sessions lacks (see its README).
const scenariosDir = "testdata/scenarios"

// Session ids of the scenarios, as the issue names them.
const (
	sessWebFetch     = "11111111-0001-4001-8001-000000000001" // (a)
	sessPartialRead  = "22222222-0002-4002-8002-000000000002" // (b)
	sessBashHeadTail = "33333333-0003-4003-8003-000000000003"
	sessMCPPaged     = "44444444-0004-4004-8004-000000000004"
	sessPersisted    = "55555555-0005-4005-8005-000000000005" // (a′)
	sessCodexClaim   = "01990a6e-66c6-7e66-8666-666666666666"
	sessPiRead       = "77777777-7777-4777-8777-777777777777"
	sessBashSearched = "c0c0c0c0-000c-400c-800c-00000000000c" // (c)
	sessCodexCut     = "019a0d0d-0d0d-7d0d-8d0d-0d0d0d0d0d0d" // (d)
	sessComplete     = "e0e0e0e0-000e-400e-800e-00000000000e" // (e)
	sessChinese      = "f0f0f0f0-000f-400f-800f-00000000000f" // (f)
	sessCodexNoFail  = "019a0e0e-0e0e-7e0e-8e0e-0e0e0e0e0e0e" // (g)
)

// ingestScenarios ingests examples/sessions and testdata/scenarios through
// the CLI, storing every output text, into a fresh database.
func ingestScenarios(t *testing.T) string {
	t.Helper()
	addr := chtest.Address(t)
	code, out, errOut := run(t, "ingest", "--clickhouse", addr, "--store-content", "all",
		transcripttest.ExamplesDir(t), scenariosDir)
	if code != ExitOK {
		t.Fatalf("ingest: exit %d\n%s\n%s", code, out, errOut)
	}
	return addr
}

// postmortemJSON runs postmortem --format json and decodes it.
func postmortemJSON(t *testing.T, addr string, args ...string) report.Postmortem {
	t.Helper()
	out := postmortemJSONText(t, addr, args...)
	var pm report.Postmortem
	if err := json.Unmarshal([]byte(out), &pm); err != nil {
		t.Fatalf("decode postmortem JSON: %v\n%s", err, out)
	}
	return pm
}

// postmortemJSONText is the output of `postmortem --format json` with args.
func postmortemJSONText(t *testing.T, addr string, args ...string) string {
	t.Helper()
	args = append([]string{"postmortem", "--clickhouse", addr, "--format", "json"}, args...)
	code, out, errOut := run(t, args...)
	if code != ExitOK {
		t.Fatalf("%v: exit %d: %s", args, code, errOut)
	}
	return out
}

// followedUpJSON is call id's followed_up as the postmortem JSON writes it
// ("true", "false" or "null"), or "" when the call is not in it.
func followedUpJSON(t *testing.T, addr, id string, args ...string) string {
	t.Helper()
	out := postmortemJSONText(t, addr, args...)
	var doc struct {
		ToolCalls []map[string]json.RawMessage `json:"tool_calls"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("decode postmortem JSON: %v\n%s", err, out)
	}
	for _, c := range doc.ToolCalls {
		if string(c["call_id"]) == strconv.Quote(id) {
			return string(c["followed_up"])
		}
	}
	return ""
}

func callByID(pm report.Postmortem, id string) *schema.ToolCall {
	for i := range pm.ToolCalls {
		if pm.ToolCalls[i].CallID == id {
			return &pm.ToolCalls[i]
		}
	}
	return nil
}

// TestPostmortemScenarios runs each scenario of the issue through ingest →
// ClickHouse → postmortem and checks the verdict it reaches.
func TestPostmortemScenarios(t *testing.T) {
	addr := ingestScenarios(t)
	tests := []struct {
		name    string
		session string
		expect  string
		risk    schema.Risk
		reasons []string // must all be present
		absence bool
		check   func(t *testing.T, pm report.Postmortem)
	}{
		{
			// Claude Code 2.1.22 cuts a WebFetch page's text at 100,000 chars
			// without a word, and records only the HTTP body's bytes (156,000),
			// which do not tell the text's length: the digest may or may not
			// cover the page. Nothing is known to be missing, so the absence
			// claim raises no risk, and the verdict says the input's
			// completeness is unknown rather than calling it complete.
			name: "a: WebFetch digest of unknown completeness, then an absence claim", session: sessWebFetch,
			risk: schema.RiskNone, absence: true,
			check: func(t *testing.T, pm report.Postmortem) {
				c := callByID(pm, "toolu_01WebFetch00000000001")
				if c == nil || c.Kind != schema.KindUnknown || c.Truncated || c.Strategy != schema.StrategySummary || c.Original.Bytes.Known {
					t.Errorf("WebFetch call = %+v", c)
				}
				if len(pm.Answers) == 1 && len(pm.Answers[0].Reasons) != 0 {
					t.Errorf("reasons %v, want none", pm.Answers[0].Reasons)
				}
				wantVerdict(t, pm, "WebFetch of https://docs.acme.example/cli/configuration", "whose completeness is unknown: nothing shows whether it was cut")
			},
		},
		{
			name: "a′: persisted Grep preview lacks the answer; the saved file has it", session: sessPersisted, expect: "UPLOAD_DISABLED",
			risk: schema.RiskHigh, absence: true,
			reasons: []string{schema.ReasonAbsenceClaimOnPartialInput, schema.ReasonExplicitTruncation},
			check: func(t *testing.T, pm report.Postmortem) {
				wantExpect(t, pm.Expect, []string{"toolu_01PersistedGrep000001"}, []string{}, []string{"toolu_01PersistedGrep000001"})
				wantVerdict(t, pm, "Grep of upload", "preview of the first 1,982 of 101,862 chars", "never read further")
			},
		},
		{
			name: "b: partial Read, then offset Reads to the end", session: sessPartialRead,
			risk: schema.RiskLow, reasons: []string{schema.ReasonRecovered},
			check: func(t *testing.T, pm report.Postmortem) {
				c := callByID(pm, "toolu_01ReadHead000000000001")
				if c == nil || !c.Truncated || !c.FollowedUp || c.SessionCoverage != schema.KnownRatio(1) {
					t.Errorf("first Read = %+v", c)
				}
				if len(pm.Answers) == 1 && len(pm.Answers[0].IncompleteInputs) != 0 {
					t.Errorf("incomplete inputs = %v, want none", pm.Answers[0].IncompleteInputs)
				}
				wantVerdict(t, pm, "read in full before the answer")
			},
		},
		{
			name: "c: Bash persisted-output, then Grep over the saved file", session: sessBashSearched, expect: "TestUploadRetry",
			risk: schema.RiskMedium, reasons: []string{schema.ReasonExplicitTruncation},
			check: func(t *testing.T, pm report.Postmortem) {
				c := callByID(pm, "toolu_01BashPersisted000001")
				if c == nil || !c.FollowedUp || !c.Searched || c.Strategy != schema.StrategySpillToFile || c.Original.Source != schema.SourceSavedFile {
					t.Errorf("Bash call = %+v", c)
				}
				if g := callByID(pm, "toolu_01GrepSavedOutput0001"); g == nil || g.ContinuationOf != "toolu_01BashPersisted000001" {
					t.Errorf("Grep call = %+v", g)
				}
				if slices.Contains(pm.Answers[0].Reasons, schema.ReasonNotFollowedUp) {
					t.Errorf("reasons %v: the call was followed up", pm.Answers[0].Reasons)
				}
				wantExpect(t, pm.Expect,
					[]string{"toolu_01BashPersisted000001", "toolu_01GrepSavedOutput0001"},
					[]string{"toolu_01GrepSavedOutput0001"},
					[]string{"toolu_01BashPersisted000001"})
			},
		},
		{
			name: "d: Codex head+tail, not revisited, no absence claim", session: sessCodexCut,
			risk: schema.RiskMedium, reasons: []string{schema.ReasonExplicitTruncation, schema.ReasonNotFollowedUp},
			check: func(t *testing.T, pm report.Postmortem) {
				c := callByID(pm, "call_HeadTailImportLog00001")
				if c == nil || c.Strategy != schema.StrategyHeadTail || c.Total != schema.Known(5000) || c.Original.Bytes.Known {
					t.Errorf("Codex call = %+v", c)
				}
				wantVerdict(t, pm, "only the start and end of 5,000 lines with a notice")
			},
		},
		{
			name: "e: nothing truncated", session: sessComplete, risk: schema.RiskNone, reasons: nil,
			check: func(t *testing.T, pm report.Postmortem) {
				if len(pm.Answers[0].Reasons) != 0 {
					t.Errorf("reasons = %v, want none", pm.Answers[0].Reasons)
				}
				wantVerdict(t, pm, "which was complete")
			},
		},
		{
			name: "f: Chinese absence claim (沒有) on a partial read", session: sessChinese,
			risk: schema.RiskHigh, absence: true,
			reasons: []string{schema.ReasonAbsenceClaimOnPartialInput, schema.ReasonExplicitTruncation},
			check: func(t *testing.T, pm report.Postmortem) {
				wantVerdict(t, pm, "沒有定義", "the first 2,000 of 3,100 lines")
			},
		},
		{
			// The answer says "nothing in the output shows a failing test":
			// an unscoped absence claim on the cut output.
			name: "Bash head/tail with an understated marker", session: sessBashHeadTail,
			risk: schema.RiskHigh, absence: true,
			reasons: []string{schema.ReasonAbsenceClaimOnPartialInput, schema.ReasonMarkerUnderstated},
			check: func(t *testing.T, pm report.Postmortem) {
				wantVerdict(t, pm, "a notice that understated how much was cut")
			},
		},
		{
			// Read to the end before the answer: the last page (no notice) gives
			// the total, so coverage reaches 1 and the truncation was recovered.
			name: "MCP fetch paged to the end", session: sessMCPPaged, risk: schema.RiskLow,
			reasons: []string{schema.ReasonRecovered},
			check: func(t *testing.T, pm report.Postmortem) {
				for _, id := range []string{"toolu_01McpFetch0000000001", "toolu_01McpFetch0000000002"} {
					if c := callByID(pm, id); c == nil || !c.FollowedUp || !c.Disclosure.Next {
						t.Errorf("page %s = %+v", id, c)
					}
				}
			},
		},
		{
			name: "g: Codex 'no failing tests were found' over 2,744 omitted lines", session: sessCodexNoFail,
			risk: schema.RiskHigh, absence: true,
			reasons: []string{schema.ReasonAbsenceClaimOnPartialInput, schema.ReasonExplicitTruncation, schema.ReasonNotFollowedUp},
			check: func(t *testing.T, pm report.Postmortem) {
				a := pm.Answers[0]
				if a.Absence != schema.AbsenceUnscoped || a.AbsenceClause != "no failing tests were found in the output" || a.AbsenceScope != "" {
					t.Errorf("absence %q clause %q scope %q; want unscoped, the clause that claims it", a.Absence, a.AbsenceClause, a.AbsenceScope)
				}
				if ids := a.ReasonCalls[schema.ReasonAbsenceClaimOnPartialInput]; !slices.Equal(ids, []string{"call_HeadTailGoTest0000001"}) {
					t.Errorf("absence reason names %v", ids)
				}
				c := callByID(pm, "call_HeadTailGoTest0000001")
				if c == nil || c.Strategy != schema.StrategyHeadTail || c.Total != schema.Known(3000) {
					t.Errorf("Codex call = %+v", c)
				}
				wantVerdict(t, pm, "no failing tests were found", "only the start and end of 3,000 lines with a notice")
			},
		},
		{name: "Codex head+tail with an absence claim", session: sessCodexClaim, risk: schema.RiskHigh, absence: true,
			reasons: []string{schema.ReasonAbsenceClaimOnPartialInput}},
		{name: "pi truncated read with an absence claim", session: sessPiRead, risk: schema.RiskHigh, absence: true,
			reasons: []string{schema.ReasonAbsenceClaimOnPartialInput}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"--session", tt.session}
			if tt.expect != "" {
				args = append(args, "--expect", tt.expect)
			}
			pm := postmortemJSON(t, addr, args...)
			if pm.SessionID != tt.session || len(pm.Answers) != 1 || len(pm.ToolCalls) == 0 {
				t.Fatalf("session %s: %d answers, %d calls", pm.SessionID, len(pm.Answers), len(pm.ToolCalls))
			}
			a := pm.Answers[0]
			if a.Risk != tt.risk || a.AbsenceClaim != tt.absence {
				t.Errorf("risk %s absence_claim %v (reasons %v); want %s, %v", a.Risk, a.AbsenceClaim, a.Reasons, tt.risk, tt.absence)
			}
			for _, r := range tt.reasons {
				if !slices.Contains(a.Reasons, r) {
					t.Errorf("reasons %v lack %s", a.Reasons, r)
				}
			}
			if (tt.expect != "") != (pm.Expect != nil) {
				t.Errorf("expect = %+v with --expect %q", pm.Expect, tt.expect)
			}
			if a.Verdict == "" {
				t.Error("no verdict")
			}
			if tt.check != nil {
				tt.check(t, pm)
			}
		})
	}
}

func wantVerdict(t *testing.T, pm report.Postmortem, parts ...string) {
	t.Helper()
	v := pm.Answers[0].Verdict
	for _, p := range parts {
		if !strings.Contains(v, p) {
			t.Errorf("verdict lacks %q:\n%s", p, v)
		}
	}
}

func wantExpect(t *testing.T, e *report.Expect, inOriginal, inContext, cutFrom []string) {
	t.Helper()
	if e == nil {
		t.Fatal("no expect section")
	}
	if !slices.Equal(e.FoundInOriginal, inOriginal) || !slices.Equal(e.FoundInContext, inContext) || !slices.Equal(e.CutFrom, cutFrom) {
		t.Errorf("expect = original %v, context %v, cut_from %v; want %v, %v, %v",
			e.FoundInOriginal, e.FoundInContext, e.CutFrom, inOriginal, inContext, cutFrom)
	}
}

// TestPostmortemGolden renders the scenarios as text and Markdown and
// compares them with testdata/postmortem/*.golden (go test -update rewrites).
func TestPostmortemGolden(t *testing.T) {
	addr := ingestScenarios(t)
	cases := []struct {
		name string
		args []string
	}{
		{"a-webfetch-unknown", []string{"--session", sessWebFetch}},
		{"a2-persisted-expect", []string{"--session", sessPersisted, "--expect", "UPLOAD_DISABLED"}},
		{"b-partial-read", []string{"--session", sessPartialRead, "--answer", "msg_01PartialRead00000004"}},
		{"g-codex-no-failing-tests", []string{"--session", sessCodexNoFail}},
		{"c-bash-searched", []string{"--session", sessBashSearched, "--expect", "TestUploadRetry"}},
		{"d-codex-head-tail", []string{"--session", sessCodexCut}},
		{"e-complete", []string{"--session", sessComplete}},
		{"f-chinese-claim", []string{"--session", sessChinese}},
	}
	for _, tc := range cases {
		for _, format := range []struct{ name, ext string }{{"text", "txt"}, {"markdown", "md"}} {
			t.Run(tc.name+"/"+format.name, func(t *testing.T) {
				args := append([]string{"postmortem", "--clickhouse", addr, "--format", format.name}, tc.args...)
				code, out, errOut := run(t, args...)
				if code != ExitOK {
					t.Fatalf("exit %d: %s", code, errOut)
				}
				golden(t, filepath.Join("testdata", "postmortem", tc.name+"."+format.ext+".golden"), out)
			})
		}
	}
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// TestPostmortemJSONSchema checks the JSON output against docs/design.md §8.4 key by
// key and type by type, decoded generically so that no Go type can hide a
// missing key or a 0 standing in for unknown.
func TestPostmortemJSONSchema(t *testing.T) {
	addr := ingestScenarios(t)
	code, out, errOut := run(t, "postmortem", "--clickhouse", addr, "--format", "json", "--session", sessCodexCut, "--expect", "import finished")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader([]byte(out)))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if dec.More() {
		t.Fatal("more than one JSON value")
	}
	s := schemaChecker{t: t}
	s.want(doc, "session_id", isString)
	s.want(doc, "source", isString)
	answers := s.want(doc, "answers", isArray).([]any)
	if len(answers) != 1 {
		t.Fatalf("%d answers", len(answers))
	}
	a := answers[0].(map[string]any)
	s.want(a, "message_id", isString)
	s.want(a, "timestamp", isString)
	s.want(a, "text", isString)
	s.want(a, "risk", isString)
	s.want(a, "reasons", isStringArray)
	s.want(a, "incomplete_inputs", isStringArray)
	s.want(a, "absence_claim", isBool)
	calls := s.want(doc, "tool_calls", isArray).([]any)
	if len(calls) != 1 {
		t.Fatalf("%d tool calls", len(calls))
	}
	c := calls[0].(map[string]any)
	for _, k := range []string{"call_id", "tool", "timestamp", "truncation_kind", "strategy", "marker", "saved_ref"} {
		s.want(c, k, isString)
	}
	for _, k := range []string{"truncated", "marker_understated", "followed_up"} {
		s.want(c, k, isBool)
	}
	s.wantValue(doc, "session_stored", true)
	order := s.want(doc, "call_order", isObject).(map[string]any)
	s.wantValue(order, "timed", true)
	s.wantValue(order, "ordered", true)
	s.wantValue(c, "analysed", true)
	orig := s.want(c, "original", isObject).(map[string]any)
	// Codex says only "Total output lines: 5000": lines known, the rest unknown → null.
	s.wantValue(orig, "lines", json.Number("5000"))
	for _, k := range []string{"bytes", "chars", "tokens"} {
		s.wantValue(orig, k, nil)
	}
	s.want(orig, "source", isString)
	ctx := s.want(c, "context", isObject).(map[string]any)
	for _, k := range []string{"bytes", "chars", "lines", "tokens"} {
		s.want(ctx, k, isNumber)
	}
	s.wantValue(orig, "precision", "exact")
	// head+tail: shown is the head, shown_tail the tail, which ends the output.
	shown := s.want(c, "shown", isObject).(map[string]any)
	s.wantValue(shown, "start", json.Number("1"))
	s.wantValue(shown, "end", json.Number("128"))
	s.wantValue(shown, "unit", "lines")
	tail := s.want(c, "shown_tail", isObject).(map[string]any)
	s.wantValue(tail, "start", json.Number("4873"))
	s.wantValue(tail, "end", json.Number("5000"))
	s.wantValue(tail, "unit", "lines")
	s.wantValue(c, "shown_tail_is_end", true)
	for _, k := range []string{"refetched_source", "coverage_upper_bound", "coverage_mixed_versions"} {
		s.wantValue(c, k, false)
	}
	s.wantValue(c, "total", json.Number("5000"))
	d := s.want(c, "disclosure", isObject).(map[string]any)
	for _, k := range []string{"range", "reason", "next"} {
		s.want(d, k, isBool)
	}
	s.want(c, "session_coverage", isNumber)
	e := s.want(doc, "expect", isObject).(map[string]any)
	for _, k := range []string{"found_in_original", "found_in_context", "cut_from"} {
		s.want(e, k, isStringArray)
	}
	// "import finished" is the last log line: kept in the tail the model saw.
	if got := e["found_in_context"].([]any); len(got) != 1 || got[0] != "call_HeadTailImportLog00001" {
		t.Errorf("found_in_context = %v", got)
	}

	// Without --expect there is no expect key.
	code, out, errOut = run(t, "postmortem", "--clickhouse", addr, "--format", "json", "--session", sessWebFetch)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	doc = nil
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if _, ok := doc["expect"]; ok {
		t.Error("expect present without --expect")
	}
	// The WebFetch's original is unknown: every size null, not 0, and no
	// precision (the 156,000 bytes of its HTTP body are no size of it).
	wf := doc["tool_calls"].([]any)[0].(map[string]any)["original"].(map[string]any)
	for _, k := range []string{"bytes", "chars", "lines", "tokens", "precision"} {
		if v, ok := wf[k]; !ok || v != nil {
			t.Errorf("WebFetch original %s = %v (present %v); want null", k, v, ok)
		}
	}
}

type kind struct {
	name string
	ok   func(any) bool
}

var (
	isString = kind{"string", func(v any) bool { _, ok := v.(string); return ok }}
	isBool   = kind{"bool", func(v any) bool { _, ok := v.(bool); return ok }}
	isNumber = kind{"number", func(v any) bool { _, ok := v.(json.Number); return ok }}
	isObject = kind{"object", func(v any) bool { _, ok := v.(map[string]any); return ok }}
	isArray  = kind{"array", func(v any) bool { _, ok := v.([]any); return ok }}
	// isStringArray is an array (never null) of strings.
	isStringArray = kind{"array of strings", func(v any) bool {
		arr, ok := v.([]any)
		if !ok {
			return false
		}
		for _, x := range arr {
			if _, ok := x.(string); !ok {
				return false
			}
		}
		return true
	}}
)

type schemaChecker struct{ t *testing.T }

func (s schemaChecker) want(obj map[string]any, key string, k kind) any {
	s.t.Helper()
	v, ok := obj[key]
	if !ok {
		s.t.Fatalf("key %q missing from %v", key, keys(obj))
	}
	if !k.ok(v) {
		s.t.Fatalf("key %q = %#v, want %s", key, v, k.name)
	}
	return v
}

func (s schemaChecker) wantValue(obj map[string]any, key string, want any) {
	s.t.Helper()
	v, ok := obj[key]
	if !ok {
		s.t.Fatalf("key %q missing from %v", key, keys(obj))
	}
	if v != want {
		s.t.Errorf("key %q = %#v, want %#v", key, v, want)
	}
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestPostmortemScopeAndErrors(t *testing.T) {
	addr := ingestScenarios(t)

	t.Run("one answer and its turn", func(t *testing.T) {
		pm := postmortemJSON(t, addr, "--session", sessPartialRead, "--answer", "msg_01PartialRead00000004")
		if pm.Answer != "msg_01PartialRead00000004" || len(pm.Answers) != 1 || len(pm.ToolCalls) != 3 {
			t.Fatalf("answer %q: %d answers, %d calls", pm.Answer, len(pm.Answers), len(pm.ToolCalls))
		}
	})
	t.Run("no stored texts: a warning, not a failure", func(t *testing.T) {
		bare := chtest.Address(t)
		if code, _, errOut := run(t, "ingest", "--clickhouse", bare, filepath.Join(scenariosDir, "claude-code")); code != ExitOK {
			t.Fatalf("ingest: %s", errOut)
		}
		code, _, errOut := run(t, "postmortem", "--clickhouse", bare, "--session", sessComplete, "--expect", "8080")
		if code != ExitOK || !strings.Contains(errOut, "--store-content all") {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
	})

	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown session", []string{"--session", "no-such-session"}, ExitUsage, `session "no-such-session" not found`},
		{"unknown answer", []string{"--session", sessPartialRead, "--answer", "msg_nope"}, ExitUsage, "msg_01PartialRead00000004"},
		{"no session", nil, ExitUsage, "--session"},
		{"bad format", []string{"--session", sessWebFetch, "--format", "pdf"}, ExitUsage, "--format"},
		{"empty expect", []string{"--session", sessWebFetch, "--expect", ""}, ExitUsage, "--expect"},
		{"unreachable server", []string{"--session", sessWebFetch, "--clickhouse", "clickhouse://default@127.0.0.1:1/x"}, ExitFailure, "connect"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"postmortem", "--clickhouse", addr}, tc.args...)
			code, _, errOut := run(t, args...)
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d, stderr %q; want exit %d mentioning %q", code, errOut, tc.code, tc.want)
			}
		})
	}
}

// A collector writes each call as it reads it and the session's row only
// with its analysis: until then, postmortem says its session figures are
// the records' and that nobody has judged whether the model went back.
func TestPostmortemOfCallsNotAnalysedYet(t *testing.T) {
	addr := chtest.Address(t)
	st := chtest.OpenStore(t, addr)
	ctx := context.Background()
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 4, 2, 9, 0, 0, 0, time.UTC)
	cut := schema.ToolCall{
		SessionID: "as-read-1", CallID: "c1", Tool: "shell", Timestamp: at, Source: schema.HarnessCodex, Turn: schema.KnownTurn(0),
		Forensics: schema.Forensics{Truncated: true, Kind: schema.KindExplicit, Strategy: schema.StrategyHeadTail,
			Original: schema.Original{Source: schema.SourceUnknown}},
	}
	again := cut
	again.CallID, again.Timestamp, again.Forensics = "c2", at.Add(time.Second), schema.Forensics{Kind: schema.KindNone, Original: schema.Original{Source: schema.SourceUnknown}}
	if err := st.WriteToolCalls(ctx, []schema.ToolCall{cut, again}); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, "postmortem", "--clickhouse", addr, "--session", "as-read-1")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"turns unknown", "no session row stored yet", "has not judged this call yet"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "never went back") {
		t.Errorf("text says the model never went back:\n%s", out)
	}
	code, out, errOut = run(t, "postmortem", "--clickhouse", addr, "--session", "as-read-1", "--format", "json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		SessionStored bool `json:"session_stored"`
		Session       struct {
			Turns          *int `json:"turns"`
			TruncatedCalls int  `json:"truncated_calls"`
		} `json:"session"`
		ToolCalls []struct {
			CallID     string `json:"call_id"`
			Analysed   bool   `json:"analysed"`
			FollowedUp *bool  `json:"followed_up"`
		} `json:"tool_calls"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.SessionStored || doc.Session.Turns != nil || doc.Session.TruncatedCalls != 1 || len(doc.ToolCalls) != 2 {
		t.Fatalf("session_stored %v, turns %v, truncated %d, %d calls; want false, null, 1, 2", doc.SessionStored, doc.Session.Turns, doc.Session.TruncatedCalls, len(doc.ToolCalls))
	}
	for _, c := range doc.ToolCalls {
		if c.Analysed || c.FollowedUp != nil {
			t.Errorf("call %s: analysed %v, followed_up %v; want false and null", c.CallID, c.Analysed, c.FollowedUp)
		}
	}
}

// A postmortem of one answer reads only the calls of its turn, but what its
// verdict and its calls' follow-ups can say depends on every call of the
// session: a call of another turn with no time leaves the answer's place
// among the calls unknown, one with no time and no line may have been the
// follow-up analysis did not count (docs/design.md §4.12), and a row
// stored before followed_up_exact cannot say whether its "not followed up"
// is known then. Scoped to the answer, the postmortem says what the
// session's analysis said, not more.
func TestPostmortemOfOneAnswerKnowsTheOrderOfEveryCall(t *testing.T) {
	addr := chtest.Address(t)
	st := chtest.OpenStore(t, addr)
	ctx := context.Background()
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 4, 3, 9, 0, 0, 0, time.UTC)
	read := func(id, args string, sec int) schema.ToolCall {
		return schema.ToolCall{
			CallID: id, Tool: "Read", Arguments: args, Timestamp: t0.Add(time.Duration(sec) * time.Second),
			Source: schema.HarnessClaudeCode, Cwd: "/repo", Turn: schema.KnownTurn(0),
			SourceFile: "/logs/s.jsonl", SourceLine: int64(sec),
			Forensics: schema.Forensics{Kind: schema.KindNone, Strategy: schema.StrategyNone, Original: schema.Original{Source: schema.SourceUnknown}},
		}
	}
	cutRead := read("c1", `{"file_path":"/repo/a.go"}`, 1)
	cutRead.Truncated, cutRead.Kind, cutRead.Strategy = true, schema.KindSilent, schema.StrategyHead
	cutRead.Shown = schema.Range{Start: schema.Known(1), End: schema.Known(100), Unit: schema.UnitLines}
	cutRead.Total = schema.Known(500)
	rest := read("c2", `{"file_path":"/repo/a.go","offset":101,"limit":400}`, 30)
	rest.PartialByRequest = true
	rest.Shown = schema.Range{Start: schema.Known(101), End: schema.Known(500), Unit: schema.UnitLines}
	rest.Total = schema.Known(500)
	other := read("c3", `{"file_path":"/repo/b.go"}`, 40)
	other.Turn, other.Timestamp = schema.KnownTurn(1), time.Time{}
	// Another turn's read of the rest of a.go: had it come after c1, it
	// would have followed c1 up.
	otherRest := rest
	otherRest.CallID, otherRest.Turn, otherRest.Timestamp = "c3", schema.KnownTurn(1), time.Time{}

	for _, tc := range []struct {
		name    string
		session string
		calls   []schema.ToolCall
		noLine  bool
		// unmark stores the calls as a writer before migration 0012 did,
		// without followed_up_exact, and the verdict as the analysis then
		// gave it.
		unmark   bool
		want     string // in the verdict
		wantNote string // in the text's follow-up line of c1, "" for none checked
		// followedUp is c1's followed_up in the JSON: "false", "null", or
		// "" for not checked.
		followedUp string
	}{
		{"a call of another turn without a time", "order-untimed", []schema.ToolCall{cutRead, rest, other}, false, false,
			"the model read further, not known whether before answering", "", ""},
		{"a call of another turn without a time or a line that may have read the rest", "order-unordered", []schema.ToolCall{cutRead, otherRest}, true, false,
			"the model is not known to have read further", "none known: a call without a time or line to order it", "null"},
		{"a call of another turn without a time or a line that read another file", "order-unordered-other", []schema.ToolCall{cutRead, other}, true, false,
			"the model never read further", "none: the model never went back for the rest", "false"},
		{"the same, stored before followed_up_exact", "order-unordered-unmarked", []schema.ToolCall{cutRead, other}, true, true,
			"the model is not known to have read further", "none known: a call without a time or line to order it", "null"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := tc.session
			calls := slices.Clone(tc.calls)
			for i := range calls {
				calls[i].SessionID = id
				if tc.noLine && calls[i].CallID == "c3" {
					calls[i].SourceFile, calls[i].SourceLine = "", 0
				}
			}
			s := analysis.Session{
				Meta:  schema.Session{SessionID: id, Source: schema.HarnessClaudeCode},
				Calls: calls,
				Answers: []schema.Answer{{SessionID: id, MessageID: "m1", Timestamp: t0.Add(20 * time.Second), Turn: schema.KnownTurn(0),
					Source: schema.HarnessClaudeCode, Text: "There is no retry setting."}},
			}
			analysis.Analyze(&s)
			if tc.unmark {
				for i := range s.Calls {
					s.Calls[i].FollowUpExact = false
				}
				s.Answers[0].Verdict = analysis.Verdict(s.Answers[0], s.Calls)
			}
			stored := s.Answers[0].Verdict
			if !strings.Contains(stored, tc.want) {
				t.Fatalf("the analysis' verdict %q lacks %q", stored, tc.want)
			}
			if err := st.WriteToolCalls(ctx, s.Calls); err != nil {
				t.Fatal(err)
			}
			if err := st.WriteAnswers(ctx, s.Answers); err != nil {
				t.Fatal(err)
			}
			if err := st.WriteSessions(ctx, []schema.Session{s.Meta}); err != nil {
				t.Fatal(err)
			}
			for _, scope := range [][]string{nil, {"--answer", "m1"}} {
				pm := postmortemJSON(t, addr, append([]string{"--session", id}, scope...)...)
				if len(pm.Answers) != 1 {
					t.Fatalf("%v: %d answers; want 1", scope, len(pm.Answers))
				}
				if got := pm.Answers[0].Verdict; got != stored {
					t.Errorf("%v: postmortem verdict\n%s\nwant the analysis'\n%s", scope, got, stored)
				}
				if want := (analysis.CallOrder{Timed: false, Ordered: !tc.noLine}); pm.Order != want {
					t.Errorf("%v: call_order %+v; want %+v", scope, pm.Order, want)
				}
				if len(scope) > 0 && callByID(pm, "c3") != nil {
					t.Fatalf("%v: the other turn's call is in scope; the test needs it outside", scope)
				}
				if got := followedUpJSON(t, addr, "c1", append([]string{"--session", id}, scope...)...); tc.followedUp != "" && got != tc.followedUp {
					t.Errorf("%v: c1's followed_up in the JSON is %s; want %s", scope, got, tc.followedUp)
				}
				code, out, errOut := run(t, append([]string{"postmortem", "--clickhouse", addr, "--session", id}, scope...)...)
				if code != ExitOK {
					t.Fatalf("%v: exit %d: %s", scope, code, errOut)
				}
				if (strings.Contains(out, "never went back") && !strings.Contains(tc.wantNote, "never went back")) || (tc.wantNote != "" && !strings.Contains(out, tc.wantNote)) {
					t.Errorf("%v: text says the model never went back, or lacks %q:\n%s", scope, tc.wantNote, out)
				}
			}
		})
	}
}
