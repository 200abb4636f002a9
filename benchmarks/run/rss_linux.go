package main

import (
	"os"
	"syscall"
)

// exitedRSS is the most resident memory of an ended process (its reaped children's included, as Linux counts it):
// what sampling misses of a run shorter than a sample.
func exitedRSS(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss * 1024 // kilobytes on Linux
	}
	return 0
}
