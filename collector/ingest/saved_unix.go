//go:build unix

package ingest

import (
	"errors"
	"syscall"
)

// noFollowNonBlock opens a saved output without following a symlink in its
// last component and without blocking on a FIFO.
const noFollowNonBlock = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

func isSymlinkLoop(err error) bool { return errors.Is(err, syscall.ELOOP) }
