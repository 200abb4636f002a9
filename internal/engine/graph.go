package engine

import (
	"fmt"
	"slices"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"google.golang.org/protobuf/proto"
)

// Names of the tensors of a Piper-format voice graph.
const (
	inputIDs     = "input"
	inputLengths = "input_lengths"
	inputScales  = "scales"
	inputSpeaker = "sid"
	outputAudio  = "output"
	// outputFrames is the extra output Load adds: the duration predictor's rounded-up frames per phoneme.
	outputFrames = "w_ceil"
)

// modelIO is what Load learned about a voice graph: which inputs it takes and which outputs the engine reads.
type modelIO struct {
	hasSpeaker bool // the graph takes a per-item "sid" input
	hasFrames  bool // the graph exposes "w_ceil", so padded batches can be cut back to each item's length
}

func (io modelIO) inputNames() []string {
	names := []string{inputIDs, inputLengths, inputScales}
	if io.hasSpeaker {
		names = append(names, inputSpeaker)
	}
	return names
}

func (io modelIO) outputNames() []string {
	if io.hasFrames {
		return []string{outputAudio, outputFrames}
	}
	return []string{outputAudio}
}

// prepareGraph parses onnxModel, checks that it is a Piper-format voice and, when the graph has the duration
// predictor's Ceil node, adds that node's output as the extra graph output "w_ceil". Without it a padded batch
// cannot be cut back into per-item audio, so such models run one item at a time.
func prepareGraph(onnxModel []byte) (*onnx.ModelProto, modelIO, error) {
	var model onnx.ModelProto
	if err := proto.Unmarshal(onnxModel, &model); err != nil {
		return nil, modelIO{}, fmt.Errorf("not an ONNX model: %w", err)
	}
	graph := model.GetGraph()
	if graph == nil || len(graph.GetNode()) == 0 {
		return nil, modelIO{}, fmt.Errorf("not an ONNX model: no graph nodes in %d bytes", len(onnxModel))
	}
	inputs := graph.InputNames()
	for _, want := range []string{inputIDs, inputLengths, inputScales} {
		if !slices.Contains(inputs, want) {
			return nil, modelIO{}, fmt.Errorf("not a Piper voice graph: no input %q (inputs: %v)", want, inputs)
		}
	}
	outputs := graph.OutputNames()
	if !slices.Contains(outputs, outputAudio) {
		return nil, modelIO{}, fmt.Errorf("not a Piper voice graph: no output %q (outputs: %v)", outputAudio, outputs)
	}
	io := modelIO{hasSpeaker: slices.Contains(inputs, inputSpeaker)}
	if slices.Contains(outputs, outputFrames) {
		io.hasFrames = true
		return &model, io, nil
	}
	ceil := durationCeil(graph)
	if ceil == "" {
		return &model, io, nil
	}
	// An Identity node gives the tensor a stable name whatever the exporter called the Ceil's output.
	graph.Node = append(graph.Node, &onnx.NodeProto{
		Name:   "ttsgen_w_ceil",
		OpType: "Identity",
		Input:  []string{ceil},
		Output: []string{outputFrames},
	})
	graph.Output = append(graph.Output, &onnx.ValueInfoProto{
		Name: outputFrames,
		Type: &onnx.TypeProto{Value: &onnx.TypeProto_TensorType{
			TensorType: &onnx.TypeProto_Tensor{ElemType: int32(onnx.TensorProto_FLOAT)},
		}},
	})
	io.hasFrames = true
	return &model, io, nil
}

// durationCeil returns the output name of the Ceil node that rounds the predicted durations (Piper's VITS export
// has exactly one, named "/Ceil"), or "" when the graph has none or several without that name.
func durationCeil(graph *onnx.GraphProto) string {
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
