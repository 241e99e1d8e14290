package harnesslab

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Recordings are normalised so that re-running an unchanged harness
// rewrites them byte for byte: every value a run picks for itself (its
// temporary folder, random ids, clock readings, durations, process ids) is
// replaced by a fixed placeholder, the same raw value by the same
// placeholder everywhere in the run (file names included). Ids, paths and
// every value inside text a tool returned keep their length and alphabet,
// so no size ctxaudit measures changes; Lab.Run checks that on every run
// by ingesting both the raw and the normalised copy and comparing the
// records. Each substitution is listed in the run's logs/normalise.json
// (kept with -keep), so it can be reversed.

// labRootPrefix is the name of every run's root under /tmp; the suffix is
// ten digits, so the root path always has the same length.
const labRootPrefix = "ctxaudit-lab-"

// normalisedRoot is what a run's root becomes in a recording.
const normalisedRoot = "/tmp/" + labRootPrefix + "0000000000"

// normalBase is the clock of a recording: the n-th clock reading in a run
// becomes normalBase plus n seconds.
var normalBase = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// idRule replaces a run-chosen id (submatch 1 of re, or the whole match)
// by a numbered placeholder of the same length.
type idRule struct {
	name string
	re   *regexp.Regexp
	// place renders placeholder n for the raw token.
	place func(raw string, n int) string
}

func padded(format string) func(string, int) string {
	return func(raw string, n int) string { return fmt.Sprintf(format, n) }
}

var idRules = []idRule{
	{"uuid", regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`), func(raw string, n int) string {
		// Keep the version digit, so a v4 stays a v4 and a v7 a v7.
		return fmt.Sprintf("00000000-0000-%c000-8000-%012x", raw[14], n)
	}},
	// Claude Code's OTLP user.id (a hash of its installation id).
	{"hex64", regexp.MustCompile(`\b[0-9a-f]{64}\b`), padded("%064x")},
	// Claude Code's saved Bash output: tool-results/<9 random chars>.txt.
	{"claude-saved", regexp.MustCompile(`tool-results/([a-z0-9]{9})\.`), func(raw string, n int) string {
		return raw[:1] + fmt.Sprintf("%08d", n)
	}},
	// Claude Code's background task ids (a Bash command that outlived its
	// timeout): "(ID: <9 chars>)", tasks/<id>.output, backgroundTaskId, and
	// the <task-id> of the notification when it completes.
	{"claude-task", regexp.MustCompile(`(?:\(ID: |with ID: |tasks/|"backgroundTaskId":"|<task-id>)([a-z0-9]{9})\b`), func(raw string, n int) string {
		return raw[:1] + fmt.Sprintf("%08d", n)
	}},
	// The run id of the prompt Claude Code makes of a task's notification.
	{"claude-run", regexp.MustCompile(`"runId":"([0-9a-z]{9}-[0-9a-f]{8})"`), padded("%09d-00000000")},
	// pi's full bash output: $TMPDIR/pi-bash-<16 hex>.log.
	{"pi-bash-log", regexp.MustCompile(`pi-bash-([0-9a-f]{16})\.log`), padded("%016x")},
	// pi's session entry ids.
	{"pi-entry", regexp.MustCompile(`"(?:id|parentId|firstKeptEntryId)":"([0-9a-f]{8})"`), padded("%08x")},
	// Claude Code's sub-agent ids: a and 16 hex digits.
	{"claude-agent", regexp.MustCompile(`(?:agent-|"agentId":"|agentId: |to: ')(a[0-9a-f]{16})\b`), func(raw string, n int) string {
		return fmt.Sprintf("a%016x", n)
	}},
	// Codex's output chunk id (inside the text the model saw: same length).
	{"codex-chunk", regexp.MustCompile(`Chunk ID: ([0-9a-f]{6})\b`), padded("%06x")},
}

// valueRules replace a run-dependent value outside any tool output by a
// fixed one (durations, process ids): submatch 1 becomes the fixed text.
var valueRules = []struct {
	re    *regexp.Regexp
	fixed string // "" keeps the length: 1 and zeros, or zeros around a point
}{
	// Inside text the model saw (Claude Code's sub-agent usage footer).
	{regexp.MustCompile(`duration_ms: (\d+)`), ""},
	// Codex's exec header, inside the text the model saw.
	{regexp.MustCompile(`Wall time: (\d+\.\d+) seconds`), ""},
	// Loopback ports the lab's servers were given (ephemeral: five digits).
	{regexp.MustCompile(`127\.0\.0\.1:(\d+)`), ""},
	{regexp.MustCompile(`"(?:toolInputStreamMs|durationMs|duration_ms|time_to_first_token_ms|nanos|ttftMs|totalDurationMs|durationApiMs)":(\d+(?:\.\d+)?)`), "0"},
	{regexp.MustCompile(`"process_id":"(\d+)"`), "1000"},
	// OTLP attributes of durations.
	{regexp.MustCompile(`\{"key":"(?:duration_ms|ttft_ms)","value":\{"(?:stringValue|intValue|doubleValue)":"?(\d+(?:\.\d+)?)`), "0"},
}

// Clock readings: RFC 3339 times, and epoch seconds (optionally with a
// fraction), milliseconds, microseconds or nanoseconds within two days of
// the run (the window keeps sizes and counts from ever matching).
var (
	isoRe     = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})`)
	numberRe  = regexp.MustCompile(`[0-9]+(?:\.[0-9]+)?`)
	fileTime  = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:-\d{3}Z)?`)
	dateDirRe = regexp.MustCompile(`(?:^|/)(\d{4}/\d{2}/\d{2})(?:/|$)`)
)

