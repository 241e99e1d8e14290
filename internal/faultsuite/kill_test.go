package faultsuite

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/internal/transcriptgen"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

// killRuns is how many times the fault suite kills the collector.
const killRuns = 22

// growingSessions writes Claude Code sessions into a source folder and
// returns, per session file (relative path), its lines. Each turn is a
// prompt, a tool call and its result, and an answer; some answers claim an
// absence on a cut-off Read, so the analysis has verdicts to get right.
func growingSessions(t *testing.T, sessions, turns int) map[string][]string {
	t.Helper()
	src := t.TempDir()
	d := transcriptgen.NewDir(src)
	start := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	for i := range sessions {
		sid := fmt.Sprintf("fa017000-0000-4000-8000-%012d", i)
		s := transcriptgen.NewClaudeCode(sid, "2.1.6", 100+i, start.Add(time.Duration(i)*time.Hour))
		for turn := range turns {
			s.Prompt(fmt.Sprintf("Step %d: is there a retry setting?", turn))
			id := fmt.Sprintf("toolu_01Fault%03d%03d%08d", i, turn, 0)
			msg := fmt.Sprintf("msg_01Fault%03d%03d", i, turn)
			if turn%3 == 1 {
				lines := make([]string, 2000)
				for k := range lines {
					lines[k] = fmt.Sprintf("setting_%d = %d", k, k)
				}
				s.Assistant(msg+"a", 30, transcriptgen.ToolUse(id, "Read", transcriptgen.Obj{{"file_path", "/Users/dev/acme/config.txt"}}))
				content := transcriptgen.Numbered(lines[:2000], 1) + transcriptgen.CCReadReminder
				s.Result(id, content, transcriptgen.Obj{{"type", "text"}, {"file", transcriptgen.Obj{
					{"filePath", "/Users/dev/acme/config.txt"}, {"content", strings.Join(lines[:2000], "\n")},
					{"numLines", 2000}, {"startLine", 1}, {"totalLines", 5000}}}})
				s.Assistant(msg+"b", 40, transcriptgen.Text("There is no retry setting in the configuration."))
			} else {
				s.Assistant(msg+"a", 30, transcriptgen.ToolUse(id, "Bash", transcriptgen.Obj{{"command", fmt.Sprintf("ls step%d", turn)}, {"description", "List"}}))
				s.Result(id, "a\nb\nc", transcriptgen.Obj{{"stdout", "a\nb\nc"}, {"stderr", ""}, {"interrupted", false}, {"isImage", false}})
				s.Assistant(msg+"b", 40, transcriptgen.Text(fmt.Sprintf("Step %d lists three files.", turn)))
			}
		}
		s.Save(d)
	}
	if err := d.Err(); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	err := filepath.WalkDir(src, func(p string, de os.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		rel, _ := filepath.Rel(filepath.Join(src, "claude-code"), p)
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			out[rel] = append(out[rel], sc.Text())
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// appendLines plays the sessions into dir line by line, as an agent writes
// them: files in turn, some lines in two writes with a pause between, until
// every line is written or ctx ends. It returns when done.
func appendLines(ctx context.Context, t *testing.T, dir string, files map[string][]string, rng *rand.Rand, pause time.Duration) error {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	handles := map[string]*os.File{}
	defer func() {
		for _, h := range handles {
			h.Close()
		}
	}()
	next := map[string]int{}
	for remaining := true; remaining; {
		remaining = false
		for _, n := range names {
			i := next[n]
			if i >= len(files[n]) {
				continue
			}
			remaining = true
			h := handles[n]
			if h == nil {
				p := filepath.Join(dir, n)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					return err
				}
				var err error
				if h, err = os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err != nil {
					return err
				}
				handles[n] = h
			}
			line := files[n][i] + "\n"
			if rng.IntN(4) == 0 && len(line) > 10 {
				cut := 1 + rng.IntN(len(line)-1)
				if _, err := h.WriteString(line[:cut]); err != nil {
					return err
				}
				time.Sleep(pause)
				line = line[cut:]
			}
			if _, err := h.WriteString(line); err != nil {
				return err
			}
			next[n] = i + 1
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(pause):
			}
		}
	}
	return nil
}

// rows renders a query's rows as sorted strings (each row one tab-joined
// string of toString'd columns).
func rows(t *testing.T, s *chstore.Store, query string, args ...any) []string {
	t.Helper()
	rs, err := s.Conn().Query(context.Background(), strings.ReplaceAll(query, "DB.", s.Database()+"."), args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rs.Close()
	var out []string
	for rs.Next() {
		var v string
		if err := rs.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// What must be identical between the CLI's rows and the collector's for the
// transcript sessions: every call with its forensics and follow-through,
// every answer with its verdict, every session's counts.
const (
	callRows = `SELECT concat(session_id, ' ', call_id, ' ', tool, ' ', toString(truncation_kind), ' ', ifNull(toString(original_lines), 'null'),
		' ', ifNull(toString(context_lines), 'null'), ' ', toString(followed_up), ' ', ifNull(toString(session_coverage), 'null'), ' ', toString(turn))
		FROM DB.tool_calls FINAL WHERE startsWith(session_id, 'fa017000')`
	answerRows = `SELECT concat(session_id, ' ', message_id, ' ', toString(risk), ' ', arrayStringConcat(reasons, ','), ' ', toString(absence_claim))
		FROM DB.answers FINAL WHERE startsWith(session_id, 'fa017000')`
	// An OTLP session's row and its stored calls: the same count.
	otlpSessionRows = `SELECT concat(session_id, ' ', toString(tool_calls)) FROM DB.sessions FINAL
		WHERE startsWith(session_id, 'fault-otlp-')`
	otlpCallsPerSession = `SELECT concat(session_id, ' ', toString(count())) FROM DB.tool_calls FINAL
		WHERE startsWith(session_id, 'fault-otlp-') GROUP BY session_id`
	sessionRows = `SELECT concat(session_id, ' ', toString(turns), ' ', toString(tool_calls), ' ', toString(truncated_calls), ' ',
		toString(answers), ' ', toString(risky_answers), ' ', toString(max_risk))
		FROM DB.sessions FINAL WHERE startsWith(session_id, 'fa017000')`
)

func diff(a, b []string) (onlyA, onlyB []string) {
	in := map[string]int{}
	for _, x := range b {
		in[x]++
	}
	for _, x := range a {
		if in[x] > 0 {
			in[x]--
		} else {
			onlyA = append(onlyA, x)
		}
	}
	for x, n := range in {
		for range n {
			onlyB = append(onlyB, x)
		}
	}
	sort.Strings(onlyB)
	return onlyA, onlyB
}

// peakRSS is the process's peak resident set (VmHWM) in KiB, 0 if unknown.
func peakRSS(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	return 0
}

// TestKillNineAtRandomPoints is the fault suite: the shipped configuration,
// a collector process killed with SIGKILL at random points, 22 times, while
// Claude Code transcripts grow line by line and OTLP spans flow, ClickHouse
// unreachable in about a third of the runs. Afterwards every acknowledged
// span is stored exactly once, as analysed, and each OTLP session's row
// counts the calls stored (the processor held them across the kills, in
// its storage); the transcript sessions' calls, answers and session rows
// are exactly what `ctxaudit ingest` stores from the finished files —
// nothing lost, nothing undercounted, every session analysed.
func TestKillNineAtRandomPoints(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("CTXAUDIT_FAULT_SEED"); v != "" {
		seed, _ = strconv.ParseUint(v, 10, 64)
	}
	t.Logf("seed %d (CTXAUDIT_FAULT_SEED to repeat)", seed)
	rng := rand.New(rand.NewPCG(seed, 1))

	addr := chtest.Address(t)
	s := chtest.OpenStore(t, addr)
	d := newDurable(t)
	files := growingSessions(t, 6, 12)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	appendDone := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		appendDone <- appendLines(ctx, t, d.projects, files, rand.New(rand.NewPCG(seed, 2)), 12*time.Millisecond)
	}()

	var mu sync.Mutex
	acked := map[string]bool{}
	sent := 0
	otlpCtx, stopOTLP := context.WithCancel(ctx)
	wg.Add(1)
	go func() {
		defer wg.Done()
		snd := newOTLPSender(t, d.otlpHTTP)
		for r := 0; otlpCtx.Err() == nil; r++ {
			batch := ids("otlp", r*20, 20)
			err := snd.send(otlpCtx, fmt.Sprintf("fault-otlp-%03d", r/10), batch)
			mu.Lock()
			sent += len(batch)
			if err == nil {
				for _, id := range batch {
					acked[id] = true
				}
			}
			mu.Unlock()
			if err != nil {
				time.Sleep(20 * time.Millisecond) // collector down: the client backs off
			}
		}
	}()

	outages, maxRSS := 0, 0
	for run := range killRuns {
		target := addr
		if rng.IntN(3) == 0 {
			target = deadAddress(t, s.Database())
			outages++
		}
		c := d.start(t, target)
		time.Sleep(time.Duration(100+rng.IntN(1500)) * time.Millisecond)
		maxRSS = max(maxRSS, peakRSS(c.cmd.Process.Pid))
		c.kill()
		mu.Lock()
		t.Logf("run %2d: %s, killed; %d spans acked so far", run, map[bool]string{true: "ClickHouse down", false: "ClickHouse up"}[target != addr], len(acked))
		mu.Unlock()
	}
	stopOTLP()
	// The agent finishes its sessions while the collector is up again.
	c := d.start(t, addr)
	if err := <-appendDone; err != nil {
		t.Fatal(err)
	}
	wg.Wait()

	// The reference: the finished files through `ctxaudit ingest`.
	refAddr := chtest.Address(t)
	if out, err := runCLI(t, "ingest", "--clickhouse", refAddr, d.projects); err != nil {
		t.Fatalf("ingest: %v\n%s", err, out)
	}
	ref := chtest.OpenStore(t, refAddr)
	wantCalls, wantAnswers, wantSessions := rows(t, ref, callRows), rows(t, ref, answerRows), rows(t, ref, sessionRows)
	if len(wantSessions) != 6 || len(wantCalls) != 6*12 {
		t.Fatalf("reference has %d sessions, %d calls", len(wantSessions), len(wantCalls))
	}

	waitFor(t, "every acked span and the analysed transcripts", 3*time.Minute, func() (bool, string) {
		m := missing(acked, storedCalls(t, s, "fault-otlp-"))
		gotSessions := rows(t, s, sessionRows)
		a, b := diff(gotSessions, wantSessions)
		oa, ob := diff(rows(t, s, otlpSessionRows), rows(t, s, otlpCallsPerSession))
		return len(m) == 0 && len(a)+len(b)+len(oa)+len(ob) == 0,
			fmt.Sprintf("%d acked spans missing; sessions differ: %v vs %v; OTLP session rows vs calls stored: %v vs %v", len(m), a, b, oa, ob)
	})
	time.Sleep(time.Second) // let a last analysis land, so a difference below is real
	c.stop()

	stored := storedCalls(t, s, "fault-otlp-")
	if m := missing(acked, stored); len(m) > 0 {
		t.Errorf("%d of %d acked spans not stored exactly once: %v", len(m), len(acked), m[:min(len(m), 10)])
	}
	// Every OTLP session is analysed — each stored call row is the
	// analysis's — and its session row counts the calls stored, though its
	// calls were held by processes that were killed.
	if n := count(t, s, "SELECT count() FROM "+s.Database()+".tool_calls FINAL WHERE startsWith(session_id, 'fault-otlp-') AND version < 9223372036854775808"); n > 0 {
		t.Errorf("%d OTLP calls stored without session analysis (a held call was lost and written as read?)", n)
	}
	if a, b := diff(rows(t, s, otlpSessionRows), rows(t, s, otlpCallsPerSession)); len(a)+len(b) > 0 {
		t.Errorf("OTLP sessions.tool_calls differ from the calls stored:\nsession rows: %v\ncalls stored: %v", a, b)
	}
	for what, q := range map[string][2][]string{
		"calls":    {rows(t, s, callRows), wantCalls},
		"answers":  {rows(t, s, answerRows), wantAnswers},
		"sessions": {rows(t, s, sessionRows), wantSessions},
	} {
		if a, b := diff(q[0], q[1]); len(a)+len(b) > 0 {
			t.Errorf("transcript %s differ from ingest's:\ncollector only: %v\ningest only:    %v", what, a, b)
		}
	}
	t.Logf("%d kill -9 runs (%d with ClickHouse down): %d spans sent, %d acked, %d stored once, 0 acked lost, every OTLP session analysed and counted; "+
		"transcripts: %d calls, %d answers, %d sessions identical to ingest; peak RSS %d MiB",
		killRuns, outages, sent, len(acked), len(stored), len(wantCalls), len(wantAnswers), len(wantSessions), maxRSS/1024)
}
