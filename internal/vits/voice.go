// Package vits knows what a Piper-format (VITS) voice's graph is and how it is cut: its signature, the duration
// output that batching needs, the split at the decoder's latent (and before the flow, and at the durations), the
// tiled decoder tail, padding masks for decoders that do not mask themselves, and the decoder's receptive field.
// It edits parsed models (package onnxgraph) and runs nothing.
package vits

import (
	"fmt"
	"slices"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"google.golang.org/protobuf/proto"
)

// Names of the tensors of a Piper-format voice graph.
const (
	InputIDs     = "input"
	InputLengths = "input_lengths"
	InputScales  = "scales"
	InputSpeaker = "sid"
	OutputAudio  = "output"
	// OutputFrames is the extra output PrepareGraph adds: the duration predictor's rounded-up frames per phoneme.
	OutputFrames = "w_ceil"
)

// ModelIO is what PrepareGraph learned about a voice graph: which inputs it takes and which outputs a runner reads.
type ModelIO struct {
	HasSpeaker bool // the graph takes a per-item "sid" input
	HasFrames  bool // the graph exposes "w_ceil", so padded batches can be cut back to each item's length
}

func (io ModelIO) InputNames() []string {
	names := []string{InputIDs, InputLengths, InputScales}
	if io.HasSpeaker {
		names = append(names, InputSpeaker)
	}
	return names
}

func (io ModelIO) OutputNames() []string {
	if io.HasFrames {
		return []string{OutputAudio, OutputFrames}
	}
	return []string{OutputAudio}
}

// PrepareGraph parses onnxModel, checks that it is a Piper-format voice and, when the graph has the duration
// predictor's Ceil node, adds that node's output as the extra graph output "w_ceil". Without it a padded batch
// cannot be cut back into per-item audio, so such models run one item at a time.
func PrepareGraph(onnxModel []byte) (*onnx.ModelProto, ModelIO, error) {
	var model onnx.ModelProto
	if err := proto.Unmarshal(onnxModel, &model); err != nil {
		return nil, ModelIO{}, fmt.Errorf("not an ONNX model: %w", err)
	}
	graph := model.GetGraph()
	if graph == nil || len(graph.GetNode()) == 0 {
		return nil, ModelIO{}, fmt.Errorf("not an ONNX model: no graph nodes in %d bytes", len(onnxModel))
	}
	inputs := graph.InputNames()
	for _, want := range []string{InputIDs, InputLengths, InputScales} {
		if !slices.Contains(inputs, want) {
			return nil, ModelIO{}, fmt.Errorf("not a Piper voice graph: no input %q (inputs: %v)", want, inputs)
		}
	}
	outputs := graph.OutputNames()
	if !slices.Contains(outputs, OutputAudio) {
		return nil, ModelIO{}, fmt.Errorf("not a Piper voice graph: no output %q (outputs: %v)", OutputAudio, outputs)
	}
	io := ModelIO{HasSpeaker: slices.Contains(inputs, InputSpeaker)}
	if slices.Contains(outputs, OutputFrames) {
		io.HasFrames = true
		return &model, io, nil
	}
	ceil := DurationCeil(graph)
	if ceil == "" {
		return &model, io, nil
	}
	// An Identity node gives the tensor a stable name whatever the exporter called the Ceil's output.
	graph.Node = append(graph.Node, &onnx.NodeProto{
		Name:   "ttsgen_w_ceil",
		OpType: "Identity",
		Input:  []string{ceil},
		Output: []string{OutputFrames},
	})
	graph.Output = append(graph.Output, &onnx.ValueInfoProto{
		Name: OutputFrames,
		Type: &onnx.TypeProto{Value: &onnx.TypeProto_TensorType{
			TensorType: &onnx.TypeProto_Tensor{ElemType: int32(onnx.TensorProto_FLOAT)},
		}},
	})
	io.HasFrames = true
	return &model, io, nil
}

// DurationCeil returns the output name of the Ceil node that rounds the predicted durations (Piper's VITS export
// has exactly one, named "/Ceil"), or "" when the graph has none or several without that name.
func DurationCeil(graph *onnx.GraphProto) string {
	var found []*onnx.NodeProto
	for _, node := range graph.GetNode() {
		if node.GetOpType() == "Ceil" && len(node.GetOutput()) == 1 {
			if node.GetName() == "/Ceil" {
				return node.GetOutput()[0]
			}
			found = append(found, node)
		}
	}
	if len(found) != 1 {
		return ""
	}
	return found[0].GetOutput()[0]
}
