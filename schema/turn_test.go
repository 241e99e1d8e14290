package schema

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/tinylib/msgp/msgp"
)

func TestKnownTurnRange(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want Turn
	}{
		{0, Turn{N: 0, Known: true}},
		{7, Turn{N: 7, Known: true}},
		{math.MaxUint32, Turn{N: math.MaxUint32, Known: true}},
		{math.MaxUint32 + 1, Turn{}},
		{-1, Turn{}},
		{math.MinInt64, Turn{}},
	} {
		if got := KnownTurn64(tc.n); got != tc.want {
			t.Errorf("KnownTurn64(%d) = %+v, want %+v", tc.n, got, tc.want)
		}
		if got := KnownTurn(int(tc.n)); got != tc.want {
			t.Errorf("KnownTurn(%d) = %+v, want %+v", tc.n, got, tc.want)
		}
	}
}

// An unknown turn is null in JSON and turn 0 is 0: the two never meet.
func TestTurnJSON(t *testing.T) {
	for _, tc := range []struct {
		turn Turn
		json string
	}{{Turn{}, "null"}, {KnownTurn(0), "0"}, {KnownTurn(12), "12"}, {KnownTurn(math.MaxUint32), "4294967295"}} {
		b, err := json.Marshal(tc.turn)
		if err != nil || string(b) != tc.json {
			t.Errorf("marshal %+v = %s, %v; want %s", tc.turn, b, err, tc.json)
		}
		var back Turn
		if err := json.Unmarshal(b, &back); err != nil || back != tc.turn {
			t.Errorf("unmarshal %s = %+v, %v; want %+v", b, back, err, tc.turn)
		}
	}
	for _, bad := range []string{"-1", "4294967296", "1.5", `"3"`} {
		var back Turn
		if err := json.Unmarshal([]byte(bad), &back); err == nil {
			t.Errorf("unmarshal %s = %+v, want an error", bad, back)
		}
	}
}

// A held call's turn: unknown is left out (and reads back unknown), a
// known 0 is written; a turn written as a plain integer by an earlier
// version, in any of MessagePack's integer encodings, reads back known.
func TestTurnMessagePack(t *testing.T) {
	for _, turn := range []Turn{{}, KnownTurn(0), KnownTurn(1), KnownTurn(300), KnownTurn(math.MaxUint32)} {
		c := ToolCall{CallID: "c", Turn: turn}
		b, err := c.MarshalMsg(nil)
		if err != nil {
			t.Fatal(err)
		}
		back := ToolCall{Turn: KnownTurn(9)} // clearomitted must unset it
		if _, err := back.UnmarshalMsg(b); err != nil || back.Turn != turn {
			t.Errorf("call with turn %+v read back %+v, %v", turn, back.Turn, err)
		}
		a := Answer{MessageID: "m", Turn: turn}
		if b, err = a.MarshalMsg(nil); err != nil {
			t.Fatal(err)
		}
		var aBack Answer
		if _, err := aBack.UnmarshalMsg(b); err != nil || aBack.Turn != turn {
			t.Errorf("answer with turn %+v read back %+v, %v", turn, aBack.Turn, err)
		}
	}
	legacy := []struct {
		enc  []byte
		want Turn
	}{
		{msgp.AppendInt(nil, 0), KnownTurn(0)},
		{msgp.AppendInt(nil, 5), KnownTurn(5)},
		{msgp.AppendInt64(nil, 70000), KnownTurn(70000)},
		{msgp.AppendUint32(nil, math.MaxUint32), KnownTurn(math.MaxUint32)},
		{msgp.AppendUint8(nil, 200), KnownTurn(200)},
		{msgp.AppendInt(nil, -1), Turn{}},
		{msgp.AppendInt64(nil, math.MaxUint32+1), Turn{}},
		{msgp.AppendNil(nil), Turn{}},
	}
	for _, tc := range legacy {
		var got Turn
		rest, err := got.UnmarshalMsg(tc.enc)
		if err != nil || len(rest) != 0 || got != tc.want {
			t.Errorf("turn from % x = %+v (rest %d, %v), want %+v", tc.enc, got, len(rest), err, tc.want)
		}
	}
	var got Turn
	if _, err := got.UnmarshalMsg(msgp.AppendString(nil, "3")); err == nil {
		t.Errorf("a string read as turn %+v, want an error", got)
	}
	if n := KnownTurn(math.MaxUint32).Msgsize(); n < len(msgp.AppendInt64(nil, math.MaxUint32)) {
		t.Errorf("Msgsize %d is less than the encoding", n)
	}
}
