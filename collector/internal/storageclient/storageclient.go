// Package storageclient opens a component's client of the storage extension
// its configuration names, with errors that say which setting is wrong.
package storageclient

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
)

// Open returns the client named name of the storage extension id for the
// component self of kind; the host's extensions are looked up at start.
func Open(ctx context.Context, host component.Host, id component.ID, kind component.Kind, self component.ID, name string) (storage.Client, error) {
	ext, ok := host.GetExtensions()[id]
	if !ok {
		return nil, fmt.Errorf("storage: extension %q not found", id.String())
	}
	se, ok := ext.(storage.Extension)
	if !ok {
		return nil, fmt.Errorf("storage: extension %q is not a storage extension", id.String())
	}
	client, err := se.GetClient(ctx, kind, self, name)
	if err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	return client, nil
}
