package onnxgraph

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"github.com/ttsgen/ttsgen/internal/ort"
	"github.com/ttsgen/ttsgen/internal/ort/orttest"
	"google.golang.org/protobuf/proto"
)

// convTransposeGraph is y = ConvTranspose(x) with random weights, x: [1, cin, t].
func convTransposeGraph(rng *rand.Rand, cin, cout, k, stride int, pads []int64, bias bool) *onnx.ModelProto {
	w := make([]float32, cin*cout*k)
	for i := range w {
		w[i] = float32(rng.NormFloat64())
	}
	inputs := []string{"x", "w"}
	inits := []*onnx.TensorProto{FloatInit("w", w, int64(cin), int64(cout), int64(k))}
	if bias {
		b := make([]float32, cout)
		for i := range b {
			b[i] = float32(rng.NormFloat64())
		}
		inits = append(inits, FloatInit("b", b, int64(cout)))
		inputs = append(inputs, "b")
	}
	return &onnx.ModelProto{IrVersion: 8, OpsetImport: []*onnx.OperatorSetIdProto{{Version: 15}},
		Graph: &onnx.GraphProto{Name: "ct",
			Node: []*onnx.NodeProto{{Name: "/dec/ups.0/ConvTranspose", OpType: "ConvTranspose", Input: inputs, Output: []string{"y"},
				Attribute: []*onnx.AttributeProto{IntsAttr("kernel_shape", int64(k)), IntsAttr("strides", int64(stride)),
					IntsAttr("pads", pads...), IntsAttr("dilations", 1)}}},
			Initializer: inits,
			Input:       []*onnx.ValueInfoProto{FloatTensor("x")},
			Output:      []*onnx.ValueInfoProto{FloatTensor("y")},
		}}
}

// weightToConstant moves graph's initializer "w" into a Constant node.
func weightToConstant(graph *onnx.ModelProto) {
	g := graph.GetGraph()
	for i, init := range g.GetInitializer() {
		if init.GetName() == "w" {
			g.Initializer = append(g.Initializer[:i], g.Initializer[i+1:]...)
			g.Node = append([]*onnx.NodeProto{{Name: "w_const", OpType: "Constant", Output: []string{"w"},
				Attribute: []*onnx.AttributeProto{{Name: "value", Type: onnx.AttributeProto_TENSOR, T: init}}}}, g.Node...)
			return
		}
	}
	panic("no initializer w")
}

func runOne(t *testing.T, graph *onnx.ModelProto, x ort.Tensor) ort.Tensor {
	t.Helper()
	return orttest.Run(t, graph, []string{"x"}, []string{"y"}, ort.DeviceCPU, []ort.Tensor{x})[0]
}

// TestPolyphaseUpsamplingMatchesConvTranspose checks the rewrite against ONNX Runtime's own ConvTranspose: same
// shape, same values, for Piper's shapes and the edges of what the identity covers.
func TestPolyphaseUpsamplingMatchesConvTranspose(t *testing.T) {
	orttest.Need(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct {
		cin, cout, k, stride, t int
		pads                    []int64
		bias                    bool
		constantWeight          bool // the weight from a Constant node, as PyTorch exports a buffer
	}{
		{5, 3, 16, 8, 7, []int64{4, 4}, true, false},   // Piper's first upsampling
		{4, 2, 4, 2, 9, []int64{1, 1}, true, false},    // Piper medium's later ones
		{3, 2, 6, 3, 5, []int64{0, 0}, false, false},   // no padding, no bias, three taps per phase
		{2, 2, 8, 4, 1, []int64{3, 3}, true, false},    // one input frame
		{18, 1, 16, 4, 9, []int64{6, 6}, false, true},  // an inverse-STFT head's overlap-add: padding past the stride
		{2, 2, 16, 8, 3, []int64{8, 8}, true, false},   // padding of a whole stride: the Conv pads one frame less, no Slice
		{2, 3, 16, 8, 3, []int64{15, 15}, true, false}, // the most padding covered
	} {
		for _, channelsLast := range []bool{false, true} {
			t.Run(fmt.Sprintf("k%d_s%d_p%d_t%d_channelslast=%v", c.k, c.stride, c.pads[0], c.t, channelsLast), func(t *testing.T) {
				graph := convTransposeGraph(rng, c.cin, c.cout, c.k, c.stride, c.pads, c.bias)
				if c.constantWeight {
					weightToConstant(graph)
				}
				poly := proto.Clone(graph).(*onnx.ModelProto)
				if replaced, _ := RewriteUpsampling(poly, channelsLast); replaced != 1 {
					t.Fatalf("rewrite: replaced %d; want 1", replaced)
				}
				x := ort.Tensor{Shape: []int64{1, int64(c.cin), int64(c.t)}, F32: make([]float32, c.cin*c.t)}
				for i := range x.F32 {
					x.F32[i] = float32(rng.NormFloat64())
				}
				want, got := runOne(t, graph, x), runOne(t, poly, x)
				if fmt.Sprint(got.Shape) != fmt.Sprint(want.Shape) {
					t.Fatalf("shape %v, ConvTranspose gives %v", got.Shape, want.Shape)
				}
				if d := orttest.MaxAbsDiff(want.F32, got.F32); d > 1e-5 {
					t.Errorf("values differ from ConvTranspose by %g (> 1e-5)", d)
				}
			})
		}
	}
}

func TestPolyphaseUpsamplingLeavesUncoveredNodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for name, graph := range map[string]*onnx.ModelProto{
		"asymmetric pads":       convTransposeGraph(rng, 2, 2, 16, 8, []int64{3, 4}, true),
		"padding of the kernel": convTransposeGraph(rng, 2, 2, 16, 8, []int64{16, 16}, true),
		"kernel not a multiple": convTransposeGraph(rng, 2, 2, 5, 2, []int64{1, 1}, true),
	} {
		out := proto.Clone(graph).(*onnx.ModelProto)
		if replaced, left := RewriteUpsampling(out, false); replaced != 0 || left != 1 || !proto.Equal(out, graph) {
			t.Errorf("%s: replaced %d, left %d, want the graph unchanged and 1 left", name, replaced, left)
		}
	}
}
