package forensics

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/ctxaudit/ctxaudit/schema"
)

// Claude Code facts (transcript-formats.md §1: CC-src 2.1.88, checked against
// real 2.0.58–2.1.22 transcripts). Sizes in notices are JavaScript string
// lengths, i.e. UTF-16 code units, which we record as chars. Two facts are
// not constants here because a record takes them from each output, never
// from the default: the <persisted-output> preview is the first 2,000 chars
// ("first 2KB"), and formatError keeps the first and last 5,000 chars.
const (
	// ccBashMaxChars is BASH_MAX_OUTPUT_LENGTH's default: the kept head.
	ccBashMaxChars = 30000
	// ccReadDefaultLines is Read's default limit when the call gives none.
	ccReadDefaultLines = 2000
	// ccGrepDefaultHeadLimit is Grep's head_limit when the call gives none.
	ccGrepDefaultHeadLimit = 250
	// ccWebFetchMaxChars: WebFetch hands at most this much of the page's
	// markdown to the secondary model whose digest the main model sees.
	ccWebFetchMaxChars = 100000
)

// ccVersionFacts is what changed between Claude Code releases: one row per
// range of versions, in version order. Wording that only a newer release
// prints needs no row (its rule simply never matches older output); a row
// is for a meaning that changed, such as what the absence of a notice says.
type ccVersionFacts struct {
	versions versionRange
	// webFetchNotes: WebFetch says, in a "[WebFetch note: …]" after its
	// answer, when it did not read the whole page, so an answer without
	// one covers the whole page. Before, it cut the page at
	// ccWebFetchMaxChars without a word.
	webFetchNotes bool
}

// claudeCodeVersions: 2.0.58–2.1.22 are the releases of the real
// transcripts in testdata/transcripts; 2.1.328 the first one seen with
// WebFetch notes. Between them nothing is known, so the older meaning holds.
var claudeCodeVersions = []ccVersionFacts{
	{versions: versionRange{Max: "2.1.328"}},
	{versions: versionRange{Min: "2.1.328"}, webFetchNotes: true},
}

// ccFacts returns the row for a version. An unknown version (empty) is in
// every range, so it gets the first, oldest row.
func ccFacts(version string) ccVersionFacts {
	for _, f := range claudeCodeVersions {
		if f.versions.contains(version) {
			return f
		}
	}
	return claudeCodeVersions[len(claudeCodeVersions)-1]
}

// ccBashCapSlack is how far above ccBashMaxChars a failure notice's claim
// (kept chars, the "Exit code N" line and separators, plus the dropped
// count) may lie and still be the cap: the failure path formats its error
// from the first ccBashMaxChars chars it received, so such a claim counts
// what was received, not what the command printed.
const ccBashCapSlack = 64

// claudeCodeCaps are caps at which an output without its notice is suspect.
var claudeCodeCaps = []capFact{
	{tools: []string{"Bash"}, unit: schema.UnitChars, n: ccBashMaxChars, reason: "cap_chars"},
	{tools: []string{"TaskOutput", "BashOutput"}, unit: schema.UnitChars, n: 32000, reason: "cap_chars"},
}

