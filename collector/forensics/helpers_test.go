package forensics

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxaudit/ctxaudit/schema"
)

// fixturesDir is the repository's real-transcript fixtures
// (testdata/transcripts, provenance in its SOURCES.md); go test runs in the
// package directory, two levels below the repository root.
func fixturesDir(t testing.TB) string {
	t.Helper()
	p := filepath.Join("..", "..", "testdata", "transcripts")
	if st, err := os.Stat(p); err != nil || !st.IsDir() {
		t.Fatalf("fixtures directory %s: not found", p)
	}
	return p
}

// jsonlLine returns line n (1-based) of a fixture file.
func jsonlLine(t testing.TB, rel string, n int) map[string]any {
	t.Helper()
	f, err := os.Open(filepath.Join(fixturesDir(t), rel))
	if err != nil {
		t.Fatalf("open fixture: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for i := 1; sc.Scan(); i++ {
		if i == n {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatalf("%s:%d: %v", rel, n, err)
			}
			return m
		}
	}
	t.Fatalf("%s has no line %d", rel, n)
	return nil
}

// claudeToolResult decodes a Claude Code user line into an Input: the
// tool_result text the model saw and the raw toolUseResult.
func claudeToolResult(t testing.TB, rel string, n int, tool string, args string) Input {
	t.Helper()
	line := jsonlLine(t, rel, n)
	msg, _ := line["message"].(map[string]any)
	blocks, _ := msg["content"].([]any)
	for _, b := range blocks {
		blk, _ := b.(map[string]any)
		if blk["type"] != "tool_result" {
			continue
		}
		in := Input{Harness: schema.HarnessClaudeCode, Tool: tool, Context: blockText(blk["content"])}
		in.HarnessVersion, _ = line["version"].(string)
		in.IsError, _ = blk["is_error"].(bool)
		if args != "" {
			in.Arguments = []byte(args)
		}
		if tur, ok := line["toolUseResult"]; ok {
			raw, _ := json.Marshal(tur)
			in.ToolUseResult = raw
		}
		return in
	}
	t.Fatalf("%s:%d has no tool_result", rel, n)
	return Input{}
}

