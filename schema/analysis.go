package schema

// Analysis says what session analysis a record reflects. Stores rank two
// writes of the same record by it (a record analysed over more of its
// session knows more), so that a poorer write can never replace a richer
// one. It travels with the record through every path (OTLP included) but is
// not part of the JSON contract.
type Analysis struct {
	// Done: session analysis filled the record (a call's follow-through, an
	// answer's verdict, a session's counts). A call as read is not done.
	Done bool
	// Partial: the analysis did not see the session from its first record
	// (a processor buffer restarted past its call limit or rebuilt after an
	// eviction), so it may contradict a complete one and must never replace it.
	Partial bool
	// Records is how many calls, answers and messages known to be no
	// answers (they called a tool) the analysis saw: it never falls as the
	// analysis sees more, even when a message taken for an answer turns out
	// to call a tool that never returns.
	Records int
}
