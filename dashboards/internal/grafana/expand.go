// Package grafana reproduces, for tests, what Grafana and the official
// ClickHouse data source plugin (grafana-clickhouse-datasource v4) do to a
// panel's SQL before ClickHouse sees it, so that every dashboard query can be
// run against a real server exactly as a user's Grafana would send it.
//
// A query goes through three stages, in this order (as in the plugin's
// CHDatasource.applyTemplateVariables and its Go backend):
//
//  1. $__conditionalAll(cond, $var) — expanded in the browser by the plugin:
//     cond, or 1=1 when the variable's current value is "All" ($__all) or
//     empty. Ported from CHDatasource.applyConditionalAll/getMacroArgs.
//     Stricter in one way: a second argument that is not a plain $name or
//     ${name} is an error here, where the plugin silently never yields 1=1.
//  2. Template variables — Grafana's templateSrv.replace with the plugin's
//     default formatter: $var, ${var}, ${var:format} and [[var]]. The plugin's
//     default format renders a multi-value selection as 'a','b' (no escaping)
//     and a single value raw, unquoted; the dashboards therefore always use
//     ${var:singlequote}, which quotes and escapes both.
//  3. Backend macros — the plugin's pkg/macros: $__timeFilter(c),
//     $__fromTime, $__toTime and $__interval_s. Any other $__ macro is an
//     error here: docs/design.md §9 allows only these (and $__timeInterval /
//     $__timeGroup expand to toStartOfInterval, which ClickHouse 18.16 lacks).
package grafana

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// AllValue is the value Grafana stores when a variable's "All" option is selected.
const AllValue = "$__all"

// Selection is the current value of one dashboard variable.
type Selection struct {
	// Multi says the variable is multi-value: Grafana holds its value as an
	// array even when one item is selected.
	Multi bool
	// All says "All" is selected. Grafana then substitutes every option's
	// value (Options) — unless $__conditionalAll replaced the condition first.
	All bool
	// Values are the selected values (ignored when All).
	Values []string
	// Options are the variable's current options, used to render "All".
	Options []string
}

// Single is a single-value selection.
func Single(v string) Selection { return Selection{Values: []string{v}} }

// Multi is a multi-value selection of vs (possibly none).
func Multi(vs ...string) Selection { return Selection{Multi: true, Values: vs} }

// All is the "All" selection of a variable with the given options.
func All(multi bool, options []string) Selection {
	return Selection{Multi: multi, All: true, Options: options}
}

// value is what Grafana's templateSrv resolves the variable to: a string or
// a list of strings.
func (s Selection) value() (single string, list []string, isList bool) {
	if s.All {
		return "", s.Options, true
	}
	if s.Multi {
		return "", s.Values, true
	}
	if len(s.Values) == 0 {
		return "", nil, false
	}
	return s.Values[0], nil, false
}

// current is variable.current.value.toString() in the browser: "$__all" for
// All, the values joined with "," for a list.
func (s Selection) current() string {
	if s.All {
		return AllValue
	}
	if s.Multi {
		return strings.Join(s.Values, ",")
	}
	if len(s.Values) == 0 {
		return ""
	}
	return s.Values[0]
}

// Request is everything a query's expansion depends on.
type Request struct {
	From, To time.Time
	// Interval is Grafana's computed interval for the panel.
	Interval time.Duration
	// Vars are the dashboard's variables by name.
	Vars map[string]Selection
}

// AllowedMacros are the only backend macros the dashboards may use (docs/design.md §9).
var AllowedMacros = []string{"timeFilter", "fromTime", "toTime", "interval_s"}

// Expand returns sql as ClickHouse receives it from Grafana.
func Expand(sql string, r Request) (string, error) {
	out, err := ConditionalAll(sql, r.Vars)
	if err != nil {
		return "", err
	}
	if out, err = ReplaceVariables(out, r.Vars); err != nil {
		return "", err
	}
	return Macros(out, r)
}

// ---- stage 1: $__conditionalAll ---------------------------------------------

const conditionalAll = "$__conditionalAll("

