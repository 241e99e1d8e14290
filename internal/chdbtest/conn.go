package chdbtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/ClickHouse/clickhouse-go/v2/lib/proto"
)

// Conn adapts the engine to clickhouse-go's driver.Conn for the methods
// ctxaudit uses (Query, QueryRow, Exec, PrepareBatch, ServerVersion, Ping);
// any other method panics through the nil embedded interface.
func (e *Engine) Conn() driver.Conn { return &conn{e: e} }

// ConnIn is Conn with db as the default database, as a client connected
// with that database (Grafana's data source) sees bare table names.
func (e *Engine) ConnIn(db string) driver.Conn { return &conn{e: e, db: db} }

type conn struct {
	driver.Conn // nil: methods ctxaudit does not call
	e           *Engine
	db          string
}

func (c *conn) ServerVersion() (*driver.ServerVersion, error) {
	v := proto.ParseVersion(c.e.version)
	return &driver.ServerVersion{Name: "chDB", DisplayName: "chDB", Version: v}, nil
}

func (c *conn) Ping(context.Context) error { return nil }
func (c *conn) Close() error               { return nil }

func (c *conn) Exec(ctx context.Context, query string, args ...any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	q, err := Bind(query, args...)
	if err != nil {
		return err
	}
	_, err = c.e.queryIn(c.db, q, "TSV")
	return err
}

func (c *conn) Query(ctx context.Context, query string, args ...any) (driver.Rows, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	q, err := Bind(query, args...)
	if err != nil {
		return nil, err
	}
	return c.e.rows(c.db, q)
}

func (c *conn) QueryRow(ctx context.Context, query string, args ...any) driver.Row {
	rs, err := c.Query(ctx, query, args...)
	if err != nil {
		return &row{err: err}
	}
	return &row{rows: rs.(*rows)}
}

// rows runs q and decodes its JSONCompactEachRowWithNamesAndTypes output.
func (e *Engine) rows(db, q string) (*rows, error) {
	out, err := e.queryIn(db, q, "JSONCompactEachRowWithNamesAndTypes")
	if err != nil {
		return nil, err
	}
	r := &rows{}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	var names, types []string
	if dec.More() {
		if err := dec.Decode(&names); err != nil {
			return nil, fmt.Errorf("chDB result names: %w", err)
		}
		if err := dec.Decode(&types); err != nil {
			return nil, fmt.Errorf("chDB result types: %w", err)
		}
	}
	for i := range names {
		st, err := scanType(types[i])
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", names[i], err)
		}
		r.cols = append(r.cols, columnType{name: names[i], typ: types[i], scan: st})
	}
	for dec.More() {
		var vals []json.RawMessage
		if err := dec.Decode(&vals); err != nil {
			return nil, fmt.Errorf("chDB result row %d: %w", len(r.data)+1, err)
		}
		r.data = append(r.data, vals)
	}
	r.pos = -1
	return r, nil
}

type columnType struct {
	name, typ string
	scan      reflect.Type
}

func (c columnType) Name() string             { return c.name }
func (c columnType) Nullable() bool           { return strings.HasPrefix(c.typ, "Nullable(") }
func (c columnType) ScanType() reflect.Type   { return c.scan }
func (c columnType) DatabaseTypeName() string { return c.typ }

type rows struct {
	driver.Rows // nil: methods ctxaudit does not call
	cols        []columnType
	data        [][]json.RawMessage
	pos         int
	err         error
}

func (r *rows) Next() bool {
	if r.pos+1 >= len(r.data) {
		return false
	}
	r.pos++
	return true
}

func (r *rows) Scan(dest ...any) error {
	if r.pos < 0 || r.pos >= len(r.data) {
		return errors.New("Scan called without a current row")
	}
	if len(dest) != len(r.cols) {
		return fmt.Errorf("Scan: %d destinations for %d columns", len(dest), len(r.cols))
	}
	for i, d := range dest {
		v := reflect.ValueOf(d)
		if v.Kind() != reflect.Pointer || v.IsNil() {
			return fmt.Errorf("Scan: destination %d is not a pointer", i)
		}
		if err := decode(r.data[r.pos][i], r.cols[i].typ, v.Elem()); err != nil {
			return fmt.Errorf("scan column %s (%s) into %s: %w", r.cols[i].name, r.cols[i].typ, v.Elem().Type(), err)
		}
	}
	return nil
}

func (r *rows) ColumnTypes() []driver.ColumnType {
	out := make([]driver.ColumnType, len(r.cols))
	for i, c := range r.cols {
		out[i] = c
	}
	return out
}

