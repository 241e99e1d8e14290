package ctxauditprocessor

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/ctxaudit/ctxaudit/collector/forensics"
	"github.com/ctxaudit/ctxaudit/collector/otelconv"
	"github.com/ctxaudit/ctxaudit/schema"
)

// detectIntoAsRaw is detection as it was before decodeToolSpan: every
// attribute copied with AsRaw, each key looked up in the copy, the whole
// copy handed to forensics. The fast path must give the same verdict and
// the same attributes.
func detectIntoAsRaw(attrs pcommon.Map, harness schema.Harness) schema.Forensics {
	raw := attrs.AsRaw()
	str := func(k string) string {
		if s, ok := raw[k].(string); ok {
			return s
		}
		return ""
	}
	if h := str(otelconv.AttrSource); h != "" {
		harness = schema.Harness(h)
	}
	tool := str(otelconv.AttrToolName)
	if tool == "" {
		tool = str(otelconv.ClaudeCodeToolName)
	}
	args := str(otelconv.AttrToolCallArguments)
	if args == "" {
		args = str(otelconv.ClaudeCodeToolInput)
	}
	isError := str(otelconv.AttrErrorType) != "" || str(otelconv.ClaudeCodeSuccess) == "false"
	if b, ok := raw[otelconv.AttrIsError].(bool); ok {
		isError = isError || b
	}
	in := forensics.Input{
		Harness:        harness,
		HarnessVersion: firstNonEmpty(str(otelconv.AttrHarnessVersion), str(otelconv.ClaudeCodeAppVersion)),
		Tool:           tool,
		IsError:        isError,
		Attributes:     raw,
	}
	if args != "" {
		in.Arguments = []byte(args)
	}
	if s, ok := raw[otelconv.AttrToolCallResult].(string); ok {
		in.Context = s
	} else if _, ok := raw[otelconv.AttrToolCallResult]; !ok {
		in.ContextUnavailable = true
	}
	f := forensics.Detect(in)
	if in.ContextUnavailable && f.Kind == schema.KindNone && !reportsVerdict(raw) {
		f.Kind = schema.KindUnknown
	}
	otelconv.PutVerdict(attrs, &f, harness)
	return f
}

