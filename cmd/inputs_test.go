package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An input file named on the command line that is not there, or is a folder, is a usage error (exit status 2) that
// names the flag and the path, said before any work: here before the engine would fail to start (--ort-lib names no
// library), as batch and results refuse a missing INPUT or DIR. A file that is there but cannot be used stays a
// failure (exit status 1).
func TestMissingInputFilesAreUsageErrors(t *testing.T) {
	dir := isolate(t)
	noORT := []string{"--ort-lib", "/nonexistent/libonnxruntime.so"}
	missing := filepath.Join(dir, "nofile.txt")
	folder := filepath.Join(dir, "texts")
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	wav := filepath.Join(dir, "x.wav")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"synth", "--file", missing, "-o", wav}, "--file " + missing + ": no such file or directory"},
		{[]string{"synth", "-f", folder, "-o", wav}, "--file " + folder + " is a folder: want a text file"},
		{[]string{"bench", "--texts", missing}, "--texts " + missing + ": no such file or directory"},
		{[]string{"bench", "--texts", folder}, "--texts " + folder + " is a folder: want a file of texts, one per line"},
		{[]string{"phonemize", "--file", missing}, "--file " + missing + ": no such file or directory"},
		{[]string{"phonemize", "--file", folder}, "--file " + folder + " is a folder"},
	} {
		t.Run(strings.Join(tc.args[:2], " "), func(t *testing.T) {
			r := run(t, "", append(tc.args, noORT...)...)
			if r.code != ExitUsage || !strings.Contains(r.errOut, tc.want) {
				t.Errorf("%q: exit %d, stderr %q; want %d and %q", tc.args, r.code, r.errOut, ExitUsage, tc.want)
			}
			if _, err := os.Stat(wav); err == nil {
				t.Errorf("%q wrote %s", tc.args, wav)
			}
		})
	}
	// A file that is there but holds nothing to read is not a usage error.
	empty := filepath.Join(dir, "empty.txt")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := run(t, "", append([]string{"bench", "--texts", empty}, noORT...)...); r.code != ExitFailure || !strings.Contains(r.errOut, "no non-empty lines") {
		t.Errorf("bench --texts of an empty file: exit %d, stderr %q; want %d", r.code, r.errOut, ExitFailure)
	}
}
