package ctxauditprocessor

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/ctxaudit/ctxaudit/collector/forensics"
	"github.com/ctxaudit/ctxaudit/collector/otelconv"
	"github.com/ctxaudit/ctxaudit/schema"
)

// outputPrefix is the namespace of the figures and verdicts an instrumented
// harness reports (forensics.Attr*): the only attributes, besides the
// result itself, that forensics reads from Input.Attributes.
const outputPrefix = "ctxaudit.output."

// toolSpan is what detection reads from an execute_tool span, decoded in one
// pass over its attributes instead of one lookup (a scan of the map) per key
// and a copy of every attribute into a map[string]any. A key given twice
// counts as its last value, as pcommon.Map.AsRaw has it.
type toolSpan struct {
	source, tool, ccTool, args, ccArgs string
	errorType                          string
	harnessVersion, ccAppVersion       string
	isError, ccFailed                  bool
	result                             pcommon.Value
	hasResult                          bool
	// reported holds the ctxaudit.output.* attributes and a result that is
	// not a string, as raw values: forensics.Input.Attributes.
	reported map[string]any
}

func decodeToolSpan(attrs pcommon.Map) toolSpan {
	var t toolSpan
	str := func(v pcommon.Value) string {
		if v.Type() == pcommon.ValueTypeStr {
			return v.Str()
		}
		return ""
	}
	for k, v := range attrs.All() {
		if strings.HasPrefix(k, outputPrefix) {
			if t.reported == nil {
				t.reported = make(map[string]any, 4)
			}
			t.reported[k] = v.AsRaw()
			continue
		}
		switch k {
		case otelconv.AttrSource:
			t.source = str(v)
		case otelconv.AttrToolName:
			t.tool = str(v)
		case otelconv.ClaudeCodeToolName:
			t.ccTool = str(v)
		case otelconv.AttrToolCallArguments:
			t.args = str(v)
		case otelconv.ClaudeCodeToolInput:
			t.ccArgs = str(v)
		case otelconv.AttrErrorType:
			t.errorType = str(v)
		case otelconv.ClaudeCodeSuccess:
			t.ccFailed = otelconv.ReportsFailure(v)
		case otelconv.AttrHarnessVersion:
			t.harnessVersion = str(v)
		case otelconv.ClaudeCodeAppVersion:
			t.ccAppVersion = str(v)
		case otelconv.AttrIsError:
			t.isError = v.Type() == pcommon.ValueTypeBool && v.Bool()
		case otelconv.AttrToolCallResult:
			t.result, t.hasResult = v, true
		}
	}
	if t.hasResult && t.result.Type() != pcommon.ValueTypeStr {
		// A structured result is rendered as text by forensics from the
		// attributes; a string one is the Context itself (detect), read
		// from nowhere else, so most spans need no map at all.
		if t.reported == nil {
			t.reported = make(map[string]any, 1)
		}
		t.reported[otelconv.AttrToolCallResult] = t.result.AsRaw()
	}
	return t
}

// detectInto runs truncation forensics on a tool result described only by
// telemetry attributes and writes the verdict back as ctxaudit.output.*
// attributes (otelconv.PutVerdict). Attributes the source set itself (exact
// figures from an instrumented harness) take precedence inside
// forensics.Detect.
func detectInto(attrs pcommon.Map, harness schema.Harness) schema.Forensics {
	f, harness := detect(attrs, harness, false) // a log record has no status
	otelconv.PutVerdict(attrs, &f, harness)
	return f
}

// detect is detectInto without the writing: the verdict, and the harness it
// judged the call as (the span's ctxaudit.source, else harness). failed: the
// span's status says the call failed (otelconv.SpanFailed), which its
// attributes may not.
func detect(attrs pcommon.Map, harness schema.Harness, failed bool) (schema.Forensics, schema.Harness) {
	t := decodeToolSpan(attrs)
	if t.source != "" {
		harness = schema.Harness(t.source)
	}
	in := forensics.Input{
		Harness:        harness,
		HarnessVersion: firstNonEmpty(t.harnessVersion, t.ccAppVersion),
		Tool:           firstNonEmpty(t.tool, t.ccTool),
		IsError:        failed || t.errorType != "" || t.ccFailed || t.isError,
		Attributes:     t.reported,
	}
	if args := firstNonEmpty(t.args, t.ccArgs); args != "" {
		in.Arguments = []byte(args)
	}
	// gen_ai.tool.call.result, when present, is what the model saw; without
	// it the text is unknown (its size, if reported, comes from the
	// ctxaudit.output.context.* attributes), never empty.
	if !t.hasResult {
		in.ContextUnavailable = true
	} else if t.result.Type() == pcommon.ValueTypeStr {
		in.Context = t.result.Str()
	}
	f := forensics.Detect(in)
	if in.ContextUnavailable && f.Kind == schema.KindNone && !reportsVerdict(t.reported) {
		// Nothing matched because there was no text to match: whether the
		// output was cut is unknown, not "none".
		f.Kind = schema.KindUnknown
	}
	return f, harness
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// reportsVerdict: the source itself said whether the output was cut.
func reportsVerdict(raw map[string]any) bool {
	_, t := raw[forensics.AttrTruncated]
	_, k := raw[forensics.AttrTruncationKind]
	return t || k
}
