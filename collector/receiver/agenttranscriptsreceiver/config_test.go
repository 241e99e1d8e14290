package agenttranscriptsreceiver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver/internal/metadata"
)

func TestLoadConfig(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)

	storageID := component.MustNewIDWithName("file_storage", "transcripts")
	tests := []struct {
		id       component.ID
		expected *Config
	}{
		{
			id:       component.NewID(metadata.Type),
			expected: createDefaultConfig().(*Config),
		},
		{
			id: component.NewIDWithName(metadata.Type, "custom"),
			expected: &Config{
				Include:      []string{"/data/transcripts/claude/**/*.jsonl", "~/work/codex/**/rollout-*.jsonl"},
				Exclude:      []string{"**/subagents/**"},
				PollInterval: 250 * time.Millisecond,
				StartAt:      StartAtEnd,
				StorageID:    &storageID,
				MaxLineBytes: 1 << 20,
				Source:       "codex",
				SessionIdle:  2 * time.Minute,
				MaxSessions:  32,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.id.String(), func(t *testing.T) {
			cfg := createDefaultConfig()
			sub, err := cm.Sub(tt.id.String())
			require.NoError(t, err)
			require.NoError(t, sub.Unmarshal(cfg))
			require.NoError(t, confmap.Validate(cfg))
			assert.Equal(t, tt.expected, cfg)
		})
	}
}

func TestDefaultConfig(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	cfg := createDefaultConfig().(*Config)
	require.NoError(t, componenttest.CheckConfigStruct(cfg))
	require.NoError(t, cfg.Validate())
	assert.Equal(t, []string{
		filepath.Join(home, ".claude", "projects", "**", "*.jsonl"),
		filepath.Join(home, ".codex", "sessions", "**", "*.jsonl"),
		filepath.Join(home, ".pi", "agent", "sessions", "**", "*.jsonl"),
	}, cfg.Include)
	assert.Empty(t, cfg.Exclude)
	assert.Equal(t, time.Second, cfg.PollInterval)
	assert.Equal(t, StartAtBeginning, cfg.StartAt)
	assert.Nil(t, cfg.StorageID)
	assert.Equal(t, 64<<20, cfg.MaxLineBytes)
	assert.Equal(t, "auto", cfg.Source)
	assert.Equal(t, 30*time.Second, cfg.SessionIdle)
	assert.Equal(t, 256, cfg.MaxSessions)

	assert.Empty(t, defaultInclude(""), "no home: no default, so Validate asks for include")
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*Config)
		wantKey string
	}{
		{"empty include", func(c *Config) { c.Include = nil }, "include:"},
		{"bad include pattern", func(c *Config) { c.Include = []string{"/tmp/[x"} }, "include[0]:"},
		{"blank include pattern", func(c *Config) { c.Include = []string{"/tmp/*.jsonl", " "} }, "include[1]:"},
		{"bad exclude pattern", func(c *Config) { c.Exclude = []string{"/tmp/[x"} }, "exclude[0]:"},
		{"negative poll_interval", func(c *Config) { c.PollInterval = -time.Second }, "poll_interval:"},
		{"zero poll_interval", func(c *Config) { c.PollInterval = 0 }, "poll_interval:"},
		{"bad start_at", func(c *Config) { c.StartAt = "middle" }, "start_at:"},
		{"bad source", func(c *Config) { c.Source = "gemini" }, "source:"},
		{"zero max_line_bytes", func(c *Config) { c.MaxLineBytes = 0 }, "max_line_bytes:"},
		{"zero session_idle", func(c *Config) { c.SessionIdle = 0 }, "session_idle:"},
		{"zero max_sessions", func(c *Config) { c.MaxSessions = 0 }, "max_sessions:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := validConfig(t)
			tt.mutate(cfg)
			err := cfg.Validate()
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), tt.wantKey), "error %q does not start with %q", err, tt.wantKey)
		})
	}

	t.Run("aliases and ~ are accepted", func(t *testing.T) {
		cfg := validConfig(t)
		cfg.Source = "claude"
		cfg.Include = []string{"~/.claude/projects/**/*.jsonl"}
		require.NoError(t, cfg.Validate())
	})
	t.Run("every error is reported", func(t *testing.T) {
		cfg := validConfig(t)
		cfg.StartAt, cfg.PollInterval = "middle", -1
		err := cfg.Validate()
		require.Error(t, err)
		assert.Contains(t, err.Error(), "start_at:")
		assert.Contains(t, err.Error(), "poll_interval:")
	})
}

func TestExpandHome(t *testing.T) {
	home := filepath.FromSlash("/home/u")
	assert.Equal(t, filepath.Join(home, ".codex", "sessions"), expandHome("~/.codex/sessions", home))
	assert.Equal(t, home, expandHome("~", home))
	assert.Equal(t, "~other/x", expandHome("~other/x", home))
	assert.Equal(t, "/abs/~/x", expandHome("/abs/~/x", home))
	assert.Equal(t, "~/x", expandHome("~/x", ""))
}

func validConfig(t *testing.T) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.Include = []string{filepath.Join(t.TempDir(), "**", "*.jsonl")}
	return cfg
}

// The configuration's `~` is the home folder, in include and exclude alike.
func TestFinderExpandsHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("USERPROFILE", home)
	for _, f := range []string{".claude/projects/-p/s.jsonl", ".claude/projects/-p/s/subagents/a.jsonl"} {
		p := filepath.Join(home, filepath.FromSlash(f))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("{}\n"), 0o644))
	}
	cfg := createDefaultConfig().(*Config)
	cfg.Include = []string{"~/.claude/projects/**/*.jsonl"}
	cfg.Exclude = []string{"~/**/subagents/**"}
	require.NoError(t, cfg.Validate())
	m, _, _, _, err := cfg.finder()
	require.NoError(t, err)
	got, err := m.Find(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(home, ".claude", "projects", "-p", "s.jsonl")}, got)
}
