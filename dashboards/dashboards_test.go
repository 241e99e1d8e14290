package dashboards_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"go.yaml.in/yaml/v3"

	"github.com/ctxaudit/ctxaudit/dashboards"
	"github.com/ctxaudit/ctxaudit/dashboards/internal/grafana"
	"github.com/ctxaudit/ctxaudit/internal/chdbtest"
	"github.com/ctxaudit/ctxaudit/internal/chtest"
)

func TestMain(m *testing.M) { os.Exit(chdbtest.Done(chtest.Run(m))) }

const (
	overviewUID   = "ctxaudit-overview"
	postmortemUID = "ctxaudit-postmortem"
	disclosureUID = "ctxaudit-disclosure"
)

// mustShowData marks, for every panel of every dashboard, whether it must
// show data (at least one row with a non-zero, non-empty value) on the test
// fixture with every filter at All and, for the postmortem, the fixture's
// riskiest session selected. Every panel must be listed, so a new panel
// forces a decision here.
var mustShowData = map[string]map[string]bool{
	overviewUID: {
		"Tool calls":                          true,
		"High-risk answers":                   true,
		"Tool calls and truncation rate":      true,
		"Truncations by visibility":           true,
		"Truncation rate by harness":          true,
		"Truncation rate by tool":             true,
		"Truncation rate by model":            true,
		"Silent vs explicit vs suspected":     true,
		"Context bytes delivered vs original": true,
		"Coverage of truncated outputs":       true,
		"Answers at risk":                     true,
		"Why answers are at risk":             true,
		"Riskiest recent sessions":            true,
	},
	postmortemUID: {
		"Verdict":                                true,
		"Tool calls":                             true,
		"Bytes":                                  true,
		"Verdict of the worst answer":            true,
		"Tool-call timeline":                     true,
		"Answers":                                true,
		"Incomplete inputs behind risky answers": true,
		"Session":                                true,
	},
	disclosureUID: {
		"Truncation notices":                         true,
		"Disclosure quality by harness and tool":     true,
		"What truncation notices disclose, by tool":  true,
		"Silent share and follow-up rate, by tool":   true,
		"Truncation strategy by tool":                true,
		"Median sizes of truncated outputs, by tool": true,
		"Recent silent truncations":                  true,
	},
}

func loadDashboards(t testing.TB) []*grafana.Dashboard {
	t.Helper()
	ds, err := grafana.LoadDir("json")
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 3 {
		t.Fatalf("found %d dashboards in json/, want 3", len(ds))
	}
	return ds
}

// ---- structure --------------------------------------------------------------

var (
	// Functions and types ClickHouse 18.16 lacks (docs/design.md §7.4), or that the
	// dashboards must not rely on.
	forbiddenSQL = regexp.MustCompile(`(?i)\b(toStartOfInterval|DateTime64|LowCardinality|JSONExtract\w*|Map\s*\(|toDecimal\w*|PREWHERE)\b|\bOVER\s*\(|\$__(timeInterval|timeGroup)`)
	tableRef     = regexp.MustCompile(`\b(?:FROM|JOIN)\s+([\w.]+)(\s+FINAL)?`)
	auditTables  = []string{"tool_calls", "answers", "sessions"}
	// systemTables may be named qualified: the rollup freshness check reads
	// the block numbers of tool_calls' partitions.
	systemTables = []string{"system.parts"}
	rollupKey    = "day, scope, period, period_start, source, tool, model, project"
	templateVar  = regexp.MustCompile(`\$(\w+)|\[\[(\w+?)(?::\w+)?\]\]|\$\{(\w+)(?:\.[^:^\}]+)?(?::[^\}]+)?\}`)
	dataField    = regexp.MustCompile(`\$\{__data\.fields\.(\w+)\}`)
	dedupFree    = regexp.MustCompile(`(IN \(SELECT \w+|\(SELECT if\(count\(\) = 0, [^\n]*\b(min|max)\(\w+\)[^\n]*)$`)
	joinKeyword  = regexp.MustCompile(`(?i)\bJOIN\b`)
	aliasRef     = regexp.MustCompile(`(?i)(\S+)\s+AS\s+(\w+)`)
)

