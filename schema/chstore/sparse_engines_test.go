package chstore_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/schema"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

// A batch whose rows all hold a column's zero leaves that column out of its
// INSERT (sparse.go); a record must read back the same whether its batch
// sent the column or not, on both renderings. Known zeros stay known.
func TestSparseInsertsReadBackWhole(t *testing.T) {
	ctx := context.Background()
	en := both(t)
	at := time.Date(2026, 3, 2, 10, 0, 0, 250_000_000, time.UTC)
	plain := func(id string, i int) schema.ToolCall {
		c := schema.ToolCall{
			SessionID: "sparse-1", CallID: id, Tool: "Read", Source: schema.HarnessClaudeCode,
			Timestamp: at.Add(time.Duration(i) * time.Second),
		}
		c.Kind, c.Strategy = schema.KindNone, schema.StrategyNone
		c.Context = schema.Sizes{Bytes: schema.Known(120)}
		return c
	}
	// One row of the first batch sets what the others leave zero, so that
	// batch sends those columns; the second batch holds only plain rows.
	full := plain("c-full", 0)
	full.Reason = "output_limit"
	full.Sidechain = true
	full.Original.Sizes = schema.Sizes{Bytes: schema.Known(0), Chars: schema.Known(9)} // a known zero
	full.Original.Precision = schema.PrecisionExact
	full.SessionCoverage = schema.Ratio{V: 0, Known: true}
	full.ContinuationOf = "c-0"
	full.SourceLine = 12
	sent := []schema.ToolCall{full, plain("c-sent", 1)}
	omitted := []schema.ToolCall{plain("c-omitted", 2), plain("c-omitted-2", 3)}
	// A batch in which every row knows a size of 0 and a coverage of 0:
	// known zeros are values, sent, never NULL.
	knownZeros := []schema.ToolCall{plain("c-zero", 4), plain("c-zero-2", 5)}
	for i := range knownZeros {
		knownZeros[i].Original.Sizes = schema.Sizes{Bytes: schema.Known(0)}
		knownZeros[i].Original.Precision = schema.PrecisionExact
		knownZeros[i].SessionCoverage = schema.Ratio{V: 0, Known: true}
	}

	en.each(t, func(s *chstore.Store) error {
		cols, err := s.OmittableColumns(ctx, "tool_calls")
		if err != nil {
			return err
		}
		for name, want := range map[string]bool{
			"reason": true, "sidechain": true, "original_bytes": true, "session_coverage": true, "continuation_of": true,
			"original_precision": false, // DEFAULT 'unknown'
			"truncation_kind":    false, // an enum
			"ts":                 false,
		} {
			if cols[name] != want {
				t.Errorf("%s: %s omittable = %v, want %v", s.Database(), name, cols[name], want)
			}
		}
		if err := s.WriteToolCalls(ctx, sent); err != nil {
			return err
		}
		if err := s.WriteToolCalls(ctx, omitted); err != nil {
			return err
		}
		return s.WriteToolCalls(ctx, knownZeros)
	})

	calls := same(t, en, "ToolCalls sparse-1", func(s *chstore.Store) ([]schema.ToolCall, error) { return s.ToolCalls(ctx, "sparse-1") })
	if len(calls) != 6 {
		t.Fatalf("%d calls read back, want 6", len(calls))
	}
	byID := map[string]schema.ToolCall{}
	for _, c := range calls {
		byID[c.CallID] = c
	}
	got := byID["c-full"]
	if !got.Original.Bytes.Known || got.Original.Bytes.N != 0 || !got.SessionCoverage.Known || got.Reason != "output_limit" ||
		!got.Sidechain || got.ContinuationOf != "c-0" || got.SourceLine != 12 {
		t.Errorf("the row that set the columns read back as %+v", got)
	}
	// The plain rows: one written with every column sent, two with the
	// zero columns left out. Apart from ids and times they are one record.
	ref := byID["c-sent"]
	if ref.Original.Bytes.Known || ref.SessionCoverage.Known || ref.Reason != "" || ref.Sidechain {
		t.Errorf("a plain row read back with values it did not have: %+v", ref)
	}
	for _, id := range []string{"c-zero", "c-zero-2"} {
		if c := byID[id]; !c.Original.Bytes.Known || c.Original.Bytes.N != 0 || !c.SessionCoverage.Known || c.SessionCoverage.V != 0 {
			t.Errorf("%s: known zeros read back as original bytes %+v, coverage %+v", id, c.Original.Bytes, c.SessionCoverage)
		}
	}
	for _, id := range []string{"c-omitted", "c-omitted-2"} {
		c := byID[id]
		c.CallID, c.Timestamp = ref.CallID, ref.Timestamp
		if !reflect.DeepEqual(c, ref) {
			t.Errorf("%s (its batch left the zero columns out) reads back\n%+v\nwhere the same record sent whole reads\n%+v", id, byID[id], ref)
		}
	}
}

// A column with a default expression of its own is always sent, whatever
// its type: left out, it would read back as that default. A table not there
// yet is not remembered as having nothing to leave out.
func TestColumnsWithDefaultsAreNeverLeftOut(t *testing.T) {
	ctx := context.Background()
	en := both(t)
	en.each(t, func(s *chstore.Store) error {
		// Asked before the table exists, nothing is left out — and nothing
		// remembered: the table created next is read as it is.
		if cols, err := s.OmittableColumns(ctx, "sparse_probe"); err != nil || len(cols) != 0 {
			t.Errorf("%s: before the table exists: omittable %v, %v; want none", s.Database(), cols, err)
		}
		if err := s.Conn().Exec(ctx, "CREATE TABLE "+s.Database()+".sparse_probe (a String, b String DEFAULT 'x', c UInt8, d Nullable(UInt64), e UInt8 DEFAULT 1, f Enum8('p' = 1, 'q' = 2)) ENGINE = Memory"); err != nil {
			return err
		}
		cols, err := s.OmittableColumns(ctx, "sparse_probe")
		if err != nil {
			return err
		}
		if want := map[string]bool{"a": true, "c": true, "d": true}; !reflect.DeepEqual(cols, want) {
			t.Errorf("%s: omittable %v, want %v", s.Database(), cols, want)
		}
		return nil
	})
}
