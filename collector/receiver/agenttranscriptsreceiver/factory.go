// Package agenttranscriptsreceiver is the agenttranscripts receiver: it
// tails the transcript folders of coding agents (Claude Code, Codex CLI, pi),
// follows files as they grow and new files as they appear, and emits each
// session as a trace in the GenAI semantic conventions — an execute_tool
// span per tool call carrying the ctxaudit.* truncation forensics, a chat
// span per answer with its risk verdict, and an invoke_agent span for the
// session — with ids derived from the session, message and call ids.
//
// Per-file checkpoints live in a storage extension; a checkpoint advances
// only after the pipeline accepted the spans read before it, and a restart
// re-parses each file up to its checkpoint without emitting, so it neither
// loses nor repeats a call. See README.md for the design.
package agenttranscriptsreceiver // import "github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver"

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"

	"github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver/internal/metadata"
	"github.com/ctxaudit/ctxaudit/collector/transcript"
)

// Defaults.
const (
	defaultPollInterval = time.Second
	defaultSessionIdle  = 30 * time.Second
	defaultMaxSessions  = 256
)

// NewFactory returns the receiver factory.
func NewFactory() receiver.Factory {
	return receiver.NewFactory(metadata.Type, createDefaultConfig,
		receiver.WithTraces(createTraces, metadata.TracesStability))
}

func createDefaultConfig() component.Config {
	home, _ := os.UserHomeDir()
	return &Config{
		Include:      defaultInclude(home),
		PollInterval: defaultPollInterval,
		StartAt:      StartAtBeginning,
		MaxLineBytes: transcript.DefaultMaxLineBytes,
		Source:       string(transcript.FormatAuto),
		SessionIdle:  defaultSessionIdle,
		MaxSessions:  defaultMaxSessions,
	}
}

// defaultInclude is where the harnesses keep their sessions under home;
// empty when home is unknown, so that Validate asks for an include.
func defaultInclude(home string) []string {
	if home == "" {
		return nil
	}
	return []string{
		filepath.Join(home, ".claude", "projects", "**", "*.jsonl"),
		filepath.Join(home, ".codex", "sessions", "**", "*.jsonl"),
		filepath.Join(home, ".pi", "agent", "sessions", "**", "*.jsonl"),
	}
}

func createTraces(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Traces) (receiver.Traces, error) {
	return newReceiver(set, cfg.(*Config), next)
}
