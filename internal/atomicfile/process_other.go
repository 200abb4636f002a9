//go:build !unix

package atomicfile

// processGone cannot tell where there is no signal 0: every owner counts as alive, so no temporary file is removed
// that might still be written.
func processGone(int) bool { return false }
