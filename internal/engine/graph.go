package engine

import (
	"errors"
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

// parseModel decodes an ONNX model that has a graph.
func parseModel(onnxModel []byte) (*onnx.ModelProto, error) {
	var model onnx.ModelProto
	if err := proto.Unmarshal(onnxModel, &model); err != nil {
		return nil, fmt.Errorf("not an ONNX model: %w", err)
	}
	if model.GetGraph() == nil {
		return nil, errors.New("not an ONNX model: no graph")
	}
	return &model, nil
}

// prepareGraph checks that onnxModel is a Piper-format voice and, when the graph has the duration predictor's
// Ceil node, re-exports the graph with that node's output as the extra graph output "w_ceil". Without it a
// padded batch cannot be cut back into per-item audio, so such models run one item at a time.
func prepareGraph(onnxModel []byte) ([]byte, modelIO, error) {
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
		return onnxModel, io, nil
	}
	ceil := durationCeil(graph)
	if ceil == "" {
		return onnxModel, io, nil
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
	edited, err := proto.Marshal(&model)
	if err != nil {
		return nil, modelIO{}, fmt.Errorf("re-encoding graph with %q output: %w", outputFrames, err)
	}
	io.hasFrames = true
	return edited, io, nil
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

// elemTypes works out the element type of every tensor of graph that the rules below know, from its inputs,
// initializers and nodes in order (ONNX keeps nodes topologically sorted): enough for the shape and arithmetic
// operators of a voice graph. Unknown tensors are absent (0).
func elemTypes(graph *onnx.GraphProto) map[string]int32 {
	types := map[string]int32{}
	for _, in := range slices.Concat(graph.GetInput(), graph.GetValueInfo()) {
		if tt := in.GetType().GetTensorType(); tt != nil {
			types[in.GetName()] = tt.GetElemType()
		}
	}
	for _, init := range graph.GetInitializer() {
		types[init.GetName()] = init.GetDataType()
	}
	attrType := func(node *onnx.NodeProto, name string, otherwise int32) int32 {
		for _, a := range node.GetAttribute() {
			if a.GetName() == name {
				if a.GetT() != nil {
					return a.GetT().GetDataType()
				}
				return int32(a.GetI())
			}
		}
		return otherwise
	}
	first := func(node *onnx.NodeProto) int32 {
		for _, in := range node.GetInput() {
			if in != "" {
				return types[in]
			}
		}
		return 0
	}
	for _, node := range graph.GetNode() {
		var t int32
		switch node.GetOpType() {
		case "Shape", "Size", "NonZero", "ArgMax", "ArgMin":
			t = int32(onnx.TensorProto_INT64)
		case "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "Not", "And", "Or", "Xor", "IsNaN", "IsInf":
			t = int32(onnx.TensorProto_BOOL)
		case "Cast":
			t = attrType(node, "to", 0)
		case "Constant":
			for _, a := range node.GetAttribute() {
				switch a.GetName() {
				case "value":
					t = a.GetT().GetDataType()
				case "sparse_value":
					t = a.GetSparseTensor().GetValues().GetDataType()
				case "value_float", "value_floats":
					t = int32(onnx.TensorProto_FLOAT)
				case "value_int", "value_ints":
					t = int32(onnx.TensorProto_INT64)
				case "value_string", "value_strings":
					t = int32(onnx.TensorProto_STRING)
				}
			}
		case "ConstantOfShape":
			t = attrType(node, "value", int32(onnx.TensorProto_FLOAT))
		case "RandomNormal", "RandomUniform":
			t = attrType(node, "dtype", int32(onnx.TensorProto_FLOAT))
		case "RandomNormalLike", "RandomUniformLike":
			t = attrType(node, "dtype", first(node))
		case "Where":
			if len(node.GetInput()) > 1 {
				t = types[node.GetInput()[1]]
			}
		default:
			t = first(node)
		}
		if t == 0 {
			continue
		}
		for i, out := range node.GetOutput() {
			// The second output of TopK is indices; other multi-output operators here (Split) share a type.
			if node.GetOpType() == "TopK" && i == 1 {
				types[out] = int32(onnx.TensorProto_INT64)
				continue
			}
			types[out] = t
		}
	}
	return types
}