// referencedVars lists the dashboard variables a text references (Grafana's
// built-ins, $__…, excluded).
func referencedVars(s string) []string {
	var out []string
	for _, m := range templateVar.FindAllStringSubmatch(s, -1) {
		name := m[1] + m[2] + m[3]
		if !strings.HasPrefix(name, "__") && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// checkSQL applies the rules every dashboard query follows.
func checkSQL(t *testing.T, where, sql string, panel bool) {
	t.Helper()
	if strings.TrimSpace(sql) == "" {
		t.Errorf("%s: no SQL", where)
		return
	}
	if m := forbiddenSQL.FindString(sql); m != "" {
		t.Errorf("%s: uses %q, which ClickHouse 18.16 or docs/design.md §7.4 and §9 rule out", where, m)
	}
	if strings.Contains(sql, "--") || strings.Contains(sql, "/*") {
		t.Errorf("%s: SQL comments are not allowed (macro expansion differs across plugin versions inside comments)", where)
	}
	if n := len(joinKeyword.FindAllString(sql, -1)); n > 1 {
		t.Errorf("%s: %d JOINs; ClickHouse 18.16 allows one per SELECT", where, n)
	}
	for _, m := range tableRef.FindAllStringSubmatchIndex(sql, -1) {
		table := sql[m[2]:m[3]]
		if strings.Contains(table, ".") && !slices.Contains(systemTables, table) {
			t.Errorf("%s: table %s is qualified; name tables bare so the data source's default database applies", where, table)
			continue
		}
		if !slices.Contains(auditTables, table) || m[4] >= 0 || !panel {
			continue
		}
		// A panel reads each audit table with FINAL, so a record ingested twice
		// counts once. Only duplicate-insensitive subqueries may skip it: set
		// membership (IN (SELECT id …)) and the min/max session-span bounds.
		before := strings.TrimRight(sql[:m[0]], " \n")
		if !dedupFree.MatchString(before) {
			t.Errorf("%s: reads %s without FINAL", where, table)
		}
	}
	// The rollup is read without FINAL, one row per key: snapshots of one
	// block number are identical (docs/design.md §7.7).
	if n := strings.Count(sql, "FROM tool_call_rollup\n"); n != strings.Count(sql, "LIMIT 1 BY "+rollupKey) || strings.Count(sql, "tool_call_rollup ") > 0 {
		t.Errorf("%s: every read of tool_call_rollup must keep one row per key (LIMIT 1 BY %s)", where, rollupKey)
	}
	// Bounded by the time filter, or a primary-key lookup of one session.
	if panel && !strings.Contains(sql, "$__timeFilter(ts)") && !strings.Contains(sql, "$__toTime") &&
		!strings.Contains(sql, "session_id = ${session_id:singlequote}") {
		t.Errorf("%s: neither time-filtered nor a single-session lookup", where)
	}
	// Every reference renders quoted and escaped, except the plain $var that
	// $__conditionalAll needs as its second argument.
	for _, m := range templateVar.FindAllStringSubmatchIndex(sql, -1) {
		ref := sql[m[0]:m[1]]
		name := strings.Trim(strings.SplitN(ref, ":", 2)[0], "${}[]")
		if strings.HasPrefix(name, "__") {
			continue
		}
		quoted := ref == "${"+name+":singlequote}" || ref == "${"+name+":sqlstring}"
		condArg := ref == "$"+name && strings.HasPrefix(sql[m[1]:], ")") && strings.HasSuffix(strings.TrimRight(sql[:m[0]], " "), ",") &&
			strings.Contains(sql[:m[0]], "$__conditionalAll(")
		if !quoted && !condArg {
			t.Errorf("%s: %s must be ${%s:singlequote} (the plugin's default format leaves single values unquoted and unescaped)", where, ref, name)
		}
	}
}

func TestDashboardStructure(t *testing.T) {
	ds := loadDashboards(t)
	uids := map[string]string{}
	titles := map[string]bool{}
	for _, d := range ds {
		t.Run(filepath.Base(d.File), func(t *testing.T) {
			raw, err := os.ReadFile(d.File)
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(raw) {
				t.Fatal("not valid JSON")
			}
			var generic map[string]any
			if err := json.Unmarshal(raw, &generic); err != nil {
				t.Fatal(err)
			}
			if id, ok := generic["id"]; ok && id != nil {
				t.Errorf("id is %v; must be null so Grafana assigns one", id)
			}
			if d.UID == "" || len(d.UID) > 40 {
				t.Errorf("uid %q: must be set and at most 40 characters", d.UID)
			}
			if prev, dup := uids[d.UID]; dup {
				t.Errorf("uid %q also used by %s", d.UID, prev)
			}
			uids[d.UID] = d.File
			if titles[d.Title] {
				t.Errorf("title %q used twice", d.Title)
			}
			titles[d.Title] = true
			if d.SchemaVersion < 36 {
				t.Errorf("schemaVersion %d, want ≥ 36", d.SchemaVersion)
			}
			if !slices.Contains(d.Tags, "ctxaudit") {
				t.Errorf("tags %v lack ctxaudit (the dashboard links list dashboards by that tag)", d.Tags)
			}
			if d.Description == "" {
				t.Error("dashboard has no description")
			}
			expected, listed := mustShowData[d.UID]
			if !listed {
				t.Fatalf("dashboard %s is not listed in mustShowData", d.UID)
			}

			// Variables: each query variable on the provisioned data source, in
			// the plugin's SQL shape, referencing only variables defined before it.
			var defined []string
			for _, v := range d.Templating.List {
				where := "variable " + v.Name
				if v.Description == "" || v.Label == "" {
					t.Errorf("%s: needs a label and a description", where)
				}
				switch v.Type {
				case "query":
					checkDataSource(t, where, v.DataSource)
					sql, err := v.SQL()
					if err != nil {
						t.Error(err)
						continue
					}
					if v.Definition != sql {
						t.Errorf("%s: definition differs from query.rawSql", where)
					}
					if v.Refresh != 2 {
						t.Errorf("%s: refresh %d, want 2 (on time range change)", where, v.Refresh)
					}
					checkSQL(t, where, sql, false)
					for _, ref := range referencedVars(sql) {
						if !slices.Contains(defined, ref) {
							t.Errorf("%s: references %s, which is not defined before it", where, ref)
						}
					}
				case "textbox":
				default:
					t.Errorf("%s: unexpected variable type %q", where, v.Type)
				}
				if v.AllValue != nil && *v.AllValue != "" {
					t.Errorf("%s: custom allValue %q would bypass $__conditionalAll", where, *v.AllValue)
				}
				if slices.Contains(defined, v.Name) {
					t.Errorf("%s: defined twice", where)
				}
				defined = append(defined, v.Name)
			}

			ids := map[int]bool{}
			var grid [][24]bool
			for _, p := range d.AllPanels() {
				where := fmt.Sprintf("panel %d %q", p.ID, p.Title)
				if ids[p.ID] {
					t.Errorf("%s: id used twice", where)
				}
				ids[p.ID] = true
				if p.Type == "row" {
					continue
				}
				if p.Description == "" {
					t.Errorf("%s: no description", where)
				}
				if !slices.Contains([]string{"timeseries", "barchart", "bargauge", "piechart", "stat", "table", "histogram"}, p.Type) {
					t.Errorf("%s: panel type %q", where, p.Type)
				}
				if _, ok := expected[p.Title]; !ok {
					t.Errorf("%s: not listed in mustShowData[%s]", where, d.UID)
				}
				checkDataSource(t, where, p.DataSource)
				g := p.GridPos
				if g.W <= 0 || g.H <= 0 || g.X < 0 || g.X+g.W > 24 {
					t.Errorf("%s: gridPos %+v outside the 24-column grid", where, g)
				} else {
					for len(grid) < g.Y+g.H {
						grid = append(grid, [24]bool{})
					}
					for y := g.Y; y < g.Y+g.H; y++ {
						for x := g.X; x < g.X+g.W; x++ {
							if grid[y][x] {
								t.Errorf("%s: overlaps another panel at (%d,%d)", where, x, y)
								y, x = g.Y+g.H, g.X+g.W
								continue
							}
							grid[y][x] = true
						}
					}
				}
				if len(p.Targets) == 0 {
					t.Errorf("%s: no targets", where)
				}
				for _, tg := range p.Targets {
					checkDataSource(t, where, tg.DataSource)
					if tg.EditorType != "sql" {
						t.Errorf("%s: editorType %q, want sql", where, tg.EditorType)
					}
					if tg.Format == nil || (*tg.Format != 0 && *tg.Format != 1) {
						t.Errorf("%s: format must be 0 (time series) or 1 (table)", where)
					} else if (*tg.Format == 0) != (p.Type == "timeseries") {
						t.Errorf("%s: %s panel with format %d", where, p.Type, *tg.Format)
					}
					if tg.RefID == "" {
						t.Errorf("%s: target without refId", where)
					}
					checkSQL(t, where, tg.RawSQL, true)
					for _, ref := range referencedVars(tg.RawSQL) {
						if !slices.Contains(defined, ref) {
							t.Errorf("%s: references undefined variable %s", where, ref)
						}
					}
				}
				checkLinks(t, where, p, ds)
			}
			for title := range expected {
				found := false
				for _, p := range d.AllPanels() {
					found = found || p.Title == title
				}
				if !found {
					t.Errorf("mustShowData lists %q, which the dashboard lacks", title)
				}
			}
		})
	}
}

func checkDataSource(t *testing.T, where string, ref *grafana.DataSourceRef) {
	t.Helper()
	if ref == nil || ref.UID != dashboards.DataSourceUID || ref.Type != dashboards.DataSourceType {
		t.Errorf("%s: datasource %+v, want {type: %s, uid: %s}", where, ref, dashboards.DataSourceType, dashboards.DataSourceUID)
	}
}

// checkLinks verifies that data links point at an existing dashboard and
// set only variables that dashboard defines.
func checkLinks(t *testing.T, where string, p grafana.Panel, ds []*grafana.Dashboard) {
	t.Helper()
	for _, url := range linkURLs(p) {
		m := regexp.MustCompile(`^/d/([\w-]+)(?:/[\w-]+)?\?(.*)$`).FindStringSubmatch(url)
		if m == nil {
			t.Errorf("%s: link %q is not a /d/<uid>/<slug>?… dashboard link", where, url)
			continue
		}
		var target *grafana.Dashboard
		for _, d := range ds {
			if d.UID == m[1] {
				target = d
			}
		}
		if target == nil {
			t.Errorf("%s: link to unknown dashboard %s", where, m[1])
			continue
		}
		for _, kv := range strings.Split(m[2], "&") {
			if name, ok := strings.CutPrefix(strings.SplitN(kv, "=", 2)[0], "var-"); ok {
				if _, found := target.Variable(name); !found {
					t.Errorf("%s: link sets var-%s, which %s lacks", where, name, target.UID)
				}
			}
		}
	}
}

func linkURLs(p grafana.Panel) []string {
	var fc struct {
		Overrides []struct {
			Properties []struct {
				ID    string          `json:"id"`
				Value json.RawMessage `json:"value"`
			} `json:"properties"`
		} `json:"overrides"`
	}
	_ = json.Unmarshal(p.FieldConfig, &fc)
	var out []string
	for _, o := range fc.Overrides {
		for _, prop := range o.Properties {
			if prop.ID != "links" {
				continue
			}
			var links []struct {
				URL string `json:"url"`
			}
			_ = json.Unmarshal(prop.Value, &links)
			for _, l := range links {
				out = append(out, l.URL)
			}
		}
	}
	return out
}

// overrideNames are the field names a panel's byName overrides match.
func overrideNames(p grafana.Panel) []string {
	var fc struct {
		Overrides []struct {
			Matcher struct {
				ID      string `json:"id"`
				Options string `json:"options"`
			} `json:"matcher"`
		} `json:"overrides"`
	}
	_ = json.Unmarshal(p.FieldConfig, &fc)
	var out []string
	for _, o := range fc.Overrides {
		if o.Matcher.ID == "byName" {
			out = append(out, o.Matcher.Options)
		}
	}
	return out
}

func TestProvisioning(t *testing.T) {
	var dsFile struct {
		APIVersion  int `yaml:"apiVersion"`
		Datasources []struct {
			Name           string            `yaml:"name"`
			Type           string            `yaml:"type"`
			UID            string            `yaml:"uid"`
			JSONData       map[string]any    `yaml:"jsonData"`
			SecureJSONData map[string]string `yaml:"secureJsonData"`
		} `yaml:"datasources"`
	}
	readYAML(t, "provisioning/datasources/ctxaudit-clickhouse.yaml", &dsFile)
	if dsFile.APIVersion != 1 || len(dsFile.Datasources) != 1 {
		t.Fatalf("want apiVersion 1 and one data source, got %+v", dsFile)
	}
	ds := dsFile.Datasources[0]
	if ds.UID != dashboards.DataSourceUID || ds.Type != dashboards.DataSourceType || ds.Name == "" {
		t.Errorf("data source %q: type %q uid %q, want %s / %s", ds.Name, ds.Type, ds.UID, dashboards.DataSourceType, dashboards.DataSourceUID)
	}
	for key, env := range map[string]string{
		"host": "CTXAUDIT_CLICKHOUSE_HOST", "port": "CTXAUDIT_CLICKHOUSE_PORT", "protocol": "CTXAUDIT_CLICKHOUSE_PROTOCOL",
		"defaultDatabase": "CTXAUDIT_CLICKHOUSE_DATABASE", "username": "CTXAUDIT_CLICKHOUSE_USER",
	} {
		if got := fmt.Sprint(ds.JSONData[key]); got != "${"+env+"}" {
			t.Errorf("jsonData.%s = %q, want ${%s}", key, got, env)
		}
	}
	if ds.SecureJSONData["password"] != "${CTXAUDIT_CLICKHOUSE_PASSWORD}" {
		t.Errorf("secureJsonData.password = %q, want ${CTXAUDIT_CLICKHOUSE_PASSWORD}", ds.SecureJSONData["password"])
	}

	var provFile struct {
		APIVersion int `yaml:"apiVersion"`
		Providers  []struct {
			Name    string `yaml:"name"`
			Type    string `yaml:"type"`
			Folder  string `yaml:"folder"`
			Options struct {
				Path string `yaml:"path"`
			} `yaml:"options"`
		} `yaml:"providers"`
	}
	readYAML(t, "provisioning/dashboards/ctxaudit.yaml", &provFile)
	if provFile.APIVersion != 1 || len(provFile.Providers) != 1 {
		t.Fatalf("want apiVersion 1 and one provider, got %+v", provFile)
	}
	p := provFile.Providers[0]
	if p.Type != "file" || p.Name == "" || p.Folder == "" || !filepath.IsAbs(p.Options.Path) {
		t.Errorf("provider %+v: want a named file provider with a folder and an absolute path", p)
	}

	// The embedded copy is what tools export: it must hold every file.
	for _, name := range []string{"json/ctxaudit-overview.json", "json/ctxaudit-session-postmortem.json", "json/ctxaudit-disclosure-quality.json",
		"provisioning/datasources/ctxaudit-clickhouse.yaml", "provisioning/dashboards/ctxaudit.yaml"} {
		if _, err := dashboards.Files.Open(name); err != nil {
			t.Errorf("embedded files lack %s: %v", name, err)
		}
	}
}

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// ---- semantics: every query against a real ClickHouse ----------------------

// result is a query's columns and rows.
type result struct {
	Columns []string
	Types   []string
	Rows    [][]any
}

func (r *result) column(name string) int { return slices.Index(r.Columns, name) }

func runSQL(ctx context.Context, conn driver.Conn, sql string) (*result, error) {
	rows, err := conn.Query(ctx, sql)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	res := &result{}
	cts := rows.ColumnTypes()
	for _, ct := range cts {
		res.Columns = append(res.Columns, ct.Name())
		res.Types = append(res.Types, ct.DatabaseTypeName())
	}
	for rows.Next() {
		dest := make([]any, len(cts))
		for i, ct := range cts {
			dest[i] = reflect.New(ct.ScanType()).Interface()
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		row := make([]any, len(cts))
		for i := range dest {
			row[i] = reflect.ValueOf(dest[i]).Elem().Interface()
		}
		res.Rows = append(res.Rows, row)
	}
	return res, rows.Err()
}

// hasData: at least one row with a value that is not null, zero, NaN or empty.
func (r *result) hasData() bool {
	for _, row := range r.Rows {
		for _, v := range row {
			if meaningful(reflect.ValueOf(v)) {
				return true
			}
		}
	}
	return false
}

func meaningful(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Invalid:
		return false
	case reflect.Pointer, reflect.Interface:
		return !v.IsNil() && meaningful(v.Elem())
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		return f != 0 && !math.IsNaN(f)
	case reflect.Slice, reflect.Map, reflect.String:
		return v.Len() > 0
	case reflect.Struct:
		if t, ok := v.Interface().(time.Time); ok {
			return !t.IsZero() && t.Unix() != 0
		}
		return true
	}
	return !v.IsZero()
}

// number returns the first row's value of column col as a float64.
func (r *result) number(col string) (float64, bool) {
	i := r.column(col)
	if i < 0 || len(r.Rows) == 0 {
		return 0, false
	}
	v := reflect.ValueOf(r.Rows[0][i])
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return 0, false
		}
		v = v.Elem()
	}
	switch {
	case v.CanInt():
		return float64(v.Int()), true
	case v.CanUint():
		return float64(v.Uint()), true
	case v.CanFloat():
		return v.Float(), true
	}
	return 0, false
}

