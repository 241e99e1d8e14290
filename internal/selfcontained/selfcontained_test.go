package selfcontained

import (
	"bytes"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// outsideMarkers are spellings that only make sense on a machine where the
// repository sits next to other folders: the project's former shared folder
// and the development workspace's layout. They are assembled from parts so
// this file does not contain what it forbids.
var outsideMarkers = func() []string {
	const shared, work = "shared", "/work"
	return []string{
		"../" + shared,
		shared + "/fixtures",
		shared + "/reference",
		shared + "/DESIGN",
		work + "/main",
		work + "/" + shared,
	}
}()

// relativeRef matches a run of "../" segments; whether it escapes the
// repository depends on the directory of the file it appears in.
var relativeRef = regexp.MustCompile(`(?:^|[^A-Za-z0-9_.\-/])((?:\.\./)+)`)

// dataTrees hold third-party or generated data, not references: transcripts
// recorded on other machines (their paths are theirs) and fuzz corpora.
var dataTrees = []string{
	"testdata/transcripts/",
}

func isData(file string) bool {
	for _, d := range dataTrees {
		if strings.HasPrefix(file, d) {
			return true
		}
	}
	return strings.Contains(file, "/testdata/fuzz/")
}

func TestNoReferenceOutsideRepository(t *testing.T) {
	root := repoRoot(t)
	files := trackedFiles(t, root)
	if len(files) < 50 {
		t.Fatalf("only %d tracked files found under %s; the file list is wrong", len(files), root)
	}
	checked := 0
	for _, f := range files {
		if isData(f) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			if os.IsNotExist(err) {
				continue // deleted in the work tree, not yet committed
			}
			t.Fatalf("read %s: %v", f, err)
		}
		if bytes.IndexByte(b, 0) >= 0 {
			continue // binary
		}
		checked++
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range outsideMarkers {
				if strings.Contains(line, m) {
					t.Errorf("%s:%d refers to %q, which is outside the repository: %s", f, i+1, m, clip(line))
				}
			}
			for _, sm := range relativeRef.FindAllStringSubmatch(line, -1) {
				if escapes(f, sm[1]) {
					t.Errorf("%s:%d: %q climbs above the repository root: %s", f, i+1, sm[1], clip(line))
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no text file was checked")
	}
}

// TestEscapes pins the path arithmetic the guard relies on.
func TestEscapes(t *testing.T) {
	const up = ".." + "/"
	for _, tc := range []struct {
		file, ups string
		want      bool
	}{
		{"README.md", strings.Repeat(up, 1), true},
		{"docs/a.md", strings.Repeat(up, 1), false},
		{"docs/a.md", strings.Repeat(up, 2), true},
		{"examples/sessions/README.md", strings.Repeat(up, 2), false},
		{"examples/sessions/README.md", strings.Repeat(up, 3), true},
	} {
		if got := escapes(tc.file, tc.ups); got != tc.want {
			t.Errorf("escapes(%q, %q) = %v, want %v", tc.file, tc.ups, got, tc.want)
		}
		// The guard's matcher must see the same run in a line of text.
		line := "see " + tc.ups + "x"
		m := relativeRef.FindStringSubmatch(line)
		if m == nil || m[1] != tc.ups {
			t.Errorf("relativeRef on %q = %q, want %q", line, m, tc.ups)
		}
	}
}

// escapes reports whether ups (a run of "../"), read relative to the
// directory of file, leaves the repository.
func escapes(file, ups string) bool {
	depth := 0
	if dir := path.Dir(file); dir != "." {
		depth = strings.Count(dir, "/") + 1
	}
	return strings.Count(ups, "../") > depth
}

func clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 160 {
		return s[:160] + "…"
	}
	return s
}

// repoRoot is the nearest parent of the package directory holding go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the package directory")
		}
		dir = parent
	}
}

// trackedFiles lists the files git tracks; outside a git checkout (a source
// archive) it walks the tree instead.
func trackedFiles(t *testing.T, root string) []string {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = root
	out, err := cmd.Output()
	if err == nil {
		var files []string
		for _, f := range strings.Split(string(out), "\x00") {
			if f != "" {
				files = append(files, f)
			}
		}
		return files
	}
	var files []string
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == ".ctxaudit" || d.Name() == "bin") {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(root, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", root, err)
	}
	return files
}