func (r *rows) Columns() []string {
	out := make([]string, len(r.cols))
	for i, c := range r.cols {
		out[i] = c.name
	}
	return out
}

func (r *rows) Close() error { return nil }
func (r *rows) Err() error   { return r.err }

type row struct {
	driver.Row
	rows *rows
	err  error
}

func (r *row) Err() error { return r.err }

func (r *row) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	if !r.rows.Next() {
		return errors.New("sql: no rows in result set")
	}
	return r.rows.Scan(dest...)
}

// unwrap strips LowCardinality(…) and Nullable(…), reporting whether it was nullable.
func unwrap(typ string) (string, bool) {
	nullable := false
	for {
		switch {
		case strings.HasPrefix(typ, "LowCardinality(") && strings.HasSuffix(typ, ")"):
			typ = typ[len("LowCardinality(") : len(typ)-1]
		case strings.HasPrefix(typ, "Nullable(") && strings.HasSuffix(typ, ")"):
			typ = typ[len("Nullable(") : len(typ)-1]
			nullable = true
		default:
			return typ, nullable
		}
	}
}

var (
	timeType = reflect.TypeOf(time.Time{})
	anyType  = reflect.TypeOf((*any)(nil)).Elem()
)

// scanType is the Go type the driver scans a column of type typ into.
func scanType(typ string) (reflect.Type, error) {
	base, nullable := unwrap(typ)
	var t reflect.Type
	switch {
	case base == "String" || strings.HasPrefix(base, "FixedString(") || strings.HasPrefix(base, "Enum8(") ||
		strings.HasPrefix(base, "Enum16(") || base == "UUID":
		t = reflect.TypeOf("")
	case base == "Bool":
		t = reflect.TypeOf(false)
	case base == "UInt8":
		t = reflect.TypeOf(uint8(0))
	case base == "UInt16":
		t = reflect.TypeOf(uint16(0))
	case base == "UInt32":
		t = reflect.TypeOf(uint32(0))
	case base == "UInt64":
		t = reflect.TypeOf(uint64(0))
	case base == "Int8":
		t = reflect.TypeOf(int8(0))
	case base == "Int16":
		t = reflect.TypeOf(int16(0))
	case base == "Int32":
		t = reflect.TypeOf(int32(0))
	case base == "Int64":
		t = reflect.TypeOf(int64(0))
	case base == "Float32":
		t = reflect.TypeOf(float32(0))
	case base == "Float64":
		t = reflect.TypeOf(float64(0))
	case base == "Date" || base == "Date32" || strings.HasPrefix(base, "DateTime"):
		t = timeType
	case strings.HasPrefix(base, "Array(") && strings.HasSuffix(base, ")"):
		et, err := scanType(base[len("Array(") : len(base)-1])
		if err != nil {
			return nil, err
		}
		t = reflect.SliceOf(et)
	case base == "Nothing":
		t = anyType
	default:
		return nil, fmt.Errorf("type %s is not supported by the chDB adapter", typ)
	}
	if nullable {
		t = reflect.PointerTo(t)
	}
	return t, nil
}

// decode stores the JSON value raw of ClickHouse type typ into dst.
func decode(raw json.RawMessage, typ string, dst reflect.Value) error {
	if dst.Kind() == reflect.Interface {
		st, err := scanType(typ)
		if err != nil {
			return err
		}
		v := reflect.New(st).Elem()
		if err := decode(raw, typ, v); err != nil {
			return err
		}
		dst.Set(v)
		return nil
	}
	base, _ := unwrap(typ)
	if dst.Kind() == reflect.Pointer {
		if string(raw) == "null" {
			dst.Set(reflect.Zero(dst.Type()))
			return nil
		}
		p := reflect.New(dst.Type().Elem())
		if err := decode(raw, base, p.Elem()); err != nil {
			return err
		}
		dst.Set(p)
		return nil
	}
	if string(raw) == "null" {
		return fmt.Errorf("NULL into non-pointer %s", dst.Type())
	}
	switch {
	case dst.Type() == timeType:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return err
		}
		t, err := parseTime(s, base)
		if err != nil {
			return err
		}
		dst.Set(reflect.ValueOf(t))
		return nil
	case dst.Kind() == reflect.Slice && strings.HasPrefix(base, "Array("):
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return err
		}
		elem := base[len("Array(") : len(base)-1]
		s := reflect.MakeSlice(dst.Type(), len(items), len(items))
		for i, it := range items {
			if err := decode(it, elem, s.Index(i)); err != nil {
				return err
			}
		}
		dst.Set(s)
		return nil
	case dst.Kind() == reflect.String:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return err
		}
		dst.SetString(s)
		return nil
	case dst.Kind() == reflect.Bool:
		switch string(raw) {
		case "true", "1":
			dst.SetBool(true)
		case "false", "0":
			dst.SetBool(false)
		default:
			return fmt.Errorf("not a boolean: %s", raw)
		}
		return nil
	case dst.CanUint():
		n, err := strconv.ParseUint(strings.Trim(string(raw), `"`), 10, dst.Type().Bits())
		if err != nil {
			if string(raw) == "true" || string(raw) == "false" {
				dst.SetUint(map[string]uint64{"true": 1, "false": 0}[string(raw)])
				return nil
			}
			return err
		}
		dst.SetUint(n)
		return nil
	case dst.CanInt():
		n, err := strconv.ParseInt(strings.Trim(string(raw), `"`), 10, dst.Type().Bits())
		if err != nil {
			return err
		}
		dst.SetInt(n)
		return nil
	case dst.CanFloat():
		s := strings.TrimPrefix(strings.Trim(string(raw), `"`), "-") // "-nan" is NaN too
		if neg := strings.HasPrefix(strings.Trim(string(raw), `"`), "-"); neg && s != "nan" {
			s = "-" + s
		}
		f, err := strconv.ParseFloat(s, dst.Type().Bits())
		if err != nil {
			return err
		}
		dst.SetFloat(f)
		return nil
	}
	return fmt.Errorf("cannot scan into %s", dst.Type())
}

