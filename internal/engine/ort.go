package engine

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	ort "github.com/yalue/onnxruntime_go"
)

// The ORT environment is process-wide C state: it is created once and lives until the process ends.
var ortEnv struct {
	mu   sync.Mutex
	path string // the library the environment was created from; "" until Init succeeds
	// sharedArena: Init registered one CPU memory arena with the environment, for CPU sessions to share.
	sharedArena bool
}

func ortReady() bool {
	ortEnv.mu.Lock()
	defer ortEnv.mu.Unlock()
	return ortEnv.path != ""
}

// Init loads the ONNX Runtime shared library at libPath and creates the process-wide ORT environment (once; later
// calls with the same path are no-ops, a different path is an error). The error names the path and what failed.
func Init(libPath string) error {
	ortEnv.mu.Lock()
	defer ortEnv.mu.Unlock()
	if ortEnv.path != "" && ortEnv.path == libPath {
		return nil
	}
	info, err := os.Stat(libPath)
	if err != nil {
		return fmt.Errorf("gpu: ONNX Runtime library %s: %w (run scripts/setup.sh, or name another library)", libPath, err)
	}
	if info.IsDir() {
		return fmt.Errorf("gpu: ONNX Runtime library %s is a directory, not a shared library", libPath)
	}
	if ortEnv.path != "" {
		return fmt.Errorf("gpu: ONNX Runtime already loaded from %s; cannot switch to %s", ortEnv.path, libPath)
	}
	ort.SetSharedLibraryPath(libPath)
	// Errors come back from every call; ORT's own logging would only repeat them on stderr.
	if err := ort.InitializeEnvironment(ort.WithLogLevelFatal()); err != nil {
		return fmt.Errorf("gpu: loading ONNX Runtime library %s: %w", libPath, err)
	}
	ortEnv.path = libPath
	ortEnv.sharedArena = registerSharedArena() == nil
	return nil
}

// registerSharedArena gives the environment one CPU memory arena, which CPU sessions use instead of their own
// (sessionOptions). A session's own arena keeps, for good, room for the largest tensors it ever ran, so 32 CPU
// sessions (a WebGPU engine's text parts and expansions) each kept their own high-water mark: 8.2-8.6 GiB on the
// H200 with a Piper medium voice. Shared, the room is what the sessions running at one moment need. Without it
// (an ONNX Runtime that refuses), each session keeps its own, as before.
func registerSharedArena() error {
	mem, err := ort.GetMemoryInfo()
	if err != nil {
		return err
	}
	cfg, err := ort.NewArenaCfg(0, -1, -1, -1) // ONNX Runtime's defaults
	if err != nil {
		return err
	}
	defer cfg.Destroy()
	return ort.CreateAndRegisterAllocator(mem, cfg)
}

// ortBackend creates ONNX Runtime sessions.
type ortBackend struct {
	providerOptions map[string]string // extra options for the GPU provider, from Options.ProviderOptions
	profilePrefix   string            // Options.ProfilePrefix
	sessionArenas   bool              // Options.SessionArenas
}

