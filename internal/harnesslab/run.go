package harnesslab

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/ctxaudit/ctxaudit/internal/harnesslab/model"
)

// Harness is one agent harness the lab drives.
type Harness struct {
	Name    string // the record's source: claude-code, codex, pi
	Package string // npm package
	Version string // pinned version
	Bin     string // executable in node_modules/.bin
	// prepare writes the harness's configuration under env.Home and
	// starts its model server; it returns the command's arguments and
	// environment.
	prepare func(ctx context.Context, env *RunEnv, sc Scenario) (args, vars []string, err error)
	// collect copies the run's transcript files into dst in the harness's
	// own layout, keeping only the lines the lab generated.
	collect func(env *RunEnv, dst string) error
}

// Scenario is one case run on one harness.
type Scenario struct {
	Name string // folder name, e.g. bash-fail-over-cap
	Case string // the table's words
	// Setup writes the files the calls read into work.
	Setup func(work string) error
	// Prompt is the user prompt; the scripted model ignores it.
	Prompt string
	// Script is what the model says.
	Script func(e Env) model.Script
	// Truth is what ctxaudit must record.
	Truth func(e Env) ([]CallTruth, []AnswerTruth)
	// Known lists verdicts ctxaudit is known to get wrong (Truth.KnownDiscrepancy).
	Known []string
	// Compactions, when set, is how many compactions the harness makes in
	// the run (Truth.Compactions).
	Compactions *int
	// Timeout bounds the harness run (default 90 s).
	Timeout time.Duration
	// Web pages served over loopback HTTPS (path → body, text/html).
	Web map[string]string
	// MCP: offer the lab's stdio MCP server (tools lab_dump, lab_page).
	MCP bool
	// OTLP: capture the harness's own OTLP log events.
	OTLP bool
	// Config is added to the harness's configuration (Codex: config.toml
	// lines).
	Config string
}

func (sc Scenario) prompt() string {
	if sc.Prompt != "" {
		return sc.Prompt
	}
	return "Lab scenario " + sc.Name + ": follow the scripted tool calls."
}

// Env is what a scenario's script and truth may depend on.
type Env struct {
	Work string // the harness's working folder
	Web  string // base URL of the HTTPS server, when the scenario has pages
}

// RunEnv is one run's private world: its own HOME, work folder, model
// server and log files, all under Root.
type RunEnv struct {
	Root   string
	Home   string
	Work   string
	Logs   string
	Server *model.Server
	extra  []func() error
	tls    *webServer
	otlp   *otlpCapture
	self   string // this program, which also serves MCP
}

// Lab holds what every run shares.
type Lab struct {
	// Cache is the folder npm installs the pinned harnesses into (outside
	// the repository or ignored by git).
	Cache string
	// Out is the folder recorded runs are written to (testdata/lab).
	Out string
	// Keep leaves each run's temp folder in place for inspection.
	Keep bool
	Log  func(format string, args ...any)
	// Self is this program's path: it also serves MCP (`mcp-server`).
	Self string
}

// installAttempts bounds how often Install runs npm for one harness.
const installAttempts = 3

// Install installs a harness's pinned version into the cache unless it is
// there and runs, and returns the path of its executable. A harness counts
// as installed only once it runs and reports its pinned version: npm leaves
// out an optional dependency it could not fetch with no more than a warning
// — Codex's platform binary, @openai/codex-linux-x64, is one — and the
// harness then fails every run. Such an install is removed and made again,
// up to installAttempts times.
func (l *Lab) Install(ctx context.Context, h Harness) (string, error) {
	dir := filepath.Join(l.Cache, strings.ReplaceAll(h.Package, "/", "+")+"@"+h.Version)
	bin := filepath.Join(dir, "node_modules", ".bin", h.Bin)
	if _, err := os.Stat(bin); err == nil {
		err := runsPinned(ctx, bin, h.Version)
		if err == nil {
			return bin, nil
		}
		l.Log("%s@%s in %s does not run, installing it again: %v", h.Package, h.Version, dir, err)
	}
	var last error
	for attempt := 1; attempt <= installAttempts; attempt++ {
		l.Log("installing %s@%s into %s", h.Package, h.Version, dir)
		if last = npmInstall(ctx, dir, h); last == nil {
			if last = runsPinned(ctx, bin, h.Version); last == nil {
				return bin, nil
			}
		}
		if ctx.Err() != nil {
			break
		}
		l.Log("install %d of %d of %s@%s failed: %v", attempt, installAttempts, h.Package, h.Version, last)
	}
	return "", fmt.Errorf("install %s@%s into %s: %w", h.Package, h.Version, dir, last)
}

