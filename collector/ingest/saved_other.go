//go:build !unix

package ingest

// noFollowNonBlock has no equivalent here; the Lstat checks and the
// same-file check after opening stand in for it.
const noFollowNonBlock = 0

func isSymlinkLoop(error) bool { return false }
