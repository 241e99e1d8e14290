package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/schema"
)

// precisionSample is a session of Claude Code 2.1.328 calls whose figures
// are not all exact: a Bash failure notice at the cap (a lower bound with a
// tail that is not the end), a Read refused by a size label (approximate),
// and a WebFetch continued by fetching the page again.
func precisionSample() Input {
	at := func(s int) time.Time { return time.Date(2026, 11, 30, 9, 0, s, 0, time.UTC) }
	bash := schema.ToolCall{
		SessionID: "sess-p", CallID: "toolu_bash", Tool: "Bash", Timestamp: at(0), Arguments: `{"command":"./gen.sh"}`,
		Forensics: schema.Forensics{
			Original:  schema.Original{Sizes: schema.Sizes{Chars: schema.Known(30016)}, Source: schema.SourceMarker, Precision: schema.PrecisionLowerBound},
			Context:   schema.Sizes{Bytes: schema.Known(10041), Chars: schema.Known(10041), Lines: schema.Known(3), Tokens: schema.Known(2511)},
			Truncated: true, Kind: schema.KindExplicit, Strategy: schema.StrategyHeadTail, Reason: "cap_chars",
			Shown: schema.Range{Start: schema.Known(0), End: schema.Known(5002), Unit: schema.UnitChars}, Total: schema.Known(30016),
			ShownTail:  schema.Range{Start: schema.Known(25013), End: schema.Known(30016), Unit: schema.UnitChars},
			Disclosure: schema.Disclosure{Range: true}, Marker: "... [20011 characters truncated] ...", MarkerUnderstated: true,
		},
		SessionCoverage: schema.KnownRatio(10005.0 / 30016), CoverageUpperBound: true,
	}
	read := schema.ToolCall{
		SessionID: "sess-p", CallID: "toolu_read", Tool: "Read", Timestamp: at(5), Arguments: `{"file_path":"/srv/data/big.json"}`,
		Forensics: schema.Forensics{
			Original:  schema.Original{Sizes: schema.Sizes{Bytes: schema.Known(454963), Tokens: schema.Known(113741)}, Source: schema.SourceMarker, Precision: schema.PrecisionApproximate},
			Context:   schema.Sizes{Bytes: schema.Known(120), Chars: schema.Known(120), Lines: schema.Known(1), Tokens: schema.Known(30)},
			Truncated: true, Kind: schema.KindExplicit, Strategy: schema.StrategyRefused, Reason: "cap_bytes",
			Shown: schema.Range{Start: schema.Known(0), End: schema.Known(0), Unit: schema.UnitBytes}, Total: schema.Known(454963),
			Disclosure: schema.Disclosure{Range: true, Reason: true, Next: true}, Marker: "File content (444.3KB) exceeds maximum allowed size (256KB).",
		},
		SessionCoverage: schema.KnownRatio(0),
	}
	fetch1 := schema.ToolCall{
		SessionID: "sess-p", CallID: "toolu_w1", Tool: "WebFetch", Timestamp: at(10), Arguments: `{"url":"https://example.com/c","prompt":"keys"}`,
		Forensics: schema.Forensics{
			Original:  schema.Original{Sizes: schema.Sizes{Bytes: schema.Known(214995), Chars: schema.Known(195757), Tokens: schema.Known(53749)}, Source: schema.SourceHarnessMetadata, Precision: schema.PrecisionExact},
			Context:   schema.Sizes{Bytes: schema.Known(300), Chars: schema.Known(300), Lines: schema.Known(3), Tokens: schema.Known(75)},
			Truncated: true, Kind: schema.KindExplicit, Strategy: schema.StrategySummary, Reason: "summarised",
			Shown: schema.Range{Start: schema.Known(0), End: schema.Known(100000), Unit: schema.UnitChars}, Total: schema.Known(195757),
			Disclosure: schema.Disclosure{Range: true, Reason: true, Next: true}, Marker: "[WebFetch note: …]",
		},
		FollowedUp: true, SessionCoverage: schema.KnownRatio(1), CoverageMixedVersions: true,
	}
	fetch2 := schema.ToolCall{
		SessionID: "sess-p", CallID: "toolu_w2", Tool: "WebFetch", Timestamp: at(15), Arguments: `{"url":"https://example.com/c","prompt":"keys","offset":100000}`,
		Forensics: schema.Forensics{
			Original: schema.Original{Sizes: schema.Sizes{Bytes: schema.Known(214995), Tokens: schema.Known(53749)}, Source: schema.SourceHarnessMetadata, Precision: schema.PrecisionExact},
			Context:  schema.Sizes{Bytes: schema.Known(60), Chars: schema.Known(60), Lines: schema.Known(1), Tokens: schema.Known(15)},
			Kind:     schema.KindNone, Strategy: schema.StrategySummary, PartialByRequest: true, RefetchedSource: true,
			Shown: schema.Range{Start: schema.Known(100000), Unit: schema.UnitChars},
		},
		ContinuationOf: "toolu_w1", SessionCoverage: schema.KnownRatio(1), CoverageMixedVersions: true,
	}
	// Analysed, as the follow-through and coverage above say.
	analysed := schema.Analysis{Done: true, Records: 4}
	bash.Analysis, read.Analysis, fetch1.Analysis, fetch2.Analysis = analysed, analysed, analysed, analysed
	return Input{
		Session: schema.Session{SessionID: "sess-p", Source: schema.HarnessClaudeCode, HarnessVersion: "2.1.328", StartedAt: at(0), EndedAt: at(20),
			Turns: schema.Known(1), ToolCalls: 4, TruncatedCalls: 3},
		Calls:         []schema.ToolCall{bash, read, fetch1, fetch2},
		SessionStored: true,
	}
}

