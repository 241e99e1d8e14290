// Package absenceeval measures the absence detector of collector/analysis on
// the labeled answers in testdata/answers: precision, recall and F1 per label
// and per language, and the confusion matrix, for the development part the
// rules were written against and the held-out test part they were not.
package absenceeval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Labels a corpus answer can carry, in confusion-matrix order.
const (
	LabelNone     = "no_absence"
	LabelScoped   = "scoped_absence"
	LabelUnscoped = "unscoped_absence"
)

// Labels lists the labels in report order.
var Labels = []string{LabelUnscoped, LabelScoped, LabelNone}

// Languages the corpus ships, as BCP 47 tags.
var Languages = []string{"en", "zh-Hant", "zh-Hans"}

// Splits of the corpus: dev is what the rules were written against, test is
// held out.
var Splits = []string{"dev", "test"}

// Answer is one labeled assistant answer.
type Answer struct {
	ID    string `json:"id"`
	Lang  string `json:"lang"`
	Text  string `json:"text"`
	Label string `json:"label"`
	// Scope is the scope phrase of a scoped_absence answer, as written.
	Scope string `json:"scope,omitempty"`
	// Source is "written", or where a real answer was taken from:
	// repository@commit:path:line, or a testdata path and line.
	Source string `json:"source"`
	Note   string `json:"note,omitempty"`
	// Split is the directory the answer was read from (dev or test).
	Split string `json:"-"`
	// At is file:line, for error messages.
	At string `json:"-"`
}

// Load reads every <split>/*.jsonl under dir. Every line must be one valid
// answer; errors name the file and line.
func Load(dir string) ([]Answer, error) {
	var out []Answer
	seen := map[string]string{}
	var errs []error
	for _, split := range Splits {
		files, err := filepath.Glob(filepath.Join(dir, split, "*.jsonl"))
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("%s: no %s/*.jsonl files", dir, split)
		}
		sort.Strings(files)
		for _, f := range files {
			as, err := loadFile(f, split)
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil, err
				}
				errs = append(errs, err)
			}
			for _, a := range as {
				if prev, dup := seen[a.ID]; dup {
					errs = append(errs, fmt.Errorf("%s: id %q already used at %s", a.At, a.ID, prev))
					continue
				}
				seen[a.ID] = a.At
				out = append(out, a)
			}
		}
	}
	return out, errors.Join(errs...)
}

func loadFile(path, split string) ([]Answer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read corpus: %w", err)
	}
	var out []Answer
	var errs []error
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		at := fmt.Sprintf("%s:%d", path, n)
		var a Answer
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&a); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", at, err))
			continue
		}
		a.Split, a.At = split, at
		if err := a.validate(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", at, err))
			continue
		}
		out = append(out, a)
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", path, err))
	}
	return out, errors.Join(errs...)
}

func (a Answer) validate() error {
	switch {
	case a.ID == "":
		return errors.New("missing id")
	case strings.TrimSpace(a.Text) == "":
		return fmt.Errorf("answer %s has no text", a.ID)
	case !contains(Labels, a.Label):
		return fmt.Errorf("answer %s: label %q is not one of %v", a.ID, a.Label, Labels)
	case !contains(Languages, a.Lang):
		return fmt.Errorf("answer %s: lang %q is not one of %v", a.ID, a.Lang, Languages)
	case a.Source == "":
		return fmt.Errorf("answer %s has no source", a.ID)
	case a.Label == LabelScoped && a.Scope == "":
		return fmt.Errorf("answer %s is scoped_absence but names no scope", a.ID)
	case a.Scope != "" && !strings.Contains(a.Text, a.Scope):
		return fmt.Errorf("answer %s: scope %q is not in its text", a.ID, a.Scope)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
