package migrations

// Rendering per server version.
//
// The migration files are written once, in the SQL ClickHouse 18.16
// understands. Every server from ModernSince on also gets a "modern"
// rendering of the same logical schema: the same tables, columns, keys and
// partitions, with storage choices 18.16 lacks: LowCardinality for strings
// of few distinct values, DateTime64(3) for the event time, column codecs,
// and data-skipping indices on columns that queries filter on outside the
// primary key. The modern rendering is derived from the 18.16 text by the
// rules in this file, applied by column name, so a new migration needs no
// second copy: an ALTER TABLE … ADD COLUMN is rendered by the same rules as
// a CREATE TABLE column.
//
// A migration's checksum is the SHA-256 of its file, not of a rendering, so
// the record in schema_migrations means "this file was applied" whatever
// the server version: a database created on 18.16 keeps migrating cleanly
// after the server is upgraded (its existing tables keep their 18.16 types,
// and new migrations are rendered for the server they run on). Queries are
// written to give the same results on both renderings.

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ServerVersion is a ClickHouse release, major.minor.
type ServerVersion struct{ Major, Minor int }

// Classic is the oldest supported server and the rendering the files are written in.
var Classic = ServerVersion{18, 16}

// ModernSince is the first version that gets the modern rendering. Every
// feature it uses (LowCardinality, DateTime64, Delta/T64/ZSTD codecs,
// bloom_filter indices, TTL … ttl_only_drop_parts) is generally available
// there; the rendering is tested on 26.7. Older servers get the 18.16
// rendering.
var ModernSince = ServerVersion{22, 8}

