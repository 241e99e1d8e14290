package otelconv_test

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/ctxaudit/ctxaudit/collector/otelconv"
	"github.com/ctxaudit/ctxaudit/schema"
)

// The packages that declare ctxaudit.* keys, and the document that defines
// them. The keys are split between the package that reads the harness-reported
// measurements (forensics) and the one that maps records to spans (otelconv).
var (
	keyPackages  = []string{".", filepath.Join("..", "forensics")}
	attributeDoc = filepath.Join("..", "..", "docs", "attributes.md")
)

// declaredKeys returns every string constant with a ctxaudit.* value declared
// in the non-test files of dirs, keyed by value, with the constant's name.
func declaredKeys(t *testing.T, dirs ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			file, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range file.Decls {
				gd, ok := d.(*ast.GenDecl)
				if !ok || gd.Tok != token.CONST {
					continue
				}
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, v := range vs.Values {
						lit, ok := v.(*ast.BasicLit)
						if !ok || lit.Kind != token.STRING {
							continue
						}
						s, err := strconv.Unquote(lit.Value)
						if err != nil || !strings.HasPrefix(s, "ctxaudit.") {
							continue
						}
						if prev, dup := out[s]; dup {
							t.Errorf("%s: %s and %s both declare %q", f, prev, vs.Names[i].Name, s)
						}
						out[s] = vs.Names[i].Name
					}
				}
			}
		}
	}
	return out
}

type docKey struct {
	typ, unit string
	line      int
}

var docRow = regexp.MustCompile("^\\|\\s*`(ctxaudit\\.[^`]*)`\\s*\\|([^|]*)\\|([^|]*)\\|([^|]*)\\|\\s*$")

// documentedKeys reads the rows of docs/attributes.md that document one
// ctxaudit.* key: | `key` | type | unit | meaning |.
func documentedKeys(t *testing.T) map[string]docKey {
	t.Helper()
	f, err := os.Open(attributeDoc)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]docKey{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if !strings.HasPrefix(line, "| `ctxaudit.") {
			continue
		}
		m := docRow.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("%s:%d: a ctxaudit.* row must be | `key` | type | unit | meaning |: %s", attributeDoc, n, line)
			continue
		}
		key, typ, unit, meaning := m[1], strings.TrimSpace(m[2]), strings.TrimSpace(m[3]), strings.TrimSpace(m[4])
		if _, dup := out[key]; dup {
			t.Errorf("%s:%d: %s documented twice", attributeDoc, n, key)
		}
		switch typ {
		case "int", "double", "bool", "string", "string[]":
		default:
			t.Errorf("%s:%d: %s has type %q; want int, double, bool, string or string[]", attributeDoc, n, key, typ)
		}
		if meaning == "" {
			t.Errorf("%s:%d: %s has no meaning", attributeDoc, n, key)
		}
		out[key] = docKey{typ: typ, unit: unit, line: n}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestAttributeDocMatchesConstants(t *testing.T) {
	declared := declaredKeys(t, keyPackages...)
	documented := documentedKeys(t)
	if len(declared) == 0 || len(documented) == 0 {
		t.Fatalf("found %d constants and %d documented keys; the test reads the wrong files", len(declared), len(documented))
	}
	for _, k := range sortedKeys(declared) {
		if _, ok := documented[k]; !ok {
			t.Errorf("constant %s = %q is not documented in %s", declared[k], k, attributeDoc)
		}
	}
	for _, k := range sortedKeys(documented) {
		if _, ok := declared[k]; !ok {
			t.Errorf("%s:%d documents %q, which no constant declares", attributeDoc, documented[k].line, k)
		}
	}
}

