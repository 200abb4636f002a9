package vits

import (
	"strings"
	"testing"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"github.com/ttsgen/ttsgen/internal/onnxgraph"
	"github.com/ttsgen/ttsgen/internal/ort/orttest"
	"google.golang.org/protobuf/proto"
)

// TestPaddingMasksStructure: every convolution of the decoder reads a masked input, one mask per rate, and layers
// that would change a sentence's length (where a repeated frame mask no longer lines up) are refused.
func TestPaddingMasksStructure(t *testing.T) {
	conv := func(name, in, out string, k, d, padLeft, padRight int64) *onnx.NodeProto {
		return &onnx.NodeProto{Name: name, OpType: "Conv", Input: []string{in, "w"}, Output: []string{out},
			Attribute: []*onnx.AttributeProto{onnxgraph.IntsAttr("kernel_shape", k), onnxgraph.IntsAttr("dilations", d), onnxgraph.IntsAttr("pads", padLeft, padRight)}}
	}
	up := func(k, stride, pad int64) *onnx.NodeProto {
		return &onnx.NodeProto{Name: "/dec/ups.0", OpType: "ConvTranspose", Input: []string{"x0", "wt"}, Output: []string{"x1"},
			Attribute: []*onnx.AttributeProto{onnxgraph.IntsAttr("kernel_shape", k), onnxgraph.IntsAttr("strides", stride), onnxgraph.IntsAttr("pads", pad, pad)}}
	}
	decoder := func(pre, ups, r1 *onnx.NodeProto) *onnx.GraphProto {
		return &onnx.GraphProto{Name: "dec", Node: []*onnx.NodeProto{
			pre, ups, r1,
			conv("/dec/r2", "x1", "y2", 3, 1, 1, 1),
			{Name: "/dec/add", OpType: "Add", Input: []string{"y1", "y2"}, Output: []string{"y"}},
			{Name: "/dec/tanh", OpType: "Tanh", Input: []string{"y"}, Output: []string{OutputAudio}},
		}}
	}
	good := func() *onnx.GraphProto {
		return decoder(conv(DecoderEntry, OutputLatent, "x0", 7, 1, 3, 3), up(4, 2, 1), conv("/dec/r1", "x1", "y1", 3, 5, 5, 5))
	}
	g := good()
	masked, err := maskConvolutions(g, OutputLatent, InputFrameMask)
	if err != nil || masked != 4 {
		t.Fatalf("masked %d convolutions, err %v; want all 4", masked, err)
	}
	inputs := map[string]string{} // convolution -> what it reads
	producers := map[string]*onnx.NodeProto{}
	for _, n := range g.GetNode() {
		producers[n.GetOutput()[0]] = n
		if n.GetOpType() == "Conv" || n.GetOpType() == "ConvTranspose" {
			inputs[n.GetName()] = n.GetInput()[0]
		}
	}
	for name, in := range inputs {
		if p := producers[in]; p == nil || p.GetOpType() != "Mul" {
			t.Errorf("%s reads %q, not a masked input", name, in)
		}
	}
	// r1 and r2 read the same tensor at rate 2: one Mul; the rate-2 mask is built once.
	if inputs["/dec/r1"] != inputs["/dec/r2"] {
		t.Errorf("two masks for one tensor: %q and %q", inputs["/dec/r1"], inputs["/dec/r2"])
	}
	if m := producers[inputs["/dec/r1"]]; m.GetInput()[1] != maskPrefix+"/rate2" {
		t.Errorf("rate-2 layer masked with %q", m.GetInput()[1])
	}
	if m := producers[inputs[DecoderEntry]]; m.GetInput()[1] != InputFrameMask {
		t.Errorf("rate-1 layer masked with %q", m.GetInput()[1])
	}

	for _, tt := range []struct {
		name  string
		graph *onnx.GraphProto
		want  string
	}{
		{"a Conv that shortens", decoder(conv(DecoderEntry, OutputLatent, "x0", 7, 1, 0, 0), up(4, 2, 1), conv("/dec/r1", "x1", "y1", 3, 5, 5, 5)), "changes the length"},
		{"lopsided padding", decoder(conv(DecoderEntry, OutputLatent, "x0", 7, 1, 3, 3), up(4, 2, 1), conv("/dec/r1", "x1", "y1", 3, 5, 4, 5)), "changes the length"},
		{"an upsampling that overshoots", decoder(conv(DecoderEntry, OutputLatent, "x0", 7, 1, 3, 3), up(4, 2, 0), conv("/dec/r1", "x1", "y1", 3, 5, 5, 5)), "exactly 2 times"},
	} {
		before := proto.Clone(tt.graph)
		if _, err := maskConvolutions(tt.graph, OutputLatent, InputFrameMask); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err %v, want %q", tt.name, err, tt.want)
		}
		if !proto.Equal(before, tt.graph) {
			t.Errorf("%s: the graph was changed although masking failed", tt.name)
		}
	}
}

// TestPaddingMasksNameEachTensorOnce: the edited decoder defines each initializer and node output once (ONNX
// Runtime takes one of two same-named initializers silently).
func TestPaddingMasksNameEachTensorOnce(t *testing.T) {
	voice := prepared(t, orttest.PiperShapedVoice)
	unmasked := proto.Clone(voice)
	model, _, err := MaskWholeGraph(voice)
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(voice, unmasked) {
		t.Error("MaskWholeGraph changed the graph it was given")
	}
	seen := map[string]bool{}
	for _, init := range model.GetGraph().GetInitializer() {
		if seen[init.GetName()] {
			t.Errorf("initializer %q defined twice", init.GetName())
		}
		seen[init.GetName()] = true
	}
	for _, node := range model.GetGraph().GetNode() {
		for _, out := range node.GetOutput() {
			if seen[out] {
				t.Errorf("tensor %q defined twice", out)
			}
			seen[out] = true
		}
	}
}