var (
	// ccPersistedRe is the header of a <persisted-output> preview; see
	// ccPersistedMatch for the rest.
	ccPersistedRe = regexp.MustCompile(`\A<persisted-output>\nOutput too large \((\d+(?:\.\d+)?(?:KB|MB|GB| bytes))\)\. Full output saved to: ([^\n]+)\n\nPreview \(first ([^)\n]+)\):\n`)
	// ccPersistedCapRe is the same header when the output passed the
	// persist limit (2.1.328: 64 MiB): the saved file holds only the first
	// part, so neither it nor the limit is the whole output's size.
	ccPersistedCapRe = regexp.MustCompile(`\A<persisted-output>\nOutput exceeded the (\d+(?:\.\d+)?(?:KB|MB|GB| bytes)) persist limit; only the first (?:\d+(?:\.\d+)?(?:KB|MB|GB| bytes)) were saved to: ([^\n]+)\n\nPreview \(first ([^)\n]+)\):\n`)
	ccMCPSavedRe     = regexp.MustCompile(`\AError: result \(([\d,]+) characters\) exceeds maximum allowed tokens\. Output has been saved to ([^\n]*?)\.\nFormat: ([^\n]*)\n`)
	ccMCPFailedRe    = regexp.MustCompile(`\AError: result \(([\d,]+) characters\) exceeds maximum allowed tokens\. Failed to save output to file: ([^\n]*?)\. (If this MCP server provides pagination[^\n]*)`)
	ccMCPTruncRe     = regexp.MustCompile(`\n\n\[OUTPUT TRUNCATED - exceeded (\d+) token limit\]\n\n(The tool output was truncated\.[^\n]*)`)
	ccBashLinesRe    = regexp.MustCompile(`\n\n\.\.\. \[(\d+) lines truncated\] \.\.\.`)
	ccCharsTruncRe   = regexp.MustCompile(`\.\.\. \[(\d+) characters truncated\] \.\.\.`)
	// The notice a notebook Read puts in place of a cell's outputs that
	// are too large (the harness lab's read-notebook-large-output).
	ccNotebookOutputsRe = regexp.MustCompile(`Outputs are too large to include\. (Use Bash with: cat <notebook_path> \| jq '\.cells\[\d+\]\.outputs')`)
	ccReadTokensRe      = regexp.MustCompile(`\A(?:File|Notebook) content \((\d+) tokens\) exceeds maximum allowed tokens \((\d+)\)\.(?: ([^\n]*))?`)
	ccReadSizeRe        = regexp.MustCompile(`\A(?:File|Notebook) content \((\d+(?:\.\d+)?(?:KB|MB|GB| bytes))\) exceeds maximum allowed size \((\d+(?:\.\d+)?(?:KB|MB|GB| bytes))\)\.(?: ([^\n]*))?`)
	ccEmptyRe           = regexp.MustCompile(`\A\(([^()\n]+) completed with no output\)\z`)
	ccGrepPageRe        = regexp.MustCompile(`\n\n\[Showing results with pagination = ([^\]\n]+)\]\s*\z`)
	ccGrepFilesRe       = regexp.MustCompile(`\AFound (\d+) files?(?: ((?:limit|offset): \d+(?:, offset: \d+)?))?\n`)
	ccLimitRe           = regexp.MustCompile(`limit: (\d+)`)
	ccOffsetRe          = regexp.MustCompile(`offset: (\d+)`)
	ccGlobTruncRe       = regexp.MustCompile(`\n?\((Results are truncated\. Consider using a more specific path or pattern\.)\)\s*\z`)
	ccTaskTruncRe       = regexp.MustCompile(`\A\[Truncated\. Full output: ([^\]\n]+)\]\n\n`)
	ccWebFetchRe        = regexp.MustCompile(`\n\n\[Content truncated due to length\.\.\.\]`)
	// ccWebFetchNoteRe is the note 2.1.328 appends to an answer that did not
	// read the whole page: total, the range read, the unread rest, and how
	// to read on.
	ccWebFetchNoteRe = regexp.MustCompile(`\[WebFetch note: this page's text is (\d+) characters long and the answer above covers only characters (\d+) to (\d+); the final (\d+) were not read(?: — (to read on, call WebFetch again with the same url and offset: (\d+)))?\.\]`)
	// ccWebFetchRangeRe is the same note's shorter form (2.1.328, when the
	// tool description explains reading on): where, and the next offset.
	ccWebFetchRangeRe = regexp.MustCompile(`\[WebFetch note: the answer above covers characters (\d+) to (\d+) of this page's (\d+) characters\. (Next offset: (\d+))\.\]`)
	// ccWebFetchRawRe is the header of 2.1.328's verbatim page text (for
	// callers that take the page itself): URL, HTTP status, content type,
	// the page text's length in chars, and what of it follows.
	ccWebFetchRawRe = regexp.MustCompile(`\AFetched (\S+)(?: from a non-preapproved source)? \(HTTP (\d{3})[^,\n]*, ([^,\n]+), (\d+) characters([^\n]*)\)\.`)
	ccRawFromRe     = regexp.MustCompile(`(?:shown|truncated to the first (\d+)) from character (\d+)`)
	ccRawFirstRe    = regexp.MustCompile(`, truncated to the first (\d+)`)
	ccRawUnreadRe   = regexp.MustCompile(`; the final (\d+) characters were not read|; the remaining (\d+) characters could not be summarized and were not read`)
	ccRawNextRe     = regexp.MustCompile(`to read on, call WebFetch again with the same url and offset: (\d+)`)
	// ccWebFetchPastEndRe: an offset at or past the end of the page text.
	ccWebFetchPastEndRe = regexp.MustCompile(`\ANothing left to read from offset (\d+): this page's text is (\d+) characters long\.`)
	// ccWebFetchStoredRe: the answer was made from a stored copy of the
	// page, whose retrieval time is the version of what was read.
	ccWebFetchStoredRe = regexp.MustCompile(`\[WebFetch note: this result comes from a stored copy of the page, retrieved from the site on (\d{4}-\d{2}-\d{2}) at (\d{2}:\d{2}) UTC`)
	ccAttachTruncRe    = regexp.MustCompile(`Note: The file ([^\n]+?) was too large and has been truncated to the first (\d+) lines\.`)
	// The Read notice of current builds, quoted verbatim in the issue; the
	// path may itself be elided with "…".
	ccPartialViewRe = regexp.MustCompile(`\[Truncated: PARTIAL view — ([^\n]*?): showing lines (\d+)-(\d+) of (\d+) total \((\d+) tokens, cap (\d+)\)\. ((?:Call|Use) [^\]\n]*?)\]`)
	ccReadLineRe    = regexp.MustCompile(`(?m)^ *(\d+)(?:→|\t)`)
	// A Bash command that outlived its timeout keeps running in the
	// background (2.1.328, the harness lab's bash-timeout).
	ccBashInBackgroundRe = regexp.MustCompile(`\ACommand running in background with ID: [^.\s]+\. Output is being written to: (\S+?)\.(?:\s|$)`)
	ccBashBackgroundedRe = regexp.MustCompile(`Command did not complete within its \S+ timeout and was moved to the background \(ID: [^)\s]+\)\. Output is being written to: (\S+?)\.(?:\s|$)`)
)

