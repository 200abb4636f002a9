package ort

import onnxrt "github.com/yalue/onnxruntime_go"

// What the external tests (package ort_test, which load the library through orttest) look at inside a Runner and
// the environment.

// Planned says whether the runner has an output plan for inputs' shapes.
func (r *Runner) Planned(inputs []Tensor) bool {
	_, ok := r.plans.Load(shapesKey(inputs))
	return ok
}

// PlanCount is how many input shapes the runner has plans for.
func (r *Runner) PlanCount() int {
	n := 0
	r.plans.Range(func(any, any) bool { n++; return true })
	return n
}

// ShapesVary says whether the runner has stopped planning outputs.
func (r *Runner) ShapesVary() bool { return r.shapesVary.Load() }

// SameShapes is, once known, the input whose shape each output takes (empty: not every output takes one).
func (r *Runner) SameShapes() []int {
	same, _ := r.sameShapes.Load().([]int)
	return same
}

// Session is the runner's ONNX Runtime session, for benchmarks that run it on tensors they keep.
func (r *Runner) Session() *onnxrt.DynamicAdvancedSession { return r.session }

// InputValue is inputValue.
var InputValue = inputValue

// SharedArena says whether Init registered a CPU arena for sessions to share.
func SharedArena() bool {
	env.mu.Lock()
	defer env.mu.Unlock()
	return env.sharedArena
}

// SharesArena says whether a CPU session made by s uses the environment's arena.
func (s Sessions) SharesArena() (bool, error) {
	opts, err := s.options(DeviceCPU, 1)
	if err != nil {
		return false, err
	}
	defer opts.Destroy()
	return opts.HasSessionConfigEntry("session.use_env_allocators")
}

// ProbeGraph is probeGraph.
var ProbeGraph = probeGraph
