package chstore

import (
	"context"
	"slices"

	"github.com/ctxaudit/ctxaudit/schema"
)

// ReadShape names an alternative shape of the per-session read, so the
// benchmark can measure the choice queries.go made against the others.
type ReadShape struct {
	// Final deduplicates with FINAL instead of ORDER BY … LIMIT 1 BY.
	Final bool
	// NoSpan drops the ts bound, so every partition is read.
	NoSpan bool
}

// SessionToolCallsShaped is SessionToolCalls with an alternative query shape.
func (s *Store) SessionToolCallsShaped(ctx context.Context, sp SessionSpan, f CallFilter, shape ReadShape) ([]schema.ToolCall, error) {
	return s.sessionToolCalls(ctx, sp, f, readVariant{final: shape.Final, noSpan: shape.NoSpan})
}

// OmittableColumns is the set of table's columns an INSERT leaves out when
// a batch holds only zeros there (sparse.go).
func (s *Store) OmittableColumns(ctx context.Context, table string) (map[string]bool, error) {
	return s.omittableColumns(ctx, table)
}

// WriteToolCallsWithout writes rows as WriteToolCalls does but without the
// named columns: what a writer of a release before the migration that added
// them sent.
func (s *Store) WriteToolCallsWithout(ctx context.Context, rows []schema.ToolCall, columns ...string) error {
	t := toolCallsTable
	t.cols = slices.DeleteFunc(slices.Clone(t.cols), func(c column[schema.ToolCall]) bool { return slices.Contains(columns, c.name) })
	return insert(ctx, s, t, rows)
}
