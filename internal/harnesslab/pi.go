package harnesslab

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ctxaudit/ctxaudit/internal/harnesslab/model"
)

// Pi is pi (pi-coding-agent), driven through `pi -p` with a custom
// anthropic-messages provider in $HOME/.pi/agent/models.json. It writes
// sessions under $HOME/.pi/agent/sessions.
var Pi = Harness{
	Name:    "pi",
	Package: "@mariozechner/pi-coding-agent",
	Version: "0.73.1",
	Bin:     "pi",
	prepare: preparePi,
	collect: collectPi,
}

func preparePi(ctx context.Context, env *RunEnv, sc Scenario) ([]string, []string, error) {
	srv, err := model.StartAnthropic(ctx, sc.Script(env.env()), "bash", filepath.Join(env.Logs, "requests.jsonl"))
	if err != nil {
		return nil, nil, err
	}
	env.Server = srv
	models := map[string]any{"providers": map[string]any{"lab": map[string]any{
		"baseUrl": srv.URL, "api": "anthropic-messages", "apiKey": "sk-lab-not-a-key",
		"models": []any{map[string]any{"id": "lab-model", "name": "Lab scripted model", "contextWindow": 200000, "maxTokens": 8192}},
	}}}
	if err := writeJSON(filepath.Join(env.Home, ".pi", "agent", "models.json"), models); err != nil {
		return nil, nil, err
	}
	// pi's grep and find run rg and fd, and download them when they are not
	// on PATH; the lab links the machine's rg and puts its fd behind a shim.
	bin := filepath.Join(env.Home, "bin")
	if err := linkTools(bin, map[string][]string{"rg": {"rg"}}); err != nil {
		return nil, nil, err
	}
	if err := writeFdShim(bin); err != nil {
		return nil, nil, err
	}
	args := []string{"-p", "--provider", "lab", "--model", "lab-model", "--offline",
		"--no-extensions", "--no-skills", "--no-context-files", "--no-prompt-templates",
		"--tools", "read,bash,grep,find,ls", sc.prompt()}
	return args, []string{"PI_OFFLINE=1", "PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}, nil
}

func collectPi(env *RunEnv, dst string) error {
	root := filepath.Join(env.Home, ".pi", "agent", "sessions")
	files, _ := filepath.Glob(filepath.Join(root, "*", "*.jsonl"))
	if len(files) == 0 {
		return errNoTranscript
	}
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		if err := copyFiltered(f, filepath.Join(dst, rel), func(l []byte) ([]byte, bool) { return l, true }); err != nil {
			return err
		}
	}
	_ = os.MkdirAll(dst, 0o755)
	return nil
}

// linkTools makes dir/name a link to the first of its candidates found on
// PATH; a name with none is left out.
func linkTools(dir string, tools map[string][]string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, candidates := range tools {
		for _, c := range candidates {
			if p, err := exec.LookPath(c); err == nil {
				if err := os.Symlink(p, filepath.Join(dir, name)); err != nil {
					return err
				}
				break
			}
		}
	}
	return nil
}

// fdShim is the fd pi's find runs in the lab. It calls the machine's fd
// (Debian: fdfind) with two changes, neither of which changes what a search
// of the lab's folders finds:
//   - it drops --no-require-git, which pi 0.73.1 passes and fd 8 (Debian
//     bookworm's) does not know; the flag only makes fd honour .gitignore
//     files outside a git repository, and the lab's folders have none;
//   - it lists every match in name order and then keeps the first
//     --max-results, where fd keeps the first it meets while walking in
//     parallel: the same files in the same order on every run and machine,
//     so the recording is stable.
const fdShim = `#!/bin/bash
# The harness lab's fd for pi (internal/harnesslab/pi.go).
set -o pipefail
max=""
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --no-require-git) ;;
    --max-results) max="$2"; shift ;;
    --max-results=*) max="${1#--max-results=}" ;;
    *) args+=("$1") ;;
  esac
  shift
done
"$FD" "${args[@]}" | LC_ALL=C sort | awk -v n="${max:-0}" 'n == 0 || NR <= n'
`

// writeFdShim writes dir/fd, calling the machine's fd by its full path (the
// shim itself is the fd on the run's PATH).
func writeFdShim(dir string) error {
	for _, name := range []string{"fdfind", "fd"} {
		if p, err := exec.LookPath(name); err == nil {
			script := strings.Replace(fdShim, "set -o pipefail\n", "set -o pipefail\nFD="+strconv.Quote(p)+"\n", 1)
			return os.WriteFile(filepath.Join(dir, "fd"), []byte(script), 0o755)
		}
	}
	return nil // pi reports fd missing, and the find scenarios fail
}
