// Package checkpoint is what the agenttranscripts receiver keeps in its
// storage extension for each transcript file, and how it is encoded.
//
// A file's entry says how far the pipeline has accepted it: a byte offset
// that always falls on a line boundary and the number of lines before it.
// The file is identified by its path and guarded by a fingerprint of its
// first bytes, so a file replaced or truncated under the same name is read
// again from the start rather than from a stale offset. The fingerprint is
// kept as a hash: the first KiB of a transcript is the user's first prompt,
// and the storage is no place for a copy of it.
//
// An entry also keeps the answer the file's last accepted analysis sent for
// its last message — its ids, time and turn, not its text — so that a
// receiver rebuilding the session after a restart can take it back should
// the message turn out to call a tool.
//
// Entries are stored one key per file, so a commit rewrites only the files
// that moved; an index key lists the paths so that entries of files that
// disappeared while the collector was down can be found and deleted.
package checkpoint

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/ctxaudit/ctxaudit/schema"
)

// FingerprintSize is how many leading bytes identify a file.
const FingerprintSize = 1024

// Storage keys.
const (
	keyPrefix = "file:"
	// IndexKey holds the JSON list of paths that have an entry.
	IndexKey = "files"
)

// version is the encoding version written; entries of another version are
// ignored (the file is then read again from the start, which the span ids
// make harmless).
const version = 1

// Key is the storage key of a file's entry.
func Key(path string) string { return keyPrefix + path }

// Fingerprint identifies a file by its first Len bytes (at most
// FingerprintSize); a file shorter than that has a fingerprint that grows
// with it, and stays the same file as long as the old one is a prefix.
type Fingerprint struct {
	Len int
	Sum [sha256.Size]byte
}

// FingerprintOf returns the fingerprint of a file whose first bytes are head.
func FingerprintOf(head []byte) Fingerprint {
	if len(head) > FingerprintSize {
		head = head[:FingerprintSize]
	}
	return Fingerprint{Len: len(head), Sum: sha256.Sum256(head)}
}

// ReadHead reads the first min(size, FingerprintSize) bytes of r.
func ReadHead(r io.ReaderAt, size int64) ([]byte, error) {
	n := min(size, FingerprintSize)
	if n <= 0 {
		return nil, nil
	}
	buf := make([]byte, n)
	got, err := r.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return buf[:got], nil
}

// IsPrefixOf reports whether f is the fingerprint of a prefix of head: the
// file that now starts with head is the one f was taken from. A fingerprint
// of no bytes (a file first seen empty) matches any file.
func (f Fingerprint) IsPrefixOf(head []byte) bool {
	if f.Len == 0 {
		return true
	}
	if f.Len > len(head) {
		return false
	}
	return sha256.Sum256(head[:f.Len]) == f.Sum
}

// File is one file's entry.
type File struct {
	Fingerprint Fingerprint
	// Offset is the committed byte offset, at a line boundary.
	Offset int64
	// Line is the number of lines before Offset.
	Line int64
	// AnalyzedLine is the Line at which the file's session was last
	// analysed and its verdicts accepted downstream.
	AnalyzedLine int64
	// SessionID is the session the file's records belong to.
	SessionID string
	// Format is the transcript format detected for the file.
	Format string
	// OpenAnswer is the answer the file's last accepted analysis returned
	// for the file's last message, which a later line may still prove no
	// answer (its tool call: docs/design.md §5.1): a receiver rebuilding the
	// session after a restart takes it back then. Only what a retraction
	// carries is kept (ids, time, turn, source, model, agent), no text.
	OpenAnswer *schema.Answer
	// SpawnedBy is, for a Claude Code sub-agent thread, the spawning call
	// its metadata file named when the file's session was last analysed
	// and the analysis accepted ("" none): a receiver that finds the file
	// naming another after a restart analyses the session again.
	SpawnedBy string
	// BadAgentMeta is the version of that metadata file last reported as
	// unusable (zero: none), so that a restart does not report and count
	// the same file again.
	BadAgentMeta FileVersion
}

// FileVersion tells versions of a file apart without reading it: its size
// and modification time. The zero value is no version.
type FileVersion struct {
	Size    int64
	ModTime time.Time
}

type fileVersionJSON struct {
	Size    int64 `json:"size"`
	ModTime int64 `json:"mod_unix_ns"`
}