// sessionOptions configures a session for device d. The GPU providers are thin: they are set up the way the
// project measured them, and everything else is left to ONNX Runtime.
func (b ortBackend) sessionOptions(d Device, threads int) (*ort.SessionOptions, error) {
	opts, err := ort.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("creating session options: %w", err)
	}
	fail := func(what string, err error) (*ort.SessionOptions, error) {
		opts.Destroy()
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	// Parallelism comes from running several sessions side by side (see doc.go); inside a session operators run
	// one after another on its own few intra-op threads, which must not spin while another session works.
	if err := opts.SetIntraOpNumThreads(threads); err != nil {
		return fail("setting intra-op threads", err)
	}
	if err := opts.SetInterOpNumThreads(1); err != nil {
		return fail("setting inter-op threads", err)
	}
	if err := opts.AddSessionConfigEntry("session.intra_op.allow_spinning", "0"); err != nil {
		return fail("turning off thread spinning", err)
	}
	if b.profilePrefix != "" {
		if err := opts.EnableProfiling(b.profilePrefix); err != nil {
			return fail("turning on the profiler", err)
		}
	}
	// An option spelled as ONNX Runtime's session configuration key goes there: "ep.<provider>executionprovider.<name>"
	// for the GPU sessions (some providers read their options only from there), "session.<name>" for every session.
	for k, v := range b.providerOptions {
		if (d != DeviceCPU && strings.HasPrefix(k, "ep.")) || strings.HasPrefix(k, "session.") {
			if err := opts.AddSessionConfigEntry(k, v); err != nil {
				return fail(fmt.Sprintf("setting session configuration %s=%s", k, v), err)
			}
		}
	}
	switch d {
	case DeviceCPU:
		ortEnv.mu.Lock()
		shared := ortEnv.sharedArena && !b.sessionArenas
		ortEnv.mu.Unlock()
		if shared {
			if err := opts.AddSessionConfigEntry("session.use_env_allocators", "1"); err != nil {
				return fail("sharing the environment's memory arena", err)
			}
		}
	case DeviceCUDA:
		cuda, err := ort.NewCUDAProviderOptions()
		if err != nil {
			return fail("creating CUDA provider options (is this a CUDA build of ONNX Runtime?)", err)
		}
		defer cuda.Destroy()
		// Exhaustive cuDNN search re-tunes for every new input shape, and voice batches change shape every run.
		if err := cuda.Update(b.withProviderOptions(map[string]string{"cudnn_conv_algo_search": "HEURISTIC"})); err != nil {
			return fail("setting CUDA provider options", err)
		}
		if err := opts.AppendExecutionProviderCUDA(cuda); err != nil {
			return fail("adding the CUDA provider (is this a CUDA build of ONNX Runtime, with CUDA and cuDNN installed?)", err)
		}
	case DeviceWebGPU:
		if err := opts.AppendExecutionProvider("WebGPU", b.withProviderOptions(map[string]string{})); err != nil {
			return fail("adding the WebGPU provider (needs a WebGPU build of ONNX Runtime and a GPU driver: Vulkan on Linux)", err)
		}
	default:
		return fail("choosing a provider", fmt.Errorf("unknown device %q", d))
	}
	return opts, nil
}

// withProviderOptions returns own with the user's provider options on top (those that are session configuration
// keys excepted: sessionOptions sets them).
func (b ortBackend) withProviderOptions(own map[string]string) map[string]string {
	for k, v := range b.providerOptions {
		if !strings.HasPrefix(k, "ep.") && !strings.HasPrefix(k, "session.") {
			own[k] = v
		}
	}
	return own
}

