// Package parsers is the registry of transcript formats: the one place that
// maps a format to its parser, for `ctxaudit ingest` and the transcript
// receiver alike. (It sits beside package transcript rather than in it
// because the parsers themselves build on transcript.)
package parsers

import (
	"fmt"

	"github.com/ctxaudit/ctxaudit/collector/transcript"
	"github.com/ctxaudit/ctxaudit/collector/transcript/claudecode"
	"github.com/ctxaudit/ctxaudit/collector/transcript/codex"
	"github.com/ctxaudit/ctxaudit/collector/transcript/pi"
)

// New returns a parser of format f.
func New(f transcript.Format, opts transcript.Options) (transcript.Parser, error) {
	switch f {
	case transcript.FormatClaudeCode:
		return claudecode.New(opts), nil
	case transcript.FormatCodex:
		return codex.New(opts), nil
	case transcript.FormatPi:
		return pi.New(opts), nil
	}
	return nil, fmt.Errorf("%w %q", transcript.ErrUnknownFormat, f)
}
