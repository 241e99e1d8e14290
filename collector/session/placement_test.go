package session

import (
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/ctxaudit/ctxaudit/collector/transcript"
	"github.com/ctxaudit/ctxaudit/collector/transcript/claudecode"
	"github.com/ctxaudit/ctxaudit/collector/transcript/transcripttest"
	"github.com/ctxaudit/ctxaudit/schema"
)

// labAgentRecords parses the lab's recorded sub-agent session (Claude Code
// 2.1.328, subagent-bash-over-cap): the main thread, then the sub-agent.
func labAgentRecords(t *testing.T) []*transcripttest.Recorder {
	t.Helper()
	sess := filepath.Join(transcripttest.LabDir(t), "claude-code@2.1.328", "subagent-bash-over-cap", "transcript",
		"-tmp-ctxaudit-lab-0000000000-home-work", "00000000-0000-4000-8000-000000000001")
	var out []*transcripttest.Recorder
	for _, f := range []string{sess + ".jsonl", filepath.Join(sess, "subagents", "agent-a0000000000000001.jsonl")} {
		rec, _ := transcripttest.ParseFile(t, f, func(o transcript.Options) transcript.Parser { return claudecode.New(o) },
			transcript.Options{ReadSaved: transcripttest.ReadDir(filepath.Join(sess, "tool-results"))})
		out = append(out, rec)
	}
	return out
}

// build gives b the records; withResult keeps what the Agent call's result
// says of its sub-agent (agentId), as read, or drops it, as from a result
// that does not name the agent (Claude Code's synthetic result of an
// interrupted call).
func build(b *Builder, recs []*transcripttest.Recorder, withResult bool) {
	for _, rec := range recs {
		for _, c := range rec.Calls {
			spawned := c.SpawnedAgentID
			if !withResult {
				spawned = ""
			}
			b.AddCall(c.Call, spawned, true)
		}
		for _, a := range rec.Answers {
			b.AddAnswer(a.Answer)
		}
		for _, u := range rec.Unpaired {
			b.Unpaired(u)
		}
	}
}

// A sub-agent placed by its metadata (agent-<id>.meta.json toolUseId) gets
// what one placed by its spawning call's result gets, field for field: its
// calls in the call's turn, and the main thread's answer resting on them.
func TestMetaPlacesAsTheResultDoes(t *testing.T) {
	recs := labAgentRecords(t)
	meta := schema.Session{SessionID: "00000000-0000-4000-8000-000000000001"}

	byResult := New(meta.SessionID)
	build(byResult, recs, true)
	want := byResult.Analyze(meta)

	byMeta := New(meta.SessionID)
	build(byMeta, recs, false)
	byMeta.SpawnedBy("a0000000000000001", "toolu_lab000002")
	got := byMeta.Analyze(meta)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("placed by the metadata:\n%+v\nby the result:\n%+v", got, want)
	}
	i := slices.IndexFunc(got.Answers, func(a schema.Answer) bool { return a.MessageID == "msg_lab000006" })
	if i < 0 || !slices.Contains(got.Answers[i].InputCallIDs, "toolu_lab000004") {
		t.Fatalf("main answer %+v, want the sub-agent's Bash among its inputs", got.Answers)
	}

	// Neither: the sub-agent's calls are nobody's turn's, and no main-thread
	// answer rests on them.
	neither := New(meta.SessionID)
	build(neither, recs, false)
	res := neither.Analyze(meta)
	j := slices.IndexFunc(res.Calls, func(c schema.ToolCall) bool { return c.CallID == "toolu_lab000004" })
	k := slices.IndexFunc(res.Answers, func(a schema.Answer) bool { return a.MessageID == "msg_lab000006" })
	if res.Calls[j].Turn.Known || slices.Contains(res.Answers[k].InputCallIDs, "toolu_lab000004") {
		t.Fatalf("unplaced sub-agent call %+v rests under %+v", res.Calls[j], res.Answers[k])
	}
}

