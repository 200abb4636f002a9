//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package results

import (
	"errors"
	"os"
)

var errLocked = errors.New("locked by another process")

// lockFile does nothing where flock is unavailable: two batches in one
// directory are then the user's responsibility.
func lockFile(*os.File, bool) error { return nil }

func waitLockFile(*os.File) error { return nil }
