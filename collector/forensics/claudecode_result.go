package forensics

import (
	"bytes"
	"strings"

	"github.com/ctxaudit/ctxaudit/collector/internal/jsonscan"
	"github.com/ctxaudit/ctxaudit/schema"
)

// ccResult is the part of Claude Code's toolUseResult the rules read
// (transcript-formats.md §1.4). It is read leniently: a field of an
// unexpected type is treated as absent. The texts (Grep's content, Bash's
// stdout and stderr) stay raw JSON until collectClaudeOriginals needs them,
// so a toolUseResult costs no allocation unless its text is measured.
type ccResult struct {
	// Type is "text", "image", "notebook", … for a Read.
	Type string
	// Read
	File struct {
		NumLines, StartLine, TotalLines schema.Count
		// An image's or a PDF's file size, the size of the file the
		// base64 member encodes, and an image's original and displayed
		// dimensions.
		OriginalSize                  schema.Count
		EncodedSize                   schema.Count
		OriginalWidth, OriginalHeight schema.Count
		DisplayWidth, DisplayHeight   schema.Count
	}
	// Grep
	Mode string
	// Content is the raw "content" member (Grep's matched lines; Read's
	// text lives in file.content and is not read).
	Content                     []byte
	NumLines, NumFiles          schema.Count
	AppliedLimit, AppliedOffset schema.Count
	// Glob
	Truncated bool
	// Bash: Stdout and Stderr are raw members.
	Stdout, Stderr      []byte
	PersistedOutputSize schema.Count
	// TimedOutAfterMs is set when the command outlived its timeout and
	// was moved to the background: stdout and stderr are what it had
	// written by then.
	TimedOutAfterMs schema.Count
	// WebFetch
	Bytes schema.Count
}

// ccResultKeys are the toolUseResult members ccResult reads, in the order
// of the ccKey constants.
var ccResultKeys = [...]string{
	"file", "mode", "content", "numLines", "numFiles", "appliedLimit", "appliedOffset",
	"truncated", "stdout", "stderr", "persistedOutputSize", "bytes", "type", "timedOutAfterMs",
}

const (
	ccKeyFile = iota
	ccKeyMode
	ccKeyContent
	ccKeyNumLines
	ccKeyNumFiles
	ccKeyAppliedLimit
	ccKeyAppliedOffset
	ccKeyTruncated
	ccKeyStdout
	ccKeyStderr
	ccKeyPersistedOutputSize
	ccKeyBytes
	ccKeyType
	ccKeyTimedOutAfterMs
)

var (
	ccFileKeys      = [...]string{"numLines", "startLine", "totalLines", "originalSize", "dimensions", "base64"}
	ccDimensionKeys = [...]string{"originalWidth", "originalHeight", "displayWidth", "displayHeight"}
)

// claudeResult reads toolUseResult once per call.
func (s *scan) claudeResult() *ccResult {
	r := &s.cc
	if s.ccDone {
		return r
	}
	s.ccDone = true
	o := objectIn(s.in.ToolUseResult)
	if o == nil {
		return r
	}
	var v [len(ccResultKeys)][]byte
	o.fields(ccResultKeys[:], v[:])
	if f := member(v[ccKeyFile]); f != nil {
		var fv [len(ccFileKeys)][]byte
		f.fields(ccFileKeys[:], fv[:])
		r.File.NumLines = countIn(fv[0])
		r.File.StartLine = countIn(fv[1])
		r.File.TotalLines = countIn(fv[2])
		r.File.OriginalSize = countIn(fv[3])
		var d [len(ccDimensionKeys)][]byte
		member(fv[4]).fields(ccDimensionKeys[:], d[:])
		r.File.OriginalWidth, r.File.OriginalHeight = countIn(d[0]), countIn(d[1])
		r.File.DisplayWidth, r.File.DisplayHeight = countIn(d[2]), countIn(d[3])
		r.File.EncodedSize = base64Size(fv[5])
	}
	r.Type = stringOr(v[ccKeyType])
	r.Mode = stringOr(v[ccKeyMode])
	if jsonscan.IsString(v[ccKeyContent]) {
		r.Content = v[ccKeyContent]
	}
	r.NumLines = countIn(v[ccKeyNumLines])
	r.NumFiles = countIn(v[ccKeyNumFiles])
	r.AppliedLimit = countIn(v[ccKeyAppliedLimit])
	r.AppliedOffset = countIn(v[ccKeyAppliedOffset])
	r.Truncated, _ = boolIn(v[ccKeyTruncated])
	if jsonscan.IsString(v[ccKeyStdout]) {
		r.Stdout = v[ccKeyStdout]
	}
	if jsonscan.IsString(v[ccKeyStderr]) {
		r.Stderr = v[ccKeyStderr]
	}
	r.PersistedOutputSize = countIn(v[ccKeyPersistedOutputSize])
	r.Bytes = countIn(v[ccKeyBytes])
	r.TimedOutAfterMs = countIn(v[ccKeyTimedOutAfterMs])
	return r
}

