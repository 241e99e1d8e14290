// Command componentdocs writes, from each collector component's
// metadata.yaml, its documentation.md, the generated sections of its
// README.md, its internal/metadata Go package and its lifecycle tests
// (`make generate`).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ctxaudit/ctxaudit/internal/componentmeta"
)

func main() {
	root := flag.String("root", ".", "repository root")
	flag.Parse()
	if err := run(*root); err != nil {
		fmt.Fprintln(os.Stderr, "componentdocs:", err)
		os.Exit(1)
	}
}

func run(root string) error {
	files, err := componentmeta.Generate(root)
	if err != nil {
		return err
	}
	for _, f := range files {
		old, err := os.ReadFile(f.Path)
		if err == nil && bytes.Equal(old, f.Content) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(f.Path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(f.Path, f.Content, 0o644); err != nil {
			return err
		}
		fmt.Println("wrote", f.Path)
	}
	return nil
}
