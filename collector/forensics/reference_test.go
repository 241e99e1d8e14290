package forensics

import (
	"bytes"
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/ctxaudit/ctxaudit/schema"
)

// The map-based readers below are the ones the selective readers replaced:
// decode the whole object with encoding/json, then pick members. They are
// kept as the reference FuzzReaders compares against, so the selective
// readers provably mean the same as a full decode on any input.

// decodeObject decodes raw as a JSON object, keeping numbers exact, or
// returns nil for anything that is not an object.
func decodeObject(raw []byte) map[string]any {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '{' {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil
	}
	return m
}

func objectOf(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// ccResultRef is ccResult with the texts decoded.
type ccResultRef struct {
	NumLines, StartLine, TotalLines schema.Count
	Mode                            string
	Content                         *string
	NumLines2, NumFiles             schema.Count
	AppliedLimit, AppliedOffset     schema.Count
	Truncated                       bool
	Stdout, Stderr                  string
	PersistedOutputSize, Bytes      schema.Count
}

func refClaudeResult(raw []byte) ccResultRef {
	var r ccResultRef
	m := decodeObject(raw)
	if m == nil {
		return r
	}
	if f := objectOf(m["file"]); f != nil {
		r.NumLines = numberOf(f["numLines"])
		r.StartLine = numberOf(f["startLine"])
		r.TotalLines = numberOf(f["totalLines"])
	}
	r.Mode = stringOf(m["mode"])
	if c, ok := m["content"].(string); ok {
		r.Content = &c
	}
	r.NumLines2 = numberOf(m["numLines"])
	r.NumFiles = numberOf(m["numFiles"])
	r.AppliedLimit = numberOf(m["appliedLimit"])
	r.AppliedOffset = numberOf(m["appliedOffset"])
	r.Truncated, _ = boolOf(m["truncated"])
	r.Stdout = stringOf(m["stdout"])
	r.Stderr = stringOf(m["stderr"])
	r.PersistedOutputSize = numberOf(m["persistedOutputSize"])
	r.Bytes = numberOf(m["bytes"])
	return r
}

// decoded projects the selective ccResult onto ccResultRef.
func (r *ccResult) decoded() ccResultRef {
	out := ccResultRef{
		NumLines: r.File.NumLines, StartLine: r.File.StartLine, TotalLines: r.File.TotalLines,
		Mode: r.Mode, NumLines2: r.NumLines, NumFiles: r.NumFiles,
		AppliedLimit: r.AppliedLimit, AppliedOffset: r.AppliedOffset, Truncated: r.Truncated,
		Stdout: stringOr(r.Stdout), Stderr: stringOr(r.Stderr),
		PersistedOutputSize: r.PersistedOutputSize, Bytes: r.Bytes,
	}
	if r.Content != nil {
		c := stringOr(r.Content)
		out.Content = &c
	}
	return out
}

// refClaudeOriginals is collectClaudeOriginals on decoded texts.
func refClaudeOriginals(raw []byte) []candidate {
	if len(raw) == 0 {
		return nil
	}
	var o originals
	r := refClaudeResult(raw)
	switch {
	case r.Content != nil && r.Mode == "content":
		switch {
		case !r.AppliedLimit.Known && r.AppliedOffset.N == 0:
			o.addText(rankMetadata, *r.Content)
		case *r.Content != "":
			sz := Measure(*r.Content)
			sz.Tokens = schema.Unknown
			o.addAtLeast(rankMetadata, sz)
		}
	case r.PersistedOutputSize.Known:
		o.add(rankMetadata, schema.Sizes{Bytes: r.PersistedOutputSize})
	case r.Stdout != "" || r.Stderr != "":
		out := r.Stdout
		if r.Stdout != "" && r.Stderr != "" {
			out += "\n" + r.Stderr
		} else if r.Stderr != "" {
			out = r.Stderr
		}
		if !strings.Contains(out, " lines truncated] ...") && !strings.Contains(out, " characters truncated] ...") {
			o.addText(rankMetadata, out)
		}
	}
	return o.list
}

func refPiDetails(raw []byte) piDetails {
	var d piDetails
	m := decodeObject(raw)
	if m == nil {
		return d
	}
	d.fullOutputPath = stringOf(m["fullOutputPath"])
	t := objectOf(m["truncation"])
	if t == nil {
		return d
	}
	d.present = true
	d.truncated, _ = boolOf(t["truncated"])
	d.truncatedBy = stringOf(t["truncatedBy"])
	d.totalLines, d.totalBytes = numberOf(t["totalLines"]), numberOf(t["totalBytes"])
	d.outputLines, d.outputBytes = numberOf(t["outputLines"]), numberOf(t["outputBytes"])
	return d
}

func refParseRequest(raw []byte) request {
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

// structuredRef is the comparable part of structured, marker rendered.
type structuredRef struct {
	found                        bool
	truncated, truncatedKnown    bool
	originalBytes, returnedBytes schema.Count
	total, start, end            schema.Count
	unit                         schema.Unit
	reason                       string
	strategy                     schema.Strategy
	next, ref                    string
	marker                       string
}

func (st *structured) comparable() structuredRef {
	out := structuredRef{
		found: st.found, truncated: st.truncated, truncatedKnown: st.truncatedKnown,
		originalBytes: st.originalBytes, returnedBytes: st.returnedBytes,
		total: st.total, start: st.start, end: st.end, unit: st.unit,
		reason: st.reason, strategy: st.strategy, next: st.next, ref: st.ref,
	}
	if st.found {
		out.marker = st.markerText()
	}
	return out
}

func refParseStructured(m map[string]any) structuredRef {
	var st structuredRef
	if m == nil {
		return st
	}
	objs := []map[string]any{m}
	for _, k := range [...]string{"truncation", "_meta", "meta", "metadata", "pagination"} {
		if o := objectOf(m[k]); o != nil {
			objs = append(objs, o)
		}
	}
	marker := map[string]any{}
	for _, o := range objs {
		for _, k := range structuredKeys {
			if v, ok := o[k]; ok {
				st.found = true
				marker[k] = v
			}
		}
	}
	if !st.found {
		return st
	}
	for _, o := range objs {
		st.read(o)
	}
	b, err := json.Marshal(marker)
	if err == nil {
		st.marker = string(b)
	}
	return st
}

func (st *structuredRef) read(o map[string]any) {
	if b, ok := boolOf(o["truncated"]); ok && !st.truncatedKnown {
		st.truncated, st.truncatedKnown = b, true
	}
	for _, k := range [...]string{"is_complete", "complete"} {
		if b, ok := boolOf(o[k]); ok && !st.truncatedKnown {
			st.truncated, st.truncatedKnown = !b, true
		}
	}
	st.originalBytes = st.originalBytes.Or(numberOf(o["original_size_bytes"]))
	st.returnedBytes = st.returnedBytes.Or(numberOf(o["returned_size_bytes"]))
	st.total = st.total.Or(numberOf(o["total"]))
	if arr, ok := o["shown"].([]any); ok && len(arr) == 2 && !st.start.Known {
		st.start, st.end = numberOf(arr[0]), numberOf(arr[1])
	}
	if r := objectOf(o["range"]); r != nil && !st.start.Known {
		st.start, st.end = numberOf(r["start_line"]), numberOf(r["end_line"])
		if st.start.Known || st.end.Known {
			st.unit = schema.UnitLines
		} else {
			st.start, st.end = numberOf(r["start"]), numberOf(r["end"])
		}
	}
	if u := schema.Unit(stringOf(o["unit"])); u != "" && st.unit == "" && u.Valid() {
		st.unit = u
	}
	for _, k := range [...]string{"truncation_reason", "reason"} {
		if r := stringOf(o[k]); r != "" && st.reason == "" {
			st.reason = normaliseReason(r)
		}
	}
	if sv := schema.Strategy(stringOf(o["strategy"])); sv.Valid() && st.strategy == "" {
		st.strategy = sv
	}
	for _, k := range [...]string{"next_page", "next_cursor", "continue_options", "next_offset", "cursor", "next"} {
		if t := textOf(o[k]); t != "" && st.next == "" {
			st.next = t
		}
	}
	for _, k := range [...]string{"saved_ref", "ref", "full_output_path", "full_output_ref"} {
		if t := stringOf(o[k]); t != "" && st.ref == "" {
			st.ref = t
		}
	}
}

type jobLogsRef struct {
	logs  string
	ok    bool
	total schema.Count
}

func refJobLogs(raw []byte) jobLogsRef {
	m := decodeObject(raw)
	logs, ok := m["logs_content"].(string)
	return jobLogsRef{logs, ok, numberOf(m["original_length"])}
}

func jobLogs(raw []byte) jobLogsRef {
	var v [len(githubJobLogsKeys)][]byte
	objectIn(raw).fields(githubJobLogsKeys[:], v[:])
	logs, ok := stringIn(v[0])
	return jobLogsRef{logs, ok, countIn(v[1])}
}

// checkReaders compares every selective reader with its map-based reference.
func checkReaders(t *testing.T, raw []byte) {
	t.Helper()
	s := &scan{in: &Input{ToolUseResult: raw, Details: raw}}
	if got, want := s.claudeResult().decoded(), refClaudeResult(raw); !reflect.DeepEqual(got, want) {
		t.Errorf("claudeResult(%q)\n got %+v\nwant %+v", raw, got, want)
	}
	collectClaudeOriginals(s)
	if got, want := s.orig.list, refClaudeOriginals(raw); !reflect.DeepEqual(got, want) {
		t.Errorf("collectClaudeOriginals(%q)\n got %+v\nwant %+v", raw, got, want)
	}
	if got, want := *s.piDetails(), refPiDetails(raw); got != want {
		t.Errorf("piDetails(%q)\n got %+v\nwant %+v", raw, got, want)
	}
	if got, want := parseRequest(raw), refParseRequest(raw); got != want {
		t.Errorf("parseRequest(%q)\n got %+v\nwant %+v", raw, got, want)
	}
	st := parseStructured(objectIn(raw))
	if got, want := st.comparable(), refParseStructured(decodeObject(raw)); got != want {
		t.Errorf("parseStructured(%q)\n got %+v\nwant %+v", raw, got, want)
	}
	if got, want := jobLogs(raw), refJobLogs(raw); got != want {
		t.Errorf("githubJobLogs fields(%q)\n got %+v\nwant %+v", raw, got, want)
	}
}

var readerSeeds = []string{
	`{"stdout":"a\nb","stderr":"c","interrupted":false,"isImage":false}`,
	`{"mode":"content","content":"x:1:y\n","numLines":3,"appliedLimit":"250","appliedOffset":2.9}`,
	`{"type":"text","file":{"filePath":"/a","content":"...","numLines":2000,"startLine":1,"totalLines":4512}}`,
	`{"bytes":512000,"code":200,"result":"digest","durationMs":9,"url":"https://x"}`,
	`{"filenames":["a","b"],"numFiles":100,"truncated":true,"durationMs":3}`,
	`{"persistedOutputPath":"/t/x.txt","persistedOutputSize":85700,"stdout":"head"}`,
	`{"truncation":{"truncated":true,"truncatedBy":"bytes","totalLines":9,"totalBytes":99,"outputLines":2,"outputBytes":50},"fullOutputPath":"/tmp/p"}`,
	`{"offset":10,"limit":"20","page":null,"cursor":"c","file_path":"","path":"/p","url":"u"}`,
	`{"truncated":"TRUE","shown":[0,"9"],"original_size_bytes":1e3,"next_page":{"b":1,"a":[true,null]},"ref":"r"}`,
	`{"is_complete":false,"range":{"start":1,"end":5},"unit":"lines","reason":"too many tokens","strategy":"tail"}`,
	`{"_meta":{"truncated":true,"next_cursor":"abc"},"meta":{"total":-0,"next_offset":12},"pagination":{"complete":"0"}}`,
	`{"logs_content":"a\nb\n","original_length":5,"original_length":"7"}`,
	`{"stdout":"first","stdout":"second","st\u0064err":"escaped key","file":{"numLines":1},"file":3}`,
	`{"bytes":18446744073709551615,"numLines":18446744073709551616,"numFiles":-1,"appliedLimit":1.5e300}`,
	`{"stdout":"x"} trailing garbage is ignored as the decoder ignores it`,
	`{"stdout":"x","bad":[01]}`, `{"stdout":"x","bad":"` + "\x01" + `"}`, " \v{\"bytes\":1}\u00a0",
	`{"stdout":"x\n","stderr":"y"}`, `{"stdout":"\u00e9\n\n","stderr":"\n"}`, `{"stdout":"","stderr":"only\u000a"}`,
	`{"stdout":"a\n\n... [12 lines truncated] ...\n\nb"}`, `{"stdout":"a","stderr":"x\u0020characters truncated] ..."}`,
	`{"mode":"content","content":"` + "\xff" + `a\nb"}`, `{"mode":"files","content":"a"}`, `{"mode":"content","content":7}`,
	`{"next":false,"cursor":0,"continue_options":[],"next_page":{}}`, `["not an object"]`, `"str"`, ``,
}

func TestReadersMatchDecode(t *testing.T) {
	for _, s := range readerSeeds {
		checkReaders(t, []byte(s))
	}
}

// FuzzReaders checks that reading metadata selectively means exactly what
// decoding it whole with encoding/json meant, on any input.
func FuzzReaders(f *testing.F) {
	for _, s := range readerSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkReaders(t, raw)
	})
}

