package checkpoint

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxaudit/ctxaudit/schema"
)

func TestRoundTrip(t *testing.T) {
	want := File{
		Fingerprint: FingerprintOf([]byte(`{"type":"user"}`)), Offset: 12345, Line: 52, AnalyzedLine: 40,
		SessionID: "637ef6e7-e740-4503-8ff8-5780d7c0918f", Format: "claude-code",
	}
	raw, err := Encode(want)
	require.NoError(t, err)
	assert.NotContains(t, string(raw), "user", "the fingerprint is a hash, not the file's first bytes")
	got, err := Decode(raw)
	require.NoError(t, err)
	assert.Equal(t, want, got)

	// With the answer its last analysis returned for its last message:
	// what a retraction needs, never the text.
	want.OpenAnswer = &schema.Answer{SessionID: want.SessionID, MessageID: "msg_01", Turn: schema.KnownTurn(3),
		Timestamp: time.Date(2026, 1, 15, 10, 30, 0, 123_000_000, time.UTC), Source: schema.HarnessClaudeCode,
		Model: "claude-opus-4-5", AgentID: "a1", Sidechain: true}
	raw, err = Encode(want)
	require.NoError(t, err)
	got, err = Decode(raw)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.NotContains(t, string(raw), "text")

	// A sub-agent thread's: the spawning call its metadata named to the
	// last accepted analysis.
	want.SpawnedBy = "toolu_lab000002"
	raw, err = Encode(want)
	require.NoError(t, err)
	got, err = Decode(raw)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.NotContains(t, string(raw), "bad_agent_meta", "no metadata file was reported")

	// And the version of that metadata file reported as unusable, to the
	// nanosecond.
	want.BadAgentMeta = FileVersion{Size: 17, ModTime: time.Date(2026, 1, 15, 10, 31, 0, 123_456_789, time.UTC)}
	raw, err = Encode(want)
	require.NoError(t, err)
	got, err = Decode(raw)
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

func TestDecodeRejects(t *testing.T) {
	good := `"fp_sha256":"` + strings.Repeat("ab", 32) + `"`
	for name, raw := range map[string]string{
		"not json":              `{`,
		"other version":         `{"v":2,"fp_len":1,` + good + `}`,
		"short hash":            `{"v":1,"fp_len":1,"fp_sha256":"abcd"}`,
		"bad hex":               `{"v":1,"fp_len":1,"fp_sha256":"` + strings.Repeat("zz", 32) + `"}`,
		"fingerprint too big":   `{"v":1,"fp_len":4096,` + good + `}`,
		"negative offset":       `{"v":1,"fp_len":1,` + good + `,"offset":-1}`,
		"more lines than bytes": `{"v":1,"fp_len":1,` + good + `,"offset":3,"line":4}`,
		"analyzed past line":    `{"v":1,"fp_len":1,` + good + `,"offset":30,"line":4,"analyzed_line":5}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Decode([]byte(raw))
			assert.ErrorIs(t, err, ErrInvalid)
		})
	}
}

func TestFingerprint(t *testing.T) {
	head := bytes.Repeat([]byte("0123456789"), 200)
	short := FingerprintOf(head[:100])
	assert.Equal(t, 100, short.Len)
	assert.True(t, short.IsPrefixOf(head[:FingerprintSize]), "a file that grew is the same file")
	assert.False(t, short.IsPrefixOf(head[:50]), "a file shorter than its fingerprint was replaced")
	other := append([]byte("X"), head[1:]...)
	assert.False(t, short.IsPrefixOf(other[:FingerprintSize]))
	assert.Equal(t, FingerprintSize, FingerprintOf(head).Len, "capped")
	assert.True(t, Fingerprint{}.IsPrefixOf(nil), "an empty file's fingerprint matches anything")

	got, err := ReadHead(bytes.NewReader(head), int64(len(head)))
	require.NoError(t, err)
	assert.Equal(t, head[:FingerprintSize], got)
	got, err = ReadHead(bytes.NewReader(head[:10]), 10)
	require.NoError(t, err)
	assert.Equal(t, head[:10], got)
}

func TestIndex(t *testing.T) {
	raw, err := EncodeIndex([]string{"/b", "/a"})
	require.NoError(t, err)
	got, err := DecodeIndex(raw)
	require.NoError(t, err)
	assert.Equal(t, []string{"/a", "/b"}, got)
	got, err = DecodeIndex(nil)
	require.NoError(t, err)
	assert.Empty(t, got)
	_, err = DecodeIndex([]byte("{"))
	assert.ErrorIs(t, err, ErrInvalid)
}
