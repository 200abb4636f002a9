// Package ort is ttsgen's one door to ONNX Runtime: the process-wide environment, sessions on a device and the
// runner over them, the lock that serialises a device's runs, and which devices' providers start. It is the only
// package that imports onnxruntime_go.
package ort

import (
	"fmt"
	"os"
	"sync"

	onnxrt "github.com/yalue/onnxruntime_go"
)

// The ORT environment is process-wide C state: it is created once and lives until the process ends.
var env struct {
	mu   sync.Mutex
	path string // the library the environment was created from; "" until Init succeeds
	// sharedArena: Init registered one CPU memory arena with the environment, for CPU sessions to share.
	sharedArena bool
}

// Ready says whether Init has loaded the library.
func Ready() bool {
	return libraryPath() != ""
}

func libraryPath() string {
	env.mu.Lock()
	defer env.mu.Unlock()
	return env.path
}

// Init loads the ONNX Runtime shared library at libPath and creates the process-wide ORT environment (once; later
// calls with the same path are no-ops, a different path is an error). The error names the path and what failed.
func Init(libPath string) error {
	env.mu.Lock()
	defer env.mu.Unlock()
	if env.path != "" && env.path == libPath {
		return nil
	}
	info, err := os.Stat(libPath)
	if err != nil {
		return fmt.Errorf("ort: ONNX Runtime library %s: %w (run scripts/setup.sh, or name another library)", libPath, err)
	}
	if info.IsDir() {
		return fmt.Errorf("ort: ONNX Runtime library %s is a directory, not a shared library", libPath)
	}
	if env.path != "" {
		return fmt.Errorf("ort: ONNX Runtime already loaded from %s; cannot switch to %s", env.path, libPath)
	}
	onnxrt.SetSharedLibraryPath(libPath)
	// Errors come back from every call; ORT's own logging would only repeat them on stderr.
	if err := onnxrt.InitializeEnvironment(onnxrt.WithLogLevelFatal()); err != nil {
		return fmt.Errorf("ort: loading ONNX Runtime library %s: %w", libPath, err)
	}
	env.path = libPath
	env.sharedArena = registerSharedArena() == nil
	return nil
}

// registerSharedArena gives the environment one CPU memory arena, which CPU sessions use instead of their own
// (Sessions.options). A session's own arena keeps, for good, room for the largest tensors it ever ran, so many CPU
// sessions (a WebGPU engine's text parts and expansions) each keep their own high-water mark; shared, the room is
// what the sessions running at one moment need. Without it (an ONNX Runtime that refuses), each session keeps its
// own.
func registerSharedArena() error {
	mem, err := onnxrt.GetMemoryInfo()
	if err != nil {
		return err
	}
	cfg, err := onnxrt.NewArenaCfg(0, -1, -1, -1) // ONNX Runtime's defaults
	if err != nil {
		return err
	}
	defer cfg.Destroy()
	return onnxrt.CreateAndRegisterAllocator(mem, cfg)
}
