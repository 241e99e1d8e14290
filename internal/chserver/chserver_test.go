package chserver

import (
	"context"
	"errors"
	"os"
	"testing"
)

// TestStartStop runs the real binary: the generated configuration must be one
// that the installed server version accepts, and Stop must remove the dir it made.
func TestStartStop(t *testing.T) {
	srv, err := Start(context.Background(), Options{})
	if errors.Is(err, ErrNoBinary) && os.Getenv("CI") == "" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !Answering(srv.HTTPPort) {
		t.Fatalf("server started but does not answer on %d", srv.HTTPPort)
	}
	if srv.TCPPort == srv.HTTPPort || srv.TCPPort == 0 {
		t.Fatalf("ports tcp=%d http=%d", srv.TCPPort, srv.HTTPPort)
	}
	dir := srv.Dir
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("server dir %s still exists after Stop (err=%v)", dir, err)
	}
	if Answering(srv.HTTPPort) {
		t.Fatal("server still answers after Stop")
	}
}
