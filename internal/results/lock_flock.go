//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package results

import (
	"errors"
	"os"
	"syscall"
)

var errLocked = errors.New("locked by another process")

// waitLockFile takes an exclusive flock on f, waiting for it.
func waitLockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX) }

// lockFile takes a non-blocking flock on f, shared or exclusive. The kernel
// releases it when f is closed or the process dies, so a killed batch never
// leaves a stale lock behind.
func lockFile(f *os.File, shared bool) error {
	how := syscall.LOCK_EX
	if shared {
		how = syscall.LOCK_SH
	}
	err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errLocked
	}
	return err
}
