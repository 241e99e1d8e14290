package chdbtest

import (
	"database/sql/driver"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// quoter is clickhouse-go's string escaping for client-side binding.
var quoter = strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\x00", `\0`)

// Bind substitutes positional ? parameters into query the way clickhouse-go
// binds them client-side: a ? inside a string literal, a quoted identifier
// or a comment is text, and \? is a literal ?. Only the value types ctxaudit
// passes are supported; any other is an error rather than a guess.
func Bind(query string, args ...any) (string, error) {
	if len(args) == 0 {
		return query, nil
	}
	var b strings.Builder
	next := 0
	var quote byte // ' ` or " while inside one
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case quote != 0:
			b.WriteByte(c)
			if c == '\\' && i+1 < len(query) {
				i++
				b.WriteByte(query[i])
			} else if c == quote {
				quote = 0
			}
			continue
		case c == '\'' || c == '`' || c == '"':
			quote = c
		case c == '-' && strings.HasPrefix(query[i:], "--"):
			end := strings.IndexByte(query[i:], '\n')
			if end < 0 {
				end = len(query) - i
			}
			b.WriteString(query[i : i+end])
			i += end - 1
			continue
		case c == '\\' && i+1 < len(query) && query[i+1] == '?':
			b.WriteByte('?')
			i++
			continue
		case c == '?':
			if next >= len(args) {
				return "", fmt.Errorf("bind: more ? than the %d arguments", len(args))
			}
			v, err := formatArg(args[next])
			if err != nil {
				return "", fmt.Errorf("bind argument %d: %w", next+1, err)
			}
			b.WriteString(v)
			next++
			continue
		}
		b.WriteByte(c)
	}
	if next != len(args) {
		return "", fmt.Errorf("bind: %d arguments for %d ?", len(args), next)
	}
	return b.String(), nil
}

func formatArg(v any) (string, error) {
	if vl, ok := v.(driver.Valuer); ok {
		var err error
		if v, err = vl.Value(); err != nil {
			return "", err
		}
	}
	switch v := v.(type) {
	case nil:
		return "NULL", nil
	case string:
		return "'" + quoter.Replace(v) + "'", nil
	case bool:
		if v {
			return "1", nil
		}
		return "0", nil
	case float32:
		return formatFloat(float64(v), 32), nil
	case float64:
		return formatFloat(v, 64), nil
	case time.Time:
		// The driver's text for a time depends on the server's time zone;
		// ctxaudit binds times as Unix seconds instead (toDateTime(?)).
		return "", fmt.Errorf("time.Time parameter: bind Unix seconds with toDateTime(?)")
	case clickhouse.GroupSet:
		parts := make([]string, len(v.Value))
		for i, x := range v.Value {
			s, err := formatArg(x)
			if err != nil {
				return "", err
			}
			parts[i] = s
		}
		return "(" + strings.Join(parts, ", ") + ")", nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(rv.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(rv.Uint(), 10), nil
	case reflect.String:
		return formatArg(rv.String())
	case reflect.Slice, reflect.Array:
		parts := make([]string, rv.Len())
		for i := range parts {
			s, err := formatArg(rv.Index(i).Interface())
			if err != nil {
				return "", err
			}
			parts[i] = s
		}
		return "[" + strings.Join(parts, ", ") + "]", nil
	}
	return "", fmt.Errorf("unsupported parameter type %T", v)
}

// formatFloat is the driver's: a cast that keeps the float's width.
func formatFloat(f float64, bits int) string {
	typ := "Float64"
	if bits == 32 {
		typ = "Float32"
	}
	switch {
	case math.IsNaN(f):
		return fmt.Sprintf("cast('nan', '%s')", typ)
	case math.IsInf(f, 1):
		return fmt.Sprintf("cast('inf', '%s')", typ)
	case math.IsInf(f, -1):
		return fmt.Sprintf("cast('-inf', '%s')", typ)
	}
	return fmt.Sprintf("cast(%s, '%s')", strconv.FormatFloat(f, 'g', -1, bits), typ)
}
