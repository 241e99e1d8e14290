// Command absence-eval prints the absence detector's precision, recall and F1
// per label and per language, and its confusion matrix, on the labeled
// corpus (make eval).
//
//	go run ./internal/absenceeval/cmd/absence-eval [-v] [-corpus testdata/answers]
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/ctxaudit/ctxaudit/internal/absenceeval"
)

func main() {
	corpus := flag.String("corpus", "testdata/answers", "corpus directory (dev/ and test/ of *.jsonl)")
	verbose := flag.Bool("v", false, "list every answer the detector gets wrong")
	flag.Parse()
	answers, err := absenceeval.Load(*corpus)
	if err != nil {
		fmt.Fprintln(os.Stderr, "absence-eval:", err)
		os.Exit(2)
	}
	for _, split := range absenceeval.Splits {
		absenceeval.Evaluate(answers, split).Write(os.Stdout, *verbose)
	}
}
