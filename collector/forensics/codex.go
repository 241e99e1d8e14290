package forensics

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	"github.com/ctxaudit/ctxaudit/collector/internal/jsonscan"
	"github.com/ctxaudit/ctxaudit/schema"
)

// Codex CLI facts (transcript-formats.md §2). Codex has changed its
// truncation format at least three times; every generation's notice is
// recognised regardless of version, because rollouts of all ages get ingested.
//
// codexCaps: the 2025 line-based formatter cut at 10 KiB / 256 lines. The
// 0.60.1 fixture holds a 13,585-char output uncut, so by 0.60 that cap no
// longer applied to shell output.
var codexCaps = []capFact{
	{unit: schema.UnitBytes, n: 10240, reason: "cap_bytes", versions: versionRange{Max: "0.60.0"}},
	{unit: schema.UnitLines, n: 256, reason: "cap_lines", versions: versionRange{Max: "0.60.0"}},
}

// codexExecOutputMaxBytes is the most of a command's output Codex keeps
// (EXEC_OUTPUT_MAX_BYTES in codex-rs exec.rs, the first 1 MiB; unified exec
// keeps head and tail within the same 1 MiB). exec_command_end's
// aggregated_output is that copy, so one of this size or more is where the
// output starts (or its two ends), not all of it.
const codexExecOutputMaxBytes = 1 << 20

var (
	cxWrapperRe      = regexp.MustCompile(`\A(?:Exit code: (-?\d+)\nWall time: ([\d.]+) seconds\n(?:Total output lines: (\d+)\n)?|(?:Chunk ID: [^\n]+\n)?Wall time: ([\d.]+) seconds\n(?:Process exited with code (-?\d+)\n)?(?:Process running with session ID [^\n]+\n)?(?:Original token count: (\d+)\n)?)Output:\n`)
	cxTotalLinesRe   = regexp.MustCompile(`\ATotal output lines: (\d+)\n`)
	cxOmittedLinesRe = regexp.MustCompile(`\n\[\.\.\. omitted (\d+) of (\d+) lines \.\.\.\]\n\n`)
	cxFitBytesRe     = regexp.MustCompile(`\n\[\.\.\. output truncated to fit (\d+) bytes \.\.\.\]\n`)
	cxWarnRe         = regexp.MustCompile(`\AWarning: truncated output \(original token count: (\d+)\)(?:\nTotal output lines: (\d+))?`)
	cxMidRe          = regexp.MustCompile(`\[?…(\d+) (tokens|chars|bytes) truncated…\]?`)
	cxOmittedItemsRe = regexp.MustCompile(`\[omitted (\d+) (?:text|audio|image) items \.\.\.\]`)
	cxTimeoutRe      = regexp.MustCompile(`\Acommand timed out after (\d+) milliseconds\n`)
)

// codexWrapper is the model-visible header Codex puts around shell output.
// It is not tool output: sizes are compared on the body after "Output:".
type codexWrapper struct {
	body string
	// totalLines is the freeform "Total output lines: T" header, present only
	// when truncation changed the line count.
	totalLines schema.Count
	// origTokens is unified exec's "Original token count: N"; its presence
	// alone does not mean the body was cut.
	origTokens schema.Count
	// exitCode is the process's exit status as the header states it
	// (freeform "Exit code: N", unified exec "Process exited with code N",
	// structured metadata.exit_code); exitKnown is false when the header
	// states none (a unified exec process still running, a header without
	// it).
	exitCode  int64
	exitKnown bool
}

// CodexExitCode is the exit status Codex's wrapper around a shell output
// states: the freeform "Exit code: N" header line, unified exec's "Process
// exited with code N" header line (both before "Output:"), or the structured
// form's metadata.exit_code. ok is false when the text has no such wrapper or
// the wrapper states no status (a process still running): an "Exit code: N"
// in the output itself, or in any other tool's text, is the tool's content,
// not Codex's word on how the call ended.
func CodexExitCode(text string) (code int64, ok bool) {
	w, ok := parseCodexWrapper(text)
	if !ok || !w.exitKnown {
		return 0, false
	}
	return w.exitCode, true
}

