package forensics

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/ctxaudit/ctxaudit/schema"
)

// MCP reference fetch server (transcript-formats.md §4): pages of max_length
// chars (default 5000) from start_index; the original length is never
// reported. GitHub MCP get_job_logs (§5): the last tail_lines lines (default
// 500) of a job log, with original_length counting LINES, not chars. The
// defaults are never assumed: a page's range comes from its own notice and
// the call's arguments.

var (
	fetchTruncRe = regexp.MustCompile(`\n\n<error>(Content truncated\. (Call the fetch tool with a start_index of (\d+) to get more content\.))</error>\s*\z`)
	fetchEndRe   = regexp.MustCompile(`<error>No more content available\.</error>\s*\z`)
	fetchPrefix  = regexp.MustCompile(`\A(?:Content type [^\n]* cannot be simplified to markdown, but here is the raw content:\n)?Contents of [^\n]*:\n`)
)

var mcpFetchRules = []rule{
	{name: "mcp.fetch_truncated", match: fetchTruncated},
	{name: "mcp.fetch_end", match: fetchEnd},
	{name: "mcp.fetch_last_page", match: fetchLastPage},
}

var githubRules = []rule{
	{name: "mcp.github_job_logs", match: githubJobLogs},
}

// fetchTruncated: a page of max_length chars with content remaining. An
// explicit max_length that the page filled is a partial view by request.
func fetchTruncated(s *scan, fd *finding) bool {
	t := tail(s.text, 256)
	if !strings.Contains(t, "<error>Content truncated.") {
		return false
	}
	m := fetchTruncRe.FindStringSubmatchIndex(t)
	if m == nil {
		return false
	}
	next := atoi(group(t, m, 3))
	start := s.req.StartIndex.Or(schema.Known(0))
	fd.show(start, next, schema.UnitChars, schema.Unknown)
	fd.NextHint = group(t, m, 2)
	fd.Marker = group(t, m, 1)
	fd.disclose(false, false, true)
	maxLen := s.req.MaxLength
	got := subCount(next, start)
	if maxLen.Known && got.Known && got.N >= maxLen.N {
		fd.byRequest()
		return true
	}
	reason := "cap_chars"
	if !maxLen.Known {
		reason = "pagination"
	}
	fd.cut(schema.StrategyPaginated, reason, fd.Marker)
	return true
}

// fetchEnd: start_index at or past the end; nothing remains, nothing cut.
func fetchEnd(s *scan, fd *finding) bool {
	if !strings.HasSuffix(strings.TrimSpace(s.text), "</error>") || !fetchEndRe.MatchString(tail(s.text, 64)) {
		return false
	}
	fd.Kind = schema.KindNone
	fd.complete = true
	fd.confirmedBy = schema.SourceMarker
	return true
}

// fetchLastPage: a page without a notice, from a call that started past 0,
// is the last one — the rest of the content, by request. Its end is the
// content's total length, which the server never states otherwise; recording
// it lets coverage of a paged fetch reach 1.
func fetchLastPage(s *scan, fd *finding) bool {
	start := s.req.StartIndex
	if !start.Known || start.N == 0 {
		return false
	}
	loc := fetchPrefix.FindStringIndex(head(s.text, 4096))
	if loc == nil {
		return false
	}
	end := schema.Known(start.N + uint64(utf8.RuneCountInString(s.text[loc[1]:])))
	fd.show(start, end, schema.UnitChars, end)
	fd.byRequest()
	return true
}

var githubJobLogsKeys = [...]string{"logs_content", "original_length"}

// githubJobLogs: {"logs_content": …, "original_length": TOTAL_LINES}. The
// model sees the total, so a shorter tail is an explicit (if terse) cut;
// an explicit tail_lines the call asked for is a partial view by request.
func githubJobLogs(s *scan, fd *finding) bool {
	if !strings.HasPrefix(strings.TrimSpace(head(s.text, 16)), "{") || !strings.Contains(s.text, `"original_length"`) {
		return false
	}
	var v [len(githubJobLogsKeys)][]byte
	objectIn([]byte(s.text)).fields(githubJobLogsKeys[:], v[:])
	logs, ok := stringIn(v[0])
	if !ok {
		return false
	}
	total := countIn(v[1])
	if !total.Known {
		return false
	}
	got := uint64(countLines(logs))
	fd.show(schema.Known(total.N-min(got, total.N)+1), total, schema.UnitLines, total)
	s.orig.add(rankSDK, schema.Sizes{Lines: total})
	if got >= total.N {
		fd.Kind = schema.KindNone
		fd.complete = true
		return true
	}
	fd.disclose(true, false, false)
	if s.req.TailLines.Known && got >= min(s.req.TailLines.N, total.N) {
		fd.byRequest()
		fd.confirmedBy = schema.SourceSDK
		return true
	}
	fd.cut(schema.StrategyTail, "cap_lines", `"original_length":`+total.String())
	return true
}