// strings returns column col of every row as text ("" for a NULL).
func (r *result) strings(col string) []string {
	i := r.column(col)
	if i < 0 {
		return nil
	}
	out := make([]string, 0, len(r.Rows))
	for _, row := range r.Rows {
		v := reflect.ValueOf(row[i])
		for v.Kind() == reflect.Pointer && !v.IsNil() {
			v = v.Elem()
		}
		if v.Kind() == reflect.Pointer {
			out = append(out, "")
			continue
		}
		out = append(out, fmt.Sprint(v.Interface()))
	}
	return out
}

// scenario is one state of a dashboard: time range, interval and a rule
// choosing each variable's selection from its options.
// pickAll selects "All" in every variable.
func pickAll(_ testing.TB, v grafana.Variable, options []string) grafana.Selection {
	return grafana.All(v.Multi, options)
}

type scenario struct {
	name     string
	from, to time.Time
	interval time.Duration
	pick     func(t testing.TB, v grafana.Variable, options []string) grafana.Selection
	// base: the fixture with everything at All — panels marked in
	// mustShowData must show data and variables must have options.
	base bool
	// check runs extra assertions on a panel's result.
	check func(t *testing.T, d *grafana.Dashboard, p grafana.Panel, r *result)
}

func first(options []string, n int) []string { return options[:min(n, len(options))] }

