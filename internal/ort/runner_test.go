package ort_test

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"google.golang.org/protobuf/proto"

	"github.com/ttsgen/ttsgen/internal/onnxgraph"
	"github.com/ttsgen/ttsgen/internal/ort"
	"github.com/ttsgen/ttsgen/internal/ort/orttest"
)

// A graph runner learns its outputs' shapes for given input shapes and then gives ONNX Runtime Go memory to fill:
// the second run must still compute (not return the first run's numbers), and a graph whose output shape depends on
// its data must fall back to letting ONNX Runtime allocate.
func TestGraphRunnerPlannedOutputs(t *testing.T) {
	orttest.Need(t)
	graph, err := ort.ProbeGraph() // y = Conv(x, [0.25, 0.5, 0.25]): 16 samples in, 14 out
	if err != nil {
		t.Fatal(err)
	}
	r, err := ort.Sessions{}.NewRunner(graph, []string{"x"}, []string{"y"}, ort.DeviceCPU, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for run := range 3 {
		x := make([]float32, 16)
		for i := range x {
			x[i] = float32(run*100 + i*i)
		}
		inputs := []ort.Tensor{{Shape: []int64{1, 1, 16}, F32: x}}
		planned := r.Planned(inputs)
		if planned != (run > 0) {
			t.Errorf("run %d: output plan there: %v", run, planned)
		}
		out, err := r.Run(inputs)
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		if len(out) != 1 || len(out[0].F32) != 14 || !slices.Equal(out[0].Shape, []int64{1, 1, 14}) {
			t.Fatalf("run %d: got %d outputs, shape %v", run, len(out), out[0].Shape)
		}
		for i, y := range out[0].F32 {
			if want := 0.25*x[i] + 0.5*x[i+1] + 0.25*x[i+2]; y != want {
				t.Fatalf("run %d: y[%d] = %g, want %g", run, i, y, want)
			}
		}
	}

	if r.ShapesVary() {
		t.Error("planned outputs turned off for a graph whose output shapes follow its input shapes")
	}
	if same := r.SameShapes(); len(same) != 0 {
		t.Errorf("Conv's output (14 samples from 16) taken for its input's shape: %v", same)
	}

	// y = x * 2 keeps its input's shape: after one run, outputs of shapes never seen are planned too.
	r3 := oneNodeRunner(t, "Mul", []string{"x", "two"}, nil, onnxgraph.FloatInit("two", []float32{2}))
	for n := 1; n <= 5; n++ {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(n + i)
		}
		out, err := r3.Run([]ort.Tensor{{Shape: []int64{1, int64(n)}, F32: x}})
		if err != nil {
			t.Fatalf("%d values: %v", n, err)
		}
		if !slices.Equal(out[0].Shape, []int64{1, int64(n)}) || len(out[0].F32) != n || out[0].F32[n-1] != 2*x[n-1] {
			t.Fatalf("%d values: got %v %v", n, out[0].Shape, out[0].F32)
		}
	}
	if same := r3.SameShapes(); !slices.Equal(same, []int{0}) || r3.ShapesVary() {
		t.Errorf("a shape-keeping graph: outputs like inputs %v, shapes vary %v", same, r3.ShapesVary())
	}
	if planned := r3.PlanCount(); planned != 1 {
		t.Errorf("%d shapes planned after their own runs, want only the first (the rest planned from the input)", planned)
	}

	// y = Expand(x, shape): the output's length is the value of the shape input, not its shape.
	r2 := oneNodeRunner(t, "Expand", []string{"x", "shape"}, []string{"shape"})
	for _, n := range []int64{3, 5, 2} {
		out, err := r2.Run([]ort.Tensor{{Shape: []int64{1}, F32: []float32{7}}, {Shape: []int64{1}, I64: []int64{n}}})
		if err != nil {
			t.Fatalf("expanding to %d: %v", n, err)
		}
		if len(out[0].F32) != int(n) || out[0].F32[n-1] != 7 {
			t.Fatalf("expanding to %d: got %v", n, out[0].F32)
		}
	}
	if !r2.ShapesVary() {
		t.Error("a graph whose output shape follows its data still uses planned outputs")
	}
}

