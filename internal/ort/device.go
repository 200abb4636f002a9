package ort

import (
	"sync"
	"sync/atomic"
)

// Device names where a graph runs.
type Device string

const (
	DeviceAuto   Device = "auto"   // cuda, then webgpu, then cpu: the first that starts
	DeviceCPU    Device = "cpu"    // ONNX Runtime's CPU provider
	DeviceWebGPU Device = "webgpu" // ONNX Runtime's WebGPU provider (Vulkan/Metal/D3D12 underneath)
	DeviceCUDA   Device = "cuda"   // ONNX Runtime's CUDA provider (needs a CUDA build of the library)
)

// webgpuRuns serialises Run calls on the WebGPU provider. Its sessions share one device context per process, and
// two sessions running at once (say the acoustic and decoder parts of a split voice) crash inside ONNX Runtime
// 1.30. Packing and unpacking batches on the CPU still overlap the device. Process-wide like the ORT environment
// and the device it guards.
var webgpuRuns DeviceLock

// RunLock is the lock that serialises device d's runs, or nil for a device whose runs may overlap.
func RunLock(d Device) *DeviceLock {
	if d == DeviceWebGPU {
		return &webgpuRuns
	}
	return nil
}

// DeviceLock serialises a device's runs, and knows whether anyone holds it or waits for it: a run that may go
// elsewhere (Runner.TryRun) takes the device only when it is idle, not just between two runs of a queue.
type DeviceLock struct {
	mu    sync.Mutex
	users atomic.Int32 // goroutines holding or waiting for mu
}

// Lock takes the device, waiting for it if need be.
func (l *DeviceLock) Lock() {
	l.users.Add(1)
	l.mu.Lock()
}

// Unlock lets the device go.
func (l *DeviceLock) Unlock() {
	l.mu.Unlock()
	l.users.Add(-1)
}

// TryLockIdle takes the lock only if nobody holds it or waits for it, and says whether it did.
func (l *DeviceLock) TryLockIdle() bool {
	if l.users.Load() != 0 {
		return false
	}
	l.users.Add(1)
	if !l.mu.TryLock() {
		l.users.Add(-1)
		return false
	}
	return true
}