var claudeCodeRules = []rule{
	{name: "claude_code.cleared", match: ccCleared},
	{name: "claude_code.persisted_output", match: ccPersisted},
	{name: "claude_code.bash_backgrounded", match: ccBashBackgrounded},
	{name: "claude_code.bash_in_background", match: ccBashInBackground},
	{name: "claude_code.mcp_saved", match: ccMCPSaved},
	{name: "claude_code.read_refused", match: ccReadRefused},
	{name: "claude_code.task_truncated", match: ccTaskTruncated},
	{name: "claude_code.empty", match: ccEmpty},
	{name: "claude_code.read_partial_view", anchor: anchorTruncated, match: ccPartialView},
	{name: "claude_code.mcp_truncated", anchor: anchorTRUNCATED, match: ccMCPTruncated},
	{name: "claude_code.bash_lines_truncated", anchor: anchorTruncated, match: ccBashLines},
	{name: "claude_code.chars_truncated", anchor: anchorTruncated, match: ccCharsTruncated},
	{name: "claude_code.grep_pagination", match: ccGrepPagination},
	{name: "claude_code.grep_omitted_long_line", anchor: anchorOmitted, match: ccOmittedLongLines},
	{name: "claude_code.glob_truncated", match: ccGlobTruncated},
	{name: "claude_code.webfetch_content_truncated", anchor: anchorTruncated, match: ccWebFetchMarker},
	{name: "claude_code.attachment_truncated", anchor: anchorTruncated, match: ccAttachTruncated},
	{name: "claude_code.webfetch_note", match: ccWebFetchNote},
	{name: "claude_code.webfetch_raw", match: ccWebFetchRaw},
	{name: "claude_code.webfetch_summary", match: ccWebFetch},
	{name: "claude_code.read_notebook_outputs", match: ccNotebookOutputs},
	{name: "claude_code.read_image", match: ccReadImage},
	{name: "claude_code.read_pdf", match: ccReadPDF},
	{name: "claude_code.read_file", match: ccReadFile},
	{name: "claude_code.read_shape", match: ccReadShape},
	{name: "claude_code.glob_metadata", match: ccGlobMetadata},
}

