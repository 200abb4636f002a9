package vits

import (
	"fmt"
	"testing"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"github.com/ttsgen/ttsgen/internal/onnxgraph"
	"github.com/ttsgen/ttsgen/internal/ort"
	"github.com/ttsgen/ttsgen/internal/ort/orttest"
)

// TestCutTextBoundaryTypes: what crosses must be float32 or int64; a boolean tensor the expansion reads is
// recomputed there from what it was made of, and a tensor made of constants alone is not handed over.
func TestCutTextBoundaryTypes(t *testing.T) {
	f := int32(onnx.TensorProto_FLOAT)
	graph := &onnx.GraphProto{
		Input: []*onnx.ValueInfoProto{onnxgraph.TypedTensor("x", f), onnxgraph.TypedTensor("lengths", int32(onnx.TensorProto_INT64))},
		Initializer: []*onnx.TensorProto{
			{Name: "half", DataType: f, Dims: []int64{1}, FloatData: []float32{0.5}},
		},
		Node: []*onnx.NodeProto{
			{Name: "enc", OpType: "Exp", Input: []string{"x"}, Output: []string{"h"}},
			{Name: "/Ceil", OpType: "Ceil", Input: []string{"h"}, Output: []string{"w"}},
			{Name: "positive", OpType: "Greater", Input: []string{"h", "half"}, Output: []string{"mask"}},
			{Name: "weight", OpType: "Identity", Input: []string{"half"}, Output: []string{"shared"}},
			{Name: "shape", OpType: "Shape", Input: []string{"h"}, Output: []string{"hshape"}},
			{Name: "sum", OpType: "CumSum", Input: []string{"w", "lengths"}, Output: []string{"ends"}},
			{Name: "pick", OpType: "Where", Input: []string{"mask", "ends", "shared"}, Output: []string{"y"}},
			{Name: "shape_y", OpType: "Reshape", Input: []string{"y", "hshape"}, Output: []string{"z"}},
		},
		Output: []*onnx.ValueInfoProto{onnxgraph.TypedTensor("z", f)},
	}
	cut, err := CutText(&onnx.ModelProto{IrVersion: 8, OpsetImport: []*onnx.OperatorSetIdProto{{Version: 15}}, Graph: graph})
	if err != nil {
		t.Fatal(err)
	}
	// h crosses (the boolean mask is recomputed from it and from the initializer), w crosses, the shape crosses as
	// int64; "shared" (an Identity of a weight) does not.
	if got, want := fmt.Sprint(cut.Boundary), "[text:h text:hshape text:w]"; got != want {
		t.Errorf("boundary %s, want %s", got, want)
	}
	if got, want := fmt.Sprint(cut.ExpandInput), "[text:h text:hshape text:w lengths]"; got != want {
		t.Errorf("expansion inputs %s, want %s", got, want)
	}
	for _, out := range cut.Text.GetGraph().GetOutput() {
		want := f
		if out.GetName() == "text:hshape" {
			want = int32(onnx.TensorProto_INT64)
		}
		if got := out.GetType().GetTensorType().GetElemType(); got != want {
			t.Errorf("text part output %s declared as type %d, want %d", out.GetName(), got, want)
		}
	}
}

// TestLeadingAxisBothOpsets: the Unsqueeze and Squeeze that carry a text part's outputs across the cut run in ONNX
// Runtime both before opset 13 (axes an attribute) and from it (axes an input).
func TestLeadingAxisBothOpsets(t *testing.T) {
	orttest.Need(t)
	for _, opset := range []int64{11, 13, 15} {
		negate := func(in, out string) *onnx.ModelProto {
			g := &onnx.GraphProto{Name: "g", Input: []*onnx.ValueInfoProto{onnxgraph.FloatTensor(in)}, Output: []*onnx.ValueInfoProto{onnxgraph.FloatTensor(out)},
				Node: []*onnx.NodeProto{{Name: "neg", OpType: "Neg", Input: []string{in}, Output: []string{out}}}}
			return &onnx.ModelProto{IrVersion: 7, OpsetImport: []*onnx.OperatorSetIdProto{{Version: opset}}, Graph: g}
		}
		crossing := map[string]string{"y": "y"}
		text, expand := negate("x", "y"), negate("y", "z")
		addLeadingAxis(text, crossing, true)
		addLeadingAxis(expand, crossing, false)
		run := func(graph *onnx.ModelProto, in, out string, x ort.Tensor) ort.Tensor {
			return orttest.Run(t, graph, []string{in}, []string{out}, ort.DeviceCPU, []ort.Tensor{x})[0]
		}
		crossed := run(text, "x", "text:y", ort.Tensor{Shape: []int64{2}, F32: []float32{1, -2}})
		back := run(expand, "text:y", "z", crossed)
		if fmt.Sprint(crossed.Shape, crossed.F32, back.Shape, back.F32) != "[1 2] [-1 2] [2] [1 -2]" {
			t.Errorf("opset %d: crossed %v %v, back %v %v; want [1 2] [-1 2], then [2] [1 -2]", opset, crossed.Shape, crossed.F32, back.Shape, back.F32)
		}
	}
}
