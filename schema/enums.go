package schema

import "encoding/json"

// Harness names the agent harness (or tool server) that produced a tool call.
// The values are stored verbatim in ClickHouse and used as dashboard filters.
type Harness string

const (
	HarnessClaudeCode Harness = "claude_code"
	HarnessCodex      Harness = "codex"
	HarnessPi         Harness = "pi"
	HarnessGeminiCLI  Harness = "gemini_cli"
	HarnessOpenCode   Harness = "opencode"
	HarnessOpenHands  Harness = "openhands"
	HarnessOpenClaw   Harness = "openclaw"
	HarnessMCP        Harness = "mcp"
	HarnessGeneric    Harness = "generic"
)

// Harnesses lists every known harness, in a stable order.
var Harnesses = []Harness{
	HarnessClaudeCode, HarnessCodex, HarnessPi, HarnessGeminiCLI, HarnessOpenCode,
	HarnessOpenHands, HarnessOpenClaw, HarnessMCP, HarnessGeneric,
}

// TruncationKind says whether, and how visibly, an output was cut (docs/design.md §4.4).
type TruncationKind string

const (
	// KindNone: the model saw everything the call asked for.
	KindNone TruncationKind = "none"
	// KindExplicit: cut, and a notice in the context says so.
	KindExplicit TruncationKind = "explicit"
	// KindSilent: cut, and nothing in the context says so.
	KindSilent TruncationKind = "silent"
	// KindSuspected: the original is unknown but the context has the shape of a cut.
	KindSuspected TruncationKind = "suspected"
	// KindUnknown: nothing can be said either way.
	KindUnknown TruncationKind = "unknown"
)

// TruncationKinds lists the kinds in the order of the ClickHouse Enum8.
var TruncationKinds = []TruncationKind{KindNone, KindExplicit, KindSilent, KindSuspected, KindUnknown}

// Strategy is how the harness reduced the output (docs/design.md §4.5).
type Strategy string

const (
	StrategyNone        Strategy = "none"
	StrategyHead        Strategy = "head"
	StrategyTail        Strategy = "tail"
	StrategyHeadTail    Strategy = "head_tail"
	StrategySummary     Strategy = "summary"
	StrategySpillToFile Strategy = "spill_to_file"
	StrategyRefused     Strategy = "refused"
	StrategyCleared     Strategy = "cleared"
	StrategyPaginated   Strategy = "paginated"
	// StrategyResized: an image sent at fewer pixels than the original.
	StrategyResized Strategy = "resized"
)

// Strategies lists the strategies in the order of the ClickHouse Enum8.
var Strategies = []Strategy{
	StrategyNone, StrategyHead, StrategyTail, StrategyHeadTail, StrategySummary,
	StrategySpillToFile, StrategyRefused, StrategyCleared, StrategyPaginated, StrategyResized,
}

// OriginalSource says where the original size came from (docs/design.md §4.2).
type OriginalSource string

const (
	SourceHarnessMetadata OriginalSource = "harness_metadata"
	SourceMarker          OriginalSource = "marker"
	SourceSavedFile       OriginalSource = "saved_file"
	SourceOTelAttribute   OriginalSource = "otel_attribute"
	SourceSDK             OriginalSource = "sdk"
	SourceEstimate        OriginalSource = "estimate"
	SourceUnknown         OriginalSource = "unknown"
)

// OriginalSources lists the sources in the order of the ClickHouse Enum8.
var OriginalSources = []OriginalSource{
	SourceUnknown, SourceHarnessMetadata, SourceMarker, SourceSavedFile,
	SourceOTelAttribute, SourceSDK, SourceEstimate,
}

// Precision says how exact an original size is (docs/design.md §4.1). The empty value
// means no original size is known; it is null in JSON and 'unknown' in
// ClickHouse (as are rows written before sizes carried a precision).
type Precision string

const (
	PrecisionNone Precision = ""
	// PrecisionExact: measured or stated as an exact count.
	PrecisionExact Precision = "exact"
	// PrecisionApproximate: read from a rounded label ("444.3KB"); the
	// figure is the label's value, the truth within half its last digit.
	PrecisionApproximate Precision = "approximate"
	// PrecisionLowerBound: the output hit a cap before it was measured;
	// the true size is at least the figure.
	PrecisionLowerBound Precision = "lower_bound"
)

// Precisions lists the known precisions in the order of the ClickHouse
// Enum8 (after 'unknown' = 0).
var Precisions = []Precision{PrecisionExact, PrecisionApproximate, PrecisionLowerBound}

// MarshalJSON renders the empty precision as null. The known precisions
// need no escaping and are written directly: every record stored or sent
// carries one.
func (p Precision) MarshalJSON() ([]byte, error) {
	switch p {
	case PrecisionNone:
		return []byte("null"), nil
	case PrecisionExact, PrecisionApproximate, PrecisionLowerBound:
		return append(append(append(make([]byte, 0, len(p)+2), '"'), p...), '"'), nil
	}
	return json.Marshal(string(p))
}

// UnmarshalJSON accepts a string or null.
func (p *Precision) UnmarshalJSON(b []byte) error {
	var s *string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*p = PrecisionNone
	if s != nil {
		*p = Precision(*s)
	}
	return nil
}

// Weaker reports whether p says less than q: lower_bound < approximate <
// exact, and none says least. Merging two figures keeps the weaker
// precision, so a record never claims more exactness than its parts have.
func (p Precision) Weaker(q Precision) bool { return p.rank() < q.rank() }

func (p Precision) rank() int {
	switch p {
	case PrecisionExact:
		return 3
	case PrecisionApproximate:
		return 2
	case PrecisionLowerBound:
		return 1
	}
	return 0
}

// Unit is the unit of a shown range and its total.
type Unit string

const (
	UnitNone    Unit = ""
	UnitBytes   Unit = "bytes"
	UnitChars   Unit = "chars"
	UnitLines   Unit = "lines"
	UnitTokens  Unit = "tokens"
	UnitItems   Unit = "items"
	UnitMatches Unit = "matches"
	UnitFiles   Unit = "files"
)

// Risk grades an answer by the completeness of its inputs (docs/design.md §5.5).
type Risk string

const (
	RiskNone   Risk = "none"
	RiskLow    Risk = "low"
	RiskMedium Risk = "medium"
	RiskHigh   Risk = "high"
)

// Risks lists the grades from least to most severe (the ClickHouse Enum8 order,
// so max(risk) in SQL is the worst).
var Risks = []Risk{RiskNone, RiskLow, RiskMedium, RiskHigh}

// Severity orders risks: none < low < medium < high.
func (r Risk) Severity() int {
	for i, x := range Risks {
		if x == r {
			return i
		}
	}
	return 0
}

// Reason codes explain a risk verdict; they are machine words, stable across releases.
const (
	ReasonAbsenceClaimOnPartialInput = "absence_claim_on_partial_input"
	ReasonSilentTruncation           = "silent_truncation"
	ReasonExplicitTruncation         = "explicit_truncation"
	ReasonSuspectedTruncation        = "suspected_truncation"
	ReasonNotFollowedUp              = "not_followed_up"
	ReasonMarkerUnderstated          = "marker_understated"
	ReasonRecovered                  = "recovered_before_answer"
	ReasonCleared                    = "content_cleared"
	ReasonRefused                    = "output_refused"
)
