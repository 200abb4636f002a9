package vits

import (
	"fmt"
	"testing"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"github.com/ttsgen/ttsgen/internal/onnxgraph"
	"github.com/ttsgen/ttsgen/internal/ort/orttest"
	"google.golang.org/protobuf/proto"
)

func TestPrepareGraphAddsDurationOutput(t *testing.T) {
	edited, io, err := PrepareGraph(orttest.FakeVoice(t, true, true))
	if err != nil {
		t.Fatal(err)
	}
	if !io.HasFrames || !io.HasSpeaker {
		t.Fatalf("io %+v, want frames and speaker", io)
	}
	if got := edited.GetGraph().OutputNames(); fmt.Sprint(got) != "[output w_ceil]" {
		t.Errorf("outputs %v, want [output w_ceil]", got)
	}
	last := edited.GetGraph().GetNode()[len(edited.GetGraph().GetNode())-1]
	if last.GetOpType() != "Identity" || fmt.Sprint(last.GetInput(), last.GetOutput()) != "[/Ceil_output_0] [w_ceil]" {
		t.Errorf("added node %s %v -> %v, want Identity [/Ceil_output_0] -> [w_ceil]", last.GetOpType(), last.GetInput(), last.GetOutput())
	}
	if fmt.Sprint(io.InputNames(), io.OutputNames()) != "[input input_lengths scales sid] [output w_ceil]" {
		t.Errorf("session names %v %v", io.InputNames(), io.OutputNames())
	}
}

// TestFlowInputs: the flow is cut out at the tensors its nodes read from the rest of the graph (Piper's z_p and
// frame mask); a flow fed by a graph input directly is left in place.
func TestFlowInputs(t *testing.T) {
	graph := prepared(t, orttest.PiperShapedVoice)
	if got := fmt.Sprint(flowInputs(graph.GetGraph())); got != "[/Add_output_0 /Cast_4_output_0]" {
		t.Errorf("flow inputs %s, want z_p and the frame mask: [/Add_output_0 /Cast_4_output_0]", got)
	}
	sv, err := SplitGraph(graph, true)
	if err != nil || sv.Flow == nil || fmt.Sprint(sv.AcousticOutputs()) != "[flow_in0 flow_in1 w_ceil]" {
		t.Fatalf("split with flow: err %v, outputs %v", err, sv.AcousticOutputs())
	}
	if sv, err := SplitGraph(graph, false); err != nil || sv.Flow != nil {
		t.Errorf("split without flow: err %v, flow cut anyway", err)
	}
	fed := &onnx.GraphProto{Input: []*onnx.ValueInfoProto{onnxgraph.FloatTensor("z")}, Node: []*onnx.NodeProto{
		{Name: "/flow/Neg", OpType: "Neg", Input: []string{"z"}, Output: []string{"y"}}}}
	if got := flowInputs(fed); got != nil {
		t.Errorf("a flow fed by a graph input: cut at %v", got)
	}
	if got := flowInputs(&onnx.GraphProto{}); got != nil {
		t.Errorf("no flow: cut at %v", got)
	}
}

// TestSplitRanks: the decoder's latent (a Conv's input) and the masked decoder's frame mask are declared of rank
// 3; the flow's inputs, which the acoustic part computes, are left to its first run (the engine's rankedRunner).
func TestSplitRanks(t *testing.T) {
	sv, err := SplitGraph(prepared(t, orttest.PiperShapedVoice), true)
	if err != nil {
		t.Fatal(err)
	}
	masked := proto.Clone(sv.Decoder).(*onnx.ModelProto)
	if _, err := MaskDecoderGraph(masked); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		graph *onnx.ModelProto
		ranks string
	}{{"decoder", sv.Decoder, "latent:3"}, {"masked decoder", masked, "latent:3 frame_mask:3"}, {"flow", sv.Flow, "flow_in0:0 flow_in1:0"}} {
		if got := orttest.InputRanks(tt.graph); got != tt.ranks {
			t.Errorf("%s: inputs declared %s, want %s", tt.name, got, tt.ranks)
		}
	}
}

// prepared is the voice at path as PrepareGraph gives it.
func prepared(t *testing.T, path string) *onnx.ModelProto {
	t.Helper()
	graph, _, err := PrepareGraph(orttest.Voice(t, path))
	if err != nil {
		t.Fatal(err)
	}
	return graph
}