func scenarios(fx fixture) []scenario {
	defaults := func(t testing.TB, v grafana.Variable, options []string) grafana.Selection {
		switch {
		case v.Type == "textbox":
			return grafana.Single("")
		case v.Name == "session_id":
			if !slices.Contains(options, fx.RiskySession) {
				t.Errorf("variable session_id: options %v lack the fixture's session %s", options, fx.RiskySession)
			}
			return grafana.Single(fx.RiskySession)
		case v.IncludeAll:
			return grafana.All(v.Multi, options)
		}
		if len(options) == 0 {
			return grafana.Selection{}
		}
		return grafana.Single(options[0])
	}
	expectNumber := func(t testing.TB, r *result, col string, want int) {
		t.Helper()
		if got, ok := r.number(col); !ok || got != float64(want) {
			t.Errorf("%s = %v (ok=%v), want %d", col, got, ok, want)
		}
	}
	return []scenario{
		{
			name: "all", from: fx.From, to: fx.To, interval: time.Hour, base: true, pick: defaults,
			check: func(t *testing.T, d *grafana.Dashboard, p grafana.Panel, r *result) {
				if d.UID != overviewUID {
					return
				}
				// Records written twice count once, with their latest values.
				switch p.Title {
				case "Tool calls":
					expectNumber(t, r, "calls", fx.Calls)
					expectNumber(t, r, "silent", fx.Silent)
				case "High-risk answers":
					expectNumber(t, r, "high_risk_answers", fx.HighAnswers)
				}
			},
		},
		{
			// A project whose name has an apostrophe: values must be escaped.
			name: "quoted-project", from: fx.From, to: fx.To, interval: time.Minute,
			pick: func(t testing.TB, v grafana.Variable, options []string) grafana.Selection {
				switch v.Name {
				case "project":
					if !slices.Contains(options, fx.QuotedProject) {
						t.Errorf("variable project: options %v lack %q", options, fx.QuotedProject)
					}
					return grafana.Single(fx.QuotedProject)
				case "search":
					return grafana.Single(fx.QuotedProject)
				case "session_id":
					if len(options) != 1 {
						t.Errorf("session_id options for search %q: %v, want exactly the codex session", fx.QuotedProject, options)
					}
					if len(options) == 0 {
						return grafana.Selection{}
					}
					return grafana.Single(options[0])
				}
				return defaults(t, v, options)
			},
			check: func(t *testing.T, d *grafana.Dashboard, p grafana.Panel, r *result) {
				if d.UID == overviewUID && p.Title == "Tool calls" {
					expectNumber(t, r, "calls", fx.QuotedProjectCalls)
				}
				if d.UID == postmortemUID && p.Title == "Tool calls" {
					expectNumber(t, r, "calls", fx.QuotedProjectCalls)
				}
			},
		},
		{
			// A session reached by link that has calls but no sessions row: the
			// postmortem's session-span bounds must stay open.
			name: "orphan-session", from: fx.From, to: fx.To, interval: time.Minute,
			pick: func(t testing.TB, v grafana.Variable, options []string) grafana.Selection {
				if v.Name == "session_id" {
					return grafana.Single(fx.OrphanSession)
				}
				return defaults(t, v, options)
			},
			check: func(t *testing.T, d *grafana.Dashboard, p grafana.Panel, r *result) {
				if d.UID == postmortemUID && p.Title == "Tool calls" {
					expectNumber(t, r, "calls", fx.OrphanCalls)
					// Its cut call is not analysed yet: nobody knows it was not followed up.
					expectNumber(t, r, "not_followed_up", 0)
				}
				if d.UID == postmortemUID && p.Title == "Tool-call timeline" {
					if len(r.Rows) != fx.OrphanCalls {
						t.Errorf("timeline of %s: %d rows, want %d", fx.OrphanSession, len(r.Rows), fx.OrphanCalls)
					}
					if got := r.strings("follow_up"); !slices.Equal(got, []string{"", "not analysed yet", "not analysed yet", "not analysed yet", "", "", ""}) {
						t.Errorf("timeline of %s: follow_up %q, want the complete call's empty and the cut ones' not analysed yet", fx.OrphanSession, got)
					}
				}
			},
		},
		{
			// Single values everywhere and two tools: multi-value rendering.
			name: "selected", from: fx.From, to: fx.To, interval: 5 * time.Minute,
			pick: func(t testing.TB, v grafana.Variable, options []string) grafana.Selection {
				switch {
				case v.Type == "textbox":
					return grafana.Single("cc-")
				case v.Multi:
					return grafana.Multi(first(options, 2)...)
				case len(options) > 0:
					return grafana.Single(options[0])
				}
				t.Errorf("variable %s has no options", v.Name)
				return grafana.Single("")
			},
		},
		{
			// One tool in the multi-value variable, and the 1 s minimum interval.
			name: "one-tool", from: fx.From, to: fx.To, interval: 200 * time.Millisecond,
			pick: func(t testing.TB, v grafana.Variable, options []string) grafana.Selection {
				if v.Name == "tool" {
					return grafana.Multi(first(options, 1)...)
				}
				return defaults(t, v, options)
			},
		},
		{
			// A range with no data: every variable empty, conditions become 1=1.
			name: "empty-range", from: time.Unix(978307200, 0), to: time.Unix(978393600, 0), interval: 24 * time.Hour,
			pick: func(t testing.TB, v grafana.Variable, options []string) grafana.Selection {
				if len(options) != 0 {
					t.Errorf("variable %s: options %v in a range without data", v.Name, options)
				}
				if v.Multi {
					return grafana.Multi()
				}
				return grafana.Selection{}
			},
		},
	}
}

