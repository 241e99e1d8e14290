package faultsuite

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/ctxaudit/ctxaudit/collector/redact"
	"github.com/ctxaudit/ctxaudit/collector/redact/redacttest"
	"github.com/ctxaudit/ctxaudit/examples/harness/agentsim"
	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/internal/transcriptgen"
	"github.com/ctxaudit/ctxaudit/schema/chstore"
)

var secretStart = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// writeSecretSession writes a Claude Code session below root in which every
// corpus secret appears in a Bash command (tool_calls.arguments and
// target), in the command's output (tool_outputs), in a web fetch URL, and
// in the final answer (answers.text).
func writeSecretSession(t *testing.T, root, sid string, corpus []redacttest.Secret) {
	t.Helper()
	s := transcriptgen.NewClaudeCode(sid, "2.1.6", 77, secretStart)
	s.Prompt("Show me how the services are configured.")
	var all []string
	for i, sec := range corpus {
		id := fmt.Sprintf("toolu_01Secret%014d", i)
		s.Assistant(fmt.Sprintf("msg_01Secret%014d", i), 20, transcriptgen.Text("Checking "+sec.Provider+"."),
			transcriptgen.ToolUse(id, "Bash", transcriptgen.Obj{{"command", "printf '%s\\n' " + sec.Text}, {"description", "Show the " + sec.Provider + " setting"}}))
		s.Result(id, sec.Text, transcriptgen.Obj{{"stdout", sec.Text}, {"stderr", ""}, {"interrupted", false}, {"isImage", false}})
		all = append(all, sec.Text)
	}
	url := "https://hooks.example.com/notify?token=" + corpus[0].Secret
	s.Assistant("msg_01SecretFetch000000000", 20, transcriptgen.ToolUse("toolu_01SecretFetch00000000", "WebFetch",
		transcriptgen.Obj{{"url", url}, {"prompt", "What does it say?"}}))
	s.Result("toolu_01SecretFetch00000000", "It says ok.", transcriptgen.Obj{{"bytes", 2}, {"code", 200}, {"codeText", "OK"}, {"result", "It says ok."}, {"durationMs", 10}, {"url", url}})
	s.Assistant("msg_01SecretAnswer00000000", 200, transcriptgen.Text("The configuration uses:\n"+strings.Join(all, "\n")))
	d := transcriptgen.NewDir(root)
	s.Save(d)
	if err := d.Err(); err != nil {
		t.Fatal(err)
	}
}

// sendSecretSpans sends one OTLP session whose tool arguments, results and
// answer carry every corpus secret.
func sendSecretSpans(t *testing.T, httpPort int, sid string, corpus []redacttest.Secret) {
	t.Helper()
	sess := agentsim.Session{ID: sid, Source: "generic", Model: "gpt-5"}
	var all []string
	for i, sec := range corpus {
		args, _ := json.Marshal(map[string]string{"command": sec.Text})
		sess.Calls = append(sess.Calls, agentsim.Call{ID: fmt.Sprintf("otlp-secret-%02d", i), Tool: "shell", Args: string(args),
			Attrs: []attribute.KeyValue{attribute.String("gen_ai.tool.call.result", sec.Text), attribute.String("ctxaudit.target", sec.Text)}})
		all = append(all, sec.Text)
	}
	sess.Answer = "Found: " + strings.Join(all, " ")
	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(fmt.Sprintf("127.0.0.1:%d", httpPort)), otlptracehttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	agentsim.EmitTraces(ctx, tp, sess, secretStart)
	if err := exp.ExportSpans(ctx, rec.Ended()); err != nil {
		t.Fatalf("OTLP export: %v", err)
	}
	_ = exp.Shutdown(ctx)
}

// scanTables reads every String, Nullable(String) and Array(String) column
// of every table of the store's database — every row version, not only the
// latest — and fails the test for each corpus secret found. It returns the
// number of values that carry the redaction placeholder.
func scanTables(t *testing.T, s *chstore.Store) (redacted int) {
	t.Helper()
	ctx := context.Background()
	rows, err := s.Conn().Query(ctx, "SELECT table, name, type FROM system.columns WHERE database = ? ORDER BY table, name", s.Database())
	if err != nil {
		t.Fatal(err)
	}
	type col struct{ table, name, typ string }
	var cols []col
	for rows.Next() {
		var c col
		if err := rows.Scan(&c.table, &c.name, &c.typ); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(c.typ, "String") {
			cols = append(cols, c)
		}
	}
	rows.Close()
	if len(cols) < 20 {
		t.Fatalf("only %d text columns in %s", len(cols), s.Database())
	}
	for _, c := range cols {
		expr := "toString(" + c.name + ")"
		switch {
		case strings.HasPrefix(c.typ, "Array(Array("):
			expr = "arrayStringConcat(arrayMap(x -> arrayStringConcat(x, ' '), " + c.name + "), '\\n')"
		case strings.HasPrefix(c.typ, "Array("):
			expr = "arrayStringConcat(" + c.name + ", '\\n')"
		}
		vals, err := s.Conn().Query(ctx, "SELECT "+expr+" FROM "+s.Database()+"."+c.table)
		if err != nil {
			t.Fatalf("scan %s.%s: %v", c.table, c.name, err)
		}
		for vals.Next() {
			var v string
			if err := vals.Scan(&v); err != nil {
				t.Fatal(err)
			}
			if leaks := redacttest.Leaks(v); len(leaks) > 0 {
				t.Errorf("%s.%s.%s stores secrets of %v: %.200q", s.Database(), c.table, c.name, leaks, v)
			}
			if strings.Contains(v, redact.Placeholder) {
				redacted++
			}
		}
		vals.Close()
	}
	return redacted
}

