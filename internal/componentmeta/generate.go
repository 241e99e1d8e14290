package componentmeta

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// GeneratedFile is one file `make generate` writes from a metadata.yaml.
type GeneratedFile struct {
	Path    string
	Content []byte
}

// skipDirs are folders that hold no component.
var skipDirs = map[string]bool{".git": true, "node_modules": true, "testdata": true, "bin": true, ".ctxaudit": true}

// Generate renders, for every metadata.yaml below root, the component's
// documentation.md and its README.md with the generated sections replaced.
// It writes nothing: the caller writes the files (make generate) or compares
// them with the tree (the test that keeps them current).
func Generate(root string) ([]GeneratedFile, error) {
	var metas []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && skipDirs[d.Name()] {
			return fs.SkipDir
		}
		if !d.IsDir() && d.Name() == "metadata.yaml" {
			metas = append(metas, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(metas)
	var out []GeneratedFile
	for _, p := range metas {
		md, err := Load(p)
		if err != nil {
			return nil, err
		}
		dir := filepath.Dir(p)
		rel, err := filepath.Rel(dir, root)
		if err != nil {
			return nil, err
		}
		out = append(out, GeneratedFile{Path: filepath.Join(dir, "documentation.md"), Content: []byte(md.Documentation())})
		readmePath := filepath.Join(dir, "README.md")
		readme, err := os.ReadFile(readmePath)
		if err != nil {
			return nil, fmt.Errorf("%s: every component needs a README: %w", p, err)
		}
		updated, err := md.UpdateReadme(string(readme), filepath.ToSlash(rel))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", readmePath, err)
		}
		out = append(out, GeneratedFile{Path: readmePath, Content: []byte(updated)})
	}
	if len(metas) == 0 {
		return nil, fmt.Errorf("no metadata.yaml below %s", root)
	}
	return out, nil
}
