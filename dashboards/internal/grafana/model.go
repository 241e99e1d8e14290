package grafana

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// DataSourceRef points a panel, target or variable at a data source.
type DataSourceRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// Target is one query of a panel, in the plugin's SQL-editor shape.
type Target struct {
	DataSource *DataSourceRef `json:"datasource"`
	EditorType string         `json:"editorType"`
	// Format: 0 time series, 1 table (grafana-plugin-sdk-go sqlutil).
	Format *int   `json:"format"`
	RawSQL string `json:"rawSql"`
	RefID  string `json:"refId"`
}

// GridPos is a panel's place on the dashboard grid (24 columns wide).
type GridPos struct {
	H int `json:"h"`
	W int `json:"w"`
	X int `json:"x"`
	Y int `json:"y"`
}

// Panel is the part of a panel the checks need; Raw keeps the rest.
type Panel struct {
	ID          int            `json:"id"`
	Type        string         `json:"type"`
	Title       string         `json:"title"`
	Description string         `json:"description"`
	DataSource  *DataSourceRef `json:"datasource"`
	GridPos     GridPos        `json:"gridPos"`
	Targets     []Target       `json:"targets"`
	// Interval is the panel's minimum interval ("1h"); Grafana sends
	// $__interval as the larger of it and the range divided into points.
	Interval    string          `json:"interval"`
	FieldConfig json.RawMessage `json:"fieldConfig"`
	Options     json.RawMessage `json:"options"`
	Panels      []Panel         `json:"panels"` // collapsed rows
}

// VariableQuery is a query variable's SQL.
type VariableQuery struct {
	EditorType string `json:"editorType"`
	RawSQL     string `json:"rawSql"`
}

// Variable is a dashboard template variable.
type Variable struct {
	Name        string          `json:"name"`
	Label       string          `json:"label"`
	Type        string          `json:"type"`
	Description string          `json:"description"`
	DataSource  *DataSourceRef  `json:"datasource"`
	Definition  string          `json:"definition"`
	Query       json.RawMessage `json:"query"`
	Multi       bool            `json:"multi"`
	IncludeAll  bool            `json:"includeAll"`
	AllValue    *string         `json:"allValue"`
	Refresh     int             `json:"refresh"`
}

// SQL returns a query variable's SQL ("" for other kinds).
func (v Variable) SQL() (string, error) {
	if v.Type != "query" {
		return "", nil
	}
	var q VariableQuery
	if err := json.Unmarshal(v.Query, &q); err != nil {
		return "", fmt.Errorf("variable %s: query is not the plugin's {editorType, rawSql} object: %w", v.Name, err)
	}
	return q.RawSQL, nil
}

// Dashboard is a Grafana dashboard JSON model.
type Dashboard struct {
	UID           string   `json:"uid"`
	Title         string   `json:"title"`
	Description   string   `json:"description"`
	SchemaVersion int      `json:"schemaVersion"`
	Tags          []string `json:"tags"`
	Panels        []Panel  `json:"panels"`
	Templating    struct {
		List []Variable `json:"list"`
	} `json:"templating"`
	Time struct {
		From string `json:"from"`
		To   string `json:"to"`
	} `json:"time"`

	// File is where the dashboard was read from.
	File string `json:"-"`
}

// AllPanels returns every panel, including those inside collapsed rows.
func (d *Dashboard) AllPanels() []Panel {
	var out []Panel
	var walk func([]Panel)
	walk = func(ps []Panel) {
		for _, p := range ps {
			out = append(out, p)
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return out
}

// Variable returns the variable called name.
func (d *Dashboard) Variable(name string) (Variable, bool) {
	for _, v := range d.Templating.List {
		if v.Name == name {
			return v, true
		}
	}
	return Variable{}, false
}

// LoadDir reads every *.json dashboard in dir, sorted by file name.
func LoadDir(dir string) ([]*Dashboard, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []*Dashboard
	for _, f := range files {
		d, err := LoadFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// LoadFile reads one dashboard.
func LoadFile(path string) (*Dashboard, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var d Dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	d.File = path
	return &d, nil
}