// normaliser rewrites one run's recording.
type normaliser struct {
	root       string // the run's root, e.g. /tmp/ctxaudit-lab-0123456789
	start, end time.Time
	ids        map[string]string // raw → placeholder, per rule name + raw
	counts     map[string]int
	subst      []substitution
	err        error // the first placeholder that would change a length
}

type substitution struct {
	Kind string `json:"kind"`
	Raw  string `json:"raw"`
	Norm string `json:"normalised"`
}

func newNormaliser(root string, start, end time.Time) *normaliser {
	return &normaliser{root: root, start: start, end: end, ids: map[string]string{}, counts: map[string]int{}}
}

func (n *normaliser) note(kind, raw, norm string) {
	if raw != norm {
		n.subst = append(n.subst, substitution{kind, raw, norm})
	}
}

// id returns the placeholder of a raw id under rule r.
func (n *normaliser) id(r idRule, raw string) string {
	key := r.name + "\x00" + raw
	if p, ok := n.ids[key]; ok {
		return p
	}
	n.counts[r.name]++
	p := r.place(raw, n.counts[r.name])
	if len(p) != len(raw) {
		if n.err == nil {
			n.err = fmt.Errorf("normalise: placeholder %q for %s %q changes its length", p, r.name, raw)
		}
		return raw
	}
	n.ids[key] = p
	n.note(r.name, raw, p)
	return p
}

// replaceSub replaces submatch 1 of every match of re (or the whole match
// when re has no group) with f(raw).
func replaceSub(re *regexp.Regexp, b []byte, f func(raw string) string) []byte {
	var out bytes.Buffer
	last := 0
	for _, m := range re.FindAllSubmatchIndex(b, -1) {
		s, e := m[0], m[1]
		if len(m) >= 4 && m[2] >= 0 {
			s, e = m[2], m[3]
		}
		out.Write(b[last:s])
		out.WriteString(f(string(b[s:e])))
		last = e
	}
	if last == 0 {
		return b
	}
	out.Write(b[last:])
	return out.Bytes()
}

// ids and the root, in content and paths alike.
func (n *normaliser) names(b []byte) []byte {
	rootName := filepath.Base(n.root)
	b = bytes.ReplaceAll(b, []byte(rootName), []byte(filepath.Base(normalisedRoot)))
	for _, r := range idRules {
		b = replaceSub(r.re, b, func(raw string) string { return n.id(r, raw) })
	}
	b = replaceSub(fileTime, b, func(raw string) string {
		norm := normalBase.Format("2006-01-02T15-04-05")
		if len(raw) > len(norm) {
			norm += "-000Z"
		}
		n.note("file-time", raw, norm)
		return norm
	})
	return b
}

// path normalises a recording's relative path.
func (n *normaliser) path(rel string) string {
	p := string(n.names([]byte(filepath.ToSlash(rel))))
	p = string(replaceSub(dateDirRe, []byte(p), func(raw string) string {
		norm := normalBase.Format("2006/01/02")
		n.note("date-dir", raw, norm)
		return norm
	}))
	return filepath.FromSlash(p)
}