// ParseServerVersion reads "26.7", "26.7.2.1" or "18.16.1".
func ParseServerVersion(s string) (ServerVersion, error) {
	parts := strings.Split(strings.TrimSpace(s), ".")
	if len(parts) < 2 {
		return ServerVersion{}, fmt.Errorf("invalid ClickHouse version %q: want major.minor, e.g. 26.7 or 18.16", s)
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil || major <= 0 || minor < 0 {
		return ServerVersion{}, fmt.Errorf("invalid ClickHouse version %q: want major.minor, e.g. 26.7 or 18.16", s)
	}
	return ServerVersion{major, minor}, nil
}

func (v ServerVersion) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// AtLeast reports whether v is o or newer.
func (v ServerVersion) AtLeast(o ServerVersion) bool {
	return v.Major > o.Major || (v.Major == o.Major && v.Minor >= o.Minor)
}

// Modern reports whether v gets the modern rendering.
func (v ServerVersion) Modern() bool { return v.AtLeast(ModernSince) }

// Rendering names the rendering a server gets: "18.16" or "modern".
func (v ServerVersion) Rendering() string {
	if v.Modern() {
		return "modern"
	}
	return "18.16"
}

// The logical-schema rules of the modern rendering, by column name.
var (
	// lowCardinality: strings with a handful to a few thousand distinct
	// values. (Kinds and strategies are Enum8 already, one byte each.)
	lowCardinality = map[string]bool{
		"tool": true, "source": true, "harness_version": true, "model": true, "project": true,
		"git_branch": true, "shown_unit": true, "detector": true,
	}
	// lowCardinalitySuffix catches later columns of the same nature.
	lowCardinalitySuffix = []string{"_kind", "_unit", "_source", "_precision", "_strategy"}
	// bigText: free text and JSON, compressed harder.
	bigText = map[string]bool{"marker": true, "arguments": true, "text": true, "reason": true, "next_hint": true, "cwd": true, "source_file": true}
	// keyColumn: ids in a table's sorting key, read by every FINAL.
	keyColumn = map[string]bool{"session_id": true, "call_id": true, "message_id": true, "sha256": true}
	// eventTime: the record's own time, paired with a nanosecond column; on
	// modern servers it keeps milliseconds itself.
	eventTime = map[string]bool{"ts": true}
	// skipIndex: columns that queries filter on outside the primary key.
	skipIndex = map[string]string{
		"call_id":   "bloom_filter(0.01) GRANULARITY 4",
		"saved_ref": "bloom_filter(0.01) GRANULARITY 4",
		"target":    "bloom_filter(0.01) GRANULARITY 4",
	}
)

// modernType returns the modern type (with codec) for column name of
// classic type typ. The codecs were chosen by measuring each column and
// every dashboard query on generated data (BenchmarkRenderingsOnChDB,
// docs/performance.md): T64 and Delta shrink numbers and times to the bits
// in use and stay as cheap to read as LZ4; ZSTD goes only where text is
// large or repetitive, and not on the key columns every FINAL reads.
func modernType(name, typ string) string {
	switch {
	case typ == "String" && isLowCardinality(name):
		return "LowCardinality(String)"
	case typ == "String" && bigText[name]:
		return "String CODEC(ZSTD(3))"
	case typ == "String" && keyColumn[name]:
		return typ
	case typ == "String":
		// Targets, references, hashes: ZSTD finds their shared prefixes.
		return "String CODEC(ZSTD(1))"
	case typ == "DateTime" && eventTime[name]:
		return "DateTime64(3) CODEC(Delta, LZ4)"
	case typ == "DateTime":
		return "DateTime CODEC(Delta, LZ4)"
	case name == "version" && typ == "UInt64":
		// A write time in nanoseconds, the same for a whole batch.
		return "UInt64 CODEC(Delta, LZ4)"
	case strings.HasSuffix(name, "_ns"):
		// Sub-second digits: noise that no codec shrinks.
		return typ
	case typ == "UInt8" || typ == "UInt32" || typ == "UInt64" ||
		typ == "Nullable(UInt8)" || typ == "Nullable(UInt32)" || typ == "Nullable(UInt64)":
		// Flags, counters and sizes: T64 keeps only the bits in use (one
		// for a flag, about twenty for a size).
		return typ + " CODEC(T64, LZ4)"
	}
	return typ
}

// modernColumn splits modernType into the type and the codec clause (with
// its leading space, or empty): the codec goes after any DEFAULT or COMMENT.
func modernColumn(name, typ string) (string, string) {
	t := modernType(name, typ)
	if i := strings.Index(t, " CODEC("); i >= 0 {
		return t[:i], t[i:]
	}
	return t, ""
}

var placement = regexp.MustCompile(`(?is)\s+(AFTER\s+\S+|FIRST)\s*$`)

// withCodec appends codec to a column definition's tail (DEFAULT, COMMENT
// …), before an ALTER's AFTER/FIRST, unless it names a codec already.
func withCodec(tail, codec string) string {
	if codec == "" || strings.Contains(strings.ToUpper(tail), "CODEC(") {
		return tail
	}
	if loc := placement.FindStringIndex(tail); loc != nil {
		return tail[:loc[0]] + codec + tail[loc[0]:]
	}
	return tail + codec
}

func isLowCardinality(name string) bool {
	if lowCardinality[name] {
		return true
	}
	for _, s := range lowCardinalitySuffix {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

var (
	createTable = regexp.MustCompile(`(?is)^CREATE TABLE IF NOT EXISTS\s+(\S+)\s*\(`)
	alterTable  = regexp.MustCompile(`(?is)^ALTER TABLE\s+(\S+)\s+`)
	columnDef   = regexp.MustCompile(`^(\s*)([A-Za-z_][A-Za-z0-9_]*)(\s+)`)
	addColumn   = regexp.MustCompile(`(?i)(?:ADD|MODIFY) COLUMN\s+(IF (?:NOT )?EXISTS\s+)?([A-Za-z_][A-Za-z0-9_]*)\s+`)
)

// render returns stmt as it should run on a server of version v.
func render(stmt string, v ServerVersion) (string, error) {
	if !v.Modern() {
		return stmt, nil
	}
	if m := createTable.FindStringSubmatchIndex(stmt); m != nil {
		return renderCreate(stmt, m[1])
	}
	if m := alterTable.FindStringSubmatch(stmt); m != nil {
		return renderAlter(stmt, m[1])
	}
	return stmt, nil
}

// renderCreate rewrites the column list of a CREATE TABLE whose "(" ends at open.
func renderCreate(stmt string, open int) (string, error) {
	end, err := matchParen(stmt, open-1)
	if err != nil {
		return "", err
	}
	body := stmt[open:end]
	lines := strings.Split(body, "\n")
	var indices []string
	indent := "    "
	for i, line := range lines {
		m := columnDef.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		name := m[2]
		rest := line[len(m[0]):]
		typEnd, err := typeEnd(rest)
		if err != nil {
			return "", fmt.Errorf("column %s: %w", name, err)
		}
		typ := rest[:typEnd]
		indent = m[1]
		tail := strings.TrimRight(rest[typEnd:], " \t")
		comma := ""
		if strings.HasSuffix(tail, ",") {
			tail, comma = tail[:len(tail)-1], ","
		}
		mt, codec := modernColumn(name, typ)
		lines[i] = m[1] + name + m[3] + mt + withCodec(tail, codec) + comma
		if spec, ok := skipIndex[name]; ok {
			indices = append(indices, indent+"INDEX idx_"+name+" "+name+" TYPE "+spec)
		}
	}
	if len(indices) > 0 {
		// The last column line has no trailing comma: give it one.
		last := len(lines) - 1
		for last >= 0 && strings.TrimSpace(lines[last]) == "" {
			last--
		}
		lines[last] = strings.TrimRight(lines[last], " \t") + ","
		tail := strings.Join(indices, ",\n")
		lines = append(lines[:last+1], append([]string{tail}, lines[last+1:]...)...)
	}
	return stmt[:open] + strings.Join(lines, "\n") + stmt[end:], nil
}

// renderAlter rewrites the type of every ADD COLUMN and MODIFY COLUMN (so
// that a later migration cannot turn a modern column back into its 18.16
// type) and adds the skipping index of an added indexed column.
func renderAlter(stmt, table string) (string, error) {
	var b strings.Builder
	var indices []string
	rest := stmt
	for {
		m := addColumn.FindStringSubmatchIndex(rest)
		if m == nil {
			b.WriteString(rest)
			break
		}
		b.WriteString(rest[:m[1]])
		name := rest[m[4]:m[5]]
		after := rest[m[1]:]
		n, err := typeEnd(after)
		if err != nil {
			return "", fmt.Errorf("column %s: %w", name, err)
		}
		mt, codec := modernColumn(name, after[:n])
		b.WriteString(mt)
		end := n + clauseEnd(after[n:])
		b.WriteString(withCodec(after[n:end], codec))
		if spec, ok := skipIndex[name]; ok {
			indices = append(indices, "ADD INDEX IF NOT EXISTS idx_"+name+" "+name+" TYPE "+spec)
		}
		rest = after[end:]
	}
	out := b.String()
	if len(indices) > 0 {
		out += ",\n    " + strings.Join(indices, ",\n    ")
	}
	return out, nil
}

// clauseEnd returns the length of s up to the ',' that ends the current
// ALTER clause (outside parentheses and quotes), or all of s.
func clauseEnd(s string) int {
	depth := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if quote != 0 {
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
			continue
		}
		switch c {
		case '\'', '"', '`':
			quote = c
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				return i
			}
		}
	}
	return len(s)
}

// typeEnd returns the length of the type expression at the start of s: a
// name and an optional balanced parenthesis (quotes inside respected).
func typeEnd(s string) (int, error) {
	i := 0
	for i < len(s) && (isIdent(s[i])) {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("no type in %q", s)
	}
	if i < len(s) && s[i] == '(' {
		end, err := matchParen(s, i)
		if err != nil {
			return 0, err
		}
		i = end + 1
	}
	return i, nil
}

func isIdent(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// matchParen returns the index of the ')' closing the '(' at s[open].
func matchParen(s string, open int) (int, error) {
	depth := 0
	var quote byte
	for i := open; i < len(s); i++ {
		c := s[i]
		if quote != 0 {
			switch c {
			case '\\':
				i++
			case quote:
				quote = 0
			}
			continue
		}
		switch c {
		case '\'', '"', '`':
			quote = c
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i, nil
			}
		}
	}
	return 0, fmt.Errorf("unbalanced parenthesis in %.60q", s[open:])
}

// dayPartitioned are the tables partitioned by day: the audit tables, by
// toYYYYMMDD of their record's own time (sql/0001), and the rollups of
// tool_calls, by the same day of tool_calls (sql/0004). tool_calls goes
// first: a rollup whose partition of tool_calls is gone is never read.
//
// day is that day as a Date, which a table's TTL expires its rows by: at
// the end of the day plus the retention — prune's rule (drop a day partition
// once the day ends before the cut-off), so that a server that applies the
// TTL and one that is pruned keep the same rows, and every table lets a day
// go at the same moment. A TTL on each row's own time would expire a part of
// a day whose later parts stay, which prune never does.
var dayPartitioned = []struct{ table, day string }{
	{"tool_calls", "toDate(ts)"},
	{"answers", "toDate(ts)"},
	{"sessions", "toDate(started_at)"},
	{"tool_outputs", "toDate(first_seen)"},
	{"tool_call_rollup", "makeDate(intDiv(day, 10000), intDiv(day, 100) % 100, day % 100)"},
	{"tool_call_rollup_days", "makeDate(intDiv(day, 10000), intDiv(day, 100) % 100, day % 100)"},
}

// DayPartitionedTables are the tables partitioned by day, which retention
// (prune, or the TTL of RetentionStatements) drops days of; tool_calls first.
func DayPartitionedTables() []string {
	out := make([]string, len(dayPartitioned))
	for i, t := range dayPartitioned {
		out[i] = t.table
	}
	return out
}

// RetentionStatements returns what sets a retention period on the audit
// tables of db and their rollups: on modern servers a table TTL that drops
// whole parts once every row in them has expired (ttl_only_drop_parts),
// which happens, for every part of a day, once the day ended before the
// cut-off (see dayPartitioned); none on 18.16, which has no TTL (there
// `ctxaudit prune` drops the partitions).
func RetentionStatements(db string, v ServerVersion, retention time.Duration) []string {
	if !v.Modern() || retention <= 0 {
		return nil
	}
	interval := fmt.Sprintf("INTERVAL %d SECOND", int64(retention/time.Second))
	switch {
	case retention%(24*time.Hour) == 0:
		interval = fmt.Sprintf("INTERVAL %d DAY", int64(retention/(24*time.Hour)))
	case retention%time.Hour == 0:
		interval = fmt.Sprintf("INTERVAL %d HOUR", int64(retention/time.Hour))
	}
	var out []string
	for _, t := range dayPartitioned {
		// The day's end is the next day's start, in the server's time zone,
		// the zone the day partitions are computed in.
		out = append(out,
			fmt.Sprintf("ALTER TABLE %s.%s MODIFY SETTING ttl_only_drop_parts = 1", QuoteIdent(db), QuoteIdent(t.table)),
			fmt.Sprintf("ALTER TABLE %s.%s MODIFY TTL toDateTime(%s + 1) + %s", QuoteIdent(db), QuoteIdent(t.table), t.day, interval))
	}
	return out
}
