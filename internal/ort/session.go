package ort

import (
	"fmt"
	"strings"

	onnxrt "github.com/yalue/onnxruntime_go"
)

// Sessions says how every session of an engine is set up beyond its device and threads.
type Sessions struct {
	// ProviderOptions are passed to the GPU execution provider on top of ttsgen's own (not to CPU sessions). Keys
	// spelled as ONNX Runtime session configuration go there instead: "ep.webgpuexecutionprovider.*" (where ORT
	// 1.30's WebGPU provider reads its options) for the GPU sessions, "session.*" (such as
	// "session.set_denormal_as_zero") for every session, CPU sessions included.
	ProviderOptions map[string]string
	// ProfilePrefix, when set, turns on ONNX Runtime's profiler for every session: each writes a Chrome-trace JSON
	// file named PREFIX_<date>.json, with every node's time and provider, when it is destroyed.
	ProfilePrefix string
	// OwnArenas gives each CPU session its own memory arena, as ONNX Runtime does by default, rather than the one
	// Init registers for all to share (see registerSharedArena).
	OwnArenas bool
}

// NewRunner makes a session of graph (an encoded ONNX model) on device d with threads intra-op threads, reading
// inputs and writing outputs in that order. With plan, later runs of input shapes it has seen hand ONNX Runtime
// outputs of the shapes they had (see Runner); without, for a graph whose output shapes follow its data (a whole
// voice, whose audio's length follows the durations), ONNX Runtime allocates every run's outputs.
func (s Sessions) NewRunner(graph []byte, inputs, outputs []string, d Device, threads int, plan bool) (*Runner, error) {
	opts, err := s.options(d, threads)
	if err != nil {
		return nil, err
	}
	defer opts.Destroy()
	session, err := onnxrt.NewDynamicAdvancedSessionWithONNXData(graph, inputs, outputs, opts)
	if err != nil {
		return nil, fmt.Errorf("creating session: %w", err)
	}
	r := &Runner{session: session, outputs: len(outputs), serial: RunLock(d)}
	r.shapesVary.Store(!plan)
	return r, nil
}

// options configures a session for device d. The GPU providers are thin: they are set up the way the project
// measured them, and everything else is left to ONNX Runtime.
func (s Sessions) options(d Device, threads int) (*onnxrt.SessionOptions, error) {
	opts, err := onnxrt.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("creating session options: %w", err)
	}
	fail := func(what string, err error) (*onnxrt.SessionOptions, error) {
		opts.Destroy()
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	// Parallelism comes from running several sessions side by side; inside a session operators run one after
	// another on its own few intra-op threads, which must not spin while another session works.
	if err := opts.SetIntraOpNumThreads(threads); err != nil {
		return fail("setting intra-op threads", err)
	}
	if err := opts.SetInterOpNumThreads(1); err != nil {
		return fail("setting inter-op threads", err)
	}
	if err := opts.AddSessionConfigEntry("session.intra_op.allow_spinning", "0"); err != nil {
		return fail("turning off thread spinning", err)
	}
	if s.ProfilePrefix != "" {
		if err := opts.EnableProfiling(s.ProfilePrefix); err != nil {
			return fail("turning on the profiler", err)
		}
	}
	// An option spelled as ONNX Runtime's session configuration key goes there: "ep.<provider>executionprovider.<name>"
	// for the GPU sessions (some providers read their options only from there), "session.<name>" for every session.
	for k, v := range s.ProviderOptions {
		if (d != DeviceCPU && strings.HasPrefix(k, "ep.")) || strings.HasPrefix(k, "session.") {
			if err := opts.AddSessionConfigEntry(k, v); err != nil {
				return fail(fmt.Sprintf("setting session configuration %s=%s", k, v), err)
			}
		}
	}
	switch d {
	case DeviceCPU:
		env.mu.Lock()
		shared := env.sharedArena && !s.OwnArenas
		env.mu.Unlock()
		if shared {
			if err := opts.AddSessionConfigEntry("session.use_env_allocators", "1"); err != nil {
				return fail("sharing the environment's memory arena", err)
			}
		}
	case DeviceCUDA:
		cuda, err := onnxrt.NewCUDAProviderOptions()
		if err != nil {
			return fail("creating CUDA provider options (is this a CUDA build of ONNX Runtime?)", err)
		}
		defer cuda.Destroy()
		// Exhaustive cuDNN search re-tunes for every new input shape, and voice batches change shape every run.
		if err := cuda.Update(s.withProviderOptions(map[string]string{"cudnn_conv_algo_search": "HEURISTIC"})); err != nil {
			return fail("setting CUDA provider options", err)
		}
		if err := opts.AppendExecutionProviderCUDA(cuda); err != nil {
			return fail("adding the CUDA provider (is this a CUDA build of ONNX Runtime, with CUDA and cuDNN installed?)", err)
		}
	case DeviceWebGPU:
		if err := opts.AppendExecutionProvider("WebGPU", s.withProviderOptions(map[string]string{})); err != nil {
			return fail("adding the WebGPU provider (needs a WebGPU build of ONNX Runtime and a GPU driver: Vulkan on Linux)", err)
		}
	default:
		return fail("choosing a provider", fmt.Errorf("unknown device %q", d))
	}
	return opts, nil
}

// withProviderOptions returns own with the user's provider options on top (those that are session configuration
// keys excepted: options sets them).
func (s Sessions) withProviderOptions(own map[string]string) map[string]string {
	for k, v := range s.ProviderOptions {
		if !strings.HasPrefix(k, "ep.") && !strings.HasPrefix(k, "session.") {
			own[k] = v
		}
	}
	return own
}
