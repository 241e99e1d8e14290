// Command componentdocs writes each collector component's documentation.md
// and the generated sections of its README.md from its metadata.yaml
// (`make generate`).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"

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
		if err := os.WriteFile(f.Path, f.Content, 0o644); err != nil {
			return err
		}
		fmt.Println("wrote", f.Path)
	}
	return nil
}