// condVarRegex is the plugin's /(?<=\$\{)[\w\d]+(?=\})|(?<=\$)[\w\d]+/ without
// look-behind: the first "${name}" or "$name".
var condVarRegex = regexp.MustCompile(`\$\{(\w+)\}|\$(\w+)`)

// ConditionalAll expands every $__conditionalAll(cond, $var), last first,
// exactly as CHDatasource.applyConditionalAll does.
func ConditionalAll(sql string, vars map[string]Selection) (string, error) {
	idx := strings.LastIndex(sql, conditionalAll)
	for idx != -1 {
		params := macroArgs(sql, idx+len(conditionalAll)-1)
		if len(params) != 2 {
			// The plugin gives up and leaves the query as it is; ClickHouse
			// would then fail on "$__conditionalAll". Say so here instead.
			return "", fmt.Errorf("$__conditionalAll at offset %d: want 2 arguments, got %d", idx, len(params))
		}
		phrase := params[0]
		if m := condVarRegex.FindStringSubmatch(strings.TrimSpace(params[1])); m != nil {
			name := m[1] + m[2]
			sel, ok := vars[name]
			if !ok {
				return "", fmt.Errorf("$__conditionalAll(…, %s): no variable %q", strings.TrimSpace(params[1]), name)
			}
			if v := sel.current(); v == "" || v == AllValue {
				phrase = "1=1"
			}
		} else {
			return "", fmt.Errorf("$__conditionalAll(…, %s): the second argument must be a plain $variable", strings.TrimSpace(params[1]))
		}
		// JavaScript's String.replace(string, string) replaces the first
		// occurrence and interprets $&, $`, $', $$ and $n in the replacement.
		if specialReplacement.MatchString(phrase) {
			return "", fmt.Errorf("$__conditionalAll condition %q contains a JavaScript replacement pattern ($&, $$, $`, $', $n)", phrase)
		}
		sql = strings.Replace(sql, conditionalAll+params[0]+","+params[1]+")", phrase, 1)
		idx = strings.LastIndex(sql, conditionalAll)
	}
	return sql, nil
}

var specialReplacement = regexp.MustCompile("\\$[$&`'0-9<]")

// macroArgs is CHDatasource.getMacroArgs: the arguments of the call whose
// opening parenthesis is at open, split on commas at depth 1. It returns nil
// when the parentheses never balance.
func macroArgs(query string, open int) []string {
	sub := query[open:]
	var args []string
	depth, last := 0, 1
	for i := 0; i < len(sub); i++ {
		switch sub[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 1 {
				args = append(args, sub[last:i])
				last = i + 1
			}
			continue
		default:
			continue
		}
		if depth == 0 {
			return append(args, sub[last:i])
		}
	}
	return nil
}

// ---- stage 2: template variables --------------------------------------------

// variableRegex is Grafana's templateSrv variable syntax:
// $name | [[name(:format)]] | ${name(.fieldPath)(:format)}
var variableRegex = regexp.MustCompile(`\$(\w+)|\[\[(\w+?)(?::(\w+))?\]\]|\$\{(\w+)(?:\.([^:^\}]+))?(?::([^\}]+))?\}`)

// ReplaceVariables substitutes dashboard variables. Names Grafana does not
// know (the backend macros $__timeFilter, $__interval_s, …) are left as they
// are, as templateSrv does; a reference to a dashboard variable that does not
// exist is an error, because in Grafana it would reach ClickHouse verbatim.
func ReplaceVariables(sql string, vars map[string]Selection) (string, error) {
	var firstErr error
	out := variableRegex.ReplaceAllStringFunc(sql, func(m string) string {
		g := variableRegex.FindStringSubmatch(m)
		name, format, field := g[1], "", ""
		switch {
		case g[2] != "":
			name, format = g[2], g[3]
		case g[4] != "":
			name, field, format = g[4], g[5], g[6]
		}
		sel, ok := vars[name]
		if !ok {
			if !strings.HasPrefix(name, "__") && firstErr == nil {
				firstErr = fmt.Errorf("query references variable %q, which the dashboard does not define", name)
			}
			return m
		}
		if field != "" {
			if firstErr == nil {
				firstErr = fmt.Errorf("${%s.%s}: field paths are not supported in SQL", name, field)
			}
			return m
		}
		s, err := formatValue(sel, format)
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("${%s:%s}: %w", name, format, err)
		}
		return s
	})
	return out, firstErr
}

