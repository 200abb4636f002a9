package gpu

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// errProviderMissing marks a GPU provider whose prerequisites are absent: not in this ONNX Runtime build, or no
// driver loader on the machine. `auto` skips such providers quietly (CPU is then simply the machine's device); a
// provider that is present but fails to start is worth a warning.
var errProviderMissing = errors.New("not available here")

// providerPrerequisites checks, without loading anything, what a GPU provider needs. Trying a provider that cannot
// work is not free: the WebGPU provider prints Dawn's own warnings on stderr when Vulkan is missing.
func providerPrerequisites(d Device, ortLib string) error {
	switch d {
	case DeviceCUDA:
		// ONNX Runtime ships its CUDA provider as a library beside the main one; builds without CUDA have none.
		lib := filepath.Join(filepath.Dir(ortLib), "libonnxruntime_providers_cuda.so")
		if _, err := os.Stat(lib); err != nil {
			return fmt.Errorf("%w: this ONNX Runtime build has no CUDA provider (no %s)", errProviderMissing, lib)
		}
	case DeviceWebGPU:
		if !libraryFindable("libvulkan.so.1") {
			return fmt.Errorf("%w: no Vulkan loader (libvulkan.so.1), which ONNX Runtime's WebGPU provider uses on Linux", errProviderMissing)
		}
		if !vulkanDriverListed() {
			return fmt.Errorf("%w: no Vulkan driver (no ICD file in %s, and VK_DRIVER_FILES / VK_ICD_FILENAMES unset)",
				errProviderMissing, strings.Join(vulkanICDDirs, ", "))
		}
	}
	return nil
}

// libraryDirs are where the dynamic loader finds libraries on common Linux systems, besides LD_LIBRARY_PATH.
var libraryDirs = []string{
	"/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib/aarch64-linux-gnu",
	"/usr/lib64", "/lib64", "/usr/lib", "/lib", "/usr/local/lib",
}

func libraryFindable(name string) bool {
	dirs := append(strings.Split(os.Getenv("LD_LIBRARY_PATH"), ":"), libraryDirs...)
	for _, dir := range dirs {
		if dir == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
}

// vulkanICDDirs are where Vulkan drivers register themselves (the loader's documented search path on Linux).
var vulkanICDDirs = []string{"/usr/share/vulkan/icd.d", "/etc/vulkan/icd.d", "/usr/local/share/vulkan/icd.d"}

func vulkanDriverListed() bool {
	if os.Getenv("VK_DRIVER_FILES") != "" || os.Getenv("VK_ICD_FILENAMES") != "" {
		return true
	}
	for _, dir := range vulkanICDDirs {
		if matches, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(matches) > 0 {
			return true
		}
	}
	return false
}