// npmInstall installs h's pinned version into a fresh dir.
func npmInstall(ctx context.Context, dir string, h Harness) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "npm", "install", "--no-audit", "--no-fund", "--no-save", "--prefix", dir, h.Package+"@"+h.Version)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm install: %w\n%s", err, out)
	}
	return nil
}

// runsPinned runs `bin --version` in a temp HOME and folder of its own,
// with the environment every harness run has (baseEnv: nothing of the
// caller's agent configuration), and checks it names version.
func runsPinned(ctx context.Context, bin, version string) error {
	home, err := os.MkdirTemp("", "harnesslab-version-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--version")
	cmd.Dir = home
	cmd.Env = baseEnv(home)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s --version: %w\n%s", bin, err, out)
	}
	if !strings.Contains(string(out), version) {
		return fmt.Errorf("%s --version printed %q, not version %s", bin, bytes.TrimSpace(out), version)
	}
	return nil
}

// RunDir is where a harness's recorded run of a scenario lives.
func RunDir(out string, h Harness, sc Scenario) string {
	return filepath.Join(out, h.Name+"@"+h.Version, sc.Name)
}

// Run runs one scenario on one harness and records it under l.Out.
func (l *Lab) Run(ctx context.Context, h Harness, bin string, sc Scenario) (string, error) {
	root, err := makeRoot()
	if err != nil {
		return "", err
	}
	env := &RunEnv{Root: root, Home: filepath.Join(root, "home"), Work: filepath.Join(root, "home", "work"), Logs: filepath.Join(root, "logs")}
	defer func() {
		if env.Server != nil {
			_ = env.Server.Close()
		}
		for _, f := range env.extra {
			_ = f()
		}
		if !l.Keep {
			_ = os.RemoveAll(root)
		} else {
			l.Log("kept %s", root)
		}
	}()
	for _, d := range []string{env.Work, env.Logs} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", err
		}
	}
	if sc.Setup != nil {
		if err := sc.Setup(env.Work); err != nil {
			return "", fmt.Errorf("%s setup: %w", sc.Name, err)
		}
	}
	env.self = l.Self
	if len(sc.Web) > 0 {
		if env.tls, err = startWeb(ctx, env.Root, sc.Web); err != nil {
			return "", err
		}
		env.extra = append(env.extra, env.tls.srv.Close)
	}
	if sc.OTLP {
		if env.otlp, err = startOTLP(ctx, filepath.Join(env.Logs, "otlp.jsonl")); err != nil {
			return "", err
		}
		env.extra = append(env.extra, env.otlp.srv.Close)
	}
	args, vars, err := h.prepare(ctx, env, sc)
	if err != nil {
		return "", fmt.Errorf("%s/%s prepare: %w", h.Name, sc.Name, err)
	}
	timeout := sc.Timeout
	if timeout == 0 {
		timeout = 90 * time.Second
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(rctx, bin, args...)
	cmd.Dir = env.Work
	cmd.Env = append(baseEnv(env.Home), vars...)
	cmd.Stdin = nil
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	runErr := cmd.Run()
	end := time.Now()
	_ = os.WriteFile(filepath.Join(env.Logs, "stdout"), stdout.Bytes(), 0o644)
	_ = os.WriteFile(filepath.Join(env.Logs, "stderr"), stderr.Bytes(), 0o644)
	if runErr != nil {
		return "", fmt.Errorf("%s/%s: %w (see stderr: %s)", h.Name, sc.Name, runErr, tail(stderr.String(), 800))
	}
	// The run is collected raw into its root, then normalised into the
	// recording (normalise.go).
	raw := filepath.Join(env.Root, "recorded")
	if err := h.collect(env, filepath.Join(raw, TranscriptDir)); err != nil {
		return "", fmt.Errorf("%s/%s collect: %w", h.Name, sc.Name, err)
	}
	if env.otlp != nil {
		time.Sleep(time.Second) // the last export batch
		b, err := os.ReadFile(env.otlp.File)
		if err != nil {
			return "", fmt.Errorf("%s/%s: no OTLP events: %w", h.Name, sc.Name, err)
		}
		if err := os.WriteFile(filepath.Join(raw, OTLPFile), b, 0o644); err != nil {
			return "", err
		}
	}
	dst := RunDir(l.Out, h, sc)
	if err := os.RemoveAll(dst); err != nil {
		return "", err
	}
	norm := newNormaliser(env.Root, start, end)
	if err := norm.normaliseTree(raw, dst); err != nil {
		return "", fmt.Errorf("%s/%s: %w", h.Name, sc.Name, err)
	}
	if err := norm.writeLog(filepath.Join(env.Logs, "normalise.json")); err != nil {
		return "", err
	}
	calls, answers := sc.Truth(env.env())
	t := Truth{Harness: h.Name, Version: h.Version, Scenario: sc.Name, Case: sc.Case, Calls: calls, Answers: answers, Compactions: sc.Compactions, KnownDiscrepancy: sc.Known}
	for _, d := range []string{raw, dst} {
		if err := WriteTruth(d, t); err != nil {
			return "", err
		}
	}
	if err := SameRecords(ctx, raw, dst); err != nil {
		return "", fmt.Errorf("%s/%s: normalising changed what ctxaudit records: %w", h.Name, sc.Name, err)
	}
	return dst, nil
}

