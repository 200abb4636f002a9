package engine

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"github.com/ttsgen/ttsgen/internal/ort"
	"github.com/ttsgen/ttsgen/internal/ort/orttest"
)

// layerNormTestGraph is out = Relu(LayerNorm(x)) over x [2, 3, 6]'s last axis, written as Piper's exporter writes a
// LayerNorm before opset 17 (layernorm.go); edit changes the graph before it is encoded.
func layerNormTestGraph(t *testing.T, opset int64, edit func(g *onnx.GraphProto)) []byte {
	t.Helper()
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
	return halfTestModel(t, opset, g)
}

func opCounts(t *testing.T, graph []byte) map[string]int {
	t.Helper()
	counts := map[string]int{}
	for _, n := range halfTestDecode(t, graph).GetNode() {
		counts[n.GetOpType()]++
	}
	return counts
}

// A decomposed LayerNorm becomes one LayerNormalization (opset raised to 17) that gives the same values on ONNX
// Runtime.
func TestFuseLayerNorms(t *testing.T) {
	orttest.Need(t)
	graph := layerNormTestGraph(t, 15, nil)
	fused, n, err := fuseLayerNorms(graph)
	if err != nil || n != 1 {
		t.Fatalf("fused %d, err %v; want 1", n, err)
	}
	counts := opCounts(t, fused)
	if counts["LayerNormalization"] != 1 || counts["ReduceMean"]+counts["Sub"]+counts["Pow"]+counts["Sqrt"]+counts["Div"]+counts["Mul"]+counts["Add"] != 0 {
		t.Errorf("fused graph's operators: %v", counts)
	}
	if opset := defaultOpset(decodeModel(t, fused)); opset != 17 {
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
	if d := maxAbsDiff(got, want); d > 1e-5 || slices.Max(want) <= 0 {
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
			graph := layerNormTestGraph(t, tt.opset, tt.edit)
			got, n, err := fuseLayerNorms(graph)
			if err != nil || n != 0 || !slices.Equal(got, graph) {
				t.Errorf("fused %d (err %v, graph changed %v); want the graph as it was", n, err, !slices.Equal(got, graph))
			}
		})
	}
}

// Every LayerNorm of the Piper-shaped voice (its text encoder's and duration predictor's) is fused, and its
// acoustic part gives the same outputs for a batch of sentences.
func TestFuseLayerNormsPiperShaped(t *testing.T) {
	orttest.Need(t)
	sv, io := splitVoiceAt(t, piperShapedVoicePath)
	before := opCounts(t, sv.acoustic)
	fused, n, err := fuseLayerNorms(sv.acoustic)
	if err != nil {
		t.Fatal(err)
	}
	if after := opCounts(t, fused); n == 0 || n != before["ReduceMean"]/2 || after["ReduceMean"] != 0 || after["LayerNormalization"] != n {
		t.Fatalf("fused %d LayerNorms; ReduceMean %d before, %d after; LayerNormalization %d",
			n, before["ReduceMean"], after["ReduceMean"], after["LayerNormalization"])
	}
	rng := rand.New(rand.NewPCG(11, 12))
	in := paddedBatch(rng, 30, 12, 21)
	var outs [2][]ort.Tensor
	for i, g := range [][]byte{sv.acoustic, fused} {
		outs[i] = orttest.Run(t, g, io.inputNames(), sv.acousticOutputs(), ort.DeviceCPU, acousticInputs(in, io))
	}
	for i := range outs[0] {
		if !slices.Equal(outs[1][i].Shape, outs[0][i].Shape) {
			t.Fatalf("output %d: shape %v, want %v", i, outs[1][i].Shape, outs[0][i].Shape)
		}
		if d := maxAbsDiff(outs[1][i].F32, outs[0][i].F32); d > 1e-4 {
			t.Errorf("output %d differs by %g", i, d)
		}
	}
}
