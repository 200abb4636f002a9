package onnxgraph

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"github.com/ttsgen/ttsgen/internal/ort/orttest"
	"google.golang.org/protobuf/proto"
)

// layerNormTestGraph is out = Relu(LayerNorm(x)) over x [2, 3, 6]'s last axis, written as Piper's exporter writes a
// LayerNorm before opset 17 (layernorm.go); edit changes the graph first.
func layerNormTestGraph(opset int64, edit func(g *onnx.GraphProto)) *onnx.ModelProto {
	rng := rand.New(rand.NewPCG(7, 8))
	gamma, beta := make([]float32, 6), make([]float32, 6)
	for i := range gamma {
		gamma[i], beta[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
	}
	lastAxis := halfTestAttr("axes", []int64{-1})
	g := &onnx.GraphProto{
		Node: []*onnx.NodeProto{
			halfTestNode("ReduceMean", []string{"x"}, "mean", lastAxis),
			halfTestNode("Sub", []string{"x", "mean"}, "centred"),
			halfTestNode("Constant", nil, "two", halfTestAttr("value", halfTestFloats("", []float32{2}))),
			halfTestNode("Pow", []string{"centred", "two"}, "squares"),
			halfTestNode("ReduceMean", []string{"squares"}, "variance", lastAxis),
			halfTestNode("Constant", nil, "eps", halfTestAttr("value", halfTestFloats("", []float32{1e-5}))),
			halfTestNode("Add", []string{"variance", "eps"}, "variance_eps"),
			halfTestNode("Sqrt", []string{"variance_eps"}, "std"),
			halfTestNode("Div", []string{"centred", "std"}, "normed"),
			halfTestNode("Mul", []string{"normed", "gamma"}, "scaled"),
			halfTestNode("Add", []string{"beta", "scaled"}, "y"), // beta first: either order is a LayerNorm
			halfTestNode("Relu", []string{"y"}, "out"),
		},
		Initializer: []*onnx.TensorProto{halfTestRaw("gamma", gamma, 6), halfTestFloats("beta", beta, 6)},
		Input:       []*onnx.ValueInfoProto{halfTestValue("x", onnx.TensorProto_FLOAT, 2, 3, 6)},
		Output:      []*onnx.ValueInfoProto{halfTestValue("out", onnx.TensorProto_FLOAT, 2, 3, 6)},
	}
	if edit != nil {
		edit(g)
	}
	return halfTestModel(opset, g)
}

// A decomposed LayerNorm becomes one LayerNormalization (opset raised to 17) that gives the same values on ONNX
// Runtime.
func TestFuseLayerNorms(t *testing.T) {
	orttest.Need(t)
	graph := layerNormTestGraph(15, nil)
	fused := proto.Clone(graph).(*onnx.ModelProto)
	if n := FuseLayerNorms(fused); n != 1 {
		t.Fatalf("fused %d; want 1", n)
	}
	counts := orttest.OpCounts(fused)
	if counts["LayerNormalization"] != 1 || counts["ReduceMean"]+counts["Sub"]+counts["Pow"]+counts["Sqrt"]+counts["Div"]+counts["Mul"]+counts["Add"] != 0 {
		t.Errorf("fused graph's operators: %v", counts)
	}
	if opset := DefaultOpset(fused); opset != 17 {
		t.Errorf("fused graph's opset %d, want 17", opset)
	}
	rng := rand.New(rand.NewPCG(9, 10))
	x := make([]float32, 2*3*6)
	for i := range x {
		x[i] = float32(rng.NormFloat64()*3 + 1)
	}
	in := []halfTestInput{{name: "x", floats: x, shape: []int64{2, 3, 6}}}
	want := runHalfTestGraph(t, graph, in, "out")
	got := runHalfTestGraph(t, fused, in, "out")
	if d := orttest.MaxAbsDiff(got, want); d > 1e-5 || slices.Max(want) <= 0 {
		t.Errorf("fused graph's output differs by %g (largest value %g)", d, slices.Max(want))
	}
}

// What is not exactly a LayerNorm over the last axis, or a model whose opset cannot be raised, is left as it is.
func TestFuseLayerNormsLeaves(t *testing.T) {
	setNode := func(out string, edit func(n *onnx.NodeProto)) func(g *onnx.GraphProto) {
		return func(g *onnx.GraphProto) {
			for _, n := range g.Node {
				if n.Output[0] == out {
					edit(n)
				}
			}
		}
	}
	for _, tt := range []struct {
		name  string
		opset int64
		edit  func(g *onnx.GraphProto)
	}{
		{"mean over another axis", 15, setNode("mean", func(n *onnx.NodeProto) { n.Attribute[0].Ints = []int64{1} })},
		{"mean not keeping the axis", 15, setNode("variance", func(n *onnx.NodeProto) {
			n.Attribute = append(n.Attribute, halfTestAttr("keepdims", int64(0)))
		})},
		{"cubes, not squares", 15, setNode("two", func(n *onnx.NodeProto) { n.Attribute[0].T.FloatData = []float32{3} })},
		{"an intermediate read elsewhere", 15, func(g *onnx.GraphProto) {
			g.Node = append(g.Node, halfTestNode("Neg", []string{"centred"}, "neg"))
			g.Output = append(g.Output, halfTestValue("neg", onnx.TensorProto_FLOAT, 2, 3, 6))
		}},
		{"an intermediate that is a graph output", 15, func(g *onnx.GraphProto) {
			g.Output = append(g.Output, halfTestValue("normed", onnx.TensorProto_FLOAT, 2, 3, 6))
		}},
		{"one gamma for every channel", 15, func(g *onnx.GraphProto) {
			g.Initializer[0] = halfTestFloats("gamma", []float32{2}, 1)
		}},
		{"epsilon from an input", 15, func(g *onnx.GraphProto) {
			setNode("variance_eps", func(n *onnx.NodeProto) { n.Input[1] = "eps_in" })(g)
			g.Input = append(g.Input, halfTestValue("eps_in", onnx.TensorProto_FLOAT, 1))
		}},
		{"opset 12 (Squeeze's axes an attribute)", 12, nil},
		{"RoiAlign, whose default changed at opset 16", 15, func(g *onnx.GraphProto) {
			g.Node = append(g.Node, halfTestNode("RoiAlign", []string{"x", "rois", "idx"}, "pooled"))
		}},
		{"BatchNormalization's training outputs, gone at opset 14", 13, func(g *onnx.GraphProto) {
			bn := halfTestNode("BatchNormalization", []string{"x", "s", "b", "m", "v"}, "bn")
			bn.Output = append(bn.Output, "bn_mean", "bn_var")
			g.Node = append(g.Node, bn)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			graph := layerNormTestGraph(tt.opset, tt.edit)
			got := proto.Clone(graph).(*onnx.ModelProto)
			if n := FuseLayerNorms(got); n != 0 || !proto.Equal(got, graph) {
				t.Errorf("fused %d (graph changed %v); want the graph as it was", n, !proto.Equal(got, graph))
			}
		})
	}
}
