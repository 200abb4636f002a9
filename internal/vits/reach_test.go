package vits

import (
	"strings"
	"testing"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"github.com/ttsgen/ttsgen/internal/onnxgraph"
	"github.com/ttsgen/ttsgen/internal/ort/orttest"
	"google.golang.org/protobuf/proto"
)

// TestDecoderReach works the reach out by hand for a small decoder: conv_pre (kernel 7: 3 frames), a
// ConvTranspose (kernel 4, stride 2, padding 1: (max(4-1-1, 1)/2 + 1) = 2 frames), and at rate 2 two branches
// summed: kernel 3 dilation 5 (5 samples, 2.5 frames) and kernel 3 (1 sample); total 7.5, so 8 frames.
func TestDecoderReach(t *testing.T) {
	conv := func(name, in, out string, k, d, pad int64) *onnx.NodeProto {
		return &onnx.NodeProto{Name: name, OpType: "Conv", Input: []string{in, "w"}, Output: []string{out},
			Attribute: []*onnx.AttributeProto{onnxgraph.IntsAttr("kernel_shape", k), onnxgraph.IntsAttr("dilations", d), onnxgraph.IntsAttr("pads", pad, pad)}}
	}
	nodes := []*onnx.NodeProto{
		{Name: "/Concat", OpType: "Concat", Input: []string{"a", "b"}, Output: []string{"latent_in"}},
		conv(DecoderEntry, "latent_in", "x0", 7, 1, 3),
		{Name: "/dec/ups.0", OpType: "ConvTranspose", Input: []string{"x0", "wt"}, Output: []string{"x1"},
			Attribute: []*onnx.AttributeProto{onnxgraph.IntsAttr("kernel_shape", 4), onnxgraph.IntsAttr("strides", 2), onnxgraph.IntsAttr("pads", 1, 1)}},
		conv("/dec/r1", "x1", "y1", 3, 5, 5),
		conv("/dec/r2", "x1", "y2", 3, 1, 1),
		{Name: "/dec/add", OpType: "Add", Input: []string{"y1", "y2"}, Output: []string{"y"}},
		{Name: "/dec/tanh", OpType: "Tanh", Input: []string{"y"}, Output: []string{OutputAudio}},
	}
	graph := func(nodes []*onnx.NodeProto) *onnx.ModelProto {
		return &onnx.ModelProto{IrVersion: 8, OpsetImport: []*onnx.OperatorSetIdProto{{Version: 15}},
			Graph: &onnx.GraphProto{Name: "dec", Node: nodes}}
	}
	if got, err := DecoderReach(graph(nodes)); err != nil || got != 8 {
		t.Errorf("reach %d, err %v; want 8 frames", got, err)
	}
	strided := append([]*onnx.NodeProto(nil), nodes...)
	strided[3] = proto.Clone(nodes[3]).(*onnx.NodeProto)
	strided[3].Attribute = append(strided[3].Attribute, onnxgraph.IntsAttr("strides", 2))
	if _, err := DecoderReach(graph(strided)); err == nil || !strings.Contains(err.Error(), "stride 2") {
		t.Errorf("a strided Conv: err %v, want one naming its stride", err)
	}
	if _, err := DecoderReach(graph(nodes[2:])); err == nil {
		t.Error("no decoder entry: no error")
	}
}

// TestDecoderReachOfTheTinyVoice: the bound covers what the windowed decoder was measured to need (10 frames), and
// is not absurdly larger.
func TestDecoderReachOfTheTinyVoice(t *testing.T) {
	got, err := DecoderReach(orttest.Parse(t, orttest.Voice(t, orttest.TinyVoice)))
	if err != nil || got < 10 || got > 16 {
		t.Errorf("tiny voice's decoder reach %d frames (err %v), want 10..16", got, err)
	}
	t.Logf("tiny voice: %d frames", got)
}
