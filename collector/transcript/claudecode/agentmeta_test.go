package claudecode

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxaudit/ctxaudit/collector/transcript"
	"github.com/ctxaudit/ctxaudit/collector/transcript/transcripttest"
	"github.com/ctxaudit/ctxaudit/schema"
)

const labAgentMeta = `{"agentType":"general-purpose","isBuiltIn":true,"description":"lab sub-agent","toolUseId":"toolu_lab000002","spawnDepth":1,"requestShape":"foreground","requestNonInteractive":true,"model":"claude-opus-5-5","pickedEffortModel":"claude-opus-5-5","finished":true}`

func TestParseAgentMeta(t *testing.T) {
	// The lab recording's file, as Claude Code 2.1.328 wrote it.
	rec, err := os.ReadFile(filepath.Join(transcripttest.LabDir(t), "claude-code@2.1.328", "subagent-bash-over-cap", "transcript",
		"-tmp-ctxaudit-lab-0000000000-home-work", "00000000-0000-4000-8000-000000000001", "subagents", "agent-a0000000000000001.meta.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in   string
		want string
		bad  bool
	}{
		{in: string(rec), want: "toolu_lab000002"},
		{in: labAgentMeta + "\n", want: "toolu_lab000002"},
		{in: `{"agentType":"Explore"}`, want: ""}, // names no call: no error
		{in: `{}`, want: ""},
		{in: `{"toolUseId":"a","toolUseId":"a"}`, want: "a"},
		{in: `{"toolUseId":"t\u0031"}`, want: "t1"},
		{in: `{"toolUseId":"a","toolUseId":"b"}`, bad: true},
		{in: `{"toolUseId":""}`, bad: true},
		{in: `{"toolUseId":null}`, bad: true},
		{in: `{"toolUseId":["a"]}`, bad: true},
		{in: labAgentMeta[:len(labAgentMeta)/2], bad: true}, // cut off while written
		{in: labAgentMeta + labAgentMeta, bad: true},
		{in: `["toolu_lab000002"]`, bad: true},
		{in: `"toolu_lab000002"`, bad: true},
		{in: ``, bad: true},
		{in: `{"toolUseId":"a","x":[1,}`, bad: true},
		{in: `{"toolUseId":"a","pad":"` + strings.Repeat("x", MaxAgentMetaBytes) + `"}`, bad: true},
	} {
		m, err := ParseAgentMeta([]byte(tc.in))
		short := tc.in
		if len(short) > 60 {
			short = short[:60] + "…"
		}
		switch {
		case tc.bad && !errors.Is(err, ErrBadAgentMeta):
			t.Errorf("%q: %+v, %v; want ErrBadAgentMeta", short, m, err)
		case !tc.bad && (err != nil || m.ToolUseID != tc.want):
			t.Errorf("%q: %+v, %v; want %q", short, m, err, tc.want)
		case tc.bad && m != (AgentMeta{}):
			t.Errorf("%q: a bad file names %+v", short, m)
		}
	}
}

// FuzzParseAgentMeta: any content is parsed without panicking; what is
// accepted is one JSON object, and the id read is the one encoding/json
// reads from it.
func FuzzParseAgentMeta(f *testing.F) {
	f.Add([]byte(labAgentMeta))
	f.Add([]byte(`{"toolUseId":"a","toolUseId":"b"}`))
	f.Add([]byte(`{"toolUseId":"\ud800x"}`))
	f.Add([]byte(` {"toolUseId":"a"} `))
	f.Add([]byte(`{"toolUseId":1e400}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseAgentMeta(data)
		if err != nil {
			if !errors.Is(err, ErrBadAgentMeta) || m != (AgentMeta{}) {
				t.Fatalf("error %v with %+v", err, m)
			}
			return
		}
		var obj map[string]json.RawMessage
		if jerr := json.Unmarshal(data, &obj); jerr != nil {
			t.Fatalf("accepted %q, which encoding/json refuses: %v", data, jerr)
		}
		raw, has := obj["toolUseId"]
		if !has {
			if m.ToolUseID != "" {
				t.Fatalf("%q: read %q from no toolUseId", data, m.ToolUseID)
			}
			return
		}
		var id string
		if jerr := json.Unmarshal(raw, &id); jerr != nil || id != m.ToolUseID {
			t.Fatalf("%q: read %q, encoding/json reads %q (%v)", data, m.ToolUseID, id, jerr)
		}
	})
}

// A call with no result is named, with its turn, beside its unpaired skip:
// the main thread's Agent call of the reproduction in testdata/repro.
func TestUnpairedCallKeepsItsTurn(t *testing.T) {
	main := filepath.Join(filepath.Dir(transcripttest.LabDir(t)), "repro", "claude-code@2.1.328", "agent-unfinished", "transcript",
		"-tmp-ctxaudit-lab-0000000000-home-work", "00000000-0000-4000-8000-000000000001.jsonl")
	rec, _ := transcripttest.ParseFile(t, main, func(o transcript.Options) transcript.Parser { return New(o) }, transcript.Options{})
	if len(rec.Calls) != 0 || len(rec.Unpaired) != 1 || rec.SkipReasons()[transcript.SkipUnpairedToolUse] != 1 {
		t.Fatalf("calls %d, unpaired %+v, skips %v", len(rec.Calls), rec.Unpaired, rec.SkipReasons())
	}
	u := rec.Unpaired[0]
	want := transcript.Unpaired{SessionID: "00000000-0000-4000-8000-000000000001", CallID: "toolu_lab000002", Tool: "Agent",
		Turn: schema.KnownTurn(0), Line: 2}
	if *u != want {
		t.Errorf("unpaired %+v, want %+v", *u, want)
	}

	// Evicted for want of room, a call is named too; a sub-agent's call has
	// no session turn.
	p := New(transcript.Options{MaxPending: 1})
	r := &transcripttest.Recorder{}
	p.Feed(1, []byte(`{"type":"user","isSidechain":true,"agentId":"a1","sessionId":"s","message":{"role":"user","content":"go"}}`), r.Emit)
	p.Feed(2, []byte(`{"type":"assistant","isSidechain":true,"agentId":"a1","sessionId":"s","message":{"id":"m","content":[{"type":"tool_use","id":"t1","name":"Read","input":{}},{"type":"tool_use","id":"t2","name":"Read","input":{}}]}}`), r.Emit)
	if len(r.Unpaired) != 1 || r.Unpaired[0].CallID != "t1" || r.Unpaired[0].Turn.Known || !r.Unpaired[0].Sidechain || r.Unpaired[0].AgentID != "a1" {
		t.Errorf("evicted: %+v", r.Unpaired)
	}
}