// makeRoot makes a run's root, /tmp/ctxaudit-lab-<10 digits>: always the
// same length, so its normalised form is too.
func makeRoot() (string, error) {
	for range 100 {
		root := filepath.Join("/tmp", fmt.Sprintf("%s%010d", labRootPrefix, rand.Uint32()))
		err := os.Mkdir(root, 0o700)
		if err == nil {
			return root, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	return "", errors.New("no free run folder under /tmp")
}

// baseEnv is the environment every harness runs with: its own HOME and
// nothing of the caller's agent configuration.
func baseEnv(home string) []string {
	env := []string{
		"HOME=" + home,
		"PATH=" + os.Getenv("PATH"),
		"TMPDIR=" + filepath.Join(home, "tmp"),
		"LANG=C.UTF-8",
		"TERM=dumb",
		"NO_COLOR=1",
	}
	_ = os.MkdirAll(filepath.Join(home, "tmp"), 0o755)
	return env
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// copyFiltered copies a JSONL transcript, keeping the lines keep accepts
// (and rewriting them through it).
func copyFiltered(src, dst string, keep func(line []byte) ([]byte, bool)) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	var out bytes.Buffer
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 256<<20)
	for sc.Scan() {
		if line, ok := keep(sc.Bytes()); ok {
			out.Write(line)
			out.WriteByte('\n')
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	return os.WriteFile(dst, out.Bytes(), 0o644)
}

// copyTree copies regular files under src to dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
}

var errNoTranscript = errors.New("the harness wrote no transcript")

// OTLPFile holds a recorded run's captured OTLP log requests, one a line.
const OTLPFile = "otlp-logs.jsonl"

func (env *RunEnv) env() Env {
	e := Env{Work: env.Work}
	if env.tls != nil {
		e.Web = env.tls.URL
	}
	return e
}