// blockText is the model-visible text of a tool_result content value.
func blockText(v any) string {
	switch c := v.(type) {
	case string:
		return c
	case []any:
		var parts []string
		for _, p := range c {
			if m, ok := p.(map[string]any); ok && m["type"] == "text" {
				s, _ := m["text"].(string)
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

// piToolResult decodes a pi toolResult line.
func piToolResult(t testing.TB, n int, args string) Input {
	t.Helper()
	line := jsonlLine(t, "pi/selected-lines.jsonl", n)
	msg, _ := line["message"].(map[string]any)
	in := Input{Harness: schema.HarnessPi, Context: blockText(msg["content"])}
	in.Tool, _ = msg["toolName"].(string)
	in.IsError, _ = msg["isError"].(bool)
	if args != "" {
		in.Arguments = []byte(args)
	}
	if d, ok := msg["details"]; ok {
		in.Details, _ = json.Marshal(d)
	}
	return in
}

// codexOutput decodes a Codex function_call_output line and its call.
func codexOutput(t testing.TB, n int) Input {
	t.Helper()
	const rel = "codex/rollout-0.60.1-rtchess-first-turn.jsonl"
	p, _ := jsonlLine(t, rel, n)["payload"].(map[string]any)
	in := Input{Harness: schema.HarnessCodex, HarnessVersion: "0.60.1", Context: blockText(p["output"])}
	if s, ok := p["output"].(string); ok {
		in.Context = s
	}
	return in
}

// savedReader serves saved files by base name from a fixture directory, as
// a caller maps a notice's absolute path onto where the transcript lives.
func savedReader(t testing.TB, rel string) func(string) ([]byte, error) {
	dir := filepath.Join(fixturesDir(t), rel)
	return func(ref string) ([]byte, error) {
		return os.ReadFile(filepath.Join(dir, filepath.Base(ref)))
	}
}

// want lists the expected verdict; empty strings are not checked. Counts are
// written as their String() ("85713", "unknown").
type want struct {
	kind                    schema.TruncationKind
	strategy                schema.Strategy
	truncated, partial      bool
	reason                  string
	disclosure              string // "range,reason,next" as "110"
	shown                   string // "start-end unit"
	total                   string
	source                  schema.OriginalSource
	bytes, chars, lines, tk string // original sizes
	ctxChars, ctxBytes      string
	savedRef, next, marker  string // next and marker: substring
	understated             bool
	detector                string
	// precision of the original: "" is not checked, "none" means no
	// precision (and so no original size).
	precision string
	// shownTail is "start-end unit" of the second range, checked when set;
	// tailIsEnd and refetched are always checked.
	shownTail            string
	tailIsEnd, refetched bool
	refVersion           string // checked when set
}

func check(t *testing.T, got schema.Forensics, w want) {
	t.Helper()
	errorf := func(field string, g, e any) { t.Errorf("%s = %v, want %v", field, g, e) }
	if got.Kind != w.kind {
		errorf("kind", got.Kind, w.kind)
	}
	if w.strategy != "" && got.Strategy != w.strategy {
		errorf("strategy", got.Strategy, w.strategy)
	}
	if got.Truncated != w.truncated {
		errorf("truncated", got.Truncated, w.truncated)
	}
	if got.PartialByRequest != w.partial {
		errorf("partial_by_request", got.PartialByRequest, w.partial)
	}
	if got.Reason != w.reason {
		errorf("reason", got.Reason, w.reason)
	}
	if w.disclosure != "" {
		d := got.Disclosure
		g := fmt.Sprintf("%d%d%d", b2i(d.Range), b2i(d.Reason), b2i(d.Next))
		if g != w.disclosure {
			errorf("disclosure", g, w.disclosure)
		}
	}
	if w.shown != "" {
		g := fmt.Sprintf("%s-%s %s", got.Shown.Start, got.Shown.End, got.Shown.Unit)
		if g != w.shown {
			errorf("shown", g, w.shown)
		}
	}
	eq := func(field, g, e string) {
		if e != "" && g != e {
			errorf(field, g, e)
		}
	}
	eq("total", got.Total.String(), w.total)
	eq("original.source", string(got.Original.Source), string(w.source))
	eq("original.bytes", got.Original.Bytes.String(), w.bytes)
	eq("original.chars", got.Original.Chars.String(), w.chars)
	eq("original.lines", got.Original.Lines.String(), w.lines)
	eq("original.tokens", got.Original.Tokens.String(), w.tk)
	eq("context.chars", got.Context.Chars.String(), w.ctxChars)
	eq("context.bytes", got.Context.Bytes.String(), w.ctxBytes)
	eq("saved_ref", got.SavedRef, w.savedRef)
	eq("detector", got.Detector, w.detector)
	if !strings.Contains(got.NextHint, w.next) {
		errorf("next_hint", got.NextHint, "…"+w.next+"…")
	}
	if !strings.Contains(got.Marker, w.marker) {
		errorf("marker", got.Marker, "…"+w.marker+"…")
	}
	if got.MarkerUnderstated != w.understated {
		errorf("marker_understated", got.MarkerUnderstated, w.understated)
	}
	switch {
	case w.precision == "none" && got.Original.Precision != schema.PrecisionNone:
		errorf("original.precision", got.Original.Precision, "none")
	case w.precision != "" && w.precision != "none" && string(got.Original.Precision) != w.precision:
		errorf("original.precision", got.Original.Precision, w.precision)
	}
	if w.shownTail != "" {
		g := fmt.Sprintf("%s-%s %s", got.ShownTail.Start, got.ShownTail.End, got.ShownTail.Unit)
		if g != w.shownTail {
			errorf("shown_tail", g, w.shownTail)
		}
	}
	eq("ref_version", got.RefVersion, w.refVersion)
	if got.ShownTailIsEnd != w.tailIsEnd {
		errorf("shown_tail_is_end", got.ShownTailIsEnd, w.tailIsEnd)
	}
	if got.RefetchedSource != w.refetched {
		errorf("refetched_source", got.RefetchedSource, w.refetched)
	}
	checkInvariants(t, got)
	if got.Truncated && got.Kind == schema.KindNone || !got.Truncated && got.Strategy != schema.StrategyNone && got.Strategy != schema.StrategySummary {
		t.Errorf("inconsistent verdict: truncated=%v kind=%s strategy=%s", got.Truncated, got.Kind, got.Strategy)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// checkInvariants holds for every verdict: a precision exactly when some
// original size is known; a second range only on a head+tail cut, in the
// unit of the first; a tail that is the end only where it is placed.
func checkInvariants(t *testing.T, got schema.Forensics) {
	t.Helper()
	o := got.Original
	anySize := o.Bytes.Known || o.Chars.Known || o.Lines.Known || o.Tokens.Known
	if anySize == (o.Precision == schema.PrecisionNone) {
		t.Errorf("original %+v: precision %q with sizes known = %v", o, o.Precision, anySize)
	}
	tail := got.ShownTail
	if tail != (schema.Range{}) {
		if got.Strategy != schema.StrategyHeadTail {
			t.Errorf("shown_tail %+v on a %s cut", tail, got.Strategy)
		}
		if tail.Unit != got.Shown.Unit {
			t.Errorf("shown_tail unit %q, shown unit %q", tail.Unit, got.Shown.Unit)
		}
	}
	if got.ShownTailIsEnd && !tail.End.Known {
		t.Errorf("shown_tail_is_end without a placed tail: %+v", tail)
	}
}
