package tail

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"

	"github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver/internal/checkpoint"
)

// plainLines is a LineReader of newline-terminated lines (the last one may
// lack its newline) with a length limit, enough to drive Lines.
type plainLines struct {
	r   *bufio.Reader
	max int
}

func (p plainLines) Next() (Line, error) {
	b, err := p.r.ReadBytes('\n')
	if len(b) == 0 && err != nil {
		return Line{}, err
	}
	body := bytes.TrimSuffix(b, []byte("\n"))
	if len(body) > p.max {
		return Line{TooLong: true, Size: int64(len(b))}, nil
	}
	return Line{Bytes: body, Size: int64(len(b))}, nil
}

func reader(max int) func(io.Reader) LineReader {
	return func(r io.Reader) LineReader { return plainLines{bufio.NewReader(r), max} }
}

type seen struct {
	no      int64
	text    string
	tooLong bool
	before  Position // f.Read during the call
}

func readAll(t *testing.T, f *File, max int, stop func(Line) bool) []seen {
	t.Helper()
	fh, reset, err := f.Open()
	require.NoError(t, err)
	require.Empty(t, reset)
	defer fh.Close()
	var out []seen
	_, err = f.Lines(context.Background(), fh, f.Size, reader(max), func(l Line) bool {
		out = append(out, seen{l.No, string(l.Bytes), l.TooLong, f.Read})
		return stop == nil || !stop(l)
	})
	require.NoError(t, err)
	return out
}

func write(t *testing.T, path, s string, appendTo bool) {
	t.Helper()
	flag := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if appendTo {
		flag = os.O_CREATE | os.O_WRONLY | os.O_APPEND
	}
	fh, err := os.OpenFile(path, flag, 0o644)
	require.NoError(t, err)
	_, err = fh.WriteString(s)
	require.NoError(t, err)
	require.NoError(t, fh.Close())
}

// Lines yields complete lines with their numbers, advancing Read past each
// after the callback; a last line without its newline waits for it; a line
// over the limit is yielded as too long, with its number, and skipped.
func TestLinesYieldsCompleteLinesWithPositions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.jsonl")
	write(t, path, "one\n"+"a line too long\n"+"three\n"+"four, still being wri", false)
	f := New(path, 0, time.Time{})
	got := readAll(t, &f, 8, nil)
	assert.Equal(t, []seen{
		{1, "one", false, Position{0, 0}},
		{2, "", true, Position{4, 1}},
		{3, "three", false, Position{20, 2}},
	}, got)
	assert.Equal(t, Position{Offset: 26, Line: 3}, f.Read)
	assert.Equal(t, Position{}, f.Committed, "nothing is committed until the consumer says so")

	write(t, path, "tten\n", true)
	got = readAll(t, &f, 64, nil)
	assert.Equal(t, []seen{{4, "four, still being written", false, Position{26, 3}}}, got)
	f.Commit()
	assert.Equal(t, Position{Offset: 52, Line: 4}, f.Committed)
	assert.True(t, f.Dirty)
}

// The callback stops the reading; Read is then past the last line it took.
func TestLinesStopsWhenTold(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.jsonl")
	write(t, path, "1\n2\n3\n", false)
	f := New(path, 0, time.Time{})
	got := readAll(t, &f, 8, func(l Line) bool { return l.No == 2 })
	assert.Len(t, got, 2)
	assert.Equal(t, Position{Offset: 4, Line: 2}, f.Read)
	got = readAll(t, &f, 8, nil)
	assert.Equal(t, []seen{{3, "3", false, Position{4, 2}}}, got)
}

// A file that shrank below what was read, or whose first bytes changed, is
// another file under the same name: Open says so and rewinds it.
func TestOpenFindsTruncatedAndReplacedFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.jsonl")
	write(t, path, "first line\nsecond line\n", false)
	f := New(path, 0, time.Time{})
	readAll(t, &f, 64, nil)
	f.Commit()

	write(t, path, "first line\n", false)
	fh, reset, err := f.Open()
	require.NoError(t, err)
	fh.Close()
	assert.Equal(t, Truncated, reset)
	assert.Equal(t, Position{}, f.Read)
	assert.Equal(t, Position{}, f.Committed)

	readAll(t, &f, 64, nil)
	write(t, path, "other line\nand more\n", false)
	fh, reset, err = f.Open()
	require.NoError(t, err)
	fh.Close()
	assert.Equal(t, Replaced, reset)
	assert.Equal(t, Position{}, f.Read)

	// Growth is not a change.
	readAll(t, &f, 64, nil)
	write(t, path, "third\n", true)
	fh, reset, err = f.Open()
	require.NoError(t, err)
	fh.Close()
	assert.Empty(t, reset)
	assert.Equal(t, Position{Offset: 20, Line: 2}, f.Read)
}

