package forensics

import (
	"strings"

	"github.com/ctxaudit/ctxaudit/collector/internal/jsonscan"
	"github.com/ctxaudit/ctxaudit/schema"
)

// request is what the call itself asked for, read from its arguments. A call
// that asked for part of its target and got that part is a partial view by
// request, not a truncation (DESIGN §4), so these fields decide between the two.
type request struct {
	// Offset and Limit are line-based (Claude Code Read, pi read, OpenCode read).
	Offset, Limit schema.Count
	// StartIndex and MaxLength are character-based (MCP fetch).
	StartIndex, MaxLength schema.Count
	// HeadLimit is Claude Code Grep's head_limit (results).
	HeadLimit schema.Count
	// TailLines is GitHub MCP get_job_logs' tail_lines.
	TailLines schema.Count
	// StartLine and EndLine are Gemini CLI read_file's line window.
	StartLine, EndLine schema.Count
	// MaxOutputTokens is Codex exec_command's explicit output budget.
	MaxOutputTokens schema.Count
	// PageAsked: the call named a page, cursor or page size itself.
	PageAsked bool
	// Target is the file path or URL the call read.
	Target string
}

// parseRequest reads the arguments JSON; malformed or absent arguments yield
// an empty request (the call asked for everything).
func parseRequest(raw []byte) request {
	o := objectIn(raw)
	if o == nil {
		return request{}
	}
	var v [len(requestKeys)][]byte
	o.fields(requestKeys[:], v[:])
	var r request
	r.Offset = countIn(v[reqOffset])
	r.Limit = countIn(v[reqLimit])
	r.StartIndex = countIn(v[reqStartIndex])
	r.MaxLength = countIn(v[reqMaxLength])
	r.HeadLimit = countIn(v[reqHeadLimit])
	r.TailLines = countIn(v[reqTailLines])
	r.StartLine = countIn(v[reqStartLine])
	r.EndLine = countIn(v[reqEndLine])
	r.MaxOutputTokens = countIn(v[reqMaxOutputTokens])
	for _, p := range v[reqPage:reqTarget] {
		if !jsonscan.IsNull(p) {
			r.PageAsked = true
		}
	}
	for _, t := range v[reqTarget:] {
		if s := stringOr(t); s != "" {
			r.Target = s
			break
		}
	}
	return r
}

// requestKeys are the argument members parseRequest reads, in the order of
// the req constants: the counts, then the page keys, then the target keys
// in order of preference.
var requestKeys = [...]string{
	"offset", "limit", "start_index", "max_length", "head_limit", "tail_lines",
	"start_line", "end_line", "max_output_tokens",
	"page", "per_page", "page_size", "cursor", "pageToken", "page_token",
	"file_path", "path", "filePath", "absolute_path", "url",
}

const (
	reqOffset = iota
	reqLimit
	reqStartIndex
	reqMaxLength
	reqHeadLimit
	reqTailLines
	reqStartLine
	reqEndLine
	reqMaxOutputTokens
	reqPage                 // the first of six page keys
	reqTarget = reqPage + 6 // the first of the target keys, to the end
)

// asksForPart reports whether the call restricted its own output in any way.
func (r request) asksForPart() bool {
	return r.Offset.N > 0 || r.Limit.Known || r.StartIndex.N > 0 || r.MaxLength.Known ||
		r.HeadLimit.Known || r.TailLines.Known || r.StartLine.Known || r.EndLine.Known ||
		r.MaxOutputTokens.Known || r.PageAsked
}

// refetches reports whether the call continues an earlier one by fetching
// its source again instead of reading a saved copy, so that its piece may
// come from another version of the page than the pieces before it: Claude
// Code WebFetch with an offset, and an MCP fetch with a start_index.
func refetches(s *scan, detector string) bool {
	switch {
	case s.in.Tool == "WebFetch" && (s.in.Harness == schema.HarnessClaudeCode || s.in.Harness == schema.HarnessGeneric || s.in.Harness == ""):
		return s.req.Offset.N > 0
	case strings.HasPrefix(detector, "mcp.fetch"):
		return s.req.StartIndex.N > 0
	}
	return false
}