// scanFiles fails the test for each corpus secret found in a file below dir,
// and returns how many files hold marker (proof the scan saw real data).
func scanFiles(t *testing.T, dir, marker string) (withMarker int) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if leaks := redacttest.Leaks(string(b)); len(leaks) > 0 {
			t.Errorf("%s holds secrets of %v", path, leaks)
		}
		if strings.Contains(string(b), marker) {
			withMarker++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return withMarker
}

func count(t *testing.T, s *chstore.Store, query string, args ...any) uint64 {
	t.Helper()
	var n uint64
	if err := s.Conn().QueryRow(context.Background(), strings.ReplaceAll(query, "DB.", s.Database()+"."), args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// TestNoSecretStored ingests the secret corpus through `ctxaudit ingest
// --store-content all` and through the collector (a transcript tailed by
// agenttranscripts and an OTLP session, with a persistent sending queue),
// then reads every text column of every table and every file of the
// collector's storage directory: none of the secrets may be there.
func TestNoSecretStored(t *testing.T) {
	corpus := redacttest.Corpus()

	// The CLI path.
	cliRoot := t.TempDir()
	writeSecretSession(t, cliRoot, "5ec0e7c1-0000-4000-8000-000000000001", corpus)
	cliAddr := chtest.Address(t)
	if out, err := runCLI(t, "ingest", "--clickhouse", cliAddr, "--store-content", "all", cliRoot); err != nil {
		t.Fatalf("ingest: %v\n%s", err, out)
	}
	cli := chtest.OpenStore(t, cliAddr)
	if n := count(t, cli, "SELECT count() FROM DB.tool_calls"); n != uint64(len(corpus)+1) {
		t.Fatalf("CLI stored %d tool calls, want %d", n, len(corpus)+1)
	}
	if n := count(t, cli, "SELECT count() FROM DB.tool_outputs"); n < uint64(len(corpus)) {
		t.Fatalf("CLI stored %d tool outputs, want at least %d", n, len(corpus))
	}
	redacted := scanTables(t, cli)
	t.Logf("CLI: %d stored values carry %s", redacted, redact.Placeholder)
	if redacted < 3*len(corpus) {
		t.Errorf("only %d redacted values in the CLI's tables; the corpus puts secrets in arguments, outputs and the answer", redacted)
	}

	// The collector path, with a persistent queue.
	colRoot, state := t.TempDir(), t.TempDir()
	const transcriptSID, otlpSID = "5ec0e7c1-0000-4000-8000-000000000002", "secret-otlp-session"
	colAddr := chtest.Address(t)
	httpPort, health := freePort(t), freePort(t)
	c := startCollector(t, fmt.Sprintf(`
extensions:
  health_check: {endpoint: "127.0.0.1:%d"}
  file_storage: {directory: %q}
receivers:
  agenttranscripts:
    include: [%q]
    storage: file_storage
    poll_interval: 100ms
    session_idle: 300ms
  otlp:
    protocols:
      http: {endpoint: "127.0.0.1:%d"}
processors:
  ctxaudit: {session_idle: 300ms}
exporters:
  ctxaudit_clickhouse:
    endpoint: %s
    retry_on_failure: {initial_interval: 100ms, max_interval: 1s}
    sending_queue: {enabled: true, storage: file_storage}
service:
  extensions: [health_check, file_storage]
  pipelines:
    traces: {receivers: [agenttranscripts, otlp], processors: [ctxaudit], exporters: [ctxaudit_clickhouse]}
  telemetry:
    metrics: {level: none}
`, health, state, filepath.Join(colRoot, "**", "*.jsonl"), httpPort, colAddr), health)
	writeSecretSession(t, colRoot, transcriptSID, corpus)
	sendSecretSpans(t, httpPort, otlpSID, corpus)
	col := chtest.OpenStore(t, colAddr)
	// The state files are scanned while the collector runs too: the queue
	// deletes what it exported and bbolt reuses freed pages, so the spans'
	// bytes are surely on disk only while they are queued or held.
	onDisk := 0
	waitFor(t, "collector rows", 2*time.Minute, func() (bool, string) {
		onDisk += scanFiles(t, state, otlpSID)
		if count(t, col, "SELECT count() FROM system.tables WHERE database = ? AND name = 'sessions'", col.Database()) == 0 {
			return false, "no schema yet"
		}
		calls := count(t, col, "SELECT uniqExact(session_id, call_id) FROM DB.tool_calls")
		answers := count(t, col, "SELECT uniqExact(session_id, message_id) FROM DB.answers")
		sessions := count(t, col, "SELECT uniqExact(session_id) FROM DB.sessions")
		state := fmt.Sprintf("calls=%d answers=%d sessions=%d", calls, answers, sessions)
		return calls == uint64(2*len(corpus)+1) && answers >= 2 && sessions == 2, state
	})
	c.stop()
	redacted = scanTables(t, col)
	t.Logf("collector: %d stored values carry %s", redacted, redact.Placeholder)
	if redacted < 2*len(corpus) {
		t.Errorf("only %d redacted values in the collector's tables", redacted)
	}
	// The queue wrote the spans to disk (the session id is in the file),
	// but none of their secrets.
	if onDisk += scanFiles(t, state, otlpSID); onDisk == 0 {
		t.Errorf("no scan found %q in a file below %s: the persistent queue was not used, so the scan proves nothing", otlpSID, state)
	}
}
