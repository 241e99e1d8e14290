package integrity

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/collector/transcript/transcripttest"
)

// killRuns is how many seeded runs the kill -9 test makes; each kills the
// collector several times.
const killRuns = 3

// TestCollectorKilledAtRandomLines runs the real `ctxaudit collector`
// process, with the shipped configuration (examples/collector.yaml), on a
// folder where real transcripts (the fixtures of testdata/transcripts) grow
// line by line, kills it with SIGKILL at random points — no shutdown code
// runs — and restarts it, several times a run; once every line is written
// it stops it gracefully. Then the stored rows must be, field by field, what
// one-shot `ctxaudit ingest` stores of the finished files, with no two rows
// of one id sharing a version and FINAL, argMax and LIMIT 1 BY keeping the
// same row of every id (see stored).
func TestCollectorKilledAtRandomLines(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("CTXAUDIT_INTEGRITY_SEED"); v != "" {
		seed, _ = strconv.ParseUint(v, 10, 64)
	}
	t.Logf("seed %d (set CTXAUDIT_INTEGRITY_SEED to repeat)", seed)
	bin := buildCtxaudit(t)

	for run := range killRuns {
		t.Run(fmt.Sprintf("run %d", run), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, uint64(run)))
			src := filepath.Join(t.TempDir(), "src")
			copyTree(t, transcripttest.FixturesDir(t), src)
			copyLabRecordings(t, filepath.Join(transcripttest.ExamplesDir(t), "..", "..", "testdata", "lab"), filepath.Join(src, "lab"))
			full := readTranscripts(t, src)

			// The folder the collector watches: the saved outputs exist
			// before the lines that point to them (the harness writes them
			// first), the transcripts are written as they grow.
			dir := filepath.Join(t.TempDir(), "projects")
			copyTree(t, src, dir)
			files := map[string][]string{}
			for p, lines := range full {
				rel, _ := filepath.Rel(src, p)
				files[filepath.Join(dir, rel)] = lines
			}
			writeTranscripts(t, files, map[string]int{})

			addr, s := freshStore(t)
			d := &process{bin: bin, state: t.TempDir(), projects: dir, empty: t.TempDir(), clickhouse: addr}
			w := newGrowth(files)
			// Kill points anywhere in the growth: after a random number of
			// lines, at once or after a random pause, so the collector dies
			// mid-read, mid-send, mid-analysis or idle.
			kills := make([]int, 2+rng.IntN(3))
			for i := range kills {
				kills[i] = 1 + rng.IntN(w.total-1)
			}
			sort.Ints(kills)
			for i, at := range kills {
				c := d.start(t)
				w.write(t, rng, at-w.done)
				time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond)
				c.kill(t)
				t.Logf("kill %d after %d of %d lines", i+1, w.done, w.total)
			}
			c := d.start(t)
			w.write(t, rng, w.left())

			_, _, want := ingested(t, dir)
			waitStored(t, s, want)
			c.stop(t)
			compareStored(t, "collector killed and restarted", want, stored(t, s))
		})
	}
}

// buildCtxaudit builds the ctxaudit command, as `make build` does.
func buildCtxaudit(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "ctxaudit")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/ctxaudit/ctxaudit/cmd/ctxaudit")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build ctxaudit: %v\n%s", err, out)
	}
	return bin
}

// growth writes transcripts line by line, as agents write them: files in
// turn, the lines of one Claude Code assistant message (which the harness
// writes at once) in one write, each group after a short pause.
type growth struct {
	paths       []string
	files       map[string][]string
	groups      map[string][]int // line counts a file can stop after (cutPoints)
	next        map[string]int   // index into groups of the next stop
	done, total int
}

func newGrowth(files map[string][]string) *growth {
	g := &growth{files: files, groups: map[string][]int{}, next: map[string]int{}}
	for p, lines := range files {
		g.paths = append(g.paths, p)
		g.groups[p] = cutPoints(lines)[1:]
		g.total += len(lines)
	}
	sort.Strings(g.paths)
	return g
}

func (g *growth) left() int { return g.total - g.done }