// resolveVariables evaluates the dashboard's variables in order, as Grafana
// does: each query variable's SQL is expanded with the selections made so
// far, run, and its options handed to the scenario's pick.
func resolveVariables(t testing.TB, ctx context.Context, conn driver.Conn, d *grafana.Dashboard, sc scenario) map[string]grafana.Selection {
	t.Helper()
	vars := map[string]grafana.Selection{}
	for _, v := range d.Templating.List {
		var options []string
		if v.Type == "query" {
			sql, _ := v.SQL()
			expanded, err := grafana.Expand(sql, grafana.Request{From: sc.from, To: sc.to, Interval: sc.interval, Vars: vars})
			if err != nil {
				t.Fatalf("variable %s: expand: %v", v.Name, err)
			}
			res, err := runSQL(ctx, conn, expanded)
			if err != nil {
				t.Fatalf("variable %s: %v\n%s", v.Name, err, expanded)
			}
			// The plugin's metricFindQuery: one column gives value = text; with
			// two, the first is the value and the second the text.
			if len(res.Columns) > 2 {
				t.Errorf("variable %s: %d columns, want 1 (value) or 2 (value, text)", v.Name, len(res.Columns))
			}
			for _, row := range res.Rows {
				options = append(options, fmt.Sprint(row[0]))
			}
			if sc.base && len(options) == 0 {
				t.Errorf("variable %s: no options on the fixture", v.Name)
			}
		}
		vars[v.Name] = sc.pick(t, v, options)
	}
	return vars
}