// TestRenderPrecision: every renderer says how exact each figure is, where
// both ranges of a head+tail cut lie, and that continuations fetched again.
func TestRenderPrecision(t *testing.T) {
	pm := Build(precisionSample())
	tests := []struct {
		name   string
		render func(*bytes.Buffer, *Postmortem) error
		want   []string
	}{
		{"text", func(b *bytes.Buffer, pm *Postmortem) error { return WriteText(b, pm) }, []string{
			"original   at least ? bytes · 30,016 chars · ? lines · ? tokens  (marker; a lower bound: the output hit a cap before it was counted)",
			"shown chars 0–5,002 and 25,013–30,016 of at least 30,016 (the tail shown is the end of what the harness received, not of the output)",
			`"... [20011 characters truncated] ..."  (may understate what was cut: it counts only what was kept before the cap)`,
			"at most 33% of the original seen in the session",
			"original   about 454,963 bytes · ? chars · ? lines · ≈113,741 tokens  (marker; approximate: read from a rounded size label)",
			"shown bytes 0–0 of about 454,963",
			"100% of the original seen in the session, pieced from separate fetches of a source that may have changed",
			"continues toolu_w1, fetching the source again",
		}},
		{"markdown", func(b *bytes.Buffer, pm *Postmortem) error { return WriteMarkdown(b, pm) }, []string{
			"| at least 30,016 chars |",
			"shown chars 0–5,002 and 25,013–30,016 of at least 30,016 (the tail shown is the end of what the harness received, not of the output)",
			"original at least ? bytes · 30,016 chars · ? lines · ? tokens (marker; a lower bound: the output hit a cap before it was counted)",
			"(may understate what was cut: it counts only what was kept before the cap).",
			"| about 454,963 bytes |",
			"at most 33% of the original seen in the session",
			"continues toolu_w1, fetching the source again",
		}},
		{"html", func(b *bytes.Buffer, pm *Postmortem) error { return WriteHTML(b, pm) }, []string{
			"<dt>original</dt><dd>at least ? bytes · 30,016 chars · ? lines · ? tokens  (marker; a lower bound: the output hit a cap before it was counted)</dd>",
			"<dt>original</dt><dd>about 454,963 bytes · ? chars · ? lines · ≈113,741 tokens  (marker; approximate: read from a rounded size label)</dd>",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.render(&b, &pm); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("%s output lacks %q:\n%s", tt.name, w, b.String())
				}
			}
		})
	}
}

