package forensics

import (
	"strings"

	"github.com/ctxaudit/ctxaudit/schema"
)

// ccResult is the part of Claude Code's toolUseResult the rules read
// (transcript-formats.md §1.4). It is decoded leniently: a field of an
// unexpected type is treated as absent.
type ccResult struct {
	// Read
	File struct {
		Path                            string
		NumLines, StartLine, TotalLines schema.Count
	}
	// Grep
	Mode                        string
	Content                     *string
	NumLines, NumFiles          schema.Count
	AppliedLimit, AppliedOffset schema.Count
	// Glob
	Truncated bool
	// Bash
	Stdout, Stderr      string
	PersistedOutputPath string
	PersistedOutputSize schema.Count
	// WebFetch
	Bytes schema.Count
}

// claudeResult decodes toolUseResult once per call.
func (s *scan) claudeResult() *ccResult {
	if s.cc != nil {
		return s.cc
	}
	s.cc = &ccResult{}
	m := decodeObject(s.in.ToolUseResult)
	if m == nil {
		return s.cc
	}
	r := s.cc
	if f := objectOf(m["file"]); f != nil {
		r.File.Path = stringOf(f["filePath"])
		r.File.NumLines = numberOf(f["numLines"])
		r.File.StartLine = numberOf(f["startLine"])
		r.File.TotalLines = numberOf(f["totalLines"])
	}
	r.Mode = stringOf(m["mode"])
	if c, ok := m["content"].(string); ok {
		r.Content = &c
	}
	r.NumLines = numberOf(m["numLines"])
	r.NumFiles = numberOf(m["numFiles"])
	r.AppliedLimit = numberOf(m["appliedLimit"])
	r.AppliedOffset = numberOf(m["appliedOffset"])
	r.Truncated, _ = boolOf(m["truncated"])
	r.Stdout = stringOf(m["stdout"])
	r.Stderr = stringOf(m["stderr"])
	r.PersistedOutputPath = stringOf(m["persistedOutputPath"])
	r.PersistedOutputSize = numberOf(m["persistedOutputSize"])
	r.Bytes = numberOf(m["bytes"])
	return r
}

// collectClaudeOriginals adds what toolUseResult knows of the complete
// output: Grep's content, Bash's stdout/stderr or persisted size, WebFetch's
// page bytes. Read's file content is not the tool output (the model sees it
// numbered), so Read is judged by line counts in ccReadFile instead.
func collectClaudeOriginals(s *scan) {
	if len(s.in.ToolUseResult) == 0 {
		return
	}
	r := s.claudeResult()
	switch {
	case r.Content != nil && r.Mode == "content":
		s.orig.addText(rankMetadata, *r.Content)
	case r.PersistedOutputSize.Known:
		s.orig.add(rankMetadata, schema.Sizes{Bytes: r.PersistedOutputSize})
	case r.Stdout != "" || r.Stderr != "":
		out := r.Stdout
		if r.Stdout != "" && r.Stderr != "" {
			out += "\n" + r.Stderr
		} else if r.Stderr != "" {
			out = r.Stderr
		}
		// A stdout that carries the harness's own notice is the cut text, not the original.
		if !strings.Contains(out, " lines truncated] ...") && !strings.Contains(out, " characters truncated] ...") {
			s.orig.addText(rankMetadata, out)
		}
	case r.Bytes.Known:
		s.orig.add(rankMetadata, schema.Sizes{Bytes: r.Bytes})
	}
}
