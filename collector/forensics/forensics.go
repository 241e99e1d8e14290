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
	// NonText says the result's content carried blocks besides text (see
	// NonText): then Context is only part of what the model saw, and its
	// sizes are not the context's.
	NonText NonText
	IsError bool

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
	// A Codex copy at its 1 MiB cap is taken only as a lower bound.
	OriginalText *string
	// ReadSaved returns the content of a saved full output named by a notice
	// (a path as written in the notice). Nil means saved files are not readable.
	ReadSaved func(ref string) ([]byte, error)
}

// NonText is what a tool result's content carried besides text blocks.
// Sizes count text (docs/design.md §3.3); an image, a document or a tool
// reference entered the model's context in a form no text size measures, so
// a result that carried one has an unknown context, never the size of its
// text alone — an image read is not "0 bytes, complete".
type NonText uint8

const (
	// NonTextNone: the content was text only (or a string).
	NonTextNone NonText = iota
	// NonTextReference: besides text, only tool_reference blocks — names of
	// tools whose definitions the model API loads. Nothing of a tool's
	// output is in them to cut, so they leave the verdict to the text.
	NonTextReference
	// NonTextMedia: images, documents or blocks of a type not known (the
	// most opaque: a content with media and references is NonTextMedia). A
	// harness may have resized or re-encoded them, which no text shows, so
	// a result nothing else shows to be cut has kind unknown, not none.
	NonTextMedia
)

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
				Context:  measuredContext(&in),
				Kind:     schema.KindUnknown,
				Strategy: schema.StrategyNone,
				Detector: "forensics.internal_error",
			}
		}
	}()
	return detect(&in)
}

// measuredContext is the context's sizes when the text is all the model saw
// of the result, and unknown otherwise.
func measuredContext(in *Input) schema.Sizes {
	if in.NonText != NonTextNone || (in.Context == "" && in.ContextUnavailable) {
		return schema.Sizes{}
	}
	return Measure(in.Context)
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