func parseTime(s, typ string) (time.Time, error) {
	layout := "2006-01-02 15:04:05"
	if typ == "Date" || typ == "Date32" {
		layout = "2006-01-02"
	} else if strings.Contains(s, ".") {
		layout = "2006-01-02 15:04:05.999999999"
	}
	return time.ParseInLocation(layout, s, time.UTC)
}

// ---- batches ----------------------------------------------------------------

var insertInto = regexp.MustCompile(`(?is)^\s*INSERT INTO\s+(\S+)\s*\(([^)]*)\)\s*$`)

func (c *conn) PrepareBatch(ctx context.Context, query string, _ ...driver.PrepareBatchOption) (driver.Batch, error) {
	m := insertInto.FindStringSubmatch(query)
	if m == nil {
		return nil, fmt.Errorf("chDB adapter: batch query must be INSERT INTO table (columns): %q", query)
	}
	db, table, err := splitTable(m[1])
	if err != nil {
		return nil, err
	}
	types, err := c.e.columnTypes(db, table)
	if err != nil {
		return nil, err
	}
	b := &batch{ctx: ctx, e: c.e, table: m[1]}
	for _, name := range strings.Split(m[2], ",") {
		name = strings.Trim(strings.TrimSpace(name), "`")
		typ, ok := types[name]
		if !ok {
			return nil, fmt.Errorf("chDB adapter: %s has no column %q", m[1], name)
		}
		b.names = append(b.names, name)
		b.types = append(b.types, typ)
	}
	return b, nil
}

func splitTable(s string) (string, string, error) {
	parts := strings.Split(s, ".")
	if len(parts) != 2 {
		return "", "", fmt.Errorf("chDB adapter: want db.table, got %q", s)
	}
	return strings.Trim(parts[0], "`"), strings.Trim(parts[1], "`"), nil
}

func (e *Engine) columnTypes(db, table string) (map[string]string, error) {
	q, err := Bind("SELECT name, type FROM system.columns WHERE database = ? AND table = ?", db, table)
	if err != nil {
		return nil, err
	}
	r, err := e.rows("", q)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for r.Next() {
		var name, typ string
		if err := r.Scan(&name, &typ); err != nil {
			return nil, err
		}
		out[name] = typ
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("chDB adapter: no table %s.%s", db, table)
	}
	return out, nil
}

type batch struct {
	driver.Batch // nil: methods ctxaudit does not call
	ctx          context.Context
	e            *Engine
	table        string
	names, types []string
	lines        bytes.Buffer
	n            int
	sent         bool
	// columns are values appended column by column (Column(i).Append),
	// turned into rows at Send.
	columns [][]any
}

// Column appends to column i, as the driver's batch does; the rows are
// formed at Send, when every column has its values.
func (b *batch) Column(i int) driver.BatchColumn {
	if b.columns == nil {
		b.columns = make([][]any, len(b.names))
	}
	return &batchColumn{b: b, i: i}
}

type batchColumn struct {
	b *batch
	i int
}

func (c *batchColumn) check() error {
	if c.i < 0 || c.i >= len(c.b.names) {
		return fmt.Errorf("Column(%d): the batch has %d columns", c.i, len(c.b.names))
	}
	return nil
}