// collectClaudeOriginals adds what toolUseResult knows of the complete
// output: Grep's content (a lower bound when it is a page), Bash's
// stdout/stderr or persisted size. Read's file content is not the tool
// output (the model sees it numbered), so Read is judged by line counts in
// ccReadFile instead.
//
// The texts are measured in their JSON form (jsonscan.Stats), not decoded:
// a Grep content member is routinely 100 KB.
func collectClaudeOriginals(s *scan) {
	if len(s.in.ToolUseResult) == 0 {
		return
	}
	r := s.claudeResult()
	// A raw string longer than "" decodes to a non-empty text: every
	// escape and every invalid byte decodes to at least one byte.
	hasStdout, hasStderr := len(r.Stdout) > 2, len(r.Stderr) > 2
	switch {
	case r.Content != nil && r.Mode == "content":
		sz := rawTextSizes(r.Content)
		if !ccGrepPaged(s, r) {
			s.orig.add(rankMetadata, sz)
		} else if sz.Bytes.N > 0 {
			// Grep builds content from the lines its head limit kept: a
			// page of the output, which was at least that large.
			s.orig.addAtLeast(rankMetadata, sz)
		}
	case r.PersistedOutputSize.Known:
		s.orig.add(rankMetadata, schema.Sizes{Bytes: r.PersistedOutputSize})
	case hasStdout || hasStderr:
		// A stdout that carries the harness's own notice is the cut text, not the original.
		for _, lit := range [...]string{" lines truncated] ...", " characters truncated] ..."} {
			if rawTextContains(r.Stdout, lit) || rawTextContains(r.Stderr, lit) {
				return
			}
		}
		// The original is stdout, stderr, or both joined by a newline.
		var st jsonscan.StringStats
		switch {
		case hasStdout && hasStderr:
			a, _ := jsonscan.Stats(r.Stdout)
			b, _ := jsonscan.Stats(r.Stderr)
			st = jsonscan.StringStats{
				Bytes:         a.Bytes + 1 + b.Bytes,
				Runes:         a.Runes + 1 + b.Runes,
				Newlines:      a.Newlines + 1 + b.Newlines,
				EndsInNewline: b.EndsInNewline,
			}
		case hasStdout:
			st, _ = jsonscan.Stats(r.Stdout)
		default:
			st, _ = jsonscan.Stats(r.Stderr)
		}
		if r.TimedOutAfterMs.Known {
			// The command was still running: what it wrote so far is
			// where its output starts, not all of it.
			s.orig.addAtLeast(rankMetadata, statsSizes(st))
			return
		}
		s.orig.add(rankMetadata, statsSizes(st))
	}
	// WebFetch's bytes count the HTTP body, not the page text the harness
	// cuts and summarises: no size of the original (ccWebFetch).
}

// ccGrepPaged reports whether a Grep content-mode result is a page of the
// search's output rather than all of it: Claude Code's applyHeadLimit sets
// appliedLimit only when it cut, appliedOffset only when the call skipped
// lines, and the text then ends in "[Showing results with pagination = …]".
// Either way toolUseResult.content holds the lines of the page alone.
func ccGrepPaged(s *scan, r *ccResult) bool {
	if r.AppliedLimit.Known || r.AppliedOffset.N > 0 {
		return true
	}
	return strings.HasSuffix(strings.TrimSpace(s.text), "]") && ccGrepPageRe.MatchString(tail(s.text, 512))
}

// rawTextSizes measures the text a raw JSON string decodes to, as addText
// measures a decoded text. A value that is not a string has no sizes.
func rawTextSizes(v []byte) schema.Sizes {
	st, ok := jsonscan.Stats(v)
	if !ok {
		return schema.Sizes{}
	}
	return statsSizes(st)
}

// statsSizes are the sizes Measure gives a text, but tokens, which addText
// leaves to the resolution (an estimate, derived from the final bytes).
func statsSizes(st jsonscan.StringStats) schema.Sizes {
	lines := st.Newlines
	if st.Bytes > 0 && !st.EndsInNewline {
		lines++ // countLines: a final unterminated line counts
	}
	return schema.Sizes{
		Bytes: schema.KnownInt(st.Bytes),
		Chars: schema.KnownInt(st.Runes),
		Lines: schema.KnownInt(lines),
	}
}

// rawTextContains reports whether the text a raw JSON string (of a checked
// object) decodes to contains lit. lit must hold no backslash, quote or
// control character and start with a byte that cannot follow a backslash
// (the notices start with a space). Then lit found in the raw form is in
// the text: it cannot start inside an escape, and no escape starts inside
// it. Conversely the text can hold lit where the raw form does not only
// through a \u escape, so only raw strings with one are decoded to look.
func rawTextContains(v []byte, lit string) bool {
	if len(v) < 2 {
		return false
	}
	if bytes.Contains(v, []byte(lit)) {
		return true
	}
	if !bytes.Contains(v, []byte(`\u`)) {
		return false
	}
	return strings.Contains(stringOr(v), lit)
}

// base64Size is the number of bytes the JSON string raw encodes in standard
// base64, from its length alone (the data is not decoded), or unknown when
// raw is not such a string: escapes, or a length no encoding has.
func base64Size(raw []byte) schema.Count {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return schema.Unknown
	}
	data := raw[1 : len(raw)-1]
	if len(data)%4 != 0 || bytes.IndexByte(data, '\\') >= 0 {
		return schema.Unknown
	}
	pad := 0
	for pad < 2 && len(data) > pad && data[len(data)-1-pad] == '=' {
		pad++
	}
	return schema.Known(uint64(len(data)/4*3 - pad))
}
