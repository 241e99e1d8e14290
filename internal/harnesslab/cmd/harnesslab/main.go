// Command harnesslab runs the harness lab (`make lab`): it installs the
// pinned harnesses from npm into a cache folder, runs every scenario on
// each against the scripted model servers, records the runs under
// testdata/lab, checks ctxaudit's verdicts against their truth, and writes
// the conformance table docs/harnesses.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/ctxaudit/ctxaudit/internal/harnesslab"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "mcp-server" {
		if err := harnesslab.ServeMCP(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "mcp-server:", err)
			os.Exit(1)
		}
		return
	}
	os.Exit(run())
}

func run() int {
	cache := flag.String("cache", ".ctxaudit/lab/npm", "folder the pinned harnesses are installed into")
	out := flag.String("out", "testdata/lab", "folder the recorded runs are written to")
	doc := flag.String("doc", "docs/harnesses.md", "conformance table to write (\"\" for none)")
	only := flag.String("only", "", "run only scenarios whose harness/name contains one of these (comma-separated)")
	keep := flag.Bool("keep", false, "keep each run's temp folder")
	checkOnly := flag.Bool("check", false, "do not run the harnesses: check the recorded runs and write the table")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cacheAbs, _ := filepath.Abs(*cache)
	outAbs, _ := filepath.Abs(*out)
	lab := &harnesslab.Lab{Cache: cacheAbs, Out: outAbs, Keep: *keep, Self: self,
		Log: func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }}

	failed := 0
	if !*checkOnly {
		for _, hs := range harnesslab.Suites() {
			bin, err := lab.Install(ctx, hs.Harness)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			for _, sc := range hs.Scenarios {
				key := hs.Harness.Name + "/" + sc.Name
				if !selected(key, *only) {
					continue
				}
				fmt.Fprintf(os.Stderr, "run %s@%s %s\n", hs.Harness.Name, hs.Harness.Version, sc.Name)
				if _, err := lab.Run(ctx, hs.Harness, bin, sc); err != nil {
					fmt.Fprintln(os.Stderr, "  FAIL run:", err)
					failed++
				}
			}
		}
	}
	results, err := harnesslab.CheckAll(ctx, outAbs)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for _, r := range results {
		mark := "ok  "
		if !r.OK() {
			mark = "FAIL"
			failed++
		}
		fmt.Printf("%s %s@%s %s\n", mark, r.Truth.Harness, r.Truth.Version, r.Truth.Scenario)
		for _, p := range r.Problems {
			fmt.Printf("       %s\n", p)
		}
	}
	if *doc != "" {
		if err := os.WriteFile(*doc, []byte(harnesslab.Table(results)), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	fmt.Printf("%d runs, %d failed\n", len(results), failed)
	if failed > 0 {
		return 1
	}
	return 0
}

func selected(key, only string) bool {
	if only == "" {
		return true
	}
	for _, o := range strings.Split(only, ",") {
		if o != "" && strings.Contains(key, o) {
			return true
		}
	}
	return false
}
