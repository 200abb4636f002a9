package engine

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"github.com/ttsgen/ttsgen/internal/ort"
	"github.com/ttsgen/ttsgen/internal/ort/orttest"
	"google.golang.org/protobuf/proto"
)

// convTransposeGraph is y = ConvTranspose(x) with random weights, x: [1, cin, t].
func convTransposeGraph(t *testing.T, rng *rand.Rand, cin, cout, k, stride int, pads []int64, bias bool) []byte {
	t.Helper()
	w := make([]float32, cin*cout*k)
	for i := range w {
		w[i] = float32(rng.NormFloat64())
	}
	inputs := []string{"x", "w"}
	inits := []*onnx.TensorProto{floatInit("w", w, int64(cin), int64(cout), int64(k))}
	if bias {
		b := make([]float32, cout)
		for i := range b {
			b[i] = float32(rng.NormFloat64())
		}
		inits = append(inits, floatInit("b", b, int64(cout)))
		inputs = append(inputs, "b")
	}
	model := &onnx.ModelProto{IrVersion: 8, OpsetImport: []*onnx.OperatorSetIdProto{{Version: 15}},
		Graph: &onnx.GraphProto{Name: "ct",
			Node: []*onnx.NodeProto{{Name: "/dec/ups.0/ConvTranspose", OpType: "ConvTranspose", Input: inputs, Output: []string{"y"},
				Attribute: []*onnx.AttributeProto{intsAttr("kernel_shape", int64(k)), intsAttr("strides", int64(stride)),
					intsAttr("pads", pads...), intsAttr("dilations", 1)}}},
			Initializer: inits,
			Input:       []*onnx.ValueInfoProto{floatTensor("x")},
			Output:      []*onnx.ValueInfoProto{floatTensor("y")},
		}}
	data, err := proto.Marshal(model)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func runOne(t *testing.T, graph []byte, x ort.Tensor) ort.Tensor {
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
	}{
		{5, 3, 16, 8, 7, []int64{4, 4}, true}, // Piper's first upsampling
		{4, 2, 4, 2, 9, []int64{1, 1}, true},  // Piper medium's later ones
		{3, 2, 6, 3, 5, []int64{0, 0}, false}, // no padding, no bias, three taps per phase
		{2, 2, 8, 4, 1, []int64{3, 3}, true},  // one input frame
	} {
		for _, channelsLast := range []bool{false, true} {
			t.Run(fmt.Sprintf("k%d_s%d_p%d_t%d_channelslast=%v", c.k, c.stride, c.pads[0], c.t, channelsLast), func(t *testing.T) {
				graph := convTransposeGraph(t, rng, c.cin, c.cout, c.k, c.stride, c.pads, c.bias)
				poly, replaced, _, err := rewriteUpsampling(graph, channelsLast)
				if err != nil || replaced != 1 {
					t.Fatalf("rewrite: replaced %d, err %v; want 1", replaced, err)
				}
				x := ort.Tensor{Shape: []int64{1, int64(c.cin), int64(c.t)}, F32: make([]float32, c.cin*c.t)}
				for i := range x.F32 {
					x.F32[i] = float32(rng.NormFloat64())
				}
				want, got := runOne(t, graph, x), runOne(t, poly, x)
				if fmt.Sprint(got.Shape) != fmt.Sprint(want.Shape) {
					t.Fatalf("shape %v, ConvTranspose gives %v", got.Shape, want.Shape)
				}
				if d := maxAbsDiff(want.F32, got.F32); d > 1e-5 {
					t.Errorf("values differ from ConvTranspose by %g (> 1e-5)", d)
				}
			})
		}
	}
}

func TestPolyphaseUpsamplingLeavesUncoveredNodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for name, graph := range map[string][]byte{
		"asymmetric pads":       convTransposeGraph(t, rng, 2, 2, 16, 8, []int64{3, 4}, true),
		"padding of the stride": convTransposeGraph(t, rng, 2, 2, 16, 8, []int64{8, 8}, true),
		"kernel not a multiple": convTransposeGraph(t, rng, 2, 2, 5, 2, []int64{1, 1}, true),
	} {
		out, replaced, left, err := rewriteUpsampling(graph, false)
		if err != nil || replaced != 0 || left != 1 || string(out) != string(graph) {
			t.Errorf("%s: replaced %d, left %d (err %v), want the graph unchanged and 1 left", name, replaced, left, err)
		}
	}
}

// TestPolyphaseVoiceMatches: the tiny voice rewritten has no ConvTranspose left, and an engine that loads it with
// polyphase upsampling (the default) gives each sentence the audio of the voice as it is.
func TestPolyphaseVoiceMatches(t *testing.T) {
	asIs, asIsModel := tinyEngine(t, Options{Threads: 1, Upsampling: UpsamplingConvTranspose})
	e, m := tinyEngine(t, Options{Threads: 1})
	if e.upsampling != UpsamplingPolyphase {
		t.Fatalf("default upsampling on cpu is %q, want polyphase", e.upsampling)
	}
	poly, replaced, left, err := rewriteUpsampling(orttest.Voice(t, tinyVoicePath), false)
	if err != nil || replaced == 0 || left != 0 {
		t.Fatalf("rewrite: replaced %d, left %d, err %v", replaced, left, err)
	}
	model := decodeModel(t, poly)
	for _, n := range model.GetGraph().GetNode() {
		if n.GetOpType() == "ConvTranspose" {
			t.Errorf("ConvTranspose %q left in the rewritten voice", n.GetName())
		}
	}
	sentences, want := aloneReference(t, asIs, asIsModel, rand.New(rand.NewPCG(7, 8)), 3, func(i int) int { return 5 + 20*i })
	for i, ids := range sentences {
		got, err := e.synthesize(m.runners[0], []*item{{model: m, req: Request{IDs: ids, Scales: deterministic}}})
		if err != nil {
			t.Fatal(err)
		}
		if len(got[0]) != len(want[i]) {
			t.Fatalf("sentence %d: %d samples, the voice as it is %d", i, len(got[0]), len(want[i]))
		}
		if d := maxAbsDiff(got[0], want[i]); d > 1e-4 {
			t.Errorf("sentence %d: differs from the voice as it is by %g (> 1e-4)", i, d)
		}
	}
}

// TestUpsamplingFormFollowsDevice: WebGPU, which runs Conv channels last, gets the channels-last interleave; the
// CPU and CUDA (ONNX Runtime's default layout there) the channels-first one.
func TestUpsamplingFormFollowsDevice(t *testing.T) {
	e, _ := tinyEngine(t, Options{Threads: 1})
	for d, want := range map[ort.Device]string{ort.DeviceWebGPU: "/ChannelsLast", ort.DeviceCPU: "/Reshape", ort.DeviceCUDA: "/Reshape"} {
		graph, err := e.rewriteUpsampling("tiny", orttest.Voice(t, piperShapedVoicePath), d)
		if err != nil {
			t.Fatal(err)
		}
		model := decodeModel(t, graph)
		forms := map[string]bool{}
		for _, n := range model.GetGraph().GetNode() {
			for _, form := range []string{"/ChannelsLast", "/Reshape"} {
				if strings.HasPrefix(n.GetName(), "ttsgen_poly") && strings.HasSuffix(n.GetName(), form) {
					forms[form] = true
				}
			}
		}
		if len(forms) != 1 || !forms[want] {
			t.Errorf("%s: interleave nodes %v, want only %s", d, forms, want)
		}
	}
}