// fixtureResults are real tool outputs and transcript lines: every saved
// tool result and every line of testdata/transcripts and testdata/lab.
func fixtureResults(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, root := range []string{"../../../testdata/transcripts", "../../../testdata/lab"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || (filepath.Ext(path) != ".jsonl" && filepath.Ext(path) != ".txt") {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if filepath.Ext(path) == ".txt" {
				out = append(out, string(b))
				return nil
			}
			for _, line := range strings.Split(string(b), "\n") {
				if line != "" {
					out = append(out, line)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("fixtures under %s: %v", root, err)
		}
	}
	if len(out) < 200 {
		t.Fatalf("only %d fixture texts", len(out))
	}
	return out
}

// spanVariants dresses one output as the attribute sets real emitters send:
// GenAI spans with and without a harness, Claude Code log-style keys,
// reported figures and verdicts, errors, a structured result, no result,
// empty and mistyped values.
func spanVariants(result string, i int) []pcommon.Map {
	base := func() pcommon.Map {
		m := pcommon.NewMap()
		m.PutStr(otelconv.AttrOperationName, otelconv.OperationExecuteTool)
		m.PutStr(otelconv.AttrToolName, []string{"Read", "Bash", "WebFetch", "Grep", "exec_command", "read"}[i%6])
		m.PutStr(otelconv.AttrToolCallID, "call-1")
		m.PutStr(otelconv.AttrToolCallResult, result)
		return m
	}
	var out []pcommon.Map
	m := base()
	out = append(out, m)

	m = base()
	m.PutStr(otelconv.AttrSource, []string{"claude_code", "codex", "pi", "generic"}[i%4])
	m.PutStr(otelconv.AttrHarnessVersion, "2.1.6")
	m.PutStr(otelconv.AttrToolCallArguments, `{"file_path":"/w/a.go","offset":10,"limit":2000}`)
	m.PutInt(forensics.AttrOriginalBytes, int64(len(result)+i))
	out = append(out, m)

	m = base()
	m.PutBool(forensics.AttrTruncated, i%2 == 0)
	m.PutStr(forensics.AttrTruncationKind, "explicit")
	m.PutStr(forensics.AttrOriginalPrecision, "lower_bound")
	m.PutStr(forensics.AttrMarker, "[truncated]")
	m.PutInt(forensics.AttrShownStart, 0)
	m.PutInt(forensics.AttrShownEnd, 100)
	m.PutStr(forensics.AttrShownUnit, "lines")
	out = append(out, m)

	m = pcommon.NewMap()
	m.PutStr(otelconv.ClaudeCodeToolName, "Bash")
	m.PutStr(otelconv.ClaudeCodeToolInput, `{"command":"ls"}`)
	m.PutStr(otelconv.ClaudeCodeSuccess, []string{"false", "true"}[i%2])
	m.PutStr(otelconv.ClaudeCodeAppVersion, "2.1.328")
	m.PutInt(forensics.AttrClaudeCodeToolResultSize, int64(len(result)))
	if i%3 == 0 {
		m.PutStr(otelconv.AttrToolCallResult, result)
	}
	out = append(out, m)

	m = base()
	m.PutBool(otelconv.AttrIsError, true)
	m.PutStr(otelconv.AttrErrorType, "tool_error")
	m.PutInt(forensics.AttrContextBytes, int64(len(result)))
	out = append(out, m)

	m = base()
	m.PutStr(otelconv.AttrSource, "claude_code")
	m.PutBool(otelconv.AttrIsError, true) // the flag alone
	out = append(out, m)

	m = base()
	m.Remove(otelconv.AttrToolCallResult)
	m.PutInt(forensics.AttrContextChars, int64(len(result)))
	m.PutStr(forensics.AttrOriginalTokens, "12000") // numbers as decimal strings are accepted
	out = append(out, m)

	m = base()
	sm := m.PutEmptyMap(otelconv.AttrToolCallResult)
	sm.PutStr("stdout", result)
	sm.PutInt("exit_code", 1)
	out = append(out, m)

	m = base()
	m.PutStr(otelconv.AttrSource, "codex")
	m.PutStr(otelconv.AttrToolName, "")
	m.PutStr(otelconv.ClaudeCodeToolName, "shell")
	m.PutInt(otelconv.AttrIsError, 1) // not a bool: not an error flag on either path
	out = append(out, m)
	return out
}

func TestDetectIntoMatchesAsRawPath(t *testing.T) {
	n := 0
	for i, result := range fixtureResults(t) {
		for j, m := range spanVariants(result, i) {
			for _, harness := range []schema.Harness{schema.HarnessClaudeCode, schema.HarnessGeneric} {
				fast, slow := pcommon.NewMap(), pcommon.NewMap()
				m.CopyTo(fast)
				m.CopyTo(slow)
				gotF := detectInto(fast, harness)
				wantF := detectIntoAsRaw(slow, harness)
				if !reflect.DeepEqual(gotF, wantF) {
					t.Fatalf("text %d variant %d (%s): verdict %+v, AsRaw path %+v", i, j, harness, gotF, wantF)
				}
				if !reflect.DeepEqual(fast.AsRaw(), slow.AsRaw()) {
					t.Fatalf("text %d variant %d (%s): attributes differ:\n%v\n%v", i, j, harness, fast.AsRaw(), slow.AsRaw())
				}
				n++
			}
		}
	}
	if n == 0 {
		t.Fatal("nothing compared")
	}
}

// BenchmarkDetectInto compares the decoded path with the AsRaw one on a
// bench-like span: the decoded one copies only the ctxaudit.output.*
// attributes and scans the map once instead of once per key (fewer
// allocations); forensics itself is most of either.
func BenchmarkDetectInto(b *testing.B) {
	m := spanVariants(strings.Repeat("    at handler (/srv/app/internal/server/handler.go:118) ok\n", 80), 1)[1]
	for _, bc := range []struct {
		name string
		fn   func(pcommon.Map, schema.Harness) schema.Forensics
	}{{"decoded", detectInto}, {"asraw", detectIntoAsRaw}} {
		b.Run(bc.name, func(b *testing.B) {
			work := pcommon.NewMap()
			for b.Loop() {
				m.CopyTo(work)
				bc.fn(work, schema.HarnessClaudeCode)
			}
		})
	}
}

// heldAndRoundTrip returns the record the processor holds for a span it
// drops (built from the verdict) and the one read back from the span's
// attributes once the verdict is written on them (a span passed on).
func heldAndRoundTrip(m, res pcommon.Map, harness schema.Harness) (held, roundTrip schema.ToolCall) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	dropped, passed := pcommon.NewMap(), pcommon.NewMap()
	m.CopyTo(dropped)
	m.CopyTo(passed)
	f, h := detect(dropped, harness, false)
	held = otelconv.ToolCallWithVerdict(dropped, res, at, &f, h)
	detectInto(passed, harness)
	return held, otelconv.ToolCallFromAttributes(passed, res, at)
}

// resources are the resources a call's span comes with: none, one naming
// the session and the harness, one naming a harness only.
func resources() []pcommon.Map {
	none := pcommon.NewMap()
	named := pcommon.NewMap()
	named.PutStr(otelconv.AttrConversationID, "s-1")
	named.PutStr(otelconv.AttrSource, "codex")
	harness := pcommon.NewMap()
	harness.PutStr(otelconv.AttrSource, "pi")
	return []pcommon.Map{none, named, harness}
}

func TestHeldRecordIsTheRoundTrip(t *testing.T) {
	n := 0
	for i, result := range fixtureResults(t) {
		for j, m := range spanVariants(result, i) {
			m.PutStr(otelconv.AttrConversationID, "s-1")
			for k, res := range resources() {
				for _, harness := range []schema.Harness{schema.HarnessClaudeCode, schema.HarnessGeneric} {
					held, rt := heldAndRoundTrip(m, res, harness)
					if !reflect.DeepEqual(held, rt) {
						t.Fatalf("text %d variant %d resource %d (%s): held record\n%+v\nround trip\n%+v", i, j, k, harness, held, rt)
					}
					n++
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("nothing compared")
	}
}

// FuzzHeldRecordIsTheRoundTrip composes spans from a result and reported
// attributes of any type, valid or not.
func FuzzHeldRecordIsTheRoundTrip(f *testing.F) {
	f.Add("     1\tpackage main\n... [1200 characters truncated] ...\n", "Read", "lines", int64(5000), "12000", true, uint8(0))
	f.Add("Total output lines: 900\n[... omitted 400 of 900 lines ...]", "exec_command", "weird", int64(-1), "lower_bound", false, uint8(1))
	f.Add("[Showing lines 1-2000 of 5000. Use offset=2001 to continue.]", "read", "", int64(1<<40), "", false, uint8(2))
	f.Add("", "Bash", "bytes", int64(0), "x", true, uint8(3))
	f.Fuzz(func(t *testing.T, result, tool, unit string, n int64, s string, b bool, shape uint8) {
		m := pcommon.NewMap()
		m.PutStr(otelconv.AttrOperationName, otelconv.OperationExecuteTool)
		m.PutStr(otelconv.AttrToolName, tool)
		m.PutStr(otelconv.AttrToolCallID, "call-1")
		m.PutStr(otelconv.AttrConversationID, "s-1")
		if shape&1 == 0 {
			m.PutStr(otelconv.AttrToolCallResult, result)
		}
		if shape&2 != 0 {
			m.PutStr(forensics.AttrShownUnit, unit)
			m.PutInt(forensics.AttrShownEnd, n)
			m.PutStr(forensics.AttrShownTailStart, s)
		}
		if shape&4 != 0 {
			m.PutInt(forensics.AttrOriginalBytes, n)
			m.PutStr(forensics.AttrOriginalPrecision, s)
			m.PutBool(forensics.AttrTruncated, b)
		}
		if shape&8 != 0 {
			m.PutStr(forensics.AttrTruncationKind, s)
			m.PutStr(forensics.AttrReason, unit)
			m.PutStr(forensics.AttrMarker, s)
		}
		if shape&16 != 0 {
			m.PutInt(forensics.AttrClaudeCodeToolResultSize, n)
			m.PutDouble(forensics.AttrContextBytes, float64(n)/3)
		}
		if shape&32 != 0 {
			m.PutInt(otelconv.AttrSource, n) // mistyped
		}
		if shape&64 != 0 {
			m.PutStr(otelconv.AttrDetector, s)
			m.PutBool(forensics.AttrShownTailIsEnd, b)
		}
		for k, res := range resources() {
			held, rt := heldAndRoundTrip(m, res, schema.HarnessGeneric)
			if !reflect.DeepEqual(held, rt) {
				t.Fatalf("resource %d: held record\n%+v\nround trip\n%+v", k, held, rt)
			}
		}
	})
}

// A reported attribute detection rejected does not outlive the verdict:
// what the span carries afterwards is the verdict and nothing else.
func TestVerdictReplacesReportedAttributes(t *testing.T) {
	m := pcommon.NewMap()
	m.PutStr(otelconv.AttrOperationName, otelconv.OperationExecuteTool)
	m.PutStr(otelconv.AttrToolName, "Read")
	m.PutStr(otelconv.AttrToolCallResult, "     1\tpackage main\n")
	m.PutStr(forensics.AttrShownUnit, "furlongs")            // no unit
	m.PutStr(forensics.AttrOriginalPrecision, "lower_bound") // of no reported size
	m.PutInt(forensics.AttrShownTailEnd, -4)                 // no position
	f := detectInto(m, schema.HarnessClaudeCode)
	if f.Shown.Unit == "furlongs" || f.Original.Precision == schema.PrecisionLowerBound || f.ShownTail.End.Known {
		t.Fatalf("detection took the rejected attributes: %+v", f)
	}
	verdict := pcommon.NewMap()
	otelconv.PutForensics(verdict, &f)
	for k, v := range m.All() {
		if !strings.HasPrefix(k, "ctxaudit.output.") {
			continue
		}
		if w, ok := verdict.Get(k); !ok || !reflect.DeepEqual(v.AsRaw(), w.AsRaw()) {
			t.Errorf("%s = %v, the verdict says %v (present %v)", k, v.AsRaw(), w.AsRaw(), ok)
		}
	}
	if got := otelconv.ForensicsFromAttributes(m); got.Shown.Unit != f.Shown.Unit || got.Original.Precision != f.Original.Precision || got.ShownTail.End.Known {
		t.Errorf("read back %+v, verdict %+v", got, f)
	}
}
