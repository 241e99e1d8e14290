// Package forensics decides, for one tool result, how complete the text that
// entered the model's context was: original versus context sizes, whether and
// how it was truncated, and whether the model was told where, why and how to
// continue (docs/design.md §4).
//
// It is pure: no database, collector or file-system imports. Saved files are
// reached only through Input.ReadSaved, which the caller provides.
//
// # How a verdict is reached
//
// Detect measures the context, then runs the rules of the result's harness in
// order; the first rule that recognises a notice or a metadata shape decides
// the kind, strategy, shown range, reason and disclosure. Original sizes come
// from the best source available, field by field: a readable saved file, a
// verbatim original, ctxaudit.* OTel attributes, harness metadata, SDK
// metadata, and last the notice itself. With no rule matching, a known
// original larger than the context is a silent cut; a context exactly at a
// known cap is suspected; anything else is complete, and its original is the
// context. ctxaudit.* attributes, when present, override the inferred verdict.
// A call that asked for part of its target (offset/limit, start_index,
// max_length, head_limit, tail_lines) and got it is a partial view by
// request, not a truncation.
//
// # Harnesses and their unit quirks
//
// Claude Code: notices count JavaScript string length (UTF-16 units), so the
// "<persisted-output>" size label ("Output too large (83.7KB)") is about
// chars/1024, not bytes — but Bash's and PowerShell's is the saved file's
// size (persistedOutputSize), bytes/1024; the exact original is in
// toolUseResult or the saved file. Read refusals count tokens or bytes, Bash keeps the first 30,000
// chars and counts the dropped lines, errors keep 5,000+5,000 chars, Grep
// pages at head_limit 250, Glob stops at 100 files, background tasks keep
// the tail, Read stops at 2,000 lines silently (only toolUseResult.file
// shows it), and WebFetch silently hands the model a second model's digest
// of at most 100,000 chars of a page's text, whose size nothing gives
// (toolUseResult.bytes is the HTTP body's, not the text's: a cut is only
// possible, kind unknown) — until 2.1.328, which notes the page text's
// length, the part read and the offset to read on from ("[WebFetch note:
// …]"), so that there an answer without a note covers the page. What changed by version is in
// claudeCodeVersions. Its tool_result_size_bytes log attribute is the size of
// what entered the context, never the original, so detection ignores it.
//
// # Precision
//
// Every original carries a precision. Counts measured or stated are exact;
// a size label ("444.3KB") is approximate; a count made after the harness
// stopped reading at a cap is a lower bound — Claude Code's Bash failure
// path formats its error from the first 30,000 chars received, so a notice
// whose kept text plus dropped count sits at that cap says "at least", is
// flagged as understated, and its kept tail is not the end of the output
// (ShownTailIsEnd false). Merged from several sources, an original is only
// as precise as its least precise figure. A head+tail cut records the head
// as Shown and the tail as ShownTail. A continuation that fetches its
// source again (WebFetch offset, MCP fetch start_index) is RefetchedSource.
//
// Codex CLI: output is wrapped in "Exit code/Wall time/Output:" or unified
// exec headers that are not content; three generations of notices count
// lines ("omitted O of T lines"), bytes ("truncated to fit N bytes") or
// tokens/chars/bytes ("…N tokens truncated…"), and token counts are
// ceil(bytes/4). "Original token count" alone does not mean a cut. The
// wrapper's exit status (CodexExitCode) is the only sign a call failed.
//
// pi: read and bash stop at 2,000 lines or 50 KiB (read keeps the head and
// pages with offset=, bash keeps the tail and saves the full output);
// details.truncation carries exact totals in lines and bytes, except that
// grep, find and ls count them after their item limit (and grep's 500-char
// line cut), which makes totalBytes a lower bound when one was reached;
// sizes print in base-1024 B/KB/MB with one decimal.
//
// MCP fetch server: pages of max_length chars (default 5,000) continued with
// start_index; the original length is never stated. GitHub MCP get_job_logs
// returns the last tail_lines lines, and its original_length counts lines.
//
// Gemini CLI: outputs over 40,000 chars keep 20 % head and 80 % tail with
// comma-grouped counts and a saved file; read_file pages by lines.
//
// OpenCode: 2,000 lines or 50 KiB, head or tail, counted in lines or bytes,
// with a saved file. OpenHands: head and tail halves, or a clip at 16,000
// chars, with notices that carry no counts. OpenClaw (on pi): head and tail
// under a header giving the original in chars and UTF-8 bytes.
//
// Generic: any JSON result (or Input.Metadata) may report truncated,
// original_size_bytes, shown, next_page and the like, and OTel sources may
// set the ctxaudit.output.* attributes (the Attr constants), so any harness
// can report exactly instead of being guessed at.
package forensics