// ccCleared: micro-compaction replaced the result with a stub.
func ccCleared(s *scan, fd *finding) bool {
	if strings.TrimSpace(s.text) != "[Old tool result content cleared]" {
		return false
	}
	fd.cut(schema.StrategyCleared, "cleared", "[Old tool result content cleared]")
	fd.disclose(false, true, false)
	return true
}

// ccPersisted: C1, a 2 KB preview plus the saved path. The size label is in
// KiB with one decimal, so it gives a size only roughly: UTF-16 units (chars)
// for most tools, the saved file's bytes for Bash and PowerShell. The
// toolUseResult or the saved file give the exact original.
func ccPersisted(s *scan, fd *finding) bool {
	if !strings.HasPrefix(s.text, "<persisted-output>") {
		return false
	}
	m := ccPersistedMatch(s.text)
	capped := false
	if m == nil {
		m, capped = ccPersistedMatchWith(ccPersistedCapRe, s.text), true
	}
	if m == nil {
		return false
	}
	label, path, preview := group(s.text, m, 1), group(s.text, m, 2), group(s.text, m, 4)
	fd.cut(schema.StrategySpillToFile, "too_large", strings.TrimSuffix(s.text[:m[8]], "\n"))
	fd.SavedRef = path
	fd.NextHint = "Full output saved to: " + path
	fd.disclose(true, true, true)
	fd.show(schema.Known(0), schema.KnownInt(countRunes(preview)), schema.UnitChars, schema.Unknown)
	fd.totalIsOriginal = true
	if strings.HasSuffix(path, ".json") {
		// A content array (an MCP result) saved as JSON: the label and any
		// saved prefix measure the JSON envelope, not the tool's text,
		// and bound neither way what the text is. Only the saved file, read
		// as the text of its blocks, gives the original; what the model saw
		// of that text is the first block's string in the preview.
		fd.show(schema.Known(0), schema.KnownInt(countRunes(ccJSONPreviewText(preview))), schema.UnitChars, schema.Unknown)
		fd.savedIsPrefix = capped
		if capped {
			fd.Reason = "cap_bytes"
		}
		return true
	}
	if capped {
		// At least the limit was printed; the saved file is a prefix.
		fd.Reason, fd.savedIsPrefix = "cap_bytes", true
		s.orig.addAtLeast(rankMarker, schema.Sizes{Bytes: parseSizeLabel(label)})
		return true
	}
	if n := parseSizeLabel(label); n.Known {
		// Bash and PowerShell label their spill with the saved file's size
		// (formatFileSize(persistedOutputSize)): bytes. Every other tool's
		// label is its text's JavaScript length: chars.
		unit := schema.UnitChars
		if ccShellTool(s.in.Tool) {
			unit = schema.UnitBytes
		}
		if strings.HasSuffix(label, "bytes") {
			fd.claims(unit, n) // exact below 1 KiB
		} else {
			s.orig.addApprox(rankMarker, schema.SizesIn(unit, n))
		}
	}
	return true
}

// ccShellTool reports whether tool is one of Claude Code's shell tools,
// which build their <persisted-output> notice themselves from the saved
// file's size in bytes.
func ccShellTool(tool string) bool { return tool == "Bash" || tool == "PowerShell" }

