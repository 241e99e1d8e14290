package chstore

import (
	"context"
	"fmt"
	"strings"
	"sync"
)

// Sparse INSERTs: a column whose value is the same zero in every row of a
// batch — an empty string, 0, NULL, an empty array — is left out of the
// INSERT's column list, and ClickHouse fills it with that same value. Most
// of a tool call's 68 columns are such zeros in most batches (no reason, no
// saved file, no tail range, sizes unknown), and each one sent costs the
// client a typed slice, the driver's copy into its column buffers (which
// regrow on every INSERT; most of the exporter's allocation), the wire and
// the server's parsing. The stored row is the same either way.
//
// A column is left out only where that is certain: the live table says it
// has no DEFAULT, MATERIALIZED or ALIAS expression (system.columns), and
// its type's own default is the Go zero the writer would have sent (see
// zeroIsTypeDefault). Enums, dates and anything unrecognised are always
// sent.

// omittable caches, per table, the columns that may be left out when all
// zero. It is read once per table for the Store's life: the columns a
// Store writes are fixed by this code, and their defaults by migrations
// run before it writes.
type omittable struct {
	mu      sync.Mutex
	byTable map[string]map[string]bool
}

// omittableColumns is the set of table's columns whose default is their
// type's zero.
func (s *Store) omittableColumns(ctx context.Context, table string) (map[string]bool, error) {
	s.omit.mu.Lock()
	defer s.omit.mu.Unlock()
	if cols, ok := s.omit.byTable[table]; ok {
		return cols, nil
	}
	rows, err := s.conn.Query(ctx, "SELECT name, type, default_kind FROM system.columns WHERE database = ? AND table = ?", s.database, table)
	if err != nil {
		return nil, fmt.Errorf("read the columns of %s.%s: %w", s.database, table, err)
	}
	defer rows.Close()
	cols := map[string]bool{}
	found := false
	for rows.Next() {
		found = true
		var name, typ, kind string
		if err := rows.Scan(&name, &typ, &kind); err != nil {
			return nil, fmt.Errorf("read the columns of %s.%s: %w", s.database, table, err)
		}
		if kind == "" && zeroIsTypeDefault(typ) {
			cols[name] = true
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the columns of %s.%s: %w", s.database, table, err)
	}
	if !found {
		// No such table yet (its INSERT will say so): asked again next
		// time rather than remembered for the Store's life, so a table
		// created later is read as it is.
		return cols, nil
	}
	if s.omit.byTable == nil {
		s.omit.byTable = map[string]map[string]bool{}
	}
	s.omit.byTable[table] = cols
	return cols, nil
}

// zeroIsTypeDefault reports whether a column of ClickHouse type typ, left
// out of an INSERT and without a default expression, gets the value the
// writer sends for a Go zero: the empty string, 0 for numbers (and booleans,
// UInt8), NULL for a Nullable (the writer's nil), [] for an array.
func zeroIsTypeDefault(typ string) bool {
	for _, wrapper := range []string{"LowCardinality(", "Nullable(", "Array("} {
		if strings.HasPrefix(typ, wrapper) && strings.HasSuffix(typ, ")") {
			if wrapper != "LowCardinality(" {
				return true // NULL, [] whatever the element
			}
			return zeroIsTypeDefault(typ[len(wrapper) : len(typ)-1])
		}
	}
	switch typ {
	case "String", "UInt8", "UInt16", "UInt32", "UInt64", "Int8", "Int16", "Int32", "Int64", "Float32", "Float64":
		return true
	}
	return false
}

// allZero reports whether every value of a column, as a column's values
// builds it, is its Go zero: an empty string, 0, a nil pointer (NULL), an
// empty slice.
// Types it does not know are never zero, so they are always sent.
func allZero(values any) bool {
	switch v := values.(type) {
	case []string:
		return every(v, func(s string) bool { return s == "" })
	case []uint8:
		return every(v, func(n uint8) bool { return n == 0 })
	case []uint32:
		return every(v, func(n uint32) bool { return n == 0 })
	case []uint64:
		return every(v, func(n uint64) bool { return n == 0 })
	case []*uint64:
		return every(v, func(p *uint64) bool { return p == nil })
	case []*float64:
		return every(v, func(p *float64) bool { return p == nil })
	case [][]string:
		return every(v, func(l []string) bool { return len(l) == 0 })
	case [][][]string:
		return every(v, func(l [][]string) bool { return len(l) == 0 })
	}
	return false
}

func every[E any](s []E, zero func(E) bool) bool {
	for _, e := range s {
		if !zero(e) {
			return false
		}
	}
	return true
}