// Which call places a sub-agent, and when the turn stays unknown.
func TestSpawnPlacementRules(t *testing.T) {
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	sub := func(b *Builder, agent string) schema.ToolCall {
		c := call("side-"+agent, at.Add(time.Minute), false, `{}`)
		c.Sidechain, c.AgentID = true, agent
		return b.AddCall(c, "", true)
	}
	mainCall := func(id string, turn int) schema.ToolCall {
		c := call(id, at, false, `{}`)
		c.Turn = schema.KnownTurn(turn)
		return c
	}
	turnOf := func(b *Builder, agent string) schema.Turn {
		t.Helper()
		calls, _ := b.Records()
		i := slices.IndexFunc(calls, func(c schema.ToolCall) bool { return c.CallID == "side-"+agent })
		c := calls[i]
		transcript.PlaceCall(&c, b.placement())
		return c.Turn
	}
	for _, tc := range []struct {
		name  string
		setup func(b *Builder)
		want  schema.Turn
	}{
		{"metadata names a completed main-thread call", func(b *Builder) {
			b.AddCall(mainCall("task", 2), "", true)
			b.SpawnedBy("ag", "task")
		}, schema.KnownTurn(2)},
		{"metadata names a main-thread call without its result", func(b *Builder) {
			b.Unpaired(&transcript.Unpaired{CallID: "task", Turn: schema.KnownTurn(1)})
			b.SpawnedBy("ag", "task")
		}, schema.KnownTurn(1)},
		{"the metadata comes before the call", func(b *Builder) {
			b.SpawnedBy("ag", "task")
			b.Unpaired(&transcript.Unpaired{CallID: "task", Turn: schema.KnownTurn(1)})
		}, schema.KnownTurn(1)},
		{"metadata names a sub-agent's call", func(b *Builder) {
			c := mainCall("task", 2)
			c.Sidechain, c.AgentID = true, "other"
			b.AddCall(c, "", true)
			b.Unpaired(&transcript.Unpaired{CallID: "task2", Turn: schema.KnownTurn(2), Sidechain: true, AgentID: "other"})
			b.SpawnedBy("ag", "task")
			b.SpawnedBy("ag2", "task2")
		}, schema.Turn{}},
		{"metadata names no call of the session", func(b *Builder) {
			b.AddCall(mainCall("task", 2), "", true)
			b.SpawnedBy("ag", "toolu_elsewhere")
		}, schema.Turn{}},
		{"result and metadata name one call", func(b *Builder) {
			b.AddCall(mainCall("task", 3), "ag", true)
			b.SpawnedBy("ag", "task")
		}, schema.KnownTurn(3)},
		{"result and metadata name calls of one turn", func(b *Builder) {
			b.AddCall(mainCall("task", 3), "ag", true)
			b.AddCall(mainCall("task-b", 3), "", true)
			b.SpawnedBy("ag", "task-b")
		}, schema.KnownTurn(3)},
		{"result and metadata name calls of different turns", func(b *Builder) {
			b.AddCall(mainCall("task", 3), "ag", true)
			b.AddCall(mainCall("task-b", 1), "", true)
			b.SpawnedBy("ag", "task-b")
		}, schema.Turn{}},
		{"the metadata no longer names the call", func(b *Builder) {
			b.AddCall(mainCall("task", 2), "", true)
			b.SpawnedBy("ag", "task")
			b.SpawnedBy("ag", "")
		}, schema.Turn{}},
		{"a result placed, the metadata unusable", func(b *Builder) {
			b.AddCall(mainCall("task", 2), "ag", true)
			b.SpawnedBy("ag", "")
		}, schema.KnownTurn(2)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := New("s")
			sub(b, "ag")
			sub(b, "ag2")
			tc.setup(b)
			if got := turnOf(b, "ag"); got != tc.want {
				t.Errorf("sub-agent's call in turn %v, want %v", got, tc.want)
			}
			res := b.Analyze(schema.Session{SessionID: "s"})
			i := slices.IndexFunc(res.Calls, func(c schema.ToolCall) bool { return c.CallID == "side-ag" })
			if i < 0 || res.Calls[i].Turn != tc.want {
				t.Errorf("analysed: %+v, want turn %v", res.Calls, tc.want)
			}
		})
	}
}
