package componentmeta

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/mod/modfile"
)

// GeneratedFile is one file `make generate` writes from a metadata.yaml.
type GeneratedFile struct {
	Path    string
	Content []byte
}

// skipDirs are folders that hold no component.
var skipDirs = map[string]bool{".git": true, "node_modules": true, "testdata": true, "bin": true, ".ctxaudit": true}

// Generate renders, for every metadata.yaml below root, the component's
// documentation.md, its README.md with the generated sections replaced, and
// its Go metadata package and lifecycle tests (gocode.go).
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
		code, err := goFiles(md, root, dir)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, code...)
	}
	if len(metas) == 0 {
		return nil, fmt.Errorf("no metadata.yaml below %s", root)
	}
	return out, nil
}

// goFiles renders the Go files of the component in dir.
func goFiles(md *Metadata, root, dir string) ([]GeneratedFile, error) {
	pkg, err := packageName(dir)
	if err != nil {
		return nil, err
	}
	module, err := modulePath(root)
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil {
		return nil, err
	}
	d, err := newGoData(md, pkg, path.Join(module, filepath.ToSlash(rel)))
	if err != nil {
		return nil, err
	}
	var out []GeneratedFile
	for _, f := range []struct{ tmpl, path string }{
		{"status", filepath.Join(dir, "internal", "metadata", "generated_status.go")},
		{"telemetry", filepath.Join(dir, "internal", "metadata", "generated_telemetry.go")},
		{"test", filepath.Join(dir, "generated_component_test.go")},
	} {
		b, err := goFile(f.tmpl, d)
		if err != nil {
			return nil, err
		}
		out = append(out, GeneratedFile{Path: f.path, Content: b})
	}
	return out, nil
}

// packageName is the package clause of the first non-test Go file in dir.
func packageName(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, n), nil, parser.PackageClauseOnly)
		if err != nil {
			return "", err
		}
		return f.Name.Name, nil
	}
	return "", fmt.Errorf("%s: no Go package beside metadata.yaml", dir)
}

// modulePath is the module path go.mod at root declares.
func modulePath(root string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", err
	}
	if m := modfile.ModulePath(b); m != "" {
		return m, nil
	}
	return "", fmt.Errorf("%s: no module line", filepath.Join(root, "go.mod"))
}
