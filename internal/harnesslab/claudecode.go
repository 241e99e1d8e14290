package harnesslab

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ctxaudit/ctxaudit/internal/harnesslab/model"
)

// ClaudeCode is Claude Code, driven through `claude -p` against the
// Anthropic Messages server. It runs as root only with IS_SANDBOX=1, and
// writes transcripts under $HOME/.claude/projects.
var ClaudeCode = Harness{
	Name:    "claude-code",
	Package: "@anthropic-ai/claude-code",
	Version: "2.1.328",
	Bin:     "claude",
	prepare: prepareClaudeCode,
	collect: collectClaudeCode,
}

func prepareClaudeCode(ctx context.Context, env *RunEnv, sc Scenario) ([]string, []string, error) {
	srv, err := model.StartAnthropic(ctx, sc.Script(env.env()), "Bash", filepath.Join(env.Logs, "requests.jsonl"))
	if err != nil {
		return nil, nil, err
	}
	env.Server = srv
	settings := map[string]any{"skipWebFetchPreflight": true}
	if err := writeJSON(filepath.Join(env.Home, ".claude", "settings.json"), settings); err != nil {
		return nil, nil, err
	}
	vars := []string{
		"ANTHROPIC_BASE_URL=" + srv.URL,
		"ANTHROPIC_API_KEY=sk-lab-not-a-key",
		"IS_SANDBOX=1",
		"DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	}
	if tls := env.tls; tls != nil {
		vars = append(vars, "NODE_EXTRA_CA_CERTS="+tls.CAFile)
	}
	if env.otlp != nil {
		vars = append(vars,
			"CLAUDE_CODE_ENABLE_TELEMETRY=1",
			"OTEL_LOGS_EXPORTER=otlp",
			"OTEL_METRICS_EXPORTER=none",
			"OTEL_EXPORTER_OTLP_PROTOCOL=http/json",
			"OTEL_EXPORTER_OTLP_ENDPOINT="+env.otlp.URL,
			"OTEL_LOGS_EXPORT_INTERVAL=200",
			"OTEL_LOG_TOOL_DETAILS=1",
		)
	}
	args := []string{"-p", sc.prompt(), "--output-format", "json", "--dangerously-skip-permissions"}
	if sc.MCP {
		cfg := filepath.Join(env.Root, "mcp.json")
		if err := writeJSON(cfg, map[string]any{"mcpServers": map[string]any{"lab": env.mcpServer()}}); err != nil {
			return nil, nil, err
		}
		args = append(args, "--mcp-config", cfg)
	}
	return args, vars, nil
}

// claudeKeep keeps the conversation lines (user, assistant, system) and drops
// what the harness writes of its own (prompt snapshots, request shapes and
// blobs carrying the system prompt, attachments, cost and queue records).
func claudeKeep(line []byte) ([]byte, bool) {
	var head struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(line, &head) != nil {
		return nil, false
	}
	switch head.Type {
	case "user", "assistant", "system":
		return line, true
	}
	return nil, false
}

func collectClaudeCode(env *RunEnv, dst string) error {
	projects := filepath.Join(env.Home, ".claude", "projects")
	files, _ := filepath.Glob(filepath.Join(projects, "*", "*.jsonl"))
	if len(files) == 0 {
		return errNoTranscript
	}
	for _, f := range files {
		rel, _ := filepath.Rel(projects, f)
		if err := copyFiltered(f, filepath.Join(dst, rel), claudeKeep); err != nil {
			return err
		}
		side := f[:len(f)-len(".jsonl")]
		if st, err := os.Stat(side); err == nil && st.IsDir() {
			relSide, _ := filepath.Rel(projects, side)
			if err := filepath.WalkDir(side, func(p string, d os.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				r, _ := filepath.Rel(side, p)
				out := filepath.Join(dst, relSide, r)
				if filepath.Ext(p) == ".jsonl" {
					return copyFiltered(p, out, claudeKeep)
				}
				if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
					return err
				}
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				return os.WriteFile(out, b, 0o644)
			}); err != nil {
				return fmt.Errorf("sidecar: %w", err)
			}
		}
	}
	return nil
}

func writeJSON(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
