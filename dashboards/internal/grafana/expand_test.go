package grafana

import (
	"errors"
	"strings"
	"testing"
	"time"
)

var (
	from = time.Unix(1767225600, 0) // 2026-01-01T00:00:00Z
	to   = time.Unix(1767830400, 0) // 2026-01-08T00:00:00Z
)

func TestExpand(t *testing.T) {
	vars := map[string]Selection{
		"source":  Single("claude_code"),
		"tool":    Multi("Read", "WebFetch"),
		"one":     Multi("Read"),
		"none":    Multi(),
		"empty":   Selection{},
		"all":     All(true, []string{"Read", "Grep"}),
		"allone":  All(false, []string{"a"}),
		"project": Single("o'brien"),
	}
	r := Request{From: from, To: to, Interval: 90 * time.Second, Vars: vars}
	cases := []struct{ in, want string }{
		// Backend macros (pkg/macros).
		{"WHERE $__timeFilter(ts)", "WHERE ts >= toDateTime(1767225600) AND ts <= toDateTime(1767830400)"},
		{"WHERE $__timeFilter( ts )", "WHERE ts >= toDateTime(1767225600) AND ts <= toDateTime(1767830400)"},
		{"a <= $__toTime AND b >= $__fromTime", "a <= toDateTime(1767830400) AND b >= toDateTime(1767225600)"},
		{"intDiv(x, $__interval_s) * $__interval_s", "intDiv(x, 90) * 90"},
		// Variables: the plugin's default format and explicit formats.
		{"IN ($tool)", "IN ('Read','WebFetch')"},
		{"= $source", "= claude_code"},
		{"= '${source}'", "= 'claude_code'"},
		{"IN (${tool:singlequote})", "IN ('Read','WebFetch')"},
		{"IN (${one:singlequote})", "IN ('Read')"},
		{"= ${project:singlequote}", `= 'o\'brien'`},
		{"= ${project:sqlstring}", `= 'o''brien'`},
		{"IN ([[tool]])", "IN ('Read','WebFetch')"},
		{"IN (${all:singlequote})", "IN ('Read','Grep')"},
		// $__conditionalAll: the condition, or 1=1 for All / empty.
		{"$__conditionalAll(tool IN (${tool:singlequote}), $tool)", "tool IN ('Read','WebFetch')"},
		{"$__conditionalAll(tool IN (${all:singlequote}), $all)", "1=1"},
		{"$__conditionalAll(tool IN (${all:singlequote}), ${all})", "1=1"},
		{"$__conditionalAll(x IN (${allone:singlequote}), $allone)", "1=1"},
		{"$__conditionalAll(tool IN (${none:singlequote}), $none)", "1=1"},
		{"$__conditionalAll(x = ${empty:singlequote}, $empty)", "1=1"},
		{"$__conditionalAll(a IN (${source:singlequote}), $source) AND $__conditionalAll(b IN ($all), $all)", "a IN ('claude_code') AND 1=1"},
		{"$__conditionalAll(s IN (SELECT s FROM t WHERE $__timeFilter(ts) AND x IN (${tool:singlequote})), $tool)",
			"s IN (SELECT s FROM t WHERE ts >= toDateTime(1767225600) AND ts <= toDateTime(1767830400) AND x IN ('Read','WebFetch'))"},
	}
	for _, c := range cases {
		got, err := Expand(c.in, r)
		if err != nil {
			t.Errorf("Expand(%q): %v", c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("Expand(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

func TestIntervalAtLeastOneSecond(t *testing.T) {
	got, err := Expand("$__interval_s", Request{Interval: 200 * time.Millisecond})
	if err != nil || got != "1" {
		t.Fatalf("got %q, %v; want 1", got, err)
	}
}

func TestExpandRejects(t *testing.T) {
	r := Request{From: from, To: to, Interval: time.Minute, Vars: map[string]Selection{"tool": Multi("a")}}
	cases := map[string]string{
		"SELECT $__timeInterval(ts)":                    "not allowed",
		"SELECT $__timeGroup(ts, 5m)":                   "not allowed",
		"WHERE tool IN ($nosuch)":                       "does not define",
		"WHERE $__conditionalAll(tool IN ($tool))":      "2 arguments",
		"WHERE $__conditionalAll(tool IN ($tool), 'x')": "plain $variable",
		"WHERE $__conditionalAll(a, $nosuch)":           "no variable",
		"WHERE tool IN (${tool:lucene})":                "format",
		"WHERE $__timeFilter":                           "argument",
		"WHERE $__conditionalAll(x = '$&', $tool)":      "replacement pattern",
		"WHERE tool = ${tool.field}":                    "field paths",
		"WHERE $__interval":                             "not allowed",
	}
	for in, want := range cases {
		_, err := Expand(in, r)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Expand(%q) = %v, want an error containing %q", in, err, want)
		}
	}
	if _, err := Expand("$__timeGroup(ts, 1m)", r); !errors.Is(err, ErrMacro) {
		t.Errorf("want ErrMacro, got %v", err)
	}
}

func TestMacroArgs(t *testing.T) {
	q := "f(a, g(b, c), (d)) tail"
	got := macroArgs(q, 1)
	want := []string{"a", " g(b, c)", " (d)"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("macroArgs = %q, want %q", got, want)
	}
	if macroArgs("f(a, (b", 1) != nil {
		t.Fatal("unbalanced: want nil")
	}
}
