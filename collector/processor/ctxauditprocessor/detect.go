package ctxauditprocessor

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/ctxaudit/ctxaudit/collector/forensics"
	"github.com/ctxaudit/ctxaudit/collector/otelconv"
	"github.com/ctxaudit/ctxaudit/schema"
)

// detectInto runs truncation forensics on a tool result described only by
// telemetry attributes and writes the verdict back as ctxaudit.output.*
// attributes. Attributes the source set itself (exact figures from an
// instrumented harness) take precedence inside forensics.Detect.
func detectInto(attrs pcommon.Map, harness schema.Harness) schema.Forensics {
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
	// gen_ai.tool.call.result, when present, is what the model saw; without
	// it the text is unknown (its size, if reported, comes from the
	// ctxaudit.output.context.* attributes), never empty.
	if s, ok := raw[otelconv.AttrToolCallResult].(string); ok {
		in.Context = s
	} else if _, ok := raw[otelconv.AttrToolCallResult]; !ok {
		in.ContextUnavailable = true
	}
	f := forensics.Detect(in)
	if in.ContextUnavailable && f.Kind == schema.KindNone && !reportsVerdict(raw) {
		// Nothing matched because there was no text to match: whether the
		// output was cut is unknown, not "none".
		f.Kind = schema.KindUnknown
	}
	otelconv.PutForensics(attrs, &f)
	if _, ok := attrs.Get(otelconv.AttrSource); !ok {
		attrs.PutStr(otelconv.AttrSource, string(harness))
	}
	return f
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