// parseCodexWrapper strips the freeform, unified-exec or structured JSON
// wrapper from a Codex function output.
func parseCodexWrapper(text string) (codexWrapper, bool) {
	switch {
	case strings.HasPrefix(text, "Exit code: "), strings.HasPrefix(text, "Wall time: "), strings.HasPrefix(text, "Chunk ID: "):
		m := cxWrapperRe.FindStringSubmatchIndex(head(text, 1024))
		if m == nil {
			return codexWrapper{}, false
		}
		w := codexWrapper{
			body:       text[m[1]:],
			totalLines: atoi(group(text, m, 3)),
			origTokens: atoi(group(text, m, 6)),
		}
		code := group(text, m, 1)
		if code == "" {
			code = group(text, m, 5)
		}
		if code != "" {
			if n, err := strconv.ParseInt(code, 10, 64); err == nil {
				w.exitCode, w.exitKnown = n, true
			}
		}
		return w, true
	case strings.HasPrefix(text, `{"output":`):
		// Structured shell output: {"output": "...", "metadata": {...}}.
		var v struct {
			Output   *string         `json:"output"`
			Metadata json.RawMessage `json:"metadata"`
		}
		if json.Unmarshal([]byte(text), &v) != nil || v.Output == nil || len(v.Metadata) == 0 {
			return codexWrapper{}, false
		}
		w := codexWrapper{body: *v.Output}
		w.exitCode, w.exitKnown = jsonscan.Int(jsonscan.Get(v.Metadata, "exit_code"))
		return w, true
	}
	return codexWrapper{}, false
}

var codexRules = []rule{
	{name: "codex.warning_truncated", anchor: anchorTruncated, match: cxWarning},
	{name: "codex.omitted_lines", anchor: anchorOmitted, match: cxOmittedLines},
	{name: "codex.fit_bytes", anchor: anchorTruncated, match: cxFitBytes},
	{name: "codex.mid_truncated", anchor: anchorTruncated, match: cxMid},
	{name: "codex.omitted_items", anchor: anchorOmitted, match: cxOmittedItems},
	{name: "codex.original_token_count", match: cxOriginalTokens},
	{name: "codex.total_output_lines", match: cxTotalLinesOnly},
	{name: "codex.timeout", match: cxTimeout},
}

// cxTotalLines is the "Total output lines" figure from the wrapper or from
// the head of the body (the 2025 format put it in the body).
func cxTotalLines(s *scan) schema.Count {
	if s.codex.totalLines.Known {
		return s.codex.totalLines
	}
	if m := cxTotalLinesRe.FindStringSubmatch(head(s.bodyText, 64)); m != nil {
		return atoi(m[1])
	}
	return schema.Unknown
}

// cxWarning: X7, the current formatter's header with the original token
// count, usually with the line total and a middle "…N tokens truncated…".
func cxWarning(s *scan, fd *finding) bool {
	if !strings.HasPrefix(s.bodyText, "Warning: truncated output") {
		return false
	}
	m := cxWarnRe.FindStringSubmatchIndex(head(s.bodyText, 256))
	if m == nil {
		return false
	}
	tokens, lines := atoi(group(s.bodyText, m, 1)), atoi(group(s.bodyText, m, 2))
	reason := "cap_tokens"
	if mm := s.find(s.bodyText, anchorTruncated, " truncated…", cxMidRe, 32, 4); mm != nil {
		reason = cxReason(group(s.bodyText, mm, 2))
	}
	fd.cut(schema.StrategyHeadTail, reason, s.bodyText[m[0]:m[1]])
	fd.disclose(true, false, false)
	fd.show(schema.Unknown, schema.Unknown, schema.UnitTokens, tokens)
	fd.claims(schema.UnitTokens, tokens)
	s.orig.add(rankMarker, schema.Sizes{Lines: lines})
	cxAskedBudget(s, fd)
	return true
}

func cxReason(unit string) string {
	switch unit {
	case "chars":
		return "cap_chars"
	case "bytes":
		return "cap_bytes"
	}
	return "cap_tokens"
}

// cxOmittedLines: X1, the 2025 line-based head+tail cut.
func cxOmittedLines(s *scan, fd *finding) bool {
	m := s.find(s.bodyText, anchorOmitted, "[... omitted ", cxOmittedLinesRe, 1, 64)
	if m == nil {
		return false
	}
	total := atoi(group(s.bodyText, m, 2))
	if h := cxTotalLines(s); h.Known && total.Known && h.N != total.N {
		return false // a quoted notice, not this output's
	}
	fd.cut(schema.StrategyHeadTail, "cap_lines", strings.TrimSpace(s.bodyText[m[0]:m[1]]))
	fd.disclose(true, false, false)
	fd.show(schema.Unknown, schema.Unknown, schema.UnitLines, total)
	fd.claims(schema.UnitLines, total)
	fd.keepsAround(s.bodyText, m[0], m[1], schema.UnitLines)
	return true
}

// cxFitBytes: X2, the byte-only head cut of the same era.
func cxFitBytes(s *scan, fd *finding) bool {
	m := s.find(s.bodyText, anchorTruncated, "[... output truncated to fit ", cxFitBytesRe, 1, 64)
	if m == nil {
		return false
	}
	total := cxTotalLines(s)
	fd.cut(schema.StrategyHead, "cap_bytes", strings.TrimSpace(s.bodyText[m[0]:m[1]]))
	fd.disclose(total.Known, true, false)
	kept := s.bodyText[:m[0]]
	if h := cxTotalLinesRe.FindStringIndex(kept); h != nil {
		kept = strings.TrimPrefix(kept[h[1]:], "\n")
	}
	fd.show(schema.Known(1), schema.KnownInt(countLines(kept)), schema.UnitLines, total)
	fd.claims(schema.UnitLines, total)
	return true
}

