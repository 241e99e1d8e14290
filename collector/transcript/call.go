package transcript

import (
	"strings"

	"github.com/ctxaudit/ctxaudit/collector/forensics"
	"github.com/ctxaudit/ctxaudit/collector/internal/jsonscan"
	"github.com/ctxaudit/ctxaudit/schema"
)

// BuildCall turns a call a parser has paired with its result into its
// record, the same way for every format: forensics runs on in (whose Context
// is the text the model saw), a saved full output read while detecting is
// kept as SavedText, and the row gets its arguments, target and source file.
// call carries what the parser knows of the call itself (ids, tool, time,
// harness, model, place, turn, error, source line); its forensics and the
// fields named above are filled here.
func BuildCall(opts Options, detect func(forensics.Input) schema.Forensics, call schema.ToolCall, in forensics.Input) *Call {
	rec := &Call{ContextText: in.Context}
	if opts.ReadSaved != nil {
		in.ReadSaved = func(ref string) ([]byte, error) {
			b, err := opts.ReadSaved(ref)
			if err == nil {
				rec.SavedText = b
			}
			return b, err
		}
	}
	call.Arguments = string(in.Arguments)
	call.Target = Target(in.Arguments)
	call.Forensics = detect(in)
	call.SourceFile = opts.SourceFile
	rec.Call = call
	return rec
}

// TextBlocks is the text of a content value as the model saw it (see
// ContentText), without what else the content carried.
func TextBlocks(content []byte) string {
	text, _ := ContentText(content)
	return text
}

// ContentText is the text of a content value: a string itself, or the text
// blocks of an array of {type, text} blocks joined by newlines — and what
// the array carried besides text (images, documents, tool references),
// which no text size measures. Claude Code tool_result content and pi
// toolResult content both have this shape.
func ContentText(content []byte) (string, forensics.NonText) {
	if len(content) == 0 || jsonscan.IsNull(content) {
		return "", forensics.NonTextNone
	}
	if content[0] == '"' {
		return jsonscan.StringOr(content), forensics.NonTextNone
	}
	var b strings.Builder
	other := forensics.NonTextNone
	it := jsonscan.Array(content)
	for it.Next() {
		blk := it.Value()
		switch jsonscan.StringOr(jsonscan.Get(blk, "type")) {
		case "text":
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(jsonscan.StringOr(jsonscan.Get(blk, "text")))
		case "tool_reference":
			other = max(other, forensics.NonTextReference)
		default:
			other = forensics.NonTextMedia
		}
	}
	return b.String(), other
}
