package chdbtest

import (
	"context"
	"testing"

	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

// NewStore returns a chstore.Store on a fresh database of the engine,
// migrated as `ctxaudit migrate` migrates a server of the engine's version.
func (e *Engine) NewStore(t testing.TB) *chstore.Store {
	t.Helper()
	s := e.OpenStore(t, e.NewDatabase(t))
	if _, err := s.Migrate(context.Background()); err != nil {
		t.Fatalf("chdbtest: migrate: %v", err)
	}
	return s
}

// OpenStore returns a chstore.Store on database db of the engine, as is.
func (e *Engine) OpenStore(t testing.TB, db string) *chstore.Store {
	t.Helper()
	s, err := chstore.New(e.Conn(), db)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