func (n *normaliser) inRun(t time.Time) bool {
	return !t.Before(n.start.Add(-48*time.Hour)) && !t.After(n.end.Add(48*time.Hour))
}

// reading is one clock reading in a file: b[start:end] is its text.
type reading struct {
	file, start, end int
	at               time.Time
	render           func(t time.Time) string // the text of t in the reading's format
	lineAt           time.Time                // the first reading of its line
	rank             int
}

// names and values normalises a recorded file's bytes, all but its clock
// readings.
func (n *normaliser) namesAndValues(b []byte) []byte {
	b = n.names(b)
	for _, r := range valueRules {
		b = replaceSub(r.re, b, func(raw string) string {
			norm := r.fixed
			switch {
			case norm != "":
			case strings.Contains(raw, "."): // 0.0123 → 0.0000
				norm = strings.Map(func(c rune) rune {
					if c >= '0' && c <= '9' {
						return '0'
					}
					return c
				}, raw)
			default: // 378 → 100
				norm = "1" + strings.Repeat("0", len(raw)-1)
			}
			n.note("value", raw, norm)
			return norm
		})
	}
	return b
}

// readings finds the clock readings of file i.
func (n *normaliser) readings(i int, b []byte) []reading {
	var rs []reading
	for _, m := range isoRe.FindAllIndex(b, -1) {
		raw := string(b[m[0]:m[1]])
		t, err := time.Parse(time.RFC3339Nano, raw)
		if err != nil || !n.inRun(t) {
			continue
		}
		frac := ""
		if j := strings.IndexByte(raw, '.'); j >= 0 {
			k := j + 1
			for k < len(raw) && raw[k] >= '0' && raw[k] <= '9' {
				k++
			}
			frac = "." + strings.Repeat("0", k-j-1)
		}
		zone := "Z"
		if !strings.HasSuffix(raw, "Z") {
			zone = "+00:00"
		}
		rs = append(rs, reading{file: i, start: m[0], end: m[1], at: t, render: func(t time.Time) string {
			return t.Format("2006-01-02T15:04:05") + frac + zone
		}})
	}
	for _, m := range numberRe.FindAllIndex(b, -1) {
		s, e := m[0], m[1]
		if s > 0 && (isWord(b[s-1]) || b[s-1] == '.' || b[s-1] == '-') || e < len(b) && (isWord(b[e]) || b[e] == '-') {
			continue
		}
		whole, frac, _ := strings.Cut(string(b[s:e]), ".")
		v, err := strconv.ParseInt(whole, 10, 64)
		if err != nil {
			continue
		}
		var unit time.Duration
		switch len(whole) {
		case 10:
			unit = time.Second
		case 13:
			unit = time.Millisecond
		case 16:
			unit = time.Microsecond
		case 19:
			unit = time.Nanosecond
		default:
			continue
		}
		t := time.Unix(0, 0).Add(time.Duration(v) * unit)
		if !n.inRun(t) {
			continue
		}
		rs = append(rs, reading{file: i, start: s, end: e, at: t, render: func(t time.Time) string {
			out := strconv.FormatInt(t.UnixNano()/int64(unit), 10)
			if frac != "" {
				// A float's shortest form has as many digits as the
				// reading happened to need: one zero, always.
				out += ".0"
			}
			return out
		}})
	}
	sort.Slice(rs, func(a, b int) bool { return rs[a].start < rs[b].start })
	// A line's readings are ranked at its first: one record may carry two
	// clocks (pi: the entry's and its message's), whose order jitters.
	line, lineAt := -1, time.Time{}
	for k := range rs {
		if l := bytes.LastIndexByte(b[:rs[k].start], '\n'); l != line || k == 0 {
			line, lineAt = l, rs[k].at
		}
		rs[k].lineAt = lineAt
	}
	return rs
}

// rankReadings numbers every reading of the run by the time of its line,
// ties in visiting order (file, then place), so the k-th becomes
// normalBase plus k seconds: the order of events survives, the jitter
// between them does not.
func rankReadings(all [][]reading) {
	var flat []*reading
	for i := range all {
		for j := range all[i] {
			flat = append(flat, &all[i][j])
		}
	}
	sort.SliceStable(flat, func(a, b int) bool { return flat[a].lineAt.Before(flat[b].lineAt) })
	for k, r := range flat {
		r.rank = k
	}
}

