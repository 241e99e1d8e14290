package migrations

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

var modern = ServerVersion{26, 7}

func TestParseServerVersion(t *testing.T) {
	for in, want := range map[string]ServerVersion{"18.16.1": {18, 16}, "26.7": {26, 7}, "26.7.2.1": {26, 7}, " 24.8.4 ": {24, 8}} {
		got, err := ParseServerVersion(in)
		if err != nil || got != want {
			t.Errorf("ParseServerVersion(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "26", "x.y", "26.x", "-1.2"} {
		if _, err := ParseServerVersion(bad); err == nil {
			t.Errorf("ParseServerVersion(%q) accepted", bad)
		}
	}
	for v, want := range map[ServerVersion]bool{{18, 16}: false, {21, 8}: false, {22, 7}: false, {22, 8}: true, {24, 3}: true, {26, 7}: true} {
		if v.Modern() != want {
			t.Errorf("%s.Modern() = %v, want %v", v, v.Modern(), want)
		}
	}
}

// An applied migration is recognised by the checksum of its file, whatever
// rendering ran, so 0001 must stay byte-for-byte what 18.16 databases
// recorded when they applied it.
func TestFirstMigrationIsUnchanged(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	const applied = "c360bed4e72c7bac2f3d66763835002aa13b33f796894b38ea1beef5f5d382e8"
	if all[0].Checksum != applied {
		t.Errorf("0001_%s checksum is %s; databases recorded %s: add a migration instead of editing it", all[0].Name, all[0].Checksum, applied)
	}
	classic, err := all[0].StatementsFor("db", Classic)
	if err != nil {
		t.Fatal(err)
	}
	old, err := all[0].Statements("db")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(classic, ";\n") != strings.Join(old, ";\n") || strings.Join(classic, "") != strings.Join(splitStatements(renderTemplateForTest(t, all[0], "db")), "") {
		t.Error("the 18.16 rendering is not the file as written")
	}
}

func renderTemplateForTest(t *testing.T, m Migration, db string) string {
	t.Helper()
	return strings.ReplaceAll(m.text, "{{ident .Database}}", QuoteIdent(db))
}

func TestModernRenderingOfTheAuditTables(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	stmts, err := all[0].StatementsFor("db", modern)
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(stmts, "\n")
	for _, want := range []string{
		"    ts                 DateTime64(3) CODEC(Delta, LZ4),\n",
		"    tool               LowCardinality(String),\n",
		"    harness_version    LowCardinality(String),\n",
		"    shown_unit         LowCardinality(String),\n",
		"    arguments          String CODEC(ZSTD(3)),\n",
		"    marker             String CODEC(ZSTD(3)),\n",
		"    text       String CODEC(ZSTD(3)),\n",
		"    source_line        UInt64 CODEC(T64, LZ4),\n",
		"    original_bytes     Nullable(UInt64) CODEC(T64, LZ4),\n",
		"    call_id            String,\n",
		"    target             String CODEC(ZSTD(1)),\n",
		"    ts_ns              UInt32,\n",
		"    INDEX idx_call_id call_id TYPE bloom_filter(0.01) GRANULARITY 4,\n",
		"    INDEX idx_saved_ref saved_ref TYPE bloom_filter(0.01) GRANULARITY 4\n)",
		// Enums stay: one byte a value already.
		"    strategy           Enum8('none' = 0, 'head' = 1,",
		"ORDER BY (session_id, call_id)",
		"PARTITION BY toYYYYMMDD(ts)",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("modern rendering lacks %q", want)
		}
	}
	// The same columns in the same order: one logical schema.
	classic, _ := all[0].Statements("db")
	for i := range classic {
		if c, m := columnNames(classic[i]), columnNames(stmts[i]); strings.Join(c, ",") != strings.Join(m, ",") {
			t.Errorf("statement %d: columns differ between renderings:\n%v\n%v", i+1, c, m)
		}
	}
}

// columnNames lists the column (and index) names of a CREATE TABLE.
func columnNames(stmt string) []string {
	var out []string
	for _, line := range strings.Split(stmt, "\n") {
		if m := columnDef.FindStringSubmatch(line); m != nil && strings.HasPrefix(line, "    ") && !strings.HasPrefix(strings.TrimSpace(line), "INDEX ") {
			out = append(out, m[2])
		}
	}
	return out
}

// Later migrations are plain 18.16 ALTERs; they get the same rules.
func TestModernRenderingOfAnAlter(t *testing.T) {
	in := "ALTER TABLE `db`.tool_calls ADD COLUMN IF NOT EXISTS size_precision Enum8('exact' = 0, 'lower_bound' = 1) AFTER total, ADD COLUMN IF NOT EXISTS context_unit String, ADD COLUMN IF NOT EXISTS saved_ref String DEFAULT 'a, b'"
	got, err := render(in, modern)
	if err != nil {
		t.Fatal(err)
	}
	want := "ALTER TABLE `db`.tool_calls ADD COLUMN IF NOT EXISTS size_precision Enum8('exact' = 0, 'lower_bound' = 1) AFTER total, ADD COLUMN IF NOT EXISTS context_unit LowCardinality(String), ADD COLUMN IF NOT EXISTS saved_ref String DEFAULT 'a, b' CODEC(ZSTD(1)),\n    ADD INDEX IF NOT EXISTS idx_saved_ref saved_ref TYPE bloom_filter(0.01) GRANULARITY 4"
	if got != want {
		t.Errorf("render =\n%s\nwant\n%s", got, want)
	}
	mod, err := render("ALTER TABLE `db`.answers MODIFY COLUMN IF EXISTS model String", modern)
	if err != nil || mod != "ALTER TABLE `db`.answers MODIFY COLUMN IF EXISTS model LowCardinality(String)" {
		t.Errorf("MODIFY COLUMN rendered as %q (%v)", mod, err)
	}
	if same, _ := render(in, Classic); same != in {
		t.Errorf("18.16 rendering changed the statement: %s", same)
	}
}

func TestEveryMigrationRendersForEveryVersion(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range all {
		for _, v := range []ServerVersion{Classic, {22, 8}, modern} {
			stmts, err := m.StatementsFor("db", v)
			if err != nil {
				t.Errorf("%04d_%s for %s: %v", m.Version, m.Name, v, err)
			}
			for _, s := range stmts {
				if strings.Count(s, "(") != strings.Count(s, ")") {
					t.Errorf("%04d_%s for %s: unbalanced statement %q", m.Version, m.Name, v, s)
				}
			}
		}
	}
}

func TestRetentionStatements(t *testing.T) {
	const month = 30 * 24 * time.Hour
	if got := RetentionStatements("db", Classic, month); len(got) != 0 {
		t.Errorf("18.16 has no TTL, got %q", got)
	}
	if got := strings.Join(RetentionStatements("db", modern, 12*time.Hour), "\n"); !strings.Contains(got, "+ INTERVAL 12 HOUR") {
		t.Errorf("12h retention: %s", got)
	}
	got := strings.Join(RetentionStatements("db", modern, month), "\n")
	for _, want := range []string{
		"ALTER TABLE `db`.`tool_calls` MODIFY TTL toDateTime(toDate(ts) + 1) + INTERVAL 30 DAY",
		"ALTER TABLE `db`.`sessions` MODIFY TTL toDateTime(toDate(started_at) + 1) + INTERVAL 30 DAY",
		"ALTER TABLE `db`.`tool_call_rollup` MODIFY TTL toDateTime(makeDate(intDiv(day, 10000), intDiv(day, 100) % 100, day % 100) + 1) + INTERVAL 30 DAY",
		"ALTER TABLE `db`.`tool_call_rollup_days` MODIFY SETTING ttl_only_drop_parts = 1",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("retention statements lack %q:\n%s", want, got)
		}
	}
}

