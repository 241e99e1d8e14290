package ingest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ctxaudit/ctxaudit/collector/transcript/claudecode"
)

// AgentMetaPath returns the metadata file Claude Code writes beside a
// sub-agent's thread, and the agent id its name gives:
// <dir>/<session>/subagents/agent-<id>.jsonl has <dir>/<session>/subagents/agent-<id>.meta.json.
// ok is false for a file that is no sub-agent thread in that layout.
func AgentMetaPath(p string) (meta, agentID string, ok bool) {
	if _, sub := mainThreadOf(p); !sub {
		return "", "", false
	}
	base := filepath.Base(p)
	if !strings.HasSuffix(base, ".jsonl") {
		return "", "", false
	}
	stem := strings.TrimSuffix(base, ".jsonl")
	agentID = strings.TrimPrefix(stem, "agent-")
	if agentID == "" {
		return "", "", false
	}
	return filepath.Join(filepath.Dir(p), stem+".meta.json"), agentID, true
}

// ReadAgentMeta reads a sub-agent's metadata file (AgentMetaPath). found is
// false, with no error, when there is none: older Claude Code wrote none.
// Any other failure — unreadable, a symbolic link, not a regular file,
// larger than claudecode.MaxAgentMetaBytes, not the object Claude Code
// writes — is bad input, which the caller reports with the file's path and
// counts, and which places nothing; the error says why, not where.
func ReadAgentMeta(path string) (m claudecode.AgentMeta, found bool, err error) {
	b, err := readAgentMetaFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return claudecode.AgentMeta{}, false, nil
	case err != nil:
		return claudecode.AgentMeta{}, true, err
	}
	m, err = claudecode.ParseAgentMeta(b)
	if err != nil {
		return claudecode.AgentMeta{}, true, err
	}
	return m, true, nil
}

// readAgentMetaFile reads the file without following a symbolic link in its
// name and without blocking on a FIFO, and no more than the cap.
func readAgentMetaFile(path string) ([]byte, error) {
	info, err := os.Lstat(path)
	if err != nil {
		return nil, unwrapPathError(err)
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		return nil, errLinked
	}
	if !info.Mode().IsRegular() {
		return nil, &notRegularError{info.Mode()}
	}
	b, err := readChecked(func(flag int) (*os.File, error) { return os.OpenFile(path, flag, 0) }, info, claudecode.MaxAgentMetaBytes)
	if errors.As(err, new(*tooLargeError)) {
		return nil, fmt.Errorf("%w: larger than %d bytes", claudecode.ErrBadAgentMeta, claudecode.MaxAgentMetaBytes)
	}
	return b, unwrapPathError(err)
}
