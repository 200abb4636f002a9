package ort

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	onnxrt "github.com/yalue/onnxruntime_go"
)

// Tensor is a dense tensor crossing the runner boundary: float32 (F32) or int64 (I64), row-major.
type Tensor struct {
	Shape []int64
	F32   []float32
	I64   []int64
}

// runSession runs session, holding serial (if any) for the device's sake; with try, only if the device is idle (see
// TryLockIdle), else it returns ErrDeviceBusy. held, when not nil, adds the nanoseconds serial was held.
func runSession(session *onnxrt.DynamicAdvancedSession, serial *DeviceLock, try bool, held *atomic.Int64, inputs, outputs []onnxrt.Value) error {
	if serial != nil {
		if !try {
			serial.Lock()
		} else if !serial.TryLockIdle() {
			return ErrDeviceBusy
		}
		defer serial.Unlock()
		if held != nil {
			start := time.Now()
			defer func() { held.Add(int64(time.Since(start))) }()
		}
	}
	return session.Run(inputs, outputs)
}

// ErrDeviceBusy is TryRun's error when the device is running something else.
var ErrDeviceBusy = errors.New("device busy")

// destroyOutputs frees the values a Run created. A failed Run can leave a typed nil in the slice (onnxruntime_go
// stores what it failed to create, such as a tensor of rank 0), which must be skipped, not destroyed.
func destroyOutputs(outputs []onnxrt.Value) {
	for _, v := range outputs {
		if v != nil && !reflect.ValueOf(v).IsNil() {
			v.Destroy()
		}
	}
}