func TestPlan(t *testing.T) {
	steps, err := Plan("db", modern, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) < 3 || !strings.HasPrefix(steps[0].SQL, "CREATE DATABASE IF NOT EXISTS `db`") || steps[2].Migration.Version != 1 {
		t.Fatalf("plan for a new database: %+v", steps)
	}
	all, _ := All()
	applied := map[uint32]string{}
	for _, m := range all {
		applied[m.Version] = m.Checksum
	}
	if steps, err := Plan("db", modern, applied); err != nil || len(steps) != 2 {
		t.Errorf("plan for an up-to-date database: %d steps, %v; want only the bootstrap", len(steps), err)
	}
	applied[1] = "edited"
	if _, err := Plan("db", modern, applied); err == nil {
		t.Error("an edited migration was not refused")
	}
}

// Retention covers every day-partitioned table the migrations create, and
// only those: a new partitioned table cannot be left out of prune and TTL.
func TestDayPartitionedTablesAreThoseOfTheMigrations(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	create := regexp.MustCompile(`(?s)CREATE TABLE IF NOT EXISTS \{\{ident \.Database\}\}\.(\w+)(.*?)(?:;|$)`)
	var partitioned []string
	for _, m := range all {
		for _, c := range create.FindAllStringSubmatch(m.text, -1) {
			if strings.Contains(c[2], "PARTITION BY") {
				partitioned = append(partitioned, c[1])
			}
		}
	}
	got, want := DayPartitionedTables(), partitioned
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) || len(want) == 0 {
		t.Errorf("DayPartitionedTables %v; the migrations partition %v", got, want)
	}
	if DayPartitionedTables()[0] != "tool_calls" {
		t.Errorf("tool_calls must go first: %v", DayPartitionedTables())
	}
}
