package absenceeval

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const corpusDir = "../../testdata/answers"

// Floors the held-out test part must keep for unscoped_absence, the label
// that decides a high risk: the precision and recall it measured on first
// contact (docs/analysis.md), rounded down. They may only rise when a new
// held-out part measures higher.
const (
	floorOverall  = 0.96
	floorLanguage = 0.96
)

func TestHeldOutFloors(t *testing.T) {
	answers, err := Load(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	r := Evaluate(answers, "test")
	if r.N < 400 {
		t.Fatalf("held-out part has %d answers; the corpus promises at least 400", r.N)
	}
	check := func(scope string, s Scores, floor float64) {
		if s.Support == 0 {
			t.Errorf("%s: no unscoped_absence answers to measure", scope)
			return
		}
		if p, rc := s.Precision(), s.Recall(); p < floor || rc < floor {
			t.Errorf("%s: unscoped_absence precision %.3f, recall %.3f; floor %.2f", scope, p, rc, floor)
		}
	}
	check("all languages", r.Overall[LabelUnscoped], floorOverall)
	for _, lang := range Languages {
		if r.LangN[lang] == 0 {
			t.Errorf("held-out part has no %s answers", lang)
			continue
		}
		check(lang, r.ByLang[lang][LabelUnscoped], floorLanguage)
	}
}

func TestCorpusShape(t *testing.T) {
	answers, err := Load(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(answers) < 500 {
		t.Fatalf("corpus has %d answers, want at least 500", len(answers))
	}
	real := 0
	for _, a := range answers {
		if a.Source != "written" {
			real++
		}
	}
	if real == 0 {
		t.Error("no answers taken from real transcripts")
	}
	for _, split := range Splits {
		counts := map[string]int{}
		for _, a := range answers {
			if a.Split == split {
				counts[a.Label]++
			}
		}
		for _, l := range Labels {
			if counts[l] == 0 {
				t.Errorf("%s part has no %s answers", split, l)
			}
		}
	}
}

// TestDetectorIsNotALookup: the rules must not carry corpus answers. No
// held-out answer's text (its first 24 characters, past a short prefix)
// may appear in the detector's sources.
func TestDetectorIsNotALookup(t *testing.T) {
	answers, err := Load(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("../../collector/analysis/absence*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("detector sources: %v %v", files, err)
	}
	var src strings.Builder
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src.WriteString(strings.ToLower(string(b)))
	}
	for _, a := range answers {
		r := []rune(strings.ToLower(a.Text))
		if len(r) < 30 {
			continue
		}
		if probe := string(r[4:28]); strings.Contains(src.String(), probe) {
			t.Errorf("detector source contains text of corpus answer %s: %q", a.ID, probe)
		}
	}
}

func TestLoadReportsFileAndLine(t *testing.T) {
	dir := t.TempDir()
	for _, split := range Splits {
		if err := os.MkdirAll(filepath.Join(dir, split), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	good := `{"id":"a","lang":"en","text":"There is no flag.","label":"unscoped_absence","source":"written"}`
	bad := `{"id":"b","lang":"en","text":"x","label":"maybe","source":"written"}`
	scopeless := `{"id":"c","lang":"en","text":"In the first 10 lines there is no x.","label":"scoped_absence","source":"written"}`
	if err := os.WriteFile(filepath.Join(dir, "dev", "en.jsonl"), []byte(good+"\n"+bad+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "test", "en.jsonl"), []byte(scopeless+"\n{not json\n"+good+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	answers, err := Load(dir)
	if err == nil {
		t.Fatal("Load accepted a bad label, a scoped answer without scope, broken JSON and a duplicate id")
	}
	for _, want := range []string{"en.jsonl:2", "maybe", "en.jsonl:1", "names no scope", "en.jsonl:2:", "already used"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if len(answers) != 1 || answers[0].ID != "a" {
		t.Errorf("Load kept %+v; want only the one good answer", answers)
	}
}

func TestScores(t *testing.T) {
	answers := []Answer{
		{ID: "1", Lang: "en", Text: "There is no such flag.", Label: LabelUnscoped, Split: "dev"},
		{ID: "2", Lang: "en", Text: "The build passed.", Label: LabelUnscoped, Split: "dev"},
		{ID: "3", Lang: "en", Text: "There is no timeout option.", Label: LabelNone, Split: "dev"},
		{ID: "4", Lang: "zh-Hant", Text: "前 100 行沒有這個函式。", Label: LabelScoped, Split: "dev"},
	}
	r := Evaluate(answers, "dev")
	u := r.Overall[LabelUnscoped]
	if u.TP != 1 || u.FP != 1 || u.FN != 1 || u.Support != 2 || u.Precision() != 0.5 || u.Recall() != 0.5 {
		t.Errorf("unscoped scores = %+v (P %.2f R %.2f)", u, u.Precision(), u.Recall())
	}
	if r.Confusion[LabelUnscoped][LabelNone] != 1 || r.Confusion[LabelNone][LabelUnscoped] != 1 || r.Confusion[LabelScoped][LabelScoped] != 1 {
		t.Errorf("confusion = %v", r.Confusion)
	}
	if len(r.Errors) != 2 || r.LangN["zh-Hant"] != 1 {
		t.Errorf("errors %d, zh-Hant %d", len(r.Errors), r.LangN["zh-Hant"])
	}
	var b strings.Builder
	r.Write(&b, true)
	for _, want := range []string{"== dev: 4 answers", "unscoped_absence", "confusion", "misses"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}