// memClient is an in-memory storage client.
type memClient struct {
	data map[string][]byte
	fail bool
}

func (m *memClient) Get(_ context.Context, k string) ([]byte, error) { return m.data[k], nil }
func (m *memClient) Set(_ context.Context, k string, v []byte) error { m.data[k] = v; return nil }
func (m *memClient) Delete(_ context.Context, k string) error        { delete(m.data, k); return nil }
func (m *memClient) Close(context.Context) error                     { return nil }
func (m *memClient) Batch(_ context.Context, ops ...*storage.Operation) error {
	if m.fail {
		return errors.New("disk full")
	}
	for _, op := range ops {
		switch op.Type {
		case storage.Get:
			op.Value = m.data[op.Key]
		case storage.Set:
			m.data[op.Key] = op.Value
		case storage.Delete:
			delete(m.data, op.Key)
		}
	}
	return nil
}

// The store writes one entry a file and an index of them; a forgotten
// file's entry is deleted unless the file is followed again; a failed save
// changes nothing and the same save succeeds later.
func TestStoreSavesLoadsAndForgets(t *testing.T) {
	ctx := context.Background()
	c := &memClient{data: map[string][]byte{}}
	s := NewStore(c, zap.NewNop())
	loaded, err := s.Load(ctx)
	require.NoError(t, err)
	assert.Empty(t, loaded)

	a := checkpoint.File{Fingerprint: checkpoint.FingerprintOf([]byte("a")), Offset: 10, Line: 2, AnalyzedLine: 1, SessionID: "s", Format: "codex"}
	b := checkpoint.File{Offset: 5, Line: 1}
	none := func(string) bool { return false }
	require.NoError(t, s.Save(ctx, []Entry{{"/a", a}, {"/b", b}}, none))

	s2 := NewStore(c, zap.NewNop())
	loaded, err = s2.Load(ctx)
	require.NoError(t, err)
	assert.Equal(t, map[string]checkpoint.File{"/a": a, "/b": b}, loaded)

	s2.Forget("/a")
	s2.Forget("/b")
	c.fail = true
	require.Error(t, s2.Save(ctx, nil, func(p string) bool { return p == "/b" }))
	c.fail = false
	require.NoError(t, s2.Save(ctx, nil, func(p string) bool { return p == "/b" }))
	loaded, err = NewStore(c, zap.NewNop()).Load(ctx)
	require.NoError(t, err)
	assert.Equal(t, map[string]checkpoint.File{"/b": b}, loaded, "/b is followed again and keeps its entry")
	_, ok := c.data[checkpoint.Key("/a")]
	assert.False(t, ok)
}

// An unreadable entry is left out (its file is read from the start); an
// unreadable index leaves all out; neither fails the start.
func TestStoreLoadSkipsUnreadableEntries(t *testing.T) {
	ctx := context.Background()
	c := &memClient{data: map[string][]byte{}}
	require.NoError(t, NewStore(c, zap.NewNop()).Save(ctx, []Entry{{"/a", checkpoint.File{Offset: 1, Line: 1}}, {"/b", checkpoint.File{}}}, func(string) bool { return false }))
	c.data[checkpoint.Key("/a")] = []byte("{not json")
	loaded, err := NewStore(c, zap.NewNop()).Load(ctx)
	require.NoError(t, err)
	assert.Equal(t, map[string]checkpoint.File{"/b": {}}, loaded)

	c.data[checkpoint.IndexKey] = []byte("[")
	loaded, err = NewStore(c, zap.NewNop()).Load(ctx)
	require.NoError(t, err)
	assert.Empty(t, loaded)
}
