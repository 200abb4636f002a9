package onnxgraph

import (
	"math"
	"testing"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"github.com/ttsgen/ttsgen/internal/ort/orttest"
	"google.golang.org/protobuf/proto"
)

// zeroAddGraph is out = zeros_like(x) + y and out2 = y + zeros_like(x) with y = x*2 (x [2, 3, 4]), the zeros a
// ConstantOfShape with the given value attribute (nil: none, whose default is a float zero).
func zeroAddGraph(value *onnx.TensorProto) *onnx.ModelProto {
	var attrs []*onnx.AttributeProto
	if value != nil {
		attrs = append(attrs, halfTestAttr("value", value))
	}
	g := &onnx.GraphProto{
		Node: []*onnx.NodeProto{
			halfTestNode("Shape", []string{"x"}, "shape"),
			halfTestNode("ConstantOfShape", []string{"shape"}, "zeros", attrs...),
			halfTestNode("Mul", []string{"x", "two"}, "y"),
			halfTestNode("Add", []string{"zeros", "y"}, "out"),
			halfTestNode("Add", []string{"y", "zeros"}, "out2"),
		},
		Initializer: []*onnx.TensorProto{halfTestFloats("two", []float32{2})},
		Input:       []*onnx.ValueInfoProto{halfTestValue("x", onnx.TensorProto_FLOAT, 2, 3, 4)},
		Output: []*onnx.ValueInfoProto{halfTestValue("out", onnx.TensorProto_FLOAT, 2, 3, 4),
			halfTestValue("out2", onnx.TensorProto_FLOAT, 2, 3, 4)},
	}
	return halfTestModel(15, g)
}

// Adding a ConstantOfShape of zeros becomes an Expand of the other operand, with the same values; other constants
// are left alone.
func TestDropZeroAdds(t *testing.T) {
	orttest.Need(t)
	x := make([]float32, 24)
	for i := range x {
		x[i] = float32(i) - 7.5
	}
	in := []halfTestInput{{name: "x", floats: x, shape: []int64{2, 3, 4}}}
	for _, tt := range []struct {
		name  string
		value *onnx.TensorProto
		want  int
	}{
		{"no value (a float zero)", nil, 2},
		{"float zero", halfTestFloats("", []float32{0}, 1), 2},
		{"float minus zero", halfTestRaw("", []float32{float32(math.Copysign(0, -1))}, 1), 2},
		{"float16 zero", &onnx.TensorProto{DataType: int32(onnx.TensorProto_FLOAT16), Dims: []int64{1}, Int32Data: []int32{0}}, 0}, // x is float: ORT would refuse the graph, so only the count is checked
		{"ones", halfTestFloats("", []float32{1}, 1), 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			graph := zeroAddGraph(tt.value)
			got := proto.Clone(graph).(*onnx.ModelProto)
			n := DropZeroAdds(got)
			if tt.value != nil && tt.value.GetDataType() == int32(onnx.TensorProto_FLOAT16) {
				if n != 2 {
					t.Errorf("float16 zeros: replaced %d; want 2", n)
				}
				return
			}
			if n != tt.want {
				t.Fatalf("replaced %d; want %d", n, tt.want)
			}
			if counts := orttest.OpCounts(got); counts["Expand"] != tt.want || counts["Add"] != 2-tt.want ||
				counts["ConstantOfShape"] != map[bool]int{true: 1}[tt.want == 0] {
				t.Errorf("operators after: %v", counts)
			}
			if tt.want == 0 {
				if !proto.Equal(got, graph) {
					t.Error("graph changed with nothing to replace")
				}
				return
			}
			for _, out := range []string{"out", "out2"} {
				want := runHalfTestGraph(t, graph, in, out)
				if d := orttest.MaxAbsDiff(runHalfTestGraph(t, got, in, out), want); d != 0 {
					t.Errorf("%s differs by %g", out, d)
				}
			}
		})
	}
}