// oneNodeRunner is a CPU graph runner for a graph of one node, op(inputs) -> "y" (float32), reading the graph inputs
// named in inputs (float32, or int64 for those in ints) and the initializers inits.
func oneNodeRunner(t *testing.T, op string, inputs []string, ints []string, inits ...*onnx.TensorProto) *ort.Runner {
	t.Helper()
	orttest.Need(t)
	graph := &onnx.GraphProto{
		Name:        strings.ToLower(op),
		Node:        []*onnx.NodeProto{{Name: "node", OpType: op, Input: inputs, Output: []string{"y"}}},
		Initializer: inits,
		Output:      []*onnx.ValueInfoProto{onnxgraph.FloatTensor("y")},
	}
	var names []string
	for _, in := range inputs {
		if slices.ContainsFunc(inits, func(i *onnx.TensorProto) bool { return i.GetName() == in }) {
			continue
		}
		names = append(names, in)
		if slices.Contains(ints, in) {
			graph.Input = append(graph.Input, onnxgraph.TypedTensor(in, int32(onnx.TensorProto_INT64)))
		} else {
			graph.Input = append(graph.Input, onnxgraph.FloatTensor(in))
		}
	}
	data, err := proto.Marshal(&onnx.ModelProto{IrVersion: 8, OpsetImport: []*onnx.OperatorSetIdProto{{Version: 15}}, Graph: graph})
	if err != nil {
		t.Fatal(err)
	}
	r, err := ort.Sessions{}.NewRunner(data, names, []string{"y"}, ort.DeviceCPU, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// A run that fails for its data (an out-of-range index), not its output shapes, must not turn planned outputs off:
// the runner goes on planning, and returns the failure.
func TestBadInputKeepsPlans(t *testing.T) {
	r := oneNodeRunner(t, "Gather", []string{"table", "idx"}, []string{"idx"}, onnxgraph.FloatInit("table", []float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 10))
	for _, idx := range [][]int64{{1, 2}, {3, 4}, {1, 99}, {5, 6}} {
		out, err := r.Run([]ort.Tensor{{Shape: []int64{2}, I64: idx}})
		if bad := idx[1] >= 10; bad != (err != nil) {
			t.Errorf("indices %v: err %v", idx, err)
		} else if !bad && (out[0].F32[0] != float32(idx[0]) || out[0].F32[1] != float32(idx[1])) {
			t.Errorf("indices %v: got %v", idx, out[0].F32)
		}
	}
	if r.ShapesVary() {
		t.Error("a run that failed on its data (not its shapes) turned planned outputs off for good")
	}
}

// Concurrent runs of one runner, planned and not (run with -race): each gets its own numbers, which it owns.
func TestPlannedOutputsConcurrent(t *testing.T) {
	r := oneNodeRunner(t, "Mul", []string{"x", "two"}, nil, onnxgraph.FloatInit("two", []float32{2}))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for k := range 200 {
				n := 1 + (g+k)%7
				x := make([]float32, n)
				for i := range x {
					x[i] = float32(g*1000 + k*10 + i)
				}
				out, err := r.Run([]ort.Tensor{{Shape: []int64{1, int64(n)}, F32: x}})
				if err != nil {
					t.Error(err)
					return
				}
				for i := range x {
					if out[0].F32[i] != 2*x[i] {
						t.Errorf("output %d = %g for input %g: another run's numbers", i, out[0].F32[i], x[i])
						return
					}
				}
				out[0].F32[0] = -1 // the caller owns it
			}
		})
	}
	wg.Wait()
}

// TestSharedCPUArena: Init registers one CPU memory arena with the environment, and CPU sessions use it (each
// session's own arena keeps room for the largest tensors it ever ran), unless OwnArenas asks for one each.
func TestSharedCPUArena(t *testing.T) {
	orttest.Need(t)
	if !ort.SharedArena() {
		t.Fatal("Init registered no shared CPU arena")
	}
	for _, own := range []bool{false, true} {
		set, err := ort.Sessions{OwnArenas: own}.SharesArena()
		if err != nil || set == own {
			t.Errorf("session arenas %v: shares the environment's arena %v (%v), want %v", own, set, err, !own)
		}
	}
}