// ccJSONPreviewText is the text a preview of a saved content array shows:
// the first block's "text" string (JSON.stringify(blocks, null, 2) puts it
// after its "type"), unescaped up to its closing quote or the end of the
// preview. An escape the preview cut short is left out, so the text is never
// longer than what the model saw of it.
func ccJSONPreviewText(preview string) string {
	const key = `"text": "`
	i := strings.Index(preview, key)
	if i < 0 {
		return ""
	}
	s := preview[i+len(key):]
	var b strings.Builder
	for j := 0; j < len(s); j++ {
		c := s[j]
		if c == '"' {
			break
		}
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		if j+1 >= len(s) {
			break
		}
		j++
		switch s[j] {
		case 'u':
			if j+4 >= len(s) {
				return b.String()
			}
			r, err := strconv.ParseUint(s[j+1:j+5], 16, 16)
			if err != nil {
				return b.String()
			}
			j += 4
			if utf16.IsSurrogate(rune(r)) {
				// The low half follows as another \u escape; a pair is one
				// character, a lone half none that can be told.
				if j+6 < len(s) && s[j+1] == '\\' && s[j+2] == 'u' {
					if lo, err := strconv.ParseUint(s[j+3:j+7], 16, 16); err == nil {
						if dec := utf16.DecodeRune(rune(r), rune(lo)); dec != utf8.RuneError {
							b.WriteRune(dec)
							j += 6
							continue
						}
					}
				}
				return b.String()
			}
			b.WriteRune(rune(r))
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		default: // \" \\ \/
			b.WriteByte(s[j])
		}
	}
	return b.String()
}

// ccPersistedFooter closes a <persisted-output> preview.
const ccPersistedFooter = "\n</persisted-output>"

// ccPersistedMatch matches a whole <persisted-output> text and returns the
// submatch indices FindStringSubmatchIndex would return for
//
//	(?s)\A<header>(.*?)(\n\.\.\.)?\n</persisted-output>\s*\z
//
// where <header> is ccPersistedRe: 1 the size label, 2 the saved path,
// 3 the preview size, 4 the preview, 5 the "\n..." that marks a preview
// cut short. Run as one regexp, the lazy (.*?) made the engine step through
// the whole 2 KB preview (~30 MB/s); only the header needs a regexp. The
// footer is found from the end: it ends in '>', so only its last occurrence
// can be followed by nothing but whitespace, and the shortest (.*?) stops
// before a "\n..." right in front of it. TestPersistedMatch checks the two
// forms agree.
func ccPersistedMatch(text string) []int { return ccPersistedMatchWith(ccPersistedRe, text) }

// ccPersistedMatchWith is ccPersistedMatch with another header of the same
// groups (label, path, preview size).
func ccPersistedMatchWith(re *regexp.Regexp, text string) []int {
	h := re.FindStringSubmatchIndex(text)
	if h == nil {
		return nil
	}
	body := strings.TrimRight(text[h[1]:], " \t\n\f\r")
	if !strings.HasSuffix(body, ccPersistedFooter) {
		return nil
	}
	preview := body[:len(body)-len(ccPersistedFooter)]
	m := append(h[:8:8], h[1], h[1]+len(preview), -1, -1)
	m[1] = len(text)
	if strings.HasSuffix(preview, "\n...") {
		m[9] -= len("\n...")
		m[10], m[11] = m[9], m[9]+len("\n...")
	}
	return m
}

// ccMCPSaved: C2/C3, an MCP result over MAX_MCP_OUTPUT_TOKENS. Nothing of the
// content is inline; C2 saved it to a file, C3 failed to.
func ccMCPSaved(s *scan, fd *finding) bool {
	if !strings.HasPrefix(s.text, "Error: result (") {
		return false
	}
	if m := ccMCPSavedRe.FindStringSubmatchIndex(s.text); m != nil {
		fd.cut(schema.StrategySpillToFile, "cap_tokens", s.text[m[0]:m[1]-1])
		fd.SavedRef = group(s.text, m, 2)
		fd.NextHint = "Output has been saved to " + fd.SavedRef + ". Use offset and limit parameters to read specific portions of the file"
		fd.disclose(true, true, true)
		chars := atoi(group(s.text, m, 1))
		fd.show(schema.Known(0), schema.Known(0), schema.UnitChars, chars)
		fd.claims(schema.UnitChars, chars)
		return true
	}
	if m := ccMCPFailedRe.FindStringSubmatchIndex(s.text); m != nil {
		fd.cut(schema.StrategyRefused, "cap_tokens", s.text[m[0]:m[1]])
		fd.NextHint = group(s.text, m, 3)
		fd.disclose(true, true, true)
		chars := atoi(group(s.text, m, 1))
		fd.show(schema.Known(0), schema.Known(0), schema.UnitChars, chars)
		fd.claims(schema.UnitChars, chars)
		return true
	}
	return false
}

