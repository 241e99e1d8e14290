package forensics

import (
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
	m := decodeObject(raw)
	if m == nil {
		return request{}
	}
	var r request
	r.Offset = numberOf(m["offset"])
	r.Limit = numberOf(m["limit"])
	r.StartIndex = numberOf(m["start_index"])
	r.MaxLength = numberOf(m["max_length"])
	r.HeadLimit = numberOf(m["head_limit"])
	r.TailLines = numberOf(m["tail_lines"])
	r.StartLine = numberOf(m["start_line"])
	r.EndLine = numberOf(m["end_line"])
	r.MaxOutputTokens = numberOf(m["max_output_tokens"])
	for _, k := range [...]string{"page", "per_page", "page_size", "cursor", "pageToken", "page_token"} {
		if v, ok := m[k]; ok && v != nil {
			r.PageAsked = true
		}
	}
	for _, k := range [...]string{"file_path", "path", "filePath", "absolute_path", "url"} {
		if s := stringOf(m[k]); s != "" {
			r.Target = s
			break
		}
	}
	return r
}

// asksForPart reports whether the call restricted its own output in any way.
func (r request) asksForPart() bool {
	return r.Offset.N > 0 || r.Limit.Known || r.StartIndex.N > 0 || r.MaxLength.Known ||
		r.HeadLimit.Known || r.TailLines.Known || r.StartLine.Known || r.EndLine.Known ||
		r.MaxOutputTokens.Known || r.PageAsked
}
