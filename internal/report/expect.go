package report

import "github.com/ctxaudit/ctxaudit/schema"

// Expect answers "was the right answer in the part the model never saw?"
// for one expected text, by call id (docs/design.md §8.4).
type Expect struct {
	Text string `json:"text"`
	// FoundInOriginal: calls whose complete output holds the text.
	FoundInOriginal []string `json:"found_in_original"`
	// FoundInContext: calls whose delivered text (what the model saw) holds it.
	FoundInContext []string `json:"found_in_context"`
	// CutFrom: in the original but not in the context. The text was in the
	// part the harness cut away.
	CutFrom []string `json:"cut_from"`
	// OriginalUnavailable: truncated calls whose original could not be
	// searched in full (not stored, or stored capped without a match), so
	// the text may have been cut from them too.
	OriginalUnavailable []string `json:"original_unavailable"`
}

// StoredText is what a search of one stored output text found.
type StoredText struct {
	Contains bool
	// Capped: only a prefix was stored, so a miss proves nothing.
	Capped bool
}

// FindExpected classifies calls by where text was found. stored maps the
// SHA-256 of each stored output (ToolCall.ContextSHA256, OriginalSHA256) to
// the search result; hashes with no stored text are absent from it.
//
// What the model saw was cut from the original (all strategies but a
// second model's summary), so text found in a context counts as found in
// the original too, whether or not the original was stored.
func FindExpected(text string, calls []schema.ToolCall, stored map[string]StoredText) *Expect {
	e := &Expect{Text: text, FoundInOriginal: []string{}, FoundInContext: []string{}, CutFrom: []string{}, OriginalUnavailable: []string{}}
	for i := range calls {
		c := &calls[i]
		ctx, ctxStored := lookup(stored, c.ContextSHA256)
		orig, origStored := lookup(stored, c.OriginalSHA256)
		inContext := ctxStored && ctx.Contains
		inOriginal := origStored && orig.Contains
		if inContext && c.Strategy != schema.StrategySummary {
			inOriginal = true
		}
		if inOriginal {
			e.FoundInOriginal = append(e.FoundInOriginal, c.CallID)
		}
		if inContext {
			e.FoundInContext = append(e.FoundInContext, c.CallID)
		}
		switch {
		case inOriginal && !inContext:
			e.CutFrom = append(e.CutFrom, c.CallID)
		case c.Truncated && !inContext && !inOriginal && (!origStored || orig.Capped):
			e.OriginalUnavailable = append(e.OriginalUnavailable, c.CallID)
		}
	}
	return e
}

func lookup(stored map[string]StoredText, sha string) (StoredText, bool) {
	if sha == "" {
		return StoredText{}, false
	}
	t, ok := stored[sha]
	return t, ok
}

// OutputHashes lists the stored-output hashes of calls, for the search that
// feeds FindExpected.
func OutputHashes(calls []schema.ToolCall) []string {
	var out []string
	for i := range calls {
		for _, h := range [...]string{calls[i].ContextSHA256, calls[i].OriginalSHA256} {
			if h != "" {
				out = append(out, h)
			}
		}
	}
	return out
}