func (b ortBackend) probe(d Device, auto bool) error {
	ortEnv.mu.Lock()
	lib := ortEnv.path
	ortEnv.mu.Unlock()
	if err := providerPrerequisites(d, lib); err != nil {
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
	opts, err := b.sessionOptions(d, 1)
	if err != nil {
		return err
	}
	defer opts.Destroy()
	session, err := ort.NewDynamicAdvancedSessionWithONNXData(graph, []string{"x"}, []string{"y"}, opts)
	if err != nil {
		return fmt.Errorf("creating a probe session: %w", err)
	}
	defer session.Destroy()
	x, err := ort.NewTensor(ort.NewShape(1, 1, 16), make([]float32, 16))
	if err != nil {
		return fmt.Errorf("creating the probe input: %w", err)
	}
	defer x.Destroy()
	y, err := ort.NewEmptyTensor[float32](ort.NewShape(1, 1, 14))
	if err != nil {
		return fmt.Errorf("creating the probe output: %w", err)
	}
	defer y.Destroy()
	if err := session.Run([]ort.Value{x}, []ort.Value{y}); err != nil {
		return fmt.Errorf("running the probe: %w", err)
	}
	return nil
}

func (b ortBackend) newRunner(graph []byte, io modelIO, d Device, threads int) (runner, error) {
	opts, err := b.sessionOptions(d, threads)
	if err != nil {
		return nil, err
	}
	defer opts.Destroy()
	session, err := ort.NewDynamicAdvancedSessionWithONNXData(graph, io.inputNames(), io.outputNames(), opts)
	if err != nil {
		return nil, fmt.Errorf("creating session: %w", err)
	}
	return &ortRunner{session: session, io: io, serial: runLock(d)}, nil
}

// webgpuRuns serialises Run calls on the WebGPU provider. Its sessions share one device context per process, and
// two sessions running at once (the acoustic and decoder halves of a split voice) crashed inside ONNX Runtime 1.30
// on the H200 (SIGSEGV in Run; see BENCHMARKS.md). Packing and unpacking batches on the CPU still overlap the device.
// Process-wide like the ORT environment and the device it guards.
var webgpuRuns deviceLock

func runLock(d Device) *deviceLock {
	if d == DeviceWebGPU {
		return &webgpuRuns
	}
	return nil
}

// deviceLock serialises a device's runs, and knows whether anyone holds it or waits for it: a run that may go
// elsewhere (TextDevice auto) takes the device only when it is idle, not just between two runs of a queue.
type deviceLock struct {
	mu    sync.Mutex
	users atomic.Int32 // goroutines holding or waiting for mu
}

func (l *deviceLock) Lock() {
	l.users.Add(1)
	l.mu.Lock()
}

func (l *deviceLock) Unlock() {
	l.mu.Unlock()
	l.users.Add(-1)
}

// TryLockIdle takes the lock only if nobody holds it or waits for it, and says whether it did.
func (l *deviceLock) TryLockIdle() bool {
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

// runSession runs session, holding serial (if any) for the device's sake.
func runSession(session *ort.DynamicAdvancedSession, serial *deviceLock, inputs, outputs []ort.Value) error {
	return runSessionIf(session, serial, false, nil, inputs, outputs)
}

// runSessionIf is runSession that, with try, runs only if the device is idle (see TryLockIdle), else returns
// errDeviceBusy. held, when not nil, adds the nanoseconds serial was held.
func runSessionIf(session *ort.DynamicAdvancedSession, serial *deviceLock, try bool, held *atomic.Int64, inputs, outputs []ort.Value) error {
	if serial != nil {
		if !try {
			serial.Lock()
		} else if !serial.TryLockIdle() {
			return errDeviceBusy
		}
		defer serial.Unlock()
		if held != nil {
			start := time.Now()
			defer func() { held.Add(int64(time.Since(start))) }()
		}
	}
	return session.Run(inputs, outputs)
}

// errDeviceBusy: tryRunGraph found the device running something else.
var errDeviceBusy = errors.New("device busy")

// destroyOutputs frees the values a Run created. A failed Run can leave a typed nil in the slice (onnxruntime_go
// stores what it failed to create, such as a tensor of rank 0), which must be skipped, not destroyed.
func destroyOutputs(outputs []ort.Value) {
	for _, v := range outputs {
		if v != nil && !reflect.ValueOf(v).IsNil() {
			v.Destroy()
		}
	}
}

// ortRunner runs one ORT session. ORT allows concurrent Run calls on a session, and run keeps all its tensors
// local, so it is safe from several goroutines.
type ortRunner struct {
	session *ort.DynamicAdvancedSession
	io      modelIO
	serial  *deviceLock // nil, or the device's lock (see runLock)
}

func (r *ortRunner) run(in batchInput) (batchOutput, error) {
	var inputs []ort.Value
	defer func() {
		for _, v := range inputs {
			v.Destroy()
		}
	}()
	add := func(v ort.Value, err error) error {
		if err != nil {
			return fmt.Errorf("creating input tensor: %w", err)
		}
		inputs = append(inputs, v)
		return nil
	}
	b, l := int64(in.size), int64(in.width)
	scales := []float32{in.scales.Noise, in.scales.Length, in.scales.NoiseW}
	err := errors.Join(
		add(ort.NewTensor(ort.NewShape(b, l), in.ids)),
		add(ort.NewTensor(ort.NewShape(b), in.lengths)),
		add(ort.NewTensor(ort.NewShape(3), scales)),
	)
	if err == nil && r.io.hasSpeaker {
		speakers := in.speakers
		if speakers == nil {
			speakers = make([]int64, in.size)
		}
		err = add(ort.NewTensor(ort.NewShape(b), speakers))
	}
	if err != nil {
		return batchOutput{}, err
	}
	outputs := make([]ort.Value, len(r.io.outputNames()))
	defer destroyOutputs(outputs)
	if err := runSession(r.session, r.serial, inputs, outputs); err != nil {
		return batchOutput{}, fmt.Errorf("running batch of %d x %d phonemes: %w", b, l, err)
	}
	var out batchOutput
	audio, ok := outputs[0].(*ort.Tensor[float32])
	if !ok {
		return batchOutput{}, fmt.Errorf("output %q is %T, want a float32 tensor", outputAudio, outputs[0])
	}
	if shape := audio.GetShape(); len(shape) == 0 || shape[0] != b {
		return batchOutput{}, fmt.Errorf("output %q has shape %v, want batch %d first", outputAudio, shape, b)
	}
	out.audio = append([]float32(nil), audio.GetData()...)
	if r.io.hasFrames {
		frames, ok := outputs[1].(*ort.Tensor[float32])
		if !ok {
			return batchOutput{}, fmt.Errorf("output %q is %T, want a float32 tensor", outputFrames, outputs[1])
		}
		out.frames = append([]float32(nil), frames.GetData()...)
	}
	return out, nil
}

func (r *ortRunner) close() error {
	if err := r.session.Destroy(); err != nil {
		return fmt.Errorf("destroying session: %w", err)
	}
	return nil
}

func (b ortBackend) newGraphRunner(graph []byte, inputs, outputs []string, d Device, threads int) (graphRunner, error) {
	opts, err := b.sessionOptions(d, threads)
	if err != nil {
		return nil, err
	}
	defer opts.Destroy()
	session, err := ort.NewDynamicAdvancedSessionWithONNXData(graph, inputs, outputs, opts)
	if err != nil {
		return nil, fmt.Errorf("creating session: %w", err)
	}
	return &ortGraphRunner{session: session, outputs: len(outputs), serial: runLock(d)}, nil
}

// ortGraphRunner runs a session with positional tensors; like ortRunner it keeps its tensors local.
type ortGraphRunner struct {
	session *ort.DynamicAdvancedSession
	outputs int
	serial  *deviceLock  // nil, or the device's lock (see runLock)
	held    atomic.Int64 // nanoseconds its runs held serial: the device's time, waiting for it excluded
	// plans maps the input shapes of earlier runs to their outputs' shapes and types (outputPlan), so that later
	// runs give ONNX Runtime Go-allocated outputs to fill. Left to itself ONNX Runtime allocates each output in its
	// own memory and onnxruntime_go copies it into Go memory, inside Run: on the H200 that copy and the fresh pages
	// it touched cost 4-7 ms of a 50 ms decoder run, with the device held (BENCHMARKS.md, fifth session).
	plans sync.Map
	// planned counts plans; past maxPlans (batches of every size and width: an acoustic part's inputs) no more are
	// kept, so a long run's runners stay small.
	planned atomic.Int64
	// shapesVary: a planned run failed where the same run with outputs of its own shapes did not (a graph whose
	// output shapes depend on its data, not just its input shapes): plans are no longer used.
	shapesVary atomic.Bool
	// sameShapes, once its first run showed each output to have the shape and element type of an input, holds
	// that input's index for each output ([]int): a shape-preserving graph (a VITS flow, whose batches change
	// shape every run) then gets its outputs planned for input shapes it has not seen yet.
	sameShapes atomic.Value
}

// maxPlans bounds a graph runner's plans (a decoder's runs take a handful of shapes; the flow's are planned from
// its input's).
const maxPlans = 1024

// outputPlan is what a run's outputs look like for given input shapes.
type outputPlan struct {
	shapes [][]int64
	int64s []bool // element type int64, else float32
}

func (r *ortGraphRunner) deviceTime() time.Duration { return time.Duration(r.held.Load()) }

func (r *ortGraphRunner) runGraph(inputs []tensor) ([]tensor, error) {
	return r.run(inputs, false)
}

func (r *ortGraphRunner) tryRunGraph(inputs []tensor) ([]tensor, error) {
	return r.run(inputs, true)
}

// run runs the session on inputs; with try, only if its device is free at once (else errDeviceBusy).
func (r *ortGraphRunner) run(inputs []tensor, try bool) ([]tensor, error) {
	values := make([]ort.Value, 0, len(inputs))
	defer func() {
		for _, v := range values {
			v.Destroy()
		}
	}()
	for i, in := range inputs {
		v, err := inputValue(in)
		if err != nil {
			return nil, fmt.Errorf("creating input tensor %d of shape %v: %w", i, in.shape, err)
		}
		values = append(values, v)
	}
	key := shapesKey(inputs)
	planFailed := false
	if !r.shapesVary.Load() {
		plan, ok := r.plans.Load(key)
		if !ok {
			if same, _ := r.sameShapes.Load().([]int); len(same) > 0 {
				p := outputPlan{shapes: make([][]int64, len(same)), int64s: make([]bool, len(same))}
				for i, j := range same {
					p.shapes[i], p.int64s[i] = inputs[j].shape, inputs[j].i64 != nil
				}
				plan, ok = p, true
			}
		}
		if ok {
			out, err := r.runPlanned(values, plan.(outputPlan), try)
			if err == nil || err == errDeviceBusy {
				return out, err
			}
			planFailed = true // the general run below tells a shape the data chose from a run that fails anyway
		}
	}
	outputs := make([]ort.Value, r.outputs)
	defer destroyOutputs(outputs)
	if err := runSessionIf(r.session, r.serial, try, &r.held, values, outputs); err != nil {
		if err == errDeviceBusy {
			return nil, err
		}
		return nil, fmt.Errorf("running graph: %w", err)
	}
	if planFailed {
		// It ran with outputs of its own shapes: these depend on the data, so plans are off from now on.
		r.shapesVary.Store(true)
	}
	out := make([]tensor, len(outputs))
	plan := outputPlan{shapes: make([][]int64, len(outputs)), int64s: make([]bool, len(outputs))}
	for i, v := range outputs {
		switch t := v.(type) {
		case *ort.Tensor[float32]:
			out[i] = tensor{shape: slices.Clone([]int64(t.GetShape())), f32: slices.Clone(t.GetData())}
		case *ort.Tensor[int64]:
			out[i] = tensor{shape: slices.Clone([]int64(t.GetShape())), i64: slices.Clone(t.GetData())}
			plan.int64s[i] = true
		default:
			return nil, fmt.Errorf("output %d is %T, want a float32 or int64 tensor", i, v)
		}
		plan.shapes[i] = slices.Clone(out[i].shape) // the caller owns out
	}
	if !r.shapesVary.Load() {
		if r.planned.Add(1) <= maxPlans {
			r.plans.Store(key, plan)
		}
		if r.sameShapes.Load() == nil {
			r.sameShapes.Store(sameShapes(inputs, out))
		}
	}
	return out, nil
}

// sameShapes is, for each output, the first input of its shape and element type; empty if an output has none.
func sameShapes(inputs, outputs []tensor) []int {
	same := make([]int, len(outputs))
	for i, out := range outputs {
		same[i] = slices.IndexFunc(inputs, func(in tensor) bool {
			return slices.Equal(in.shape, out.shape) && (in.i64 != nil) == (out.i64 != nil)
		})
		if same[i] < 0 {
			return []int{}
		}
	}
	return same
}

// shapesKey names the shapes and element types of a run's inputs.
func shapesKey(inputs []tensor) string {
	var key strings.Builder
	for _, in := range inputs {
		fmt.Fprintf(&key, "%v/%t;", in.shape, in.i64 != nil)
	}
	return key.String()
}

// inputValue makes an ONNX Runtime tensor of in, over its own memory.
func inputValue(in tensor) (ort.Value, error) {
	if in.i64 != nil {
		return ort.NewTensor(ort.NewShape(in.shape...), in.i64)
	}
	return ort.NewTensor(ort.NewShape(in.shape...), in.f32)
}

// runPlanned runs the session with outputs of the plan's shapes, allocated here in Go memory that the returned
// tensors keep.
func (r *ortGraphRunner) runPlanned(values []ort.Value, plan outputPlan, try bool) ([]tensor, error) {
	outputs := make([]ort.Value, len(plan.shapes))
	defer destroyOutputs(outputs)
	out := make([]tensor, len(plan.shapes))
	for i, shape := range plan.shapes {
		var err error
		if plan.int64s[i] {
			var t *ort.Tensor[int64]
			if t, err = ort.NewEmptyTensor[int64](ort.NewShape(shape...)); err == nil {
				outputs[i], out[i] = t, tensor{shape: slices.Clone(shape), i64: t.GetData()}
			}
		} else {
			var t *ort.Tensor[float32]
			if t, err = ort.NewEmptyTensor[float32](ort.NewShape(shape...)); err == nil {
				outputs[i], out[i] = t, tensor{shape: slices.Clone(shape), f32: t.GetData()}
			}
		}
		if err != nil {
			return nil, fmt.Errorf("creating output tensor %d of shape %v: %w", i, shape, err)
		}
	}
	if err := runSessionIf(r.session, r.serial, try, &r.held, values, outputs); err != nil {
		return nil, err
	}
	return out, nil
}

func (r *ortGraphRunner) close() error {
	if err := r.session.Destroy(); err != nil {
		return fmt.Errorf("destroying session: %w", err)
	}
	return nil
}
