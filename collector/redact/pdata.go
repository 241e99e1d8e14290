package redact

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Traces redacts, in place, every string in td: resource, scope, span, event
// and link attributes (nested maps and slices included), span names and
// status messages. It returns the number of secrets replaced.
func (r *Redactor) Traces(td ptrace.Traces) int {
	n := 0
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		n += r.Map(rs.Resource().Attributes())
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			ss := sss.At(j)
			n += r.Map(ss.Scope().Attributes())
			spans := ss.Spans()
			for k := 0; k < spans.Len(); k++ {
				sp := spans.At(k)
				n += r.Map(sp.Attributes())
				if s, c := r.String(sp.Name()); c > 0 {
					sp.SetName(s)
					n += c
				}
				if s, c := r.String(sp.Status().Message()); c > 0 {
					sp.Status().SetMessage(s)
					n += c
				}
				events := sp.Events()
				for e := 0; e < events.Len(); e++ {
					n += r.Map(events.At(e).Attributes())
				}
				links := sp.Links()
				for l := 0; l < links.Len(); l++ {
					n += r.Map(links.At(l).Attributes())
				}
			}
		}
	}
	return n
}

// Logs redacts, in place, every string in ld: resource, scope and record
// attributes and record bodies. It returns the number of secrets replaced.
func (r *Redactor) Logs(ld plog.Logs) int {
	n := 0
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		n += r.Map(rl.Resource().Attributes())
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			sl := sls.At(j)
			n += r.Map(sl.Scope().Attributes())
			recs := sl.LogRecords()
			for k := 0; k < recs.Len(); k++ {
				lr := recs.At(k)
				n += r.Map(lr.Attributes())
				n += r.Value(lr.Body())
			}
		}
	}
	return n
}

// Map redacts every string value in m, recursively.
func (r *Redactor) Map(m pcommon.Map) int {
	n := 0
	for _, v := range m.All() {
		n += r.Value(v)
	}
	return n
}

// Value redacts a string value, or every string inside a map or slice value.
func (r *Redactor) Value(v pcommon.Value) int {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		if s, c := r.String(v.Str()); c > 0 {
			v.SetStr(s)
			return c
		}
	case pcommon.ValueTypeMap:
		return r.Map(v.Map())
	case pcommon.ValueTypeSlice:
		n := 0
		sl := v.Slice()
		for i := 0; i < sl.Len(); i++ {
			n += r.Value(sl.At(i))
		}
		return n
	}
	return 0
}
