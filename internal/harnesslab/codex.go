package harnesslab

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ctxaudit/ctxaudit/internal/harnesslab/model"
)

// Codex is the Codex CLI, driven through `codex exec` with a
// [model_providers.lab] on the Responses wire API (it refuses chat). It
// writes rollouts under $CODEX_HOME/sessions.
var Codex = Harness{
	Name:    "codex",
	Package: "@openai/codex",
	Version: "0.169.0",
	Bin:     "codex",
	prepare: prepareCodex,
	collect: collectCodex,
}

func prepareCodex(ctx context.Context, env *RunEnv, sc Scenario) ([]string, []string, error) {
	srv, err := model.StartResponses(ctx, sc.Script(env.env()), "exec_command", filepath.Join(env.Logs, "requests.jsonl"))
	if err != nil {
		return nil, nil, err
	}
	env.Server = srv
	codexHome := filepath.Join(env.Home, ".codex")
	if err := os.MkdirAll(codexHome, 0o755); err != nil {
		return nil, nil, err
	}
	cfg := fmt.Sprintf(`model = "lab-model"
model_provider = "lab"
check_for_update_on_startup = false

[model_providers.lab]
name = "lab"
base_url = "%s/v1"
wire_api = "responses"
env_key = "LAB_API_KEY"
request_max_retries = 0
stream_max_retries = 0
`, srv.URL)
	if sc.Config != "" {
		// Top-level keys must come before the first table.
		cfg = strings.Replace(cfg, "\n[model_providers.lab]", sc.Config+"\n\n[model_providers.lab]", 1)
	}
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(cfg), 0o644); err != nil {
		return nil, nil, err
	}
	args := []string{"exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", sc.prompt()}
	return args, []string{"CODEX_HOME=" + codexHome, "LAB_API_KEY=sk-lab-not-a-key"}, nil
}

func collectCodex(env *RunEnv, dst string) error {
	root := filepath.Join(env.Home, ".codex", "sessions")
	var files []string
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".jsonl" {
			files = append(files, p)
		}
		return nil
	})
	if len(files) == 0 {
		return errNoTranscript
	}
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		if err := copyFiltered(f, filepath.Join(dst, rel), codexKeep); err != nil {
			return err
		}
	}
	return nil
}

// codexKeep drops what Codex writes of its own: the base instructions in
// session_meta and the developer/system messages carrying its prompts.
func codexKeep(line []byte) ([]byte, bool) {
	var v map[string]any
	if json.Unmarshal(line, &v) != nil {
		return nil, false
	}
	p, _ := v["payload"].(map[string]any)
	switch v["type"] {
	case "session_meta":
		// The one line rewritten (so its keys come out sorted): it carries
		// the harness's own base instructions.
		if p != nil {
			delete(p, "base_instructions")
			delete(p, "instructions")
			b, err := json.Marshal(v)
			return b, err == nil
		}
	case "response_item":
		if p != nil && p["type"] == "message" && (p["role"] == "developer" || p["role"] == "system") {
			return nil, false
		}
		if p != nil && p["type"] == "message" && p["role"] == "user" && isInstructionMessage(p) {
			return nil, false
		}
	}
	return line, true
}

// isInstructionMessage: Codex sends AGENTS.md and environment context as
// user messages wrapped in tags.
func isInstructionMessage(p map[string]any) bool {
	content, _ := p["content"].([]any)
	for _, c := range content {
		m, _ := c.(map[string]any)
		t, _ := m["text"].(string)
		if strings.HasPrefix(t, "<environment_context>") || strings.HasPrefix(t, "# AGENTS.md") || strings.HasPrefix(t, "<user_instructions>") || strings.HasPrefix(t, "<permissions") {
			return true
		}
	}
	return false
}
