package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/collector/redact/redacttest"
	"github.com/ctxaudit/ctxaudit/internal/transcriptgen"
)

// `ingest --dry-run --format jsonl` prints records as the store would keep
// them: a built-in secret and one only a configured pattern knows, in the
// arguments, the output and the answer, appear nowhere in what it prints.
func TestDryRunIsRedacted(t *testing.T) {
	const acme = "acme_0123456789abcdef0123456789abcdef"
	const key = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123"
	dir := t.TempDir()
	s := transcriptgen.NewClaudeCode("5ec0e7c1-0000-4000-8000-00000000cf02", "2.1.6", 5, time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
	s.Assistant("msg_01Dry", 10, transcriptgen.ToolUse("toolu_01Dry", "Bash", transcriptgen.Obj{{"command", "ANTHROPIC_API_KEY=" + key + " deploy --key " + acme}}))
	s.Result("toolu_01Dry", "using "+acme+" and "+key, transcriptgen.Obj{{"stdout", "using " + acme}, {"stderr", ""}, {"interrupted", false}, {"isImage", false}})
	s.Assistant("msg_01Dry2", 10, transcriptgen.Text("Deployed with "+acme+" and "+key+"."))
	d := transcriptgen.NewDir(dir)
	s.Save(d)
	if err := d.Err(); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "ctxaudit.yaml")
	if err := os.WriteFile(cfg, []byte("redact_patterns:\n  - {name: acme, regex: 'acme_(?P<secret>[0-9a-f]{32})', keywords: [acme_]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, "ingest", "--config", cfg, "--dry-run", "--format", "jsonl", dir)
	if code != ExitOK {
		t.Fatalf("ingest --dry-run: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, `"call_id":"toolu_01Dry"`) || !strings.Contains(out, "[REDACTED]") {
		t.Fatalf("dry-run printed no redacted record of the call:\n%s", out)
	}
	if strings.Contains(out+errOut, "0123456789abcdef0123") || strings.Contains(out+errOut, key) || len(redacttest.Leaks(out+errOut)) > 0 {
		t.Fatalf("dry-run output holds a secret:\n%s%s", out, errOut)
	}
}
