package claudecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ctxaudit/ctxaudit/collector/transcript"
)

// A tool result over Claude Code's size limits is saved under the session's
// tool-results folder. A string result is saved as it is (<id>.txt); a result
// that is an array of content blocks (every MCP tool's) is saved as the array
// serialised with JSON.stringify(blocks, null, 2) (<id>.json), and only text
// blocks can be saved. The tool's output is the text of those blocks, not
// their JSON envelope: that is what an MCP result under the limit puts in the
// transcript, and what transcript.TextBlocks measures there. So the saved
// file of such a result is read as the text of its blocks, joined the same
// way, and the same result gives the same original whichever way it came.

// errIncompleteContent: a saved .json file that is not valid JSON, which is
// how a content array Claude Code cut at its persist limit looks. Its size
// bounds neither the text nor anything else ctxaudit records, so it is not
// measured at all.
var errIncompleteContent = errors.New("saved content array is incomplete JSON")

// savedContentReader wraps a ReadSaved so that a saved content array is read
// as the text of its blocks. Other saved files pass through unchanged.
func savedContentReader(read func(string) ([]byte, error)) func(string) ([]byte, error) {
	if read == nil {
		return nil
	}
	return func(ref string) ([]byte, error) {
		b, err := read(ref)
		if err != nil || b == nil || !strings.HasSuffix(ref, ".json") {
			return b, err
		}
		text, err := contentArrayText(b)
		if err != nil {
			return nil, fmt.Errorf("saved output %s: %w", ref, err)
		}
		if text == nil {
			return b, nil // JSON of another shape: the file is what it is
		}
		return text, nil
	}
}

// contentArrayText returns the text of a saved content array, nil when b is
// valid JSON of another shape, or errIncompleteContent.
func contentArrayText(b []byte) ([]byte, error) {
	if !json.Valid(b) {
		return nil, errIncompleteContent
	}
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) == 0 || t[0] != '[' {
		return nil, nil
	}
	var blocks []struct {
		Type *string `json:"type"`
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(b, &blocks); err != nil {
		return nil, nil // an array of something other than blocks
	}
	for _, blk := range blocks {
		if blk.Type == nil || *blk.Type != "text" || blk.Text == nil {
			return nil, nil
		}
	}
	// Re-encode as the transcript would carry it, so the text is joined by
	// exactly the rule that measures an inline result.
	raw, err := json.Marshal(blocks)
	if err != nil {
		return nil, err
	}
	return []byte(transcript.TextBlocks(raw)), nil
}
