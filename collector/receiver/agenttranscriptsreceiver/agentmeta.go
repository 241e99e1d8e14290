package agenttranscriptsreceiver // import "github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver"

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"time"

	"go.uber.org/zap"

	"github.com/ctxaudit/ctxaudit/collector/ingest"
	"github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver/internal/checkpoint"
	"github.com/ctxaudit/ctxaudit/collector/transcript"
)

// A Claude Code sub-agent thread has beside it a metadata file naming the
// call that spawned the agent (ingest.AgentMetaPath). It is not a
// transcript and is not tailed: it is written whole, sometimes after the
// thread, and may be rewritten. The receiver looks at it each poll and
// before each analysis of the thread's session, reads it again when its
// size or time changed, and gives the session what it says; a file that
// names another call than the last accepted analysis was given makes the
// session due for analysis again, also after a restart (the checkpoint
// keeps what was given).

// agentMetaState is what the receiver last read of a thread's metadata.
type agentMetaState struct {
	// agentID is the agent the file is about; "" until the thread is known
	// to be a Claude Code sub-agent thread with such a file's place.
	agentID string
	// read says the file was looked at; stamp is what it looked like then.
	read  bool
	stamp metaStamp
	// spawnedBy is the call the file names; "" when it names none or
	// cannot be used.
	spawnedBy string
	// reportedBad is the version last reported as unusable, kept in the
	// file's checkpoint: one report per version, restarts included.
	reportedBad metaStamp
}

// metaStamp tells a metadata file's versions apart without reading it.
type metaStamp struct {
	exists bool
	size   int64
	mod    time.Time
}

// metaSettle is how long a metadata file that cannot be used is taken to be
// still being written after its last change. Claude Code writes the file in
// place, so a poll may find it empty or cut: that is no bad file, and what
// its last readable version said stands until it can be read again.
const metaSettle = 2 * time.Second

// checkAgentMeta reads f's sub-agent metadata file when it changed since
// it was last read. A file that cannot be used and changed less than
// metaSettle ago is looked at again later, its last readable version's
// claim kept; one that cannot be used after that is reported once per
// version — a restart included: the checkpoint keeps the version reported —
// counted with the skipped lines, and names no call.
func (r *agentReceiver) checkAgentMeta(f *trackedFile) {
	if f.format != transcript.FormatClaudeCode {
		return
	}
	path, agentID, ok := ingest.AgentMetaPath(f.Path)
	if !ok {
		return
	}
	var stamp metaStamp
	if info, err := os.Lstat(path); err == nil {
		stamp = metaStamp{exists: true, size: info.Size(), mod: info.ModTime()}
	} else if !errors.Is(err, fs.ErrNotExist) {
		stamp = metaStamp{exists: true, size: -1} // unreadable: read reports why
	}
	m := &f.agentMeta
	if m.read && m.stamp == stamp && m.agentID == agentID {
		return
	}
	meta, _, err := ingest.ReadAgentMeta(path)
	if err != nil && stamp.size >= 0 && r.now().Sub(stamp.mod) < metaSettle {
		return // still being written: look again, keep what was read
	}
	m.agentID, m.read, m.stamp = agentID, true, stamp
	m.spawnedBy = meta.ToolUseID
	switch {
	case err == nil:
		if m.reportedBad.exists {
			m.reportedBad, f.Dirty = metaStamp{}, true
		}
	case !stamp.same(m.reportedBad):
		m.reportedBad, f.Dirty = stamp, true
		r.tel.LineSkipped(context.Background(), transcript.SkipBadAgentMeta)
		r.logger.Warn("Skipped sub-agent metadata file", zap.String("at", path),
			zap.String("path", path), zap.String("reason", transcript.SkipBadAgentMeta), zap.String("detail", err.Error()))
	}
}

// same reports whether two stamps are of one version of the file; a
// restored stamp's time is in UTC, a fresh one's in local time.
func (s metaStamp) same(o metaStamp) bool {
	return s.exists == o.exists && s.size == o.size && s.mod.Equal(o.mod)
}

// version is a metadata stamp as a checkpoint keeps it; a missing or
// unreadable file has no version to remember.
func (s metaStamp) version() checkpoint.FileVersion {
	if !s.exists || s.size < 0 {
		return checkpoint.FileVersion{}
	}
	return checkpoint.FileVersion{Size: s.size, ModTime: s.mod.UTC()}
}

// metaStampOf is the stamp a checkpoint's version stands for.
func metaStampOf(v checkpoint.FileVersion) metaStamp {
	if v == (checkpoint.FileVersion{}) {
		return metaStamp{}
	}
	return metaStamp{exists: true, size: v.Size, mod: v.ModTime}
}
