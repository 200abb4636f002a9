//go:build unix

package outfile

import (
	"os"

	"golang.org/x/sys/unix"
)

// appendOnly reports whether f was opened with O_APPEND (`>> out.wav`): every write then goes to the end, so a
// header cannot be completed in place.
func appendOnly(f *os.File) bool {
	raw, err := f.SyscallConn()
	if err != nil {
		return true
	}
	flags := 0
	if err := raw.Control(func(fd uintptr) { flags, err = unix.FcntlInt(fd, unix.F_GETFL, 0) }); err != nil {
		return true
	}
	return err != nil || flags&unix.O_APPEND != 0
}