// TestEmittedAttributesHaveDocumentedTypes maps fully populated records to
// spans and checks every ctxaudit.* attribute against the document's type;
// every documented key must be emitted by one of them.
func TestEmittedAttributesHaveDocumentedTypes(t *testing.T) {
	documented := documentedKeys(t)
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	call := schema.ToolCall{
		SessionID: "s", CallID: "c2", Tool: "Read", Timestamp: at, Source: schema.HarnessClaudeCode,
		HarnessVersion: "2.1.6", Model: "m", Project: "p", Cwd: "/w", GitBranch: "main", AgentID: "a",
		Sidechain: true, Turn: schema.KnownTurn(1), MessageID: "msg", Arguments: `{"file_path":"/w/a.go"}`, Target: "/w/a.go", IsError: true,
		Forensics: schema.Forensics{
			Original: schema.Original{Sizes: schema.Sizes{Bytes: schema.Known(4), Chars: schema.Known(4), Lines: schema.Known(2), Tokens: schema.Known(1)},
				Source: schema.SourceHarnessMetadata, Precision: schema.PrecisionLowerBound},
			Context:   schema.Sizes{Bytes: schema.Known(2), Chars: schema.Known(2), Lines: schema.Known(1), Tokens: schema.Known(1)},
			Truncated: true, Kind: schema.KindExplicit, Strategy: schema.StrategyHead, PartialByRequest: true,
			Shown: schema.Range{Start: schema.Known(1), End: schema.Known(1), Unit: schema.UnitLines}, Total: schema.Known(2),
			ShownTail: schema.Range{Start: schema.Known(2), End: schema.Known(2), Unit: schema.UnitLines}, ShownTailIsEnd: true,
			RefetchedSource: true, Reason: "cap_lines", Disclosure: schema.Disclosure{Range: true, Reason: true, Next: true}, NextHint: "offset=2",
			SavedRef: "/w/a.go", RefVersion: "v1", Marker: "[1 more line]", MarkerUnderstated: true, Detector: "claude_code.read",
		},
		FollowedUp: true, FollowUpExact: true, ContinuationOf: "c1", SessionCoverage: schema.KnownRatio(0.5), Searched: true,
		CoverageUpperBound: true, CoverageMixedVersions: true,
		SourceFile: "/t/s.jsonl", SourceLine: 3, Analysis: schema.Analysis{Done: true, Records: 2, Partial: true},
	}
	answer := schema.Answer{
		SessionID: "s", MessageID: "msg2", Timestamp: at, Source: schema.HarnessClaudeCode, Sidechain: true, Turn: schema.KnownTurn(1),
		Text: "none found", InputCallIDs: []string{"c2"}, IncompleteInputs: []string{"c2"}, AbsenceClaim: true,
		Absence: schema.AbsenceScoped, AbsenceClause: "none found in the first 10 lines", AbsenceScope: "in the first 10 lines",
		Risk: schema.RiskHigh, Reasons: []string{schema.ReasonExplicitTruncation},
		ReasonCalls: map[string][]string{schema.ReasonExplicitTruncation: {"c2"}}, Verdict: "rests on a cut read", Retracted: true, InputsUncertain: true,
	}
	session := schema.Session{
		SessionID: "s", Source: schema.HarnessClaudeCode, HarnessVersion: "2.1.6", Model: "m", Project: "p", Cwd: "/w",
		GitBranch: "main", StartedAt: at, EndedAt: at, SourceFile: "/t/s.jsonl", Turns: schema.Known(2), ToolCalls: 1, TruncatedCalls: 1,
		SilentCalls: 1, Answers: 1, RiskyAnswers: 1, RiskyAnswersUncertain: schema.Known(1), Compactions: schema.Known(1), MaxRisk: schema.RiskHigh,
	}
	spans := ptrace.NewSpanSlice()
	otelconv.AppendToolCall(spans, &call)
	// A cut call whose follow-up is not known carries what a followed-up
	// one cannot.
	unknown := call
	unknown.CallID, unknown.FollowedUp, unknown.FollowUpUnknown = "c3", false, true
	otelconv.AppendToolCall(spans, &unknown)
	otelconv.AppendAnswer(spans, &answer)
	otelconv.AppendAnalysedSession(spans, &session, []string{"msg3"}, nil, nil)
	otelconv.MarkAnalysedUpstream(spans)
	// A pass-through call span of a processor that holds the call.
	held := ptrace.NewSpanSlice()
	otelconv.AppendToolCall(held, &call)
	otelconv.MarkAnalysisPending(held.At(0).Attributes())
	held.MoveAndAppendTo(spans)

	emitted := map[string]bool{}
	for i := 0; i < spans.Len(); i++ {
		sp := spans.At(i)
		sp.Attributes().Range(func(k string, v pcommon.Value) bool {
			if !strings.HasPrefix(k, "ctxaudit.") {
				return true
			}
			emitted[k] = true
			d, ok := documented[k]
			if !ok {
				t.Errorf("span %q carries %s, which %s does not document", sp.Name(), k, attributeDoc)
				return true
			}
			if got := valueType(v); got != d.typ {
				t.Errorf("span %q carries %s as %s; %s:%d says %s", sp.Name(), k, got, attributeDoc, d.line, d.typ)
			}
			return true
		})
	}
	for _, k := range sortedKeys(documented) {
		if !emitted[k] {
			t.Errorf("%s (%s:%d) is emitted by none of the populated records; populate the field that carries it", k, attributeDoc, documented[k].line)
		}
	}
}

func valueType(v pcommon.Value) string {
	switch v.Type() {
	case pcommon.ValueTypeInt:
		return "int"
	case pcommon.ValueTypeDouble:
		return "double"
	case pcommon.ValueTypeBool:
		return "bool"
	case pcommon.ValueTypeStr:
		return "string"
	case pcommon.ValueTypeSlice:
		s := v.Slice()
		for i := 0; i < s.Len(); i++ {
			if s.At(i).Type() != pcommon.ValueTypeStr {
				return "slice of " + s.At(i).Type().String()
			}
		}
		return "string[]"
	}
	return v.Type().String()
}

// The gen_ai.operation.name values are written out as constants (semconv
// declares them as variables); they must be the convention's.
func TestOperationNamesAreSemconv(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{otelconv.OperationExecuteTool, semconv.GenAIOperationNameExecuteTool.Value.AsString()},
		{otelconv.OperationChat, semconv.GenAIOperationNameChat.Value.AsString()},
		{otelconv.OperationInvokeAgent, semconv.GenAIOperationNameInvokeAgent.Value.AsString()},
	} {
		if tc.got != tc.want {
			t.Errorf("operation %q; semconv says %q", tc.got, tc.want)
		}
	}
	if otelconv.AttrOperationName != string(semconv.GenAIOperationNameExecuteTool.Key) {
		t.Errorf("operation key %q is not semconv's", otelconv.AttrOperationName)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
