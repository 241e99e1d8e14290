package tail

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPatternMatch(t *testing.T) {
	tests := []struct {
		name    string
		pattern string
		path    string
		want    bool
	}{
		{"any depth", "/h/.claude/projects/**/*.jsonl", "/h/.claude/projects/-p/s.jsonl", true},
		{"any depth, deep", "/h/.claude/projects/**/*.jsonl", "/h/.claude/projects/-p/s/subagents/agent-a.jsonl", true},
		{"** matches zero folders", "/h/projects/**/*.jsonl", "/h/projects/s.jsonl", true},
		{"wrong extension", "/h/projects/**/*.jsonl", "/h/projects/-p/s/tool-results/x.txt", false},
		{"outside the root", "/h/projects/**/*.jsonl", "/h/other/s.jsonl", false},
		{"star stays in one element", "/h/*/s.jsonl", "/h/a/b/s.jsonl", false},
		{"star in one element", "/h/*/s.jsonl", "/h/a/s.jsonl", true},
		{"trailing ** matches everything below", "/h/**/subagents/**", "/h/p/s/subagents/agent-1.jsonl", true},
		{"trailing ** needs the folder", "/h/**/subagents/**", "/h/p/s/agent-1.jsonl", false},
		{"consecutive ** collapse", "/h/**/**/*.jsonl", "/h/a/b/c.jsonl", true},
		{"character class", "/h/rollout-[0-9]*.jsonl", "/h/rollout-2026.jsonl", true},
		{"alternatives", "/h/{claude,codex}/*.jsonl", "/h/codex/a.jsonl", true},
		{"literal file", "/h/a.jsonl", "/h/a.jsonl", true},
		{"literal file, other name", "/h/a.jsonl", "/h/b.jsonl", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := compilePattern(filepath.FromSlash(tt.pattern))
			require.NoError(t, err)
			assert.Equal(t, tt.want, p.match(filepath.FromSlash(tt.path)))
		})
	}
}

func TestPatternRelativeIsTakenAgainstWorkingDir(t *testing.T) {
	wd, err := os.Getwd()
	require.NoError(t, err)
	p, err := compilePattern(filepath.Join("**", "subagents", "**"))
	require.NoError(t, err)
	assert.True(t, p.match(filepath.Join(wd, "p", "subagents", "a.jsonl")))
	assert.False(t, p.match(filepath.FromSlash("/elsewhere-"+filepath.Base(wd)+"/p/a.jsonl")))
}

func TestPatternErrors(t *testing.T) {
	for _, p := range []string{"", "  ", "/h/[a", "/h/{a,b", "/"} {
		_, err := compilePattern(p)
		assert.Error(t, err, "pattern %q", p)
	}
}

func TestFind(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{
		"claude/-p/s1.jsonl",
		"claude/-p/s1/subagents/agent-a.jsonl",
		"claude/-p/s1/tool-results/toolu_1.txt",
		"codex/2026/01/15/rollout-1.jsonl",
		"codex/2026/01/15/notes.md",
		"codex/deep/er/than/the/pattern/rollout-2.jsonl",
		"elsewhere/x.jsonl",
		"elsewhere/deeper/y.jsonl",
	} {
		p := filepath.Join(root, filepath.FromSlash(f))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("{}\n"), 0o644))
	}
	// A symlink to a file counts; a symlinked folder is neither a file nor
	// walked into (a link back up the tree would otherwise loop).
	require.NoError(t, os.Symlink(filepath.Join(root, "elsewhere", "x.jsonl"), filepath.Join(root, "claude", "-p", "link.jsonl")))
	require.NoError(t, os.Symlink(filepath.Join(root, "elsewhere"), filepath.Join(root, "claude", "-p", "dirlink.jsonl")))
	require.NoError(t, os.Symlink(filepath.Join(root, "elsewhere"), filepath.Join(root, "claude", "-p", "dirlink")))
	require.NoError(t, os.Symlink(root, filepath.Join(root, "claude", "loop")))

	m, err := NewFinder(
		[]string{
			filepath.Join(root, "claude", "**", "*.jsonl"),
			filepath.Join(root, "codex", "*", "*", "*", "rollout-*.jsonl"),
			filepath.Join(root, "missing", "**", "*.jsonl"),
		},
		[]string{filepath.Join(root, "**", "subagents", "**")},
	)
	require.NoError(t, err)
	got, err := m.Find(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []string{
		filepath.Join(root, "claude", "-p", "link.jsonl"),
		filepath.Join(root, "claude", "-p", "s1.jsonl"),
		filepath.Join(root, "codex", "2026", "01", "15", "rollout-1.jsonl"),
	}, got)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = m.Find(ctx)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestNewFinderNamesTheList(t *testing.T) {
	_, err := NewFinder([]string{"/h/[x"}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "include")
	_, err = NewFinder([]string{"/h/*.jsonl"}, []string{"/h/[x"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "exclude")
}
