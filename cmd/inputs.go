package cmd

import "os"

// checkInputFile refuses, as a usage error (exit status 2) said before any work, an input file named by flag (as
// "--file") that is not there or is a folder, as batch refuses a missing INPUT: the message names the flag and the
// path. what says what the file should be ("a text file"). Errors in reading a file that is there stay failures.
func checkInputFile(flag, path, what string) error {
	info, err := os.Stat(path)
	if err != nil {
		return usageErrorf("%s %s: %v", flag, path, statProblem(err))
	}
	if info.IsDir() {
		return usageErrorf("%s %s is a folder: want %s", flag, path, what)
	}
	return nil
}