// TestJSONPrecision: the JSON contract carries the new fields with their
// names, and null for no precision.
func TestJSONPrecision(t *testing.T) {
	in := precisionSample()
	in.Calls = append(in.Calls, schema.ToolCall{SessionID: "sess-p", CallID: "toolu_none", Forensics: schema.Forensics{Original: schema.Original{Source: schema.SourceUnknown}}})
	pm := Build(in)
	var b bytes.Buffer
	if err := WriteJSON(&b, &pm); err != nil {
		t.Fatal(err)
	}
	var out struct {
		ToolCalls []map[string]any `json:"tool_calls"`
	}
	if err := json.Unmarshal(b.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		call                 int
		precision            any
		tail                 map[string]any
		tailIsEnd, refetched bool
		upperBound, mixed    bool
	}{
		{0, "lower_bound", map[string]any{"start": 25013.0, "end": 30016.0, "unit": "chars"}, false, false, true, false},
		{1, "approximate", map[string]any{"start": nil, "end": nil, "unit": ""}, false, false, false, false},
		{2, "exact", map[string]any{"start": nil, "end": nil, "unit": ""}, false, false, false, true},
		{3, "exact", map[string]any{"start": nil, "end": nil, "unit": ""}, false, true, false, true},
		{4, nil, map[string]any{"start": nil, "end": nil, "unit": ""}, false, false, false, false},
	}
	for _, tt := range tests {
		c := out.ToolCalls[tt.call]
		orig, _ := c["original"].(map[string]any)
		if p, ok := orig["precision"]; !ok || p != tt.precision {
			t.Errorf("call %d original.precision = %v (present %v), want %v", tt.call, p, ok, tt.precision)
		}
		tail, _ := c["shown_tail"].(map[string]any)
		for k, v := range tt.tail {
			if tail[k] != v {
				t.Errorf("call %d shown_tail.%s = %v, want %v", tt.call, k, tail[k], v)
			}
		}
		for key, want := range map[string]bool{"shown_tail_is_end": tt.tailIsEnd, "refetched_source": tt.refetched,
			"coverage_upper_bound": tt.upperBound, "coverage_mixed_versions": tt.mixed} {
			if c[key] != want {
				t.Errorf("call %d %s = %v, want %v", tt.call, key, c[key], want)
			}
		}
	}
}

// TestRenderUnknownCompleteness: a call of unknown kind that nothing shows
// cut (an image read) is not rendered "complete", and its unknown sizes are
// question marks, not zeros.
func TestRenderUnknownCompleteness(t *testing.T) {
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	img := schema.ToolCall{
		SessionID: "sess-u", CallID: "toolu_img", Tool: "Read", Timestamp: at, Arguments: `{"file_path":"/w/shot.png"}`,
		Forensics: schema.Forensics{Original: schema.Original{Source: schema.SourceUnknown}, Kind: schema.KindUnknown,
			Strategy: schema.StrategyNone, Detector: "generic.media_content"},
	}
	pm := Build(Input{Session: schema.Session{SessionID: "sess-u", Source: schema.HarnessClaudeCode, StartedAt: at, EndedAt: at, ToolCalls: 1},
		Calls: []schema.ToolCall{img}})
	for name, render := range map[string]func(*bytes.Buffer, *Postmortem) error{
		"text": func(b *bytes.Buffer, pm *Postmortem) error { return WriteText(b, pm) },
		"html": func(b *bytes.Buffer, pm *Postmortem) error { return WriteHTML(b, pm) },
	} {
		var b bytes.Buffer
		if err := render(&b, &pm); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, w := range []string{"unknown: nothing shows whether it was cut", "? bytes · ? chars · ? lines · ? tokens"} {
			if !strings.Contains(out, w) {
				t.Errorf("%s output lacks %q:\n%s", name, w, out)
			}
		}
		if strings.Contains(out, "0 bytes") {
			t.Errorf("%s output states a size of 0:\n%s", name, out)
		}
	}
}
