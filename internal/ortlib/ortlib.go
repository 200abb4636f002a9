// Package ortlib decides where ONNX Runtime's shared library lives: the one rule that scripts/setup.sh (which installs
// it), the ttsgen binary (which loads it) and the tests (which need it) all follow.
package ortlib

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Version is the ONNX Runtime release ttsgen is built and tested against; setup installs it from the npm package
// onnxruntime-node at this version.
const Version = "1.30.0"

// FileName is the library's name inside every folder it is looked for in.
const FileName = "libonnxruntime.so.1"

// CacheDir is where setup puts downloaded runtime files: $TTSGEN_CACHE_DIR, else $XDG_CACHE_HOME/ttsgen, else
// ~/.cache/ttsgen.
func CacheDir() string {
	if d := os.Getenv("TTSGEN_CACHE_DIR"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "ttsgen")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = "."
	}
	return filepath.Join(home, ".cache", "ttsgen")
}

// InstallPath is where setup installs the library and where Find looks first.
func InstallPath() string {
	return filepath.Join(CacheDir(), "ort", Version, FileName)
}

// Candidates lists, in order, the places Find looks in when no path is given: setup's install path, beside the
// running executable, then the usual system folders.
func Candidates() []string {
	c := []string{InstallPath()}
	if exe, err := os.Executable(); err == nil {
		c = append(c, filepath.Join(filepath.Dir(exe), FileName))
	}
	c = append(c, "/usr/local/lib/"+FileName, "/usr/lib/"+FileName)
	if triplet := multiarch(runtime.GOARCH); triplet != "" {
		c = append(c, "/usr/lib/"+triplet+"/"+FileName)
	}
	return c
}

// multiarch is the Debian/Ubuntu multiarch folder name of the Go architecture goarch (/usr/lib/x86_64-linux-gnu on
// amd64, not GOARCH's own name), or "" for an architecture without a known one.
func multiarch(goarch string) string {
	switch goarch {
	case "amd64":
		return "x86_64-linux-gnu"
	case "arm64":
		return "aarch64-linux-gnu"
	case "386":
		return "i386-linux-gnu"
	case "arm":
		return "arm-linux-gnueabihf"
	case "ppc64le":
		return "powerpc64le-linux-gnu"
	case "s390x":
		return "s390x-linux-gnu"
	case "riscv64":
		return "riscv64-linux-gnu"
	}
	return ""
}

// ErrNotFound says that no candidate exists; Find's error wraps it with the places it looked in.
var ErrNotFound = errors.New("ONNX Runtime library not found")

// Find returns explicit if it is set (the user's --ort-lib, TTSGEN_ORT_LIB or ort_lib) and exists, else the first
// candidate that exists.
func Find(explicit string) (string, error) {
	if explicit != "" {
		if _, err := os.Stat(explicit); err != nil {
			return "", err
		}
		return explicit, nil
	}
	candidates := Candidates()
	for _, c := range candidates {
		if _, err := os.Stat(c); err == nil {
			return c, nil
		}
	}
	return "", &notFoundError{candidates}
}

type notFoundError struct{ looked []string }

func (e *notFoundError) Error() string {
	return ErrNotFound.Error() + "; run `make setup` (or scripts/setup.sh), or point --ort-lib / TTSGEN_ORT_LIB at " +
		"libonnxruntime.so; looked in:\n  " + strings.Join(e.looked, "\n  ")
}

func (e *notFoundError) Unwrap() error { return ErrNotFound }