// ccTaskTruncated: C16, background task output keeps its tail.
func ccTaskTruncated(s *scan, fd *finding) bool {
	if !strings.HasPrefix(s.text, "[Truncated. Full output: ") {
		return false
	}
	m := ccTaskTruncRe.FindStringSubmatchIndex(head(s.text, 4096))
	if m == nil {
		return false
	}
	fd.cut(schema.StrategyTail, "cap_chars", strings.TrimSpace(s.text[m[0]:m[1]]))
	fd.SavedRef = group(s.text, m, 1)
	fd.NextHint = "Full output: " + fd.SavedRef
	fd.disclose(false, false, true)
	kept := schema.KnownInt(countRunes(s.text[m[1]:]))
	fd.Shown.Unit = schema.UnitChars
	fd.tailKept = kept
	fd.totalIsOriginal = true
	return true
}

// ccEmpty: C11, the stub for an empty output; nothing was cut.
func ccEmpty(s *scan, fd *finding) bool {
	if len(s.text) > 256 || !ccEmptyRe.MatchString(s.text) {
		return false
	}
	fd.Kind = schema.KindNone
	fd.complete = true
	s.orig.add(rankMarker, schema.Sizes{Bytes: schema.Known(0), Chars: schema.Known(0), Lines: schema.Known(0), Tokens: schema.Known(0)})
	return true
}

// ccBashBackgrounded: a Bash command that outlived its timeout, moved to the
// background. The model got what it had written so far, then a notice that
// says why, where the rest is being written and how to read it, not how much
// there is: the rest never reached the context, so a preview plus a file
// (spill_to_file), the original at least what was shown. The notice ends the
// result, so only its last 2 KiB are searched: a long output costs nothing.
func ccBashBackgrounded(s *scan, fd *finding) bool {
	if s.in.Tool != "Bash" {
		return false
	}
	t := tail(s.text, 2048)
	if !strings.Contains(t, "was moved to the background (ID: ") {
		return false
	}
	m := ccBashBackgroundedRe.FindStringSubmatchIndex(t)
	if m == nil {
		return false
	}
	at := len(s.text) - len(t) + m[0]
	preview := strings.TrimSuffix(s.text[:at], "\n")
	fd.cut(schema.StrategySpillToFile, "timeout", strings.TrimSpace(s.text[at:]))
	ccTaskOutput(fd, group(t, m, 1), t[m[1]:])
	fd.disclose(false, true, true)
	fd.show(schema.Known(0), schema.KnownInt(countRunes(preview)), schema.UnitChars, schema.Unknown)
	return true
}

// ccBashInBackground: a Bash command run in the background as the call
// asked (run_in_background). The result is a notice naming the file its
// output goes to, not the output: nothing was cut, the call asked for none
// of it yet (partial by request), and nothing tells how large the output
// is, so the original is unknown.
func ccBashInBackground(s *scan, fd *finding) bool {
	if s.in.Tool != "Bash" || !strings.HasPrefix(s.text, "Command running in background with ID: ") {
		return false
	}
	m := ccBashInBackgroundRe.FindStringSubmatchIndex(s.text)
	if m == nil {
		return false
	}
	fd.Kind = schema.KindNone
	fd.PartialByRequest = true
	ccTaskOutput(fd, group(s.text, m, 1), s.text[m[1]:])
	return true
}

// ccTaskOutput records a background task's output file as the saved
// reference, and how the notice says to read it (rest is the notice after
// the path).
func ccTaskOutput(fd *finding, path, rest string) {
	fd.SavedRef = path
	fd.NextHint = "Output is being written to: " + path
	if strings.Contains(rest, "To check interim output, use Read on that file path.") {
		fd.NextHint = "To check interim output, use Read on that file path."
	}
}