// formatValue renders a selection the way Grafana's format registry (and,
// without a format, the ClickHouse plugin's own formatter) does.
func formatValue(sel Selection, format string) (string, error) {
	single, list, isList := sel.value()
	switch format {
	case "":
		// CHDatasource.format: arrays become 'a','b' (values not escaped);
		// a single value is inserted raw.
		if isList {
			return "'" + strings.Join(list, "','") + "'", nil
		}
		return single, nil
	case "raw":
		if isList {
			return strings.Join(list, ","), nil
		}
		return single, nil
	case "singlequote":
		q := func(v string) string { return "'" + strings.ReplaceAll(v, "'", `\'`) + "'" }
		if isList {
			parts := make([]string, len(list))
			for i, v := range list {
				parts[i] = q(v)
			}
			return strings.Join(parts, ","), nil
		}
		return q(single), nil
	case "doublequote":
		q := func(v string) string { return `"` + strings.ReplaceAll(v, `"`, `\"`) + `"` }
		if isList {
			parts := make([]string, len(list))
			for i, v := range list {
				parts[i] = q(v)
			}
			return strings.Join(parts, ","), nil
		}
		return q(single), nil
	case "sqlstring":
		q := func(v string) string { return "'" + strings.ReplaceAll(v, "'", "''") + "'" }
		if isList {
			parts := make([]string, len(list))
			for i, v := range list {
				parts[i] = q(v)
			}
			return strings.Join(parts, ","), nil
		}
		return q(single), nil
	case "csv":
		if isList {
			return strings.Join(list, ","), nil
		}
		return single, nil
	}
	return "", fmt.Errorf("format %q is not one the dashboards use (singlequote, sqlstring, doublequote, raw, csv)", format)
}

// ---- stage 3: backend macros ------------------------------------------------

var macroName = regexp.MustCompile(`\$__(\w+)`)

// ErrMacro marks a macro the dashboards must not use.
var ErrMacro = errors.New("macro not allowed (docs/design.md §9 allows $__timeFilter, $__fromTime, $__toTime, $__interval_s, $__conditionalAll)")

// Macros expands the backend macros as the plugin's pkg/macros does.
func Macros(sql string, r Request) (string, error) {
	var b strings.Builder
	rest := sql
	for {
		loc := macroName.FindStringSubmatchIndex(rest)
		if loc == nil {
			b.WriteString(rest)
			break
		}
		b.WriteString(rest[:loc[0]])
		name := rest[loc[2]:loc[3]]
		after := rest[loc[1]:]
		if !slices.Contains(AllowedMacros, name) {
			return "", fmt.Errorf("$__%s: %w", name, ErrMacro)
		}
		switch name {
		case "fromTime":
			b.WriteString(dateTime(r.From))
		case "toTime":
			b.WriteString(dateTime(r.To))
		case "interval_s":
			b.WriteString(strconv.Itoa(int(math.Max(r.Interval.Seconds(), 1))))
		case "timeFilter":
			if !strings.HasPrefix(after, "(") {
				return "", fmt.Errorf("$__timeFilter: want one argument in parentheses")
			}
			args := macroArgs(after, 0)
			if len(args) != 1 {
				return "", fmt.Errorf("$__timeFilter: want 1 argument, got %d", len(args))
			}
			col := strings.TrimSpace(args[0])
			fmt.Fprintf(&b, "%s >= %s AND %s <= %s", col, dateTime(r.From), col, dateTime(r.To))
			// skip "(" + arg + ")"
			after = after[len(args[0])+2:]
		}
		rest = after
	}
	out := b.String()
	if strings.Contains(out, "$") {
		return "", fmt.Errorf("unexpanded $ left in query: %q", around(out, strings.Index(out, "$")))
	}
	return out, nil
}

func dateTime(t time.Time) string { return fmt.Sprintf("toDateTime(%d)", t.Unix()) }

func around(s string, i int) string {
	lo, hi := max(i-30, 0), min(i+30, len(s))
	return s[lo:hi]
}
