package claudecode

import (
	"errors"
	"fmt"

	"github.com/ctxaudit/ctxaudit/collector/internal/jsonscan"
)

// AgentMeta is what ctxaudit reads of a sub-agent's metadata file, which
// Claude Code (2.1.328 in the lab recordings) writes beside the sub-agent's
// thread as <session>/subagents/agent-<id>.meta.json:
//
//	{"agentType":"general-purpose","isBuiltIn":true,"description":"…","toolUseId":"toolu_…","spawnDepth":1,…,"finished":true}
//
// Only toolUseId is used: it names the Agent/Task call that spawned the
// agent, so the agent's records can be placed in that call's turn even when
// the call has no result (interrupted), whose agentId would otherwise be
// the only thing naming the agent. Which file a metadata file belongs to is
// the caller's layout knowledge (collector/ingest).
type AgentMeta struct {
	// ToolUseID is the spawning call's id; "" when the file names none.
	ToolUseID string
}

// MaxAgentMetaBytes caps a metadata file. Claude Code's are a few hundred
// bytes; a larger one is not the file it writes, and is not read whole.
const MaxAgentMetaBytes = 64 << 10

// ErrBadAgentMeta marks a metadata file that is not the object Claude Code
// writes: not one JSON object, too large, or a toolUseId that is not one
// non-empty string.
var ErrBadAgentMeta = errors.New("not a Claude Code sub-agent metadata object")

// ParseAgentMeta reads a metadata file's content. A file that says nothing
// of the spawning call (no toolUseId) is no error: older Claude Code wrote
// no such field, and the agent is then placed as it always was.
func ParseAgentMeta(b []byte) (AgentMeta, error) {
	if len(b) > MaxAgentMetaBytes {
		return AgentMeta{}, fmt.Errorf("%w: %d bytes, limit %d", ErrBadAgentMeta, len(b), MaxAgentMetaBytes)
	}
	// The whole file must be one valid JSON value: a file cut short while
	// Claude Code wrote it, or followed by anything, says nothing certain.
	if _, err := jsonscan.Check(b); err != nil {
		return AgentMeta{}, fmt.Errorf("%w: invalid JSON", ErrBadAgentMeta)
	}
	raw, err := jsonscan.Value(b)
	if err != nil || len(raw) == 0 || raw[0] != '{' {
		return AgentMeta{}, fmt.Errorf("%w: not one JSON object", ErrBadAgentMeta)
	}
	var m AgentMeta
	seen := false
	it := jsonscan.Object(raw)
	for it.Next() {
		if !it.KeyIs("toolUseId") {
			continue
		}
		id, ok := jsonscan.String(it.Value())
		switch {
		case !ok || id == "":
			return AgentMeta{}, fmt.Errorf("%w: toolUseId is not a non-empty string", ErrBadAgentMeta)
		case seen && id != m.ToolUseID:
			// Two ids for one agent: which call spawned it is not known.
			return AgentMeta{}, fmt.Errorf("%w: toolUseId given twice, differently", ErrBadAgentMeta)
		}
		m.ToolUseID, seen = id, true
	}
	if it.Err() != nil {
		return AgentMeta{}, fmt.Errorf("%w: invalid JSON object", ErrBadAgentMeta)
	}
	return m, nil
}