// cxMid: X4–X6, a middle cut by token, char or byte budget.
func cxMid(s *scan, fd *finding) bool {
	m := s.find(s.bodyText, anchorTruncated, " truncated…", cxMidRe, 32, 4)
	if m == nil {
		return false
	}
	removed, unit := atoi(group(s.bodyText, m, 1)), group(s.bodyText, m, 2)
	fd.cut(schema.StrategyHeadTail, cxReason(unit), s.bodyText[m[0]:m[1]])
	fd.disclose(true, false, false)
	body := s.bodyText
	s.orig.add(rankMarker, schema.Sizes{Lines: cxTotalLines(s)})
	switch unit {
	case "tokens":
		kept := estimateTokens(uint64(len(body) - (m[1] - m[0])))
		fd.Shown.Unit = schema.UnitTokens
		fd.claims(schema.UnitTokens, addCounts(schema.Known(kept), removed))
	case "chars":
		fd.Shown.Unit = schema.UnitChars
		fd.claims(schema.UnitChars, addCounts(keptChars(body, m[0], m[1]), removed))
		fd.keepsAround(body, m[0], m[1], schema.UnitChars)
	case "bytes":
		fd.Shown.Unit = schema.UnitBytes
		fd.claims(schema.UnitBytes, addCounts(schema.KnownInt(len(body)-(m[1]-m[0])), removed))
		fd.keepsAround(body, m[0], m[1], schema.UnitBytes)
	}
	if o := s.codex.origTokens; o.Known {
		s.orig.add(rankMarker, schema.Sizes{Tokens: o})
	}
	fd.totalIsOriginal = true
	cxAskedBudget(s, fd)
	return true
}

// cxAskedBudget: exec_command's max_output_tokens is the call's own budget,
// like fetch's max_length. A cut to a budget the call set is a partial view
// by request; Shown and Total stay recorded.
func cxAskedBudget(s *scan, fd *finding) {
	if s.req.MaxOutputTokens.Known {
		fd.byRequest()
		fd.complete = false // the original is still the larger, cut one
	}
}

// cxOmittedItems: X3, content items over budget.
func cxOmittedItems(s *scan, fd *finding) bool {
	m := s.find(s.bodyText, anchorOmitted, "[omitted ", cxOmittedItemsRe, 0, 64)
	if m == nil {
		return false
	}
	fd.cut(schema.StrategyHead, "cap_items", s.bodyText[m[0]:m[1]])
	fd.disclose(true, false, false)
	fd.Shown.Unit = schema.UnitItems
	return true
}

// cxOriginalTokens: unified exec's header. A count the body reaches means
// nothing was cut; a larger one, with no middle notice, still tells the
// model the original size.
func cxOriginalTokens(s *scan, fd *finding) bool {
	o := s.codex.origTokens
	if !o.Known {
		return false
	}
	s.orig.add(rankMarker, schema.Sizes{Tokens: o})
	if !exceeds(o, s.body.Tokens, 8, 2) {
		fd.Kind = schema.KindNone
		fd.complete = true
		fd.confirmedBy = schema.SourceMarker
		return true
	}
	fd.cut(schema.StrategyHeadTail, "cap_tokens", "Original token count: "+o.String())
	fd.disclose(true, false, false)
	fd.show(schema.Unknown, schema.Unknown, schema.UnitTokens, o)
	return true
}

// cxTotalLinesOnly: the freeform header is only written when truncation
// changed the line count, so a header above the body's lines is a cut.
func cxTotalLinesOnly(s *scan, fd *finding) bool {
	total := cxTotalLines(s)
	if !total.Known || !exceeds(total, s.body.Lines, 1, 0) {
		return false
	}
	fd.cut(schema.StrategyHeadTail, "cap_lines", "Total output lines: "+total.String())
	fd.disclose(true, false, false)
	fd.show(schema.Unknown, schema.Unknown, schema.UnitLines, total)
	fd.claims(schema.UnitLines, total)
	return true
}

// cxTimeout: the command was killed; its output is whatever it wrote first.
func cxTimeout(s *scan, fd *finding) bool {
	if !strings.HasPrefix(s.bodyText, "command timed out after ") {
		return false
	}
	m := cxTimeoutRe.FindStringSubmatchIndex(head(s.bodyText, 128))
	if m == nil {
		return false
	}
	fd.cut(schema.StrategyHead, "timeout", strings.TrimSpace(s.bodyText[m[0]:m[1]]))
	fd.disclose(false, true, false)
	return true
}
