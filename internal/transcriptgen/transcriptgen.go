// Package transcriptgen holds what the generators of faithful transcript
// reproductions share (examples/sessions/gen, internal/cli/testdata/scenarios/gen):
// JSON objects that keep their key order and escaping as the harnesses write
// them, and a directory that collects the first write error.
package transcriptgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Dir writes files below a root directory, creating folders as needed. The
// first error is kept and later writes are skipped, so a generator checks Err once.
type Dir struct {
	root string
	err  error
}

// NewDir returns a Dir rooted at root.
func NewDir(root string) *Dir { return &Dir{root: root} }

// Write writes data to rel (slash-separated) below the root.
func (d *Dir) Write(rel string, data []byte) {
	if d.err != nil {
		return
	}
	p := filepath.Join(d.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		d.err = err
		return
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		d.err = fmt.Errorf("write %s: %w", p, err)
	}
}

// Err is the first write error, if any.
func (d *Dir) Err() error { return d.err }

// Obj is a JSON object that keeps its key order, as the harnesses write them.
type Obj []KV

// KV is one member of an Obj: the key (a string) and the value. It is an
// array rather than a struct so generators can write terse {"key", value}
// literals.
type KV [2]any

// MarshalJSON writes the members in order.
func (o Obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		key, ok := f[0].(string)
		if !ok {
			return nil, fmt.Errorf("object key %v is not a string", f[0])
		}
		k, _ := json.Marshal(key)
		b.Write(k)
		b.WriteByte(':')
		v, err := Marshal(f[1])
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Marshal encodes like JSON.stringify: no HTML escaping of <, > and &.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Line is Marshal for the static values generators build; it panics on a
// value that cannot be encoded, which is a bug in the generator.
func Line(v any) string {
	b, err := Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
