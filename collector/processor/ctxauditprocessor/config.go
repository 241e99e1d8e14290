package ctxauditprocessor

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"

	"github.com/ctxaudit/ctxaudit/collector/redact"
	"github.com/ctxaudit/ctxaudit/schema"
)

// Config is the ctxaudit processor's configuration.
type Config struct {
	// DefaultSource is the harness assumed for spans that name none
	// (ctxaudit.source); it selects the harness-specific notice rules.
	DefaultSource string `mapstructure:"default_source"`
	// AnalyzeSessions groups execute_tool and answer spans by session
	// (gen_ai.conversation.id / session.id) and runs session analysis when a
	// session goes idle, emitting answers with risk, follow-through and the
	// session summary.
	AnalyzeSessions bool `mapstructure:"analyze_sessions"`
	// SessionIdle is how long a session must be quiet before it is analysed.
	SessionIdle time.Duration `mapstructure:"session_idle"`
	// MaxSessions bounds the sessions held in memory; beyond it the least
	// recently active one is analysed early and dropped (and counted).
	// With storage its records stay there (see MaxParkedCalls), so that a
	// session that goes on is held again whole.
	MaxSessions int `mapstructure:"max_sessions"`
	// MaxParkedCalls bounds the calls of sessions dropped past max_sessions
	// whose records stay in storage after their analysis was written
	// (parked): a parked session that goes on is read back and analysed
	// whole, as if it had never been dropped. Beyond it the oldest parked
	// session's records are deleted, and if it goes on its new buffer lacks
	// its start. 0 parks nothing. Needs storage.
	MaxParkedCalls int `mapstructure:"max_parked_calls"`
	// MaxCallsPerSession bounds one session's buffered calls; a session that
	// reaches it is analysed early and its buffer starts again.
	MaxCallsPerSession int `mapstructure:"max_calls_per_session"`
	// MaxWaitingCalls bounds the calls of sessions analysed early (dropped
	// past max_sessions or max_calls_per_session) that wait in memory for
	// their rows to be written. Beyond it a request waits for them, and is
	// refused with a retryable error if they are not written within
	// emissionWait (or half the time to its deadline): data arriving faster
	// than it can be written slows its sender instead of piling up in the
	// collector.
	MaxWaitingCalls int `mapstructure:"max_waiting_calls"`
	// MaxHold bounds how long a call is held unwritten: a session with a
	// call held longer is emitted with its current analysis, so long
	// sessions show up while they run (a later change is emitted again).
	MaxHold time.Duration `mapstructure:"max_hold"`
	// ForwardHeldSpans also passes on, at once, the execute_tool span of a
	// call held for session analysis, marked ctxaudit.analysis.pending, for
	// another exporter of the pipeline that wants every span as it arrives.
	// Off, a held call leaves the processor once: with its analysis.
	ForwardHeldSpans bool `mapstructure:"forward_held_spans"`
	// Storage names a storage extension (e.g. file_storage) that keeps what
	// is held per session, so that a restart — a crash included — leaves no
	// acknowledged call unanalysed. Without it sessions are held in memory
	// only and a crash loses the calls not yet emitted.
	Storage *component.ID `mapstructure:"storage"`
	// Redact adds patterns to the built-in secret rules applied to every
	// string of the data passing through, before it reaches an exporter's
	// (possibly persistent) queue.
	Redact redact.Config `mapstructure:"redact"`

	// prevent unkeyed literals
	_ struct{}
}

// Validate names the bad key.
func (c *Config) Validate() error {
	var errs []error
	if c.DefaultSource != "" {
		known := false
		for _, h := range schema.Harnesses {
			known = known || string(h) == c.DefaultSource
		}
		if !known {
			errs = append(errs, errors.New("default_source: unknown harness "+c.DefaultSource+" (want claude_code, codex, pi, gemini_cli, opencode, openhands, openclaw, mcp or generic)"))
		}
	}
	if c.SessionIdle <= 0 {
		errs = append(errs, errors.New("session_idle: must be positive"))
	}
	if c.MaxHold <= 0 {
		errs = append(errs, errors.New("max_hold: must be positive"))
	}
	if c.MaxSessions <= 0 {
		errs = append(errs, errors.New("max_sessions: must be positive"))
	}
	if c.MaxCallsPerSession <= 0 {
		errs = append(errs, errors.New("max_calls_per_session: must be positive"))
	}
	if c.MaxWaitingCalls <= 0 {
		errs = append(errs, errors.New("max_waiting_calls: must be positive"))
	}
	if c.MaxParkedCalls < 0 {
		errs = append(errs, errors.New("max_parked_calls: must not be negative (0 parks nothing)"))
	}
	if err := c.Redact.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("redact: %w", err))
	}
	return errors.Join(errs...)
}
