package selfcontained

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// designDoc is the design contract that code and docs cite by section number.
const designDoc = "docs/design.md"

// oldCitation is the citation form of the design text that used to live
// outside the repository. It is assembled from parts so this file does not
// contain what it forbids.
var oldCitation = "DESIGN" + " §"

// frozenFiles may keep the old citation form: an applied migration is
// checksummed by its full text, so editing even a comment in it makes
// `ctxaudit migrate` refuse every database that applied it.
var frozenFiles = map[string]bool{
	"schema/migrations/sql/0001_audit_tables.sql": true,
}

// citationRe matches a citation of the design document and the list of
// section numbers after it: "§4", "§4.1", "§4.12, §5", "§7.4 and §9",
// "§4–5". Group 1 is the list; it is empty when no number follows the §.
var citationRe = regexp.MustCompile(`design\.md\s*§((?:\d+(?:\.\d+)*)(?:\s*(?:,|and|/|–)\s*§?\d+(?:\.\d+)*)*)?`)

// sectionRe finds each number in a citation's list.
var sectionRe = regexp.MustCompile(`\d+(?:\.\d+)*`)

// anchorRe matches a Markdown link into the design document by anchor.
var anchorRe = regexp.MustCompile(`design\.md#([^\s)"'>]+)`)

// headingRe matches a numbered heading: "## 4. Measurements", "### 4.1 Sizes".
var headingRe = regexp.MustCompile(`^#{2,4}\s+(\d+(?:\.\d+)*)\.?\s+\S`)

// designHeadings returns the section numbers of doc's numbered headings and
// the GitHub anchors of all its headings, with any problem in the numbering.
func designHeadings(doc string) (sections, anchors map[string]bool, problems []string) {
	sections, anchors = map[string]bool{}, map[string]bool{}
	fenced := false
	for i, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		anchors[slug(strings.TrimLeft(line, "#"))] = true
		m := headingRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n := m[1]
		if sections[n] {
			problems = append(problems, fmt.Sprintf("%s:%d: section %s is numbered twice", designDoc, i+1, n))
		}
		if dot := strings.LastIndex(n, "."); dot >= 0 && !sections[n[:dot]] {
			problems = append(problems, fmt.Sprintf("%s:%d: section %s comes before (or without) section %s", designDoc, i+1, n, n[:dot]))
		}
		sections[n] = true
	}
	return sections, anchors, problems
}

// slug is the anchor GitHub gives a heading: lower-cased, punctuation other
// than '-' and '_' dropped, spaces turned into '-'.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// checkCitations returns every problem with the design citations in files
// (path → content): the old citation form, a citation without a section
// number, a section the document lacks, and (in Markdown) a link to an
// anchor it lacks. n is the number of section references checked.
func checkCitations(files map[string]string, doc string) (problems []string, n int) {
	sections, anchors, problems := designHeadings(doc)
	if len(sections) == 0 {
		return append(problems, designDoc+": no numbered headings"), 0
	}
	for _, f := range slices.Sorted(maps.Keys(files)) {
		for i, line := range strings.Split(files[f], "\n") {
			where := fmt.Sprintf("%s:%d", f, i+1)
			if strings.Contains(line, oldCitation) && !frozenFiles[f] {
				problems = append(problems, fmt.Sprintf("%s: old citation %q; cite %s by section instead: %s", where, oldCitation, designDoc, clip(line)))
			}
			for _, m := range citationRe.FindAllStringSubmatch(line, -1) {
				if m[1] == "" {
					problems = append(problems, fmt.Sprintf("%s: %q names no section number: %s", where, m[0], clip(line)))
					continue
				}
				for _, s := range sectionRe.FindAllString(m[1], -1) {
					n++
					if !sections[s] {
						problems = append(problems, fmt.Sprintf("%s: cites §%s, which %s does not have: %s", where, s, designDoc, clip(line)))
					}
				}
			}
			if !strings.HasSuffix(f, ".md") {
				continue
			}
			for _, m := range anchorRe.FindAllStringSubmatch(line, -1) {
				if !anchors[m[1]] {
					problems = append(problems, fmt.Sprintf("%s: links to #%s, which is no heading of %s: %s", where, m[1], designDoc, clip(line)))
				}
			}
		}
	}
	return problems, n
}