func TestQueriesOnClickHouse(t *testing.T) {
	ctx := context.Background()
	addr, store := chtest.NewDatabase(t)
	fx := loadFixture(t, ctx, store)
	// Snapshot the rollups, so that the panels' counts below come from them
	// (rollup_test.go compares them with the exact queries in every state).
	if _, err := store.RefreshRollups(ctx); err != nil {
		t.Fatal(err)
	}
	conn := grafanaConn(t, addr)
	if v, err := conn.ServerVersion(); err == nil {
		t.Logf("ClickHouse %d.%d.%d, database %s", v.Version.Major, v.Version.Minor, v.Version.Patch, store.Database())
	}

	ds := loadDashboards(t)
	columns := auditColumns(t, ctx, conn, store.Database())
	for _, d := range ds {
		for _, p := range d.AllPanels() {
			for _, tg := range p.Targets {
				checkAliases(t, fmt.Sprintf("%s panel %q", d.UID, p.Title), tg.RawSQL, columns)
			}
		}
	}
	for _, sc := range scenarios(fx) {
		t.Run(sc.name, func(t *testing.T) {
			for _, d := range ds {
				t.Run(d.UID, func(t *testing.T) {
					vars := resolveVariables(t, ctx, conn, d, sc)
					req := grafana.Request{From: sc.from, To: sc.to, Interval: sc.interval, Vars: vars}
					for _, p := range d.AllPanels() {
						for _, tg := range p.Targets {
							sql, err := grafana.Expand(tg.RawSQL, req)
							if err != nil {
								t.Errorf("panel %q: expand: %v", p.Title, err)
								continue
							}
							res, err := runSQL(ctx, conn, sql)
							if err != nil {
								t.Errorf("panel %q: %v\n%s", p.Title, err, sql)
								continue
							}
							checkResult(t, p, tg, res)
							checkNoTakenBackAnswer(t, p, res)
							if sc.base {
								t.Logf("%-45s %3d rows  %v", p.Title, len(res.Rows), preview(res))
							}
							if sc.base && mustShowData[d.UID][p.Title] && !res.hasData() {
								t.Errorf("panel %q shows no data on the fixture (rows: %v)\n%s", p.Title, res.Rows, sql)
							}
							if sc.check != nil {
								sc.check(t, d, p, res)
							}
						}
					}
				})
			}
		})
	}
}

