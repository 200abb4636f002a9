package ort

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/advancedclimatesystems/gonnx/onnx"
	onnxrt "github.com/yalue/onnxruntime_go"
	"google.golang.org/protobuf/proto"
)

// Probe checks that device d's provider starts: it builds a session for a tiny graph and runs it once. auto: d is
// a candidate of device auto, which wants a real GPU (not one emulated on the CPU) or nothing.
func (s Sessions) Probe(d Device, auto bool) error {
	if err := providerPrerequisites(d, libraryPath()); err != nil {
		return err
	}
	if auto && d == DeviceWebGPU {
		if err := gpuDevicePresent(); err != nil {
			return err
		}
		hideSoftwareVulkan()
	}
	graph, err := probeGraph()
	if err != nil {
		return fmt.Errorf("building the probe graph: %w", err)
	}
	opts, err := s.options(d, 1)
	if err != nil {
		return err
	}
	defer opts.Destroy()
	session, err := onnxrt.NewDynamicAdvancedSessionWithONNXData(graph, []string{"x"}, []string{"y"}, opts)
	if err != nil {
		return fmt.Errorf("creating a probe session: %w", err)
	}
	defer session.Destroy()
	x, err := onnxrt.NewTensor(onnxrt.NewShape(1, 1, 16), make([]float32, 16))
	if err != nil {
		return fmt.Errorf("creating the probe input: %w", err)
	}
	defer x.Destroy()
	y, err := onnxrt.NewEmptyTensor[float32](onnxrt.NewShape(1, 1, 14))
	if err != nil {
		return fmt.Errorf("creating the probe output: %w", err)
	}
	defer y.Destroy()
	if err := session.Run([]onnxrt.Value{x}, []onnxrt.Value{y}); err != nil {
		return fmt.Errorf("running the probe: %w", err)
	}
	return nil
}

// probeGraph is a tiny graph (y = Conv(x, w)) that a GPU provider must be able to build and run before ttsgen
// trusts it; Conv is the operator voices spend their time in.
func probeGraph() ([]byte, error) {
	weights := &onnx.TensorProto{Name: "w", Dims: []int64{1, 1, 3}, DataType: int32(onnx.TensorProto_FLOAT),
		FloatData: []float32{0.25, 0.5, 0.25}}
	tensor := func(name string, dims ...int64) *onnx.ValueInfoProto {
		shape := &onnx.TensorShapeProto{}
		for _, d := range dims {
			shape.Dim = append(shape.Dim, &onnx.TensorShapeProto_Dimension{
				Value: &onnx.TensorShapeProto_Dimension_DimValue{DimValue: d},
			})
		}
		return &onnx.ValueInfoProto{Name: name, Type: &onnx.TypeProto{Value: &onnx.TypeProto_TensorType{
			TensorType: &onnx.TypeProto_Tensor{ElemType: int32(onnx.TensorProto_FLOAT), Shape: shape},
		}}}
	}
	model := &onnx.ModelProto{
		IrVersion:   8,
		OpsetImport: []*onnx.OperatorSetIdProto{{Version: 15}},
		Graph: &onnx.GraphProto{
			Name:        "ttsgen_probe",
			Node:        []*onnx.NodeProto{{Name: "conv", OpType: "Conv", Input: []string{"x", "w"}, Output: []string{"y"}}},
			Initializer: []*onnx.TensorProto{weights},
			Input:       []*onnx.ValueInfoProto{tensor("x", 1, 1, 16)},
			Output:      []*onnx.ValueInfoProto{tensor("y", 1, 1, 14)},
		},
	}
	return proto.Marshal(model)
}

// ErrProviderMissing marks a GPU provider whose prerequisites are absent: not in this ONNX Runtime build, or no
// driver loader on the machine. `auto` skips such providers quietly (CPU is then simply the machine's device); a
// provider that is present but fails to start is worth a warning.
var ErrProviderMissing = errors.New("not available here")

// providerPrerequisites checks, without loading anything, what a GPU provider needs. Trying a provider that cannot
// work is not free: the WebGPU provider prints Dawn's own warnings on stderr when Vulkan is missing.
func providerPrerequisites(d Device, ortLib string) error {
	switch d {
	case DeviceCUDA:
		// ONNX Runtime ships its CUDA provider as a library beside the main one; builds without CUDA have none.
		lib := filepath.Join(filepath.Dir(ortLib), "libonnxruntime_providers_cuda.so")
		if _, err := os.Stat(lib); err != nil {
			return fmt.Errorf("%w: this ONNX Runtime build has no CUDA provider (no %s)", ErrProviderMissing, lib)
		}
	case DeviceWebGPU:
		if !libraryFindable("libvulkan.so.1") {
			return fmt.Errorf("%w: no Vulkan loader (libvulkan.so.1), which ONNX Runtime's WebGPU provider uses on Linux", ErrProviderMissing)
		}
		if !vulkanDriverListed() {
			return fmt.Errorf("%w: no Vulkan driver (no ICD file in %s, and VK_DRIVER_FILES / VK_ICD_FILENAMES unset)",
				ErrProviderMissing, strings.Join(vulkanICDDirs, ", "))
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

// gpuDeviceNodes are the device files a GPU driver creates on Linux: DRM render nodes (Mesa's drivers: Intel, AMD,
// Nouveau, and NVIDIA's with its DRM module) and NVIDIA's own.
var gpuDeviceNodes = []string{"/dev/dri/renderD*", "/dev/nvidia[0-9]*"}

// gpuDevicePresent says whether the machine shows a GPU at all. `auto` asks first: without one, all that the WebGPU
// provider could find is a driver that emulates a GPU on the CPU (below), and trying costs a second and lines of
// the Vulkan loader's and Dawn's complaints on stderr.
func gpuDevicePresent() error {
	for _, pattern := range gpuDeviceNodes {
		if matches, _ := filepath.Glob(pattern); len(matches) > 0 {
			return nil
		}
	}
	return fmt.Errorf("%w: no GPU device (%s)", ErrProviderMissing, strings.Join(gpuDeviceNodes, ", "))
}

// softwareVulkanDrivers are the Vulkan loader's globs for the manifests of drivers that emulate a GPU on the CPU:
// Mesa's lavapipe (installed with Mesa on most Linux desktops, GPU or not) and Google's SwiftShader. WebGPU runs
// on them, but far slower than ttsgen's CPU path.
const softwareVulkanDrivers = "*lvp_icd*,*swiftshader*"

// hideSoftwareVulkan tells the Vulkan loader, for this process, to skip the drivers that emulate a GPU, so that
// `auto` finds WebGPU only on a real GPU. A user who chose Vulkan drivers (VK_DRIVER_FILES, VK_ICD_FILENAMES,
// VK_LOADER_DRIVERS_SELECT or _DISABLE) keeps the choice; --device webgpu asks for WebGPU on whatever is there.
// It changes the environment (what the loader reads when ONNX Runtime's WebGPU provider first starts), which is
// part of the ONNX Runtime environment the process shares.
func hideSoftwareVulkan() {
	for _, chosen := range []string{"VK_DRIVER_FILES", "VK_ICD_FILENAMES", "VK_LOADER_DRIVERS_SELECT", "VK_LOADER_DRIVERS_DISABLE"} {
		if os.Getenv(chosen) != "" {
			return
		}
	}
	os.Setenv("VK_LOADER_DRIVERS_DISABLE", softwareVulkanDrivers)
}
