package chdbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/ctxaudit/ctxaudit/internal/chtest"
)

// Bind must produce the text clickhouse-go itself sends: the driver's
// binding of the same query and arguments is read back from the 18.16
// server's query log.
func TestBindMatchesTheDriver(t *testing.T) {
	ctx := context.Background()
	s := chtest.OpenStore(t, chtest.Address(t))
	var b [6]byte
	_, _ = rand.Read(b[:])
	tag := "bind_" + hex.EncodeToString(b[:])
	query := "SELECT '" + tag + "', ?, ?, ?, ? IN ?, ?"
	args := []any{`it's a \ "quote" ?`, uint32(7), int64(-3), "a", clickhouse.GroupSet{Value: []any{"a", "b'c"}}, 0.25}
	logged := clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings{"log_queries": 1}))
	if err := s.Conn().Exec(logged, query, args...); err != nil {
		t.Fatal(err)
	}
	if err := s.Conn().Exec(ctx, "SYSTEM FLUSH LOGS"); err != nil {
		t.Fatal(err)
	}
	var sent string
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := s.Conn().QueryRow(ctx, "SELECT query FROM system.query_log WHERE type = 1 AND query LIKE ? AND query NOT LIKE '%query_log%' LIMIT 1", "%"+tag+"%").Scan(&sent)
		if err == nil || time.Now().After(deadline) {
			if err != nil {
				t.Fatalf("the driver's query is not in system.query_log: %v", err)
			}
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	got, err := Bind(query, args...)
	if err != nil {
		t.Fatal(err)
	}
	if got != sent {
		t.Errorf("Bind:\n%s\nthe driver sent:\n%s", got, sent)
	}
}