// checkNoTakenBackAnswer: no panel shows the fixture's retracted answer —
// neither its message id nor its text (its count is checked by "High-risk
// answers").
func checkNoTakenBackAnswer(t *testing.T, p grafana.Panel, res *result) {
	t.Helper()
	for _, row := range res.Rows {
		for _, v := range row {
			rv := reflect.ValueOf(v)
			if rv.Kind() == reflect.Pointer && !rv.IsNil() {
				rv = rv.Elem()
			}
			if s := fmt.Sprint(rv); strings.Contains(s, takenBackAnswer) || strings.Contains(s, "There is no retry setting") {
				t.Errorf("panel %q shows the answer that was taken back: %v", p.Title, row)
				return
			}
		}
	}
}

// auditColumns lists the columns of each audit table.
func auditColumns(t *testing.T, ctx context.Context, conn driver.Conn, db string) map[string][]string {
	t.Helper()
	res, err := runSQL(ctx, conn, "SELECT table, name FROM system.columns WHERE database = '"+db+"' AND table IN ('tool_calls', 'answers', 'sessions', 'tool_call_rollup')")
	if err != nil || len(res.Rows) == 0 {
		t.Fatalf("list columns: %v", err)
	}
	out := map[string][]string{}
	for _, r := range res.Rows {
		out[r[0].(string)] = append(out[r[0].(string)], r[1].(string))
	}
	return out
}

