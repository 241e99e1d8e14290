package forensics

import (
	"sync"

	"github.com/ctxaudit/ctxaudit/schema"
)

// Input is one tool result as a source recorded it.
type Input struct {
	Harness        schema.Harness
	HarnessVersion string
	Tool           string
	// Arguments is the call's input as raw JSON (may be nil).
	Arguments []byte
	// Context is the text the model saw for this result.
	Context string
	// ContextUnavailable says the source did not record the text the model
	// saw (e.g. a claude_code.tool_result log event, which carries sizes
	// only), so an empty Context means "not known" rather than "empty".
	ContextUnavailable bool
	IsError            bool

	// ToolUseResult is Claude Code's raw `toolUseResult` JSON (object or string), if any.
	ToolUseResult []byte
	// Details is pi's raw `details` JSON of a toolResult, if any.
	Details []byte
	// Metadata is structured metadata a tool server or SDK attached to the
	// result outside the model-visible text (e.g. MCP structuredContent or
	// _meta), in the generic shape this package reads from JSON results
	// (truncated, original_size_bytes, shown, next_page, …). The model did not
	// see it, so a truncation it reports without a notice in Context is silent.
	Metadata []byte
	// Attributes are OTel span/log attributes (gen_ai.*, ctxaudit.output.*,
	// tool_result_size_bytes, …) with their native Go values.
	Attributes map[string]any
	// OriginalText is the complete output when the source carries it verbatim
	// (e.g. Codex exec_command_end aggregated output); nil when it does not.
	OriginalText *string
	// ReadSaved returns the content of a saved full output named by a notice
	// (a path as written in the notice). Nil means saved files are not readable.
	ReadSaved func(ref string) ([]byte, error)
}

// Detect runs truncation forensics on one tool result. It never panics and
// never fails: what cannot be determined is reported as unknown.
func Detect(in Input) (f schema.Forensics) {
	// The rules are written not to panic and FuzzDetect checks that. This
	// guard exists because a collector must not crash on one odd transcript
	// line: a bug here degrades one verdict to "unknown", nothing more.
	defer func() {
		if recover() != nil {
			f = schema.Forensics{
				Original: schema.Original{Source: schema.SourceUnknown},
				Context:  Measure(in.Context),
				Kind:     schema.KindUnknown,
				Strategy: schema.StrategyNone,
				Detector: "forensics.internal_error",
			}
		}
	}()
	return detect(&in)
}

// detection is the working state of one detect call: its input, the scan
// the rules share and the finding they fill. The rules are called through
// function values, so escape analysis cannot keep these on the stack: they
// were about 1.5 KB in 4–8 allocations per call (BenchmarkDetectNoMarker),
// a call the collector makes for every tool output. They are reused instead;
// nothing of them outlives the call (the verdict is a copy).
type detection struct {
	in   Input
	scan scan
	fd   finding
}

// detections holds detection states between calls; release clears what
// refers to a caller's data, so a pooled state keeps no output alive.
var detections = sync.Pool{New: func() any { return new(detection) }}

func (d *detection) release() {
	d.in, d.fd = Input{}, finding{}
	d.scan.reset(nil)
	detections.Put(d)
}

// detect is Detect without the recover guard, so the fuzzer sees panics.
func detect(in *Input) schema.Forensics {
	d := detections.Get().(*detection)
	defer d.release()
	d.in = *in
	s := d.scan.start(&d.in)
	fd := &d.fd
	for _, r := range rulesFor(in.Harness) {
		if r.anchor != 0 && !s.has(r.anchor) {
			continue
		}
		if r.match(s, fd) {
			fd.matched = true
			if fd.Detector == "" {
				fd.Detector = r.name
			}
			break
		}
	}
	s.readSaved(fd)
	out := s.finalize(fd)
	out.RefetchedSource = refetches(s, out.Detector)
	applyAttributes(s, &out)
	return out
}