// TestDesignCitations checks every tracked file: no old-form citation, and
// every citation of the design document names a section it has.
func TestDesignCitations(t *testing.T) {
	root := repoRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(designDoc)))
	if err != nil {
		t.Fatalf("the design document is missing: %v", err)
	}
	files := map[string]string{}
	for _, f := range trackedFiles(t, root) {
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
		if bytes.IndexByte(b, 0) < 0 {
			files[f] = string(b)
		}
	}
	problems, n := checkCitations(files, string(doc))
	for _, p := range problems {
		t.Error(p)
	}
	// The code cites the document in dozens of places; finding only a few
	// means the matcher broke, not that the citations went away.
	if n < 20 {
		t.Errorf("found only %d section citations of %s in %d files; the matcher is wrong", n, designDoc, len(files))
	}
}

// TestCheckCitations shows the check failing where it must.
func TestCheckCitations(t *testing.T) {
	const doc = "# title\n\n## 4. Measurements\n\n### 4.1 Sizes: original and context\n\n```\n## 9. in a code block\n```\n\n## 5. Answers and risk\n"
	cite := "docs/design.md " + "§"
	link := "docs/design.md" + "#"
	for _, tc := range []struct {
		name, file, text string
		ok               bool
	}{
		{"section", "a.go", "// see " + cite + "4", true},
		{"subsection", "a.go", "// see " + cite + "4.1.", true},
		{"list", "a.go", "// (" + cite + "4.1, §5)", true},
		{"and", "a.go", "// " + cite + "4.1 and §5 rule out", true},
		{"range", "a.go", "// (" + cite + "4–5)", true},
		{"missing section", "a.go", "// " + cite + "11", false},
		{"missing subsection", "a.go", "// " + cite + "4.2", false},
		{"heading only inside a code block", "a.go", "// " + cite + "9", false},
		{"bad item in a list", "a.go", "// (" + cite + "4.1, §7)", false},
		{"bad end of a range", "a.go", "// (" + cite + "4–6)", false},
		{"no number", "a.go", "// " + cite + "N", false},
		{"old form", "a.go", "// (" + oldCitation + "4)", false},
		{"old form in a frozen migration", "schema/migrations/sql/0001_audit_tables.sql", "-- (" + oldCitation + "7)", true},
		{"old form in another migration", "schema/migrations/sql/0002_next.sql", "-- (" + oldCitation + "7)", false},
		{"markdown link", "README.md", "[" + cite + "4.1](" + link + "41-sizes-original-and-context)", true},
		{"markdown link to a missing anchor", "README.md", "[" + cite + "4.1](" + link + "41-sizes)", false},
		{"anchor outside markdown is not a link", "a.go", "// " + link + "nowhere", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			problems, _ := checkCitations(map[string]string{tc.file: tc.text}, doc)
			if ok := len(problems) == 0; ok != tc.ok {
				t.Errorf("%q in %s: problems %q, want ok=%v", tc.text, tc.file, problems, tc.ok)
			}
		})
	}
}

// TestDesignHeadingNumbering checks the heading checks themselves.
func TestDesignHeadingNumbering(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		ok        bool
	}{
		{"ordered", "## 1. A\n### 1.1 B\n## 2. C\n", true},
		{"numbered twice", "## 1. A\n## 1. B\n", false},
		{"subsection without its section", "## 1. A\n### 2.1 B\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, problems := designHeadings(tc.doc)
			if ok := len(problems) == 0; ok != tc.ok {
				t.Errorf("problems %q, want ok=%v", problems, tc.ok)
			}
		})
	}
}