type fileJSON struct {
	V        int              `json:"v"`
	FPLen    int              `json:"fp_len"`
	FP       string           `json:"fp_sha256"`
	Offset   int64            `json:"offset"`
	Line     int64            `json:"line"`
	Analyzed int64            `json:"analyzed_line"`
	Session  string           `json:"session,omitempty"`
	Format   string           `json:"format,omitempty"`
	Open     *openAnswerJSON  `json:"open_answer,omitempty"`
	Spawned  string           `json:"spawned_by,omitempty"`
	BadMeta  *fileVersionJSON `json:"bad_agent_meta,omitempty"`
}

type openAnswerJSON struct {
	Session   string      `json:"session_id"`
	Message   string      `json:"message_id"`
	Timestamp time.Time   `json:"ts"`
	Turn      schema.Turn `json:"turn"`
	Source    string      `json:"source,omitempty"`
	Model     string      `json:"model,omitempty"`
	AgentID   string      `json:"agent_id,omitempty"`
	Sidechain bool        `json:"sidechain,omitempty"`
}

// Encode returns the stored form of f.
func Encode(f File) ([]byte, error) {
	j := fileJSON{
		V: version, FPLen: f.Fingerprint.Len, FP: hex.EncodeToString(f.Fingerprint.Sum[:]),
		Offset: f.Offset, Line: f.Line, Analyzed: f.AnalyzedLine, Session: f.SessionID, Format: f.Format,
		Spawned: f.SpawnedBy,
	}
	if v := f.BadAgentMeta; v != (FileVersion{}) {
		j.BadMeta = &fileVersionJSON{Size: v.Size, ModTime: v.ModTime.UnixNano()}
	}
	if a := f.OpenAnswer; a != nil {
		j.Open = &openAnswerJSON{Session: a.SessionID, Message: a.MessageID, Timestamp: a.Timestamp, Turn: a.Turn,
			Source: string(a.Source), Model: a.Model, AgentID: a.AgentID, Sidechain: a.Sidechain}
	}
	return json.Marshal(j)
}

// ErrInvalid reports an entry that cannot be used.
var ErrInvalid = errors.New("invalid checkpoint")

// Decode parses a stored entry; anything inconsistent is ErrInvalid.
func Decode(b []byte) (File, error) {
	var j fileJSON
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&j); err != nil {
		return File{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if j.V != version {
		return File{}, fmt.Errorf("%w: version %d, want %d", ErrInvalid, j.V, version)
	}
	sum, err := hex.DecodeString(j.FP)
	if err != nil || len(sum) != sha256.Size {
		return File{}, fmt.Errorf("%w: bad fingerprint", ErrInvalid)
	}
	switch {
	case j.FPLen < 0 || j.FPLen > FingerprintSize:
		return File{}, fmt.Errorf("%w: fingerprint length %d", ErrInvalid, j.FPLen)
	case j.Offset < 0 || j.Line < 0 || j.Analyzed < 0 || j.Analyzed > j.Line || j.Line > j.Offset:
		return File{}, fmt.Errorf("%w: offset %d, line %d, analyzed line %d", ErrInvalid, j.Offset, j.Line, j.Analyzed)
	}
	f := File{
		Fingerprint: Fingerprint{Len: j.FPLen}, Offset: j.Offset, Line: j.Line,
		AnalyzedLine: j.Analyzed, SessionID: j.Session, Format: j.Format, SpawnedBy: j.Spawned,
	}
	if v := j.BadMeta; v != nil {
		f.BadAgentMeta = FileVersion{Size: v.Size, ModTime: time.Unix(0, v.ModTime).UTC()}
	}
	if o := j.Open; o != nil && o.Message != "" {
		f.OpenAnswer = &schema.Answer{SessionID: o.Session, MessageID: o.Message, Timestamp: o.Timestamp.UTC(), Turn: o.Turn,
			Source: schema.Harness(o.Source), Model: o.Model, AgentID: o.AgentID, Sidechain: o.Sidechain}
	}
	copy(f.Fingerprint.Sum[:], sum)
	return f, nil
}

// EncodeIndex returns the stored form of the path list.
func EncodeIndex(paths []string) ([]byte, error) {
	sorted := append([]string(nil), paths...)
	sort.Strings(sorted)
	return json.Marshal(sorted)
}

// DecodeIndex parses the path list; an absent index is empty.
func DecodeIndex(b []byte) ([]string, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var paths []string
	if err := json.Unmarshal(b, &paths); err != nil {
		return nil, fmt.Errorf("%w: index: %w", ErrInvalid, err)
	}
	return paths, nil
}