// Append takes a slice: one value per row.
func (c *batchColumn) Append(v any) error {
	if err := c.check(); err != nil {
		return err
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice {
		return fmt.Errorf("Column(%d).Append: want a slice, got %T", c.i, v)
	}
	for j := 0; j < rv.Len(); j++ {
		c.b.columns[c.i] = append(c.b.columns[c.i], rv.Index(j).Interface())
	}
	return nil
}

func (c *batchColumn) AppendRow(v any) error {
	if err := c.check(); err != nil {
		return err
	}
	c.b.columns[c.i] = append(c.b.columns[c.i], v)
	return nil
}

// rowsFromColumns appends the rows the columns hold.
func (b *batch) rowsFromColumns() error {
	n := len(b.columns[0])
	for i, col := range b.columns {
		if len(col) != n {
			return fmt.Errorf("column %s has %d values, column %s %d", b.names[i], len(col), b.names[0], n)
		}
	}
	row := make([]any, len(b.columns))
	for r := 0; r < n; r++ {
		for i := range b.columns {
			row[i] = b.columns[i][r]
		}
		if err := b.Append(row...); err != nil {
			return err
		}
	}
	b.columns = nil
	return nil
}

// Append encodes one row as a JSONEachRow object, each value as the driver
// encodes it for its column's type.
func (b *batch) Append(v ...any) error {
	if len(v) != len(b.names) {
		return fmt.Errorf("Append: %d values for %d columns", len(v), len(b.names))
	}
	b.lines.WriteByte('{')
	for i, x := range v {
		if i > 0 {
			b.lines.WriteByte(',')
		}
		name, _ := json.Marshal(b.names[i])
		b.lines.Write(name)
		b.lines.WriteByte(':')
		enc, err := encodeValue(x, b.types[i])
		if err != nil {
			return fmt.Errorf("Append column %s (%s): %w", b.names[i], b.types[i], err)
		}
		b.lines.Write(enc)
	}
	b.lines.WriteString("}\n")
	b.n++
	return nil
}

func encodeValue(x any, typ string) ([]byte, error) {
	v := reflect.ValueOf(x)
	if !v.IsValid() || (v.Kind() == reflect.Pointer && v.IsNil()) {
		return []byte("null"), nil
	}
	if v.Kind() == reflect.Pointer {
		return encodeValue(v.Elem().Interface(), typ)
	}
	base, _ := unwrap(typ)
	if t, ok := x.(time.Time); ok {
		switch {
		case strings.HasPrefix(base, "DateTime64("):
			p, err := strconv.Atoi(strings.TrimSuffix(strings.SplitN(strings.TrimPrefix(base, "DateTime64("), ",", 2)[0], ")"))
			if err != nil {
				return nil, fmt.Errorf("precision of %s: %w", base, err)
			}
			var ticks int64
			if !t.IsZero() {
				ticks = t.UnixNano() / pow10(9-p) // truncation, as the driver does
			}
			sec, frac := ticks/pow10(p), ticks%pow10(p)
			s := time.Unix(sec, 0).UTC().Format("2006-01-02 15:04:05")
			if p > 0 {
				s += fmt.Sprintf(".%0*d", p, frac)
			}
			return json.Marshal(s)
		case strings.HasPrefix(base, "DateTime"):
			if t.IsZero() {
				return []byte("0"), nil
			}
			return []byte(strconv.FormatInt(t.Unix(), 10)), nil
		case base == "Date":
			return json.Marshal(t.UTC().Format("2006-01-02"))
		}
		return nil, fmt.Errorf("time for a %s column", typ)
	}
	return json.Marshal(x)
}

func pow10(n int) int64 {
	out := int64(1)
	for range n {
		out *= 10
	}
	return out
}

func (b *batch) Send() error {
	if b.sent {
		return errors.New("batch already sent")
	}
	if b.columns != nil {
		if err := b.rowsFromColumns(); err != nil {
			return err
		}
	}
	b.sent = true
	if b.n == 0 {
		return nil
	}
	if err := b.ctx.Err(); err != nil {
		return err
	}
	q := "INSERT INTO " + b.table + " (" + strings.Join(b.names, ", ") + ") FORMAT JSONEachRow\n" + b.lines.String()
	return b.e.Exec(q)
}

func (b *batch) Abort() error { b.sent = true; return nil }
func (b *batch) Close() error { b.sent = true; return nil }
func (b *batch) IsSent() bool { return b.sent }
func (b *batch) Rows() int    { return b.n }