// applyReadings rewrites a file's readings.
func (n *normaliser) applyReadings(b []byte, rs []reading) []byte {
	var out bytes.Buffer
	last := 0
	for _, r := range rs {
		if r.start < last {
			continue // inside an earlier reading
		}
		norm := r.render(normalBase.Add(time.Duration(r.rank) * time.Second))
		n.note("time", string(b[r.start:r.end]), norm)
		out.Write(b[last:r.start])
		out.WriteString(norm)
		last = r.end
	}
	out.Write(b[last:])
	return out.Bytes()
}

func isWord(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

// normaliseTree writes the normalised copy of the recording src into dst.
// Files are visited main transcript first (the shortest paths, then by
// name), so ids are numbered in the order the transcript names them.
func (n *normaliser) normaliseTree(src, dst string) error {
	var files []string
	if err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(src, p)
			files = append(files, rel)
		}
		return nil
	}); err != nil {
		return err
	}
	sort.Slice(files, func(i, j int) bool {
		di, dj := strings.Count(files[i], string(filepath.Separator)), strings.Count(files[j], string(filepath.Separator))
		if di != dj {
			return di < dj
		}
		return n.shape(files[i]) < n.shape(files[j])
	})
	bodies := make([][]byte, len(files))
	outs := make([]string, len(files))
	readings := make([][]reading, len(files))
	for i, rel := range files {
		b, err := os.ReadFile(filepath.Join(src, rel))
		if err != nil {
			return err
		}
		if filepath.Base(rel) == OTLPFile {
			if b, err = splitOTLP(b); err != nil {
				return fmt.Errorf("%s: %w", rel, err)
			}
		}
		outs[i] = filepath.Join(dst, n.path(rel))
		bodies[i] = n.namesAndValues(b)
		readings[i] = n.readings(i, bodies[i])
	}
	rankReadings(readings)
	for i := range files {
		if err := os.MkdirAll(filepath.Dir(outs[i]), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(outs[i], n.applyReadings(bodies[i], readings[i]), 0o644); err != nil {
			return err
		}
	}
	return n.err
}

// shape is a path with its run-chosen parts masked, for a visiting order
// that does not depend on them.
func (n *normaliser) shape(rel string) string {
	p := strings.ReplaceAll(rel, filepath.Base(n.root), "")
	for _, r := range idRules {
		p = r.re.ReplaceAllString(p, "")
	}
	return fileTime.ReplaceAllString(p, "") + "\x00" + rel
}

// writeLog writes the substitutions to path, so a recording can be mapped
// back to the raw run.
func (n *normaliser) writeLog(path string) error {
	b, err := json.MarshalIndent(n.subst, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// splitOTLP rewrites captured OTLP/HTTP JSON log requests as one request a
// log record, in the order they came: how the harness happened to batch
// its exports depends on timing, the records do not.
func splitOTLP(b []byte) ([]byte, error) {
	var out bytes.Buffer
	for i, line := range bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var req struct {
			ResourceLogs []struct {
				Resource  json.RawMessage `json:"resource"`
				ScopeLogs []struct {
					Scope      json.RawMessage   `json:"scope,omitempty"`
					LogRecords []json.RawMessage `json:"logRecords"`
					SchemaURL  string            `json:"schemaUrl,omitempty"`
				} `json:"scopeLogs"`
				SchemaURL string `json:"schemaUrl,omitempty"`
			} `json:"resourceLogs"`
		}
		if err := json.Unmarshal(line, &req); err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		for _, rl := range req.ResourceLogs {
			for _, sl := range rl.ScopeLogs {
				for _, rec := range sl.LogRecords {
					one := map[string]any{"resourceLogs": []any{map[string]any{
						"resource": rl.Resource,
						"scopeLogs": []any{map[string]any{
							"scope": sl.Scope, "logRecords": []json.RawMessage{rec},
						}},
					}}}
					if sl.Scope == nil {
						delete(one["resourceLogs"].([]any)[0].(map[string]any)["scopeLogs"].([]any)[0].(map[string]any), "scope")
					}
					enc, err := json.Marshal(one)
					if err != nil {
						return nil, err
					}
					out.Write(enc)
					out.WriteByte('\n')
				}
			}
		}
	}
	return out.Bytes(), nil
}
