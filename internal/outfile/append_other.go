//go:build !unix

package outfile

import "os"

// appendOnly cannot tell where there is no fcntl: a file is taken as seekable.
func appendOnly(*os.File) bool { return false }
