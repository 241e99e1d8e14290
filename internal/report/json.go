package report

import (
	"encoding/json"
	"fmt"
	"io"
)

// WriteJSON renders pm as one indented JSON object (docs/design.md §8.4). HTML
// characters stay as written: the texts are tool output, read by tools.
func WriteJSON(w io.Writer, pm *Postmortem) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(pm); err != nil {
		return fmt.Errorf("write postmortem JSON: %w", err)
	}
	return nil
}
