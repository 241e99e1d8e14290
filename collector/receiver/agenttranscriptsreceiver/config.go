package agenttranscriptsreceiver // import "github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver"

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"

	"github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver/internal/tail"
	"github.com/ctxaudit/ctxaudit/collector/transcript"
)

// Where to start reading a file that has no checkpoint.
const (
	StartAtBeginning = "beginning"
	StartAtEnd       = "end"
)

// Config is the agenttranscripts receiver's configuration.
type Config struct {
	// Include lists the transcript files to tail as glob patterns; `**`
	// matches any number of folders and a leading `~/` is the user's home.
	// Default: the Claude Code, Codex and pi session folders in the home
	// folder of the user running the collector.
	Include []string `mapstructure:"include"`
	// Folders lists transcript folders, each tailed for `**/*.jsonl`. An
	// empty entry is a source switched off (an override such as
	// ${env:CTXAUDIT_PI_SESSIONS:-~/.pi/agent/sessions} set to nothing):
	// it adds no pattern, never one from the filesystem root. When folders
	// is set and include is not, include's default does not apply.
	Folders []string `mapstructure:"folders"`
	// Exclude lists patterns of files not to tail, even when included.
	Exclude []string `mapstructure:"exclude"`
	// PollInterval is how often the folders are scanned and the files
	// checked for new lines; a refused batch is retried at the same pace.
	PollInterval time.Duration `mapstructure:"poll_interval"`
	// StartAt says where to start in files found at the first start that
	// have no checkpoint: "beginning" (the default: a transcript's history
	// matters) or "end". Files that appear later are always read from the
	// beginning.
	StartAt string `mapstructure:"start_at"`
	// StorageID names a storage extension (e.g. file_storage) that keeps
	// the per-file checkpoints across restarts. Without it, checkpoints live
	// in memory and a restart reads every file again (the span ids are
	// stable, so storage that replaces by id keeps one copy).
	StorageID *component.ID `mapstructure:"storage"`
	// MaxLineBytes is the longest line parsed; longer lines are skipped and
	// counted (reason line_too_long).
	MaxLineBytes int `mapstructure:"max_line_bytes"`
	// Source forces a transcript format (claude-code, codex, pi); auto
	// detects it per file from its first lines.
	Source string `mapstructure:"source"`
	// SessionIdle is how long after its files last grew a session is
	// analysed: its answers (chat spans with risk), its invoke_agent span
	// and the tool calls whose follow-through changed are emitted then.
	SessionIdle time.Duration `mapstructure:"session_idle"`
	// MaxSessions bounds the sessions whose calls and answers are held in
	// memory for analysis; beyond it the least recently active one is
	// dropped (and counted). A dropped session is rebuilt from its files
	// when they grow again.
	MaxSessions int `mapstructure:"max_sessions"`

	// prevent unkeyed literal initialization
	_ struct{}
}

var _ component.Config = (*Config)(nil)

// Validate checks the configuration; each error names its key.
func (c *Config) Validate() error {
	var errs []error
	if len(c.Include) == 0 && c.Folders == nil {
		errs = append(errs, errors.New("include: must list at least one pattern (or set folders)"))
	}
	home, _ := os.UserHomeDir()
	for i, p := range c.Include {
		if err := checkInclude(expandHome(p, home)); err != nil {
			errs = append(errs, fmt.Errorf("include[%d]: %w", i, err))
		}
	}
	for i, f := range c.Folders {
		if isOff(f) {
			continue
		}
		if err := checkInclude(folderPattern(expandHome(f, home))); err != nil {
			errs = append(errs, fmt.Errorf("folders[%d]: %w", i, err))
		}
	}
	for i, p := range c.Exclude {
		if _, err := tail.CheckPattern(expandHome(p, home)); err != nil {
			errs = append(errs, fmt.Errorf("exclude[%d]: %w", i, err))
		}
	}
	if c.PollInterval <= 0 {
		errs = append(errs, fmt.Errorf("poll_interval: must be positive, got %s", c.PollInterval))
	}
	switch c.StartAt {
	case StartAtBeginning, StartAtEnd:
	default:
		errs = append(errs, fmt.Errorf("start_at: must be %q or %q, got %q", StartAtBeginning, StartAtEnd, c.StartAt))
	}
	if c.MaxLineBytes <= 0 {
		errs = append(errs, fmt.Errorf("max_line_bytes: must be positive, got %d", c.MaxLineBytes))
	}
	if _, err := transcript.ParseFormat(c.Source); err != nil {
		errs = append(errs, fmt.Errorf("source: %w", err))
	}
	if c.SessionIdle <= 0 {
		errs = append(errs, fmt.Errorf("session_idle: must be positive, got %s", c.SessionIdle))
	}
	if c.MaxSessions <= 0 {
		errs = append(errs, fmt.Errorf("max_sessions: must be positive, got %d", c.MaxSessions))
	}
	return errors.Join(errs...)
}

// Unmarshal lets folders replace include's default: a configuration that
// names its folders watches those, not the home folders as well.
func (c *Config) Unmarshal(conf *confmap.Conf) error {
	if conf.IsSet("folders") && !conf.IsSet("include") {
		c.Include = nil
	}
	return conf.Unmarshal(c)
}

// isOff says whether a folders entry is a switched-off source.
func isOff(folder string) bool { return strings.TrimSpace(folder) == "" }

// folderPattern is the include pattern of one transcript folder.
func folderPattern(folder string) string {
	return filepath.Join(folder, "**", "*.jsonl")
}

// checkInclude compiles a pattern and refuses one that would walk the whole
// filesystem: transcripts are private, and a pattern rooted at / (the
// result of an empty folder variable before "/**/*.jsonl") would read every
// matching file on the machine.
func checkInclude(p string) error {
	root, err := tail.CheckPattern(p)
	if err != nil {
		return err
	}
	if filepath.Dir(root) == root {
		return fmt.Errorf("%q matches from the filesystem root %s; name a folder (an empty folder variable switches the source off only in folders)", p, root)
	}
	return nil
}

// patterns are the include patterns to watch, with ~ expanded, and the
// folders entries that were switched off (by index).
func (c *Config) patterns(home string) (include []string, off []int) {
	for _, p := range c.Include {
		include = append(include, expandHome(p, home))
	}
	for i, f := range c.Folders {
		if isOff(f) {
			off = append(off, i)
			continue
		}
		include = append(include, folderPattern(expandHome(strings.TrimSpace(f), home)))
	}
	return include, off
}

// expandHome replaces a leading ~ (alone or followed by a separator) with
// home; other patterns, and all patterns when home is unknown, are kept.
func expandHome(p, home string) string {
	if home == "" || !strings.HasPrefix(p, "~") {
		return p
	}
	rest := p[1:]
	if rest == "" {
		return home
	}
	if rest[0] == '/' || rest[0] == filepath.Separator {
		return filepath.Join(home, rest[1:])
	}
	return p
}

// finder builds the tailing layer's finder of the configuration, with `~`
// expanded to the current user's home folder; it also returns the patterns
// it watches and the `folders` entries that are off, for the start log.
func (c *Config) finder() (f *tail.Finder, include, exclude []string, off []int, err error) {
	home, _ := os.UserHomeDir()
	include, off = c.patterns(home)
	exclude = make([]string, len(c.Exclude))
	for i, p := range c.Exclude {
		exclude[i] = expandHome(p, home)
	}
	f, err = tail.NewFinder(include, exclude)
	return f, include, exclude, off, err
}
