package ort

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestProviderPrerequisites(t *testing.T) {
	dir := t.TempDir()
	ortLib := filepath.Join(dir, "libonnxruntime.so.1")
	if err := providerPrerequisites(DeviceCUDA, ortLib); !errors.Is(err, ErrProviderMissing) || !strings.Contains(err.Error(), "no CUDA provider") {
		t.Errorf("cuda without its provider library: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "libonnxruntime_providers_cuda.so"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := providerPrerequisites(DeviceCUDA, ortLib); err != nil {
		t.Errorf("cuda with its provider library: %v", err)
	}

	saved := libraryDirs
	t.Cleanup(func() { libraryDirs = saved })
	libraryDirs = nil
	t.Setenv("LD_LIBRARY_PATH", dir)
	t.Setenv("VK_DRIVER_FILES", "")
	t.Setenv("VK_ICD_FILENAMES", "")
	if err := providerPrerequisites(DeviceWebGPU, ortLib); !errors.Is(err, ErrProviderMissing) || !strings.Contains(err.Error(), "no Vulkan loader") {
		t.Errorf("webgpu without libvulkan: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "libvulkan.so.1"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("VK_DRIVER_FILES", "/somewhere/nvidia_icd.json")
	if err := providerPrerequisites(DeviceWebGPU, ortLib); err != nil {
		t.Errorf("webgpu with a loader and a driver: %v", err)
	}
}

// TestAutoWantsARealGPU: without a GPU device node, auto's WebGPU candidate is missing (quietly skipped), with one
// it is not; and the Vulkan drivers that emulate a GPU on the CPU are hidden from it unless the user chose drivers.
// (A GPU device without a Vulkan adapter then fails the probe: auto warns, as for any GPU that does not start.)
func TestAutoWantsARealGPU(t *testing.T) {
	dir := t.TempDir()
	saved := gpuDeviceNodes
	t.Cleanup(func() { gpuDeviceNodes = saved })
	gpuDeviceNodes = []string{filepath.Join(dir, "renderD*")}
	if err := gpuDevicePresent(); !errors.Is(err, ErrProviderMissing) || !strings.Contains(err.Error(), "no GPU device") {
		t.Errorf("no device node: %v, want a missing provider", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "renderD128"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := gpuDevicePresent(); err != nil {
		t.Errorf("with a render node: %v", err)
	}

	for _, k := range []string{"VK_DRIVER_FILES", "VK_ICD_FILENAMES", "VK_LOADER_DRIVERS_SELECT", "VK_LOADER_DRIVERS_DISABLE"} {
		t.Setenv(k, "")
	}
	hideSoftwareVulkan()
	if got := os.Getenv("VK_LOADER_DRIVERS_DISABLE"); got != softwareVulkanDrivers || !strings.Contains(got, "lvp_icd") {
		t.Errorf("VK_LOADER_DRIVERS_DISABLE = %q, want lavapipe and SwiftShader hidden (%q)", got, softwareVulkanDrivers)
	}
	t.Setenv("VK_LOADER_DRIVERS_DISABLE", "")
	t.Setenv("VK_DRIVER_FILES", "/usr/share/vulkan/icd.d/lvp_icd.json")
	hideSoftwareVulkan()
	if got := os.Getenv("VK_LOADER_DRIVERS_DISABLE"); got != "" {
		t.Errorf("the user chose a driver, yet VK_LOADER_DRIVERS_DISABLE = %q", got)
	}
}
