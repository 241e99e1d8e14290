package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/internal/chtest"
	"github.com/ctxaudit/ctxaudit/internal/transcriptgen"
)

// redact_patterns in ctxaudit.yaml adds rules: a secret only the configured
// pattern knows is not stored by ingest (arguments, outputs or answers),
// and a bad pattern is a usage error naming the key.
func TestIngestRedactPatterns(t *testing.T) {
	const secret = "acme_0123456789abcdef0123456789abcdef"
	dir := t.TempDir()
	s := transcriptgen.NewClaudeCode("5ec0e7c1-0000-4000-8000-00000000cf01", "2.1.6", 5, time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
	s.Assistant("msg_01Acme", 10, transcriptgen.ToolUse("toolu_01Acme", "Bash", transcriptgen.Obj{{"command", "deploy --key " + secret}}))
	s.Result("toolu_01Acme", "using "+secret, transcriptgen.Obj{{"stdout", "using " + secret}, {"stderr", ""}, {"interrupted", false}, {"isImage", false}})
	s.Assistant("msg_01Acme2", 10, transcriptgen.Text("Deployed with "+secret+"."))
	d := transcriptgen.NewDir(dir)
	s.Save(d)
	if err := d.Err(); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "ctxaudit.yaml")
	if err := os.WriteFile(cfg, []byte("redact_patterns:\n  - {name: acme, regex: 'acme_(?P<secret>[0-9a-f]{32})', keywords: [acme_]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := chtest.Address(t)
	if code, out, errOut := run(t, "ingest", "--config", cfg, "--clickhouse", addr, "--store-content", "all", dir); code != ExitOK {
		t.Fatalf("ingest: exit %d\n%s%s", code, out, errOut)
	}
	st := chtest.OpenStore(t, addr)
	var stored string
	for _, q := range []string{"SELECT arrayStringConcat(groupArray(concat(arguments, target)), ' ') FROM DB.tool_calls",
		"SELECT arrayStringConcat(groupArray(text), ' ') FROM DB.tool_outputs", "SELECT arrayStringConcat(groupArray(text), ' ') FROM DB.answers"} {
		var v string
		if err := st.Conn().QueryRow(context.Background(), strings.ReplaceAll(q, "DB.", st.Database()+".")).Scan(&v); err != nil {
			t.Fatal(err)
		}
		stored += v + "\n"
	}
	if strings.Contains(stored, "0123456789abcdef0123") || strings.Count(stored, "acme_[REDACTED]") < 3 {
		t.Fatalf("stored text:\n%s", stored)
	}

	bad := filepath.Join(t.TempDir(), "ctxaudit.yaml")
	if err := os.WriteFile(bad, []byte("redact_patterns:\n  - {name: broken, regex: '('}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := run(t, "ingest", "--config", bad, "--dry-run", dir); code != ExitUsage || !strings.Contains(errOut, "redact_patterns") || !strings.Contains(errOut, "broken") {
		t.Fatalf("bad pattern: exit %d, %q; want a usage error naming redact_patterns and the pattern", code, errOut)
	}
}