// write appends at least n more lines (whole groups), spread over the files
// at random; nothing when n is not positive.
func (g *growth) write(t *testing.T, rng *rand.Rand, n int) {
	t.Helper()
	for target := min(g.done+n, g.total); g.done < target; {
		var open []string
		for _, p := range g.paths {
			if g.next[p] < len(g.groups[p]) {
				open = append(open, p)
			}
		}
		p := open[rng.IntN(len(open))]
		from := 0
		if i := g.next[p]; i > 0 {
			from = g.groups[p][i-1]
		}
		to := g.groups[p][g.next[p]]
		fh, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		_, err = fh.WriteString(strings.Join(g.files[p][from:to], ""))
		if cerr := fh.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
		g.next[p]++
		g.done += to - from
		time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond)
	}
}

// process is one collector deployment that outlives its processes: the
// same state folder (checkpoints and the persistent queue) and folders
// across kills and restarts.
type process struct {
	bin, state, projects, empty, clickhouse string
}

// running is one `ctxaudit collector` process.
type running struct {
	cmd    *exec.Cmd
	log    string
	exited chan struct{}
	err    error
}

// start runs the shipped configuration, with short timings and private
// ports, and waits until its health check answers.
func (d *process) start(t *testing.T) *running {
	t.Helper()
	health := freePort(t)
	override := filepath.Join(t.TempDir(), "override.yaml")
	if err := os.WriteFile(override, []byte(fmt.Sprintf(`
extensions:
  health_check: {endpoint: "127.0.0.1:%d"}
receivers:
  agenttranscripts: {poll_interval: 50ms, session_idle: 300ms}
  otlp:
    protocols:
      grpc: {endpoint: "127.0.0.1:%d"}
      http: {endpoint: "127.0.0.1:%d"}
processors:
  ctxaudit: {session_idle: 300ms}
exporters:
  ctxaudit_clickhouse:
    retry_on_failure: {initial_interval: 100ms, max_interval: 1s}
    sending_queue:
      batch: {flush_timeout: 100ms}
service:
  telemetry:
    metrics: {level: none}
`, health, freePort(t), freePort(t))), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &running{log: filepath.Join(t.TempDir(), "collector.log"), exited: make(chan struct{})}
	logf, err := os.Create(r.log)
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join("..", "..", "examples", "collector.yaml")
	r.cmd = exec.Command(d.bin, "collector", "--config", config, "--config", override)
	r.cmd.Env = append(os.Environ(), "HOME="+t.TempDir(),
		"CTXAUDIT_STATE_DIR="+d.state, "CTXAUDIT_CLICKHOUSE="+d.clickhouse,
		"CTXAUDIT_CLAUDE_PROJECTS="+d.projects, "CTXAUDIT_CODEX_SESSIONS="+d.empty,
		"CTXAUDIT_PI_SESSIONS="+d.empty, "CTXAUDIT_EXAMPLES="+d.empty)
	r.cmd.Stdout, r.cmd.Stderr = logf, logf
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r.err = r.cmd.Wait()
		logf.Close()
		close(r.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-r.exited:
		default:
			r.kill(t)
		}
		if t.Failed() {
			b, _ := os.ReadFile(r.log)
			t.Logf("collector log (last 4 KiB):\n%s", b[max(0, len(b)-4096):])
		}
	})
	waitFor(t, "the collector's health check", func() (bool, string) {
		select {
		case <-r.exited:
			b, _ := os.ReadFile(r.log)
			t.Fatalf("collector exited during start: %v\n%s", r.err, b)
		default:
		}
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", health))
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
	return r
}

// kill ends the process with SIGKILL: no shutdown code runs.
func (r *running) kill(t *testing.T) {
	t.Helper()
	_ = r.cmd.Process.Kill()
	select {
	case <-r.exited:
	case <-time.After(30 * time.Second):
		t.Error("collector did not die within 30s of SIGKILL")
	}
}

// stop ends the process gracefully (SIGTERM) and requires exit status 0.
func (r *running) stop(t *testing.T) {
	t.Helper()
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.exited:
		if r.err != nil {
			t.Errorf("collector stopped with %v", r.err)
		}
	case <-time.After(60 * time.Second):
		t.Error("collector did not stop within 60s of SIGTERM")
		r.kill(t)
	}
}
