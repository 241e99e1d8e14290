package tail

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"

	"github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver/internal/checkpoint"
)

// Store keeps the files' checkpoints in a storage extension client: one key
// per file, and an index of the paths that have one, so that the entries of
// files that disappeared while the collector was down can be found and
// deleted (see package checkpoint for the encoding).
type Store struct {
	client  storage.Client
	logger  *zap.Logger
	indexed map[string]bool // paths with an entry in storage
	dirty   bool            // the index differs from indexed
	gone    []string        // paths whose entry is to be deleted
}

// NewStore keeps checkpoints with client.
func NewStore(client storage.Client, logger *zap.Logger) *Store {
	return &Store{client: client, logger: logger, indexed: map[string]bool{}}
}

// Load reads the index and every entry it lists. An entry that cannot be
// decoded is left out (its file is read again from the start, which the
// records' stable ids make harmless downstream); a storage error is returned.
func (s *Store) Load(ctx context.Context) (map[string]checkpoint.File, error) {
	out := map[string]checkpoint.File{}
	raw, err := s.client.Get(ctx, checkpoint.IndexKey)
	if err != nil {
		return nil, fmt.Errorf("storage: read checkpoint index: %w", err)
	}
	paths, err := checkpoint.DecodeIndex(raw)
	if err != nil {
		s.logger.Warn("Ignoring unreadable checkpoint index; files will be read from the start", zap.Error(err))
		return out, nil
	}
	if len(paths) == 0 {
		return out, nil
	}
	ops := make([]*storage.Operation, len(paths))
	for i, p := range paths {
		ops[i] = storage.GetOperation(checkpoint.Key(p))
	}
	if err := s.client.Batch(ctx, ops...); err != nil {
		return nil, fmt.Errorf("storage: read checkpoints: %w", err)
	}
	for i, p := range paths {
		s.indexed[p] = true
		if ops[i].Value == nil {
			continue
		}
		cp, err := checkpoint.Decode(ops[i].Value)
		if err != nil {
			s.logger.Warn("Ignoring unreadable checkpoint; the file will be read from the start", zap.String("path", p), zap.Error(err))
			continue
		}
		out[p] = cp
	}
	return out, nil
}

// Forget marks the entry of path for deletion at the next Save.
func (s *Store) Forget(path string) { s.gone = append(s.gone, path) }

// Entry is one checkpoint to write.
type Entry struct {
	Path string
	File checkpoint.File
}

// Save writes entries, deletes the entries of forgotten paths that tracked
// does not report as followed again, and rewrites the index when its paths
// changed — all in one storage batch. On error nothing is marked done: the
// caller offers the same entries again with its next save.
func (s *Store) Save(ctx context.Context, entries []Entry, tracked func(path string) bool) error {
	var ops []*storage.Operation
	indexed := map[string]bool{}
	for p, v := range s.indexed {
		indexed[p] = v
	}
	dirty := s.dirty
	for _, p := range s.gone {
		if tracked(p) {
			continue // seen again since
		}
		ops = append(ops, storage.DeleteOperation(checkpoint.Key(p)))
		if indexed[p] {
			delete(indexed, p)
			dirty = true
		}
	}
	for _, e := range entries {
		raw, err := checkpoint.Encode(e.File)
		if err != nil {
			return err
		}
		ops = append(ops, storage.SetOperation(checkpoint.Key(e.Path), raw))
		if !indexed[e.Path] {
			indexed[e.Path] = true
			dirty = true
		}
	}
	if dirty {
		paths := make([]string, 0, len(indexed))
		for p := range indexed {
			paths = append(paths, p)
		}
		raw, err := checkpoint.EncodeIndex(paths)
		if err != nil {
			return err
		}
		ops = append(ops, storage.SetOperation(checkpoint.IndexKey, raw))
	}
	if len(ops) == 0 {
		return nil
	}
	if err := s.client.Batch(ctx, ops...); err != nil {
		return err
	}
	s.indexed, s.dirty, s.gone = indexed, false, s.gone[:0]
	return nil
}