// Runner runs one session on positional tensors. ORT allows concurrent Run calls on a session, and a run keeps
// all its tensors local, so a Runner is safe from several goroutines.
type Runner struct {
	session *onnxrt.DynamicAdvancedSession
	outputs int
	serial  *DeviceLock  // nil, or the device's lock (see RunLock)
	held    atomic.Int64 // nanoseconds its runs held serial: the device's time, waiting for it excluded
	// plans maps the input shapes of earlier runs to their outputs' shapes and types (outputPlan), so that later
	// runs give ONNX Runtime Go-allocated outputs to fill. Left to itself ONNX Runtime allocates each output in its
	// own memory and onnxruntime_go copies it into Go memory, inside Run, with the device held.
	plans sync.Map
	// planned counts plans; past maxPlans (batches of every size and width: an acoustic part's inputs) no more are
	// kept, so a long run's runners stay small.
	planned atomic.Int64
	// shapesVary: the runner was made without plans, or a planned run failed where the same run with outputs of
	// its own shapes did not (a graph whose output shapes depend on its data, not just its input shapes): plans are
	// not used.
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

// DeviceTime is how long the runner's runs have held a serialised device (0 for a device that runs several at once).
func (r *Runner) DeviceTime() time.Duration { return time.Duration(r.held.Load()) }

// Run runs the session on inputs and returns its outputs, which the caller owns.
func (r *Runner) Run(inputs []Tensor) ([]Tensor, error) {
	return r.run(inputs, false)
}

// TryRun is Run if the runner's device is free at once, else ErrDeviceBusy without running.
func (r *Runner) TryRun(inputs []Tensor) ([]Tensor, error) {
	return r.run(inputs, true)
}

// run runs the session on inputs; with try, only if its device is free at once (else ErrDeviceBusy).
func (r *Runner) run(inputs []Tensor, try bool) ([]Tensor, error) {
	values := make([]onnxrt.Value, 0, len(inputs))
	defer func() {
		for _, v := range values {
			v.Destroy()
		}
	}()
	for i, in := range inputs {
		v, err := inputValue(in)
		if err != nil {
			return nil, fmt.Errorf("creating input tensor %d of shape %v: %w", i, in.Shape, err)
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
					p.shapes[i], p.int64s[i] = inputs[j].Shape, inputs[j].I64 != nil
				}
				plan, ok = p, true
			}
		}
		if ok {
			out, err := r.runPlanned(values, plan.(outputPlan), try)
			if err == nil || err == ErrDeviceBusy {
				return out, err
			}
			planFailed = true // the general run below tells a shape the data chose from a run that fails anyway
		}
	}
	outputs := make([]onnxrt.Value, r.outputs)
	defer destroyOutputs(outputs)
	if err := runSession(r.session, r.serial, try, &r.held, values, outputs); err != nil {
		if err == ErrDeviceBusy {
			return nil, err
		}
		return nil, fmt.Errorf("running graph: %w", err)
	}
	if planFailed {
		// It ran with outputs of its own shapes: these depend on the data, so plans are off from now on.
		r.shapesVary.Store(true)
	}
	out := make([]Tensor, len(outputs))
	plan := outputPlan{shapes: make([][]int64, len(outputs)), int64s: make([]bool, len(outputs))}
	for i, v := range outputs {
		switch t := v.(type) {
		case *onnxrt.Tensor[float32]:
			out[i] = Tensor{Shape: slices.Clone([]int64(t.GetShape())), F32: slices.Clone(t.GetData())}
		case *onnxrt.Tensor[int64]:
			out[i] = Tensor{Shape: slices.Clone([]int64(t.GetShape())), I64: slices.Clone(t.GetData())}
			plan.int64s[i] = true
		default:
			return nil, fmt.Errorf("output %d is %T, want a float32 or int64 tensor", i, v)
		}
		plan.shapes[i] = slices.Clone(out[i].Shape) // the caller owns out
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
func sameShapes(inputs, outputs []Tensor) []int {
	same := make([]int, len(outputs))
	for i, out := range outputs {
		same[i] = slices.IndexFunc(inputs, func(in Tensor) bool {
			return slices.Equal(in.Shape, out.Shape) && (in.I64 != nil) == (out.I64 != nil)
		})
		if same[i] < 0 {
			return []int{}
		}
	}
	return same
}

// shapesKey names the shapes and element types of a run's inputs.
func shapesKey(inputs []Tensor) string {
	var key strings.Builder
	for _, in := range inputs {
		fmt.Fprintf(&key, "%v/%t;", in.Shape, in.I64 != nil)
	}
	return key.String()
}

// inputValue makes an ONNX Runtime tensor of in, over its own memory.
func inputValue(in Tensor) (onnxrt.Value, error) {
	if in.I64 != nil {
		return onnxrt.NewTensor(onnxrt.NewShape(in.Shape...), in.I64)
	}
	return onnxrt.NewTensor(onnxrt.NewShape(in.Shape...), in.F32)
}

// runPlanned runs the session with outputs of the plan's shapes, allocated here in Go memory that the returned
// tensors keep.
func (r *Runner) runPlanned(values []onnxrt.Value, plan outputPlan, try bool) ([]Tensor, error) {
	outputs := make([]onnxrt.Value, len(plan.shapes))
	defer destroyOutputs(outputs)
	out := make([]Tensor, len(plan.shapes))
	for i, shape := range plan.shapes {
		var err error
		if plan.int64s[i] {
			var t *onnxrt.Tensor[int64]
			if t, err = onnxrt.NewEmptyTensor[int64](onnxrt.NewShape(shape...)); err == nil {
				outputs[i], out[i] = t, Tensor{Shape: slices.Clone(shape), I64: t.GetData()}
			}
		} else {
			var t *onnxrt.Tensor[float32]
			if t, err = onnxrt.NewEmptyTensor[float32](onnxrt.NewShape(shape...)); err == nil {
				outputs[i], out[i] = t, Tensor{Shape: slices.Clone(shape), F32: t.GetData()}
			}
		}
		if err != nil {
			return nil, fmt.Errorf("creating output tensor %d of shape %v: %w", i, shape, err)
		}
	}
	if err := runSession(r.session, r.serial, try, &r.held, values, outputs); err != nil {
		return nil, err
	}
	return out, nil
}

// Close destroys the session.
func (r *Runner) Close() error {
	if err := r.session.Destroy(); err != nil {
		return fmt.Errorf("destroying session: %w", err)
	}
	return nil
}