var usingKey = regexp.MustCompile(`(?i)\bUSING\s+\(?(\w+)`)

// checkAliases rejects an alias that names a column of a table the query
// reads (FROM … FINAL) for another expression: ClickHouse substitutes aliases
// throughout a SELECT, so "countIf(truncated = 1) AS truncated" becomes a
// nested aggregate, and versions disagree on how such cycles resolve. A JOIN's
// USING key is exempt: both sides must produce it under that name.
func checkAliases(t *testing.T, where, sql string, columns map[string][]string) {
	t.Helper()
	var read []string
	for _, m := range tableRef.FindAllStringSubmatch(sql, -1) {
		if m[2] != "" {
			read = append(read, columns[m[1]]...)
		}
	}
	var keys []string
	for _, m := range usingKey.FindAllStringSubmatch(sql, -1) {
		keys = append(keys, m[1])
	}
	for _, m := range aliasRef.FindAllStringSubmatch(sql, -1) {
		expr, alias := strings.TrimLeft(m[1], "(,"), m[2]
		if slices.Contains(read, alias) && expr != alias && !slices.Contains(keys, alias) {
			t.Errorf("%s: alias %s shadows the column of that name", where, alias)
		}
	}
}

// preview is the first row, for -v logs.
func preview(r *result) string {
	if len(r.Rows) == 0 {
		return "-"
	}
	parts := make([]string, len(r.Columns))
	for i, c := range r.Columns {
		v := reflect.ValueOf(r.Rows[0][i])
		if v.Kind() == reflect.Pointer && !v.IsNil() {
			v = v.Elem()
		}
		s := fmt.Sprint(v)
		if len(s) > 40 {
			s = s[:40] + "…"
		}
		parts[i] = c + "=" + s
	}
	return strings.Join(parts, " ")
}

// checkResult verifies what Grafana will do with a result: a time-series
// target yields a DateTime "time" column in order; overrides, data links and
// a bar chart's x field name columns that exist.
func checkResult(t *testing.T, p grafana.Panel, tg grafana.Target, res *result) {
	t.Helper()
	if tg.Format != nil && *tg.Format == 0 {
		i := res.column("time")
		if i < 0 || !strings.HasPrefix(res.Types[i], "DateTime") {
			t.Errorf("panel %q: time series without a DateTime column named time (columns %v %v)", p.Title, res.Columns, res.Types)
		} else {
			for k := 1; k < len(res.Rows); k++ {
				if res.Rows[k][i].(time.Time).Before(res.Rows[k-1][i].(time.Time)) {
					t.Errorf("panel %q: rows not ordered by time", p.Title)
					break
				}
			}
		}
	}
	for _, name := range overrideNames(p) {
		if res.column(name) < 0 {
			t.Errorf("panel %q: override for field %q, which the query does not return (columns %v)", p.Title, name, res.Columns)
		}
	}
	for _, url := range linkURLs(p) {
		for _, m := range dataField.FindAllStringSubmatch(url, -1) {
			if res.column(m[1]) < 0 {
				t.Errorf("panel %q: link uses field %s, which the query does not return", p.Title, m[1])
			}
		}
	}
	var opts struct {
		XField string `json:"xField"`
	}
	_ = json.Unmarshal(p.Options, &opts)
	if opts.XField != "" && res.column(opts.XField) < 0 {
		t.Errorf("panel %q: xField %q is not a column (%v)", p.Title, opts.XField, res.Columns)
	}
}

// grafanaConn connects the way the plugin does: native protocol with the
// data source's default database set to the ctxaudit database, so that the
// dashboards' bare table names resolve in it.
func grafanaConn(t testing.TB, addr string) driver.Conn {
	t.Helper()
	opts, err := clickhouse.ParseDSN(addr)
	if err != nil {
		t.Fatal(err)
	}
	if opts.Auth.Database == "" {
		t.Fatalf("address %s names no database", addr)
	}
	opts.DialTimeout = 10 * time.Second
	conn, err := clickhouse.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	if err := conn.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	return conn
}
