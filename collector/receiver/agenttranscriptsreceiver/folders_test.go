package agenttranscriptsreceiver

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/yamlprovider"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver/internal/metadata"
)

// resolve loads a receiver config the way the collector does: the YAML with
// ${env:…} references resolved, unmarshalled over the default config.
func resolve(t *testing.T, yaml string) *Config {
	t.Helper()
	r, err := confmap.NewResolver(confmap.ResolverSettings{
		URIs: []string{"yaml:" + yaml},
		ProviderFactories: []confmap.ProviderFactory{
			yamlprovider.NewFactory(), envprovider.NewFactory(),
		},
		DefaultScheme: "env",
	})
	require.NoError(t, err)
	conf, err := r.Resolve(context.Background())
	require.NoError(t, err)
	cfg := createDefaultConfig().(*Config)
	require.NoError(t, conf.Unmarshal(cfg))
	return cfg
}

// An override set to the empty string is the obvious way to switch a source
// off. It must add no pattern at all — the old form
// "${env:X:-…}/**/*.jsonl" turned it into /**/*.jsonl, the whole disk.
func TestEmptyFolderIsOff(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	codex := t.TempDir()
	t.Setenv("TEST_PI_SESSIONS", "")
	t.Setenv("TEST_CODEX_SESSIONS", codex)
	cfg := resolve(t, `folders: ["${env:TEST_PI_SESSIONS:-~/.pi/agent/sessions}", "${env:TEST_CODEX_SESSIONS:-~/.codex/sessions}", "~/.claude/projects"]`)
	require.NoError(t, cfg.Validate())
	assert.Nil(t, cfg.Include, "folders replace include's default")
	include, off := cfg.patterns(home)
	assert.Equal(t, []string{
		filepath.Join(codex, "**", "*.jsonl"),
		filepath.Join(home, ".claude", "projects", "**", "*.jsonl"),
	}, include)
	assert.Equal(t, []int{0}, off)

	t.Run("every folder off", func(t *testing.T) {
		t.Setenv("TEST_CODEX_SESSIONS", "")
		cfg := resolve(t, `folders: ["${env:TEST_PI_SESSIONS}", "${env:TEST_CODEX_SESSIONS}"]`)
		require.NoError(t, cfg.Validate())
		include, off := cfg.patterns(home)
		assert.Empty(t, include)
		assert.Equal(t, []int{0, 1}, off)
	})
	t.Run("include and folders together", func(t *testing.T) {
		cfg := resolve(t, `{include: ["/data/x/**/*.jsonl"], folders: ["${env:TEST_PI_SESSIONS}", "/data/y"]}`)
		require.NoError(t, cfg.Validate())
		include, _ := cfg.patterns(home)
		assert.Equal(t, []string{"/data/x/**/*.jsonl", filepath.Join("/data/y", "**", "*.jsonl")}, include)
	})
}

// The old way of writing an override, with the variable empty, is refused
// with the key named instead of reading every transcript on the machine.
func TestIncludeFromTheRootIsRefused(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("TEST_PI_SESSIONS", "")
	cfg := resolve(t, `include: ["/data/claude/**/*.jsonl", "${env:TEST_PI_SESSIONS}/**/*.jsonl"]`)
	require.Equal(t, []string{"/data/claude/**/*.jsonl", "/**/*.jsonl"}, cfg.Include)
	err := cfg.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `include[1]: "/**/*.jsonl" matches from the filesystem root`)
	assert.NotContains(t, err.Error(), "include[0]")

	for _, p := range []string{"/*.jsonl", "/**", "/*/x.jsonl"} {
		cfg.Include = []string{p}
		assert.ErrorContains(t, cfg.Validate(), "include[0]:", p)
	}
	cfg.Include, cfg.Folders = nil, []string{"/tmp/sessions", "/"}
	err = cfg.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "folders[1]:")
	assert.NotContains(t, err.Error(), "folders[0]")
}

// At start the receiver says which patterns it watches, which folders are
// off, and how many files the first scan found.
func TestStartLogsWhatIsWatched(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"a.jsonl", filepath.Join("sub", "b.jsonl"), "c.txt"} {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, nil, 0o644))
	}
	cfg := testConfig(root)
	cfg.Include = nil
	cfg.Folders = []string{"", root}
	core, logs := observer.New(zap.InfoLevel)
	set := receivertest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	startReceiver(t, cfg, new(consumertest.TracesSink), nil, &set)

	watching := logs.FilterMessage("Watching transcript files").All()
	require.Len(t, watching, 1)
	fields := watching[0].ContextMap()
	assert.Equal(t, []any{filepath.Join(root, "**", "*.jsonl")}, fields["include"])
	assert.Equal(t, []any{0}, fields["folders_off"])
	require.Eventually(t, func() bool { return logs.FilterMessage("Found transcript files").Len() == 1 }, 10*time.Second, 10*time.Millisecond)
	found := logs.FilterMessage("Found transcript files").All()[0].ContextMap()
	assert.Equal(t, int64(2), found["files"])
	assert.Equal(t, int64(0), found["resumed_from_checkpoint"])
}