// ccPersistedFullRe is the one-regexp form ccPersistedMatch replaced.
var ccPersistedFullRe = regexp.MustCompile(`(?s)\A<persisted-output>\nOutput too large \((\d+(?:\.\d+)?(?:KB|MB|GB| bytes))\)\. Full output saved to: ([^\n]+)\n\nPreview \(first ([^)\n]+)\):\n(.*?)(\n\.\.\.)?\n</persisted-output>\s*\z`)

var persistedSeeds = []string{
	"<persisted-output>\nOutput too large (83.7KB). Full output saved to: /p/t.txt\n\nPreview (first 2KB):\na\nb\n...\n</persisted-output>",
	"<persisted-output>\nOutput too large (512 bytes). Full output saved to: /p/t.txt\n\nPreview (first 2KB):\nall of it\n</persisted-output>\n \t",
	"<persisted-output>\nOutput too large (1.2MB). Full output saved to: /p/t.txt\n\nPreview (first 2KB):\n\n</persisted-output>",
	"<persisted-output>\nOutput too large (1.2MB). Full output saved to: /p/t.txt\n\nPreview (first 2KB):\n</persisted-output>",
	"<persisted-output>\nOutput too large (1.2MB). Full output saved to: /p/t.txt\n\nPreview (first 2KB):\n...\n</persisted-output>",
	"<persisted-output>\nOutput too large (1.2MB). Full output saved to: /p/t.txt\n\nPreview (first 2KB):\nx\n...\n...\n</persisted-output>\n</persisted-output>",
	"<persisted-output>\nOutput too large (1.2MB). Full output saved to: /p/t.txt\n\nPreview (first 2KB):\nx\n</persisted-output> trailing",
	"<persisted-output>\nOutput too large (1.2MB). Full output saved to: /p/t.txt\n\nPreview (first 2KB):\nx\n</persisted-output>\v",
	"<persisted-output>\nOutput too large (9GB). Full output saved to: \n\nPreview (first 2KB):\nx\n</persisted-output>",
}

func TestPersistedMatch(t *testing.T) {
	for _, s := range persistedSeeds {
		checkPersisted(t, s)
	}
}

func checkPersisted(t *testing.T, text string) {
	t.Helper()
	if got, want := ccPersistedMatch(text), ccPersistedFullRe.FindStringSubmatchIndex(text); !reflect.DeepEqual(got, want) {
		t.Errorf("ccPersistedMatch(%q)\n got %v\nwant %v", text, got, want)
	}
}

// FuzzPersisted checks ccPersistedMatch against the one-regexp form.
func FuzzPersisted(f *testing.F) {
	for _, s := range persistedSeeds {
		f.Add(s)
	}
	f.Fuzz(checkPersisted)
}
