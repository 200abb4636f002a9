package vits

import (
	"errors"
	"fmt"
	"slices"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"github.com/ttsgen/ttsgen/internal/onnxgraph"
)

// The acoustic part of a VITS voice does two kinds of work. At the token rate, fixed by the phoneme ids alone:
// the text encoder (a transformer, in Piper's voices) and the duration predictor. At the frame rate, shaped by
// the predicted durations: expanding the text encoder's statistics to frames and drawing the latent. The first is
// most of the arithmetic and has shapes a GPU provider knows before it starts; the second is cheap but its
// shapes come from the durations, which a GPU provider would have to read back mid-run. So, with the acoustic
// part on the CPU, the engine can cut it once more, at the durations (CutText): the text part runs on the GPU,
// and the expansion, on the CPU, reads what the text part gives it.

// TextCut is a split voice's acoustic graph cut at the durations.
type TextCut struct {
	Text        *onnx.ModelProto // the token-rate part: the voice's inputs (those it reads, TextInputs) -> boundary
	TextInputs  []string         // graph inputs the text part reads, in the voice's order
	Boundary    []string         // tensors the text part hands the expansion, in order
	Expand      *onnx.ModelProto // the frame-rate part: ExpandInput -> the acoustic graph's outputs
	ExpandInput []string         // boundary, then the voice's inputs that the expansion reads itself
}

// CutText cuts an acoustic graph (see SplitGraph) at the output of its duration Ceil node: the expansion is every
// node that depends on the rounded durations, and the text part everything else the outputs need. The tensors
// the expansion reads from the text part (the encoder's statistics, the masks, the durations, the scales as
// gathered) become the text part's outputs. Such a tensor must be float32 or int64, the types a run hands
// back; any other (a boolean mask, say) is recomputed in the expansion from what it was made of, as is a tensor
// computed from constants alone.
func CutText(acoustic *onnx.ModelProto) (*TextCut, error) {
	graph := acoustic.GetGraph()
	ceil := DurationCeil(graph)
	if ceil == "" {
		return nil, errors.New("no duration Ceil node")
	}
	types := onnxgraph.ElemTypes(graph)
	constant := map[string]bool{}
	for _, init := range graph.GetInitializer() {
		constant[init.GetName()] = true
	}
	inputs := graph.InputNames()
	producer := map[string]*onnx.NodeProto{}
	for _, node := range graph.GetNode() {
		for _, out := range node.GetOutput() {
			producer[out] = node
		}
	}

	// The expansion: the nodes downstream of the durations (the graph is topologically sorted), then what must be
	// recomputed there.
	expand := map[*onnx.NodeProto]bool{}
	derived := map[string]bool{ceil: true}
	for _, node := range graph.GetNode() {
		for _, in := range node.GetInput() {
			if derived[in] {
				expand[node] = true
			}
		}
		if expand[node] {
			for _, out := range node.GetOutput() {
				derived[out] = true
			}
		}
	}
	if len(expand) == 0 {
		return nil, errors.New("nothing reads the durations")
	}
	var boundary []string
	for {
		boundary = boundary[:0]
		var pull *onnx.NodeProto
		for _, node := range graph.GetNode() {
			if !expand[node] {
				continue
			}
			for _, in := range node.GetInput() {
				p := producer[in]
				if in == "" || constant[in] || slices.Contains(inputs, in) || expand[p] || slices.Contains(boundary, in) {
					continue
				}
				if p == nil {
					return nil, fmt.Errorf("node %q reads %q, which nothing produces", node.GetName(), in)
				}
				t := types[in]
				if fromConstants(p, constant) || (t != int32(onnx.TensorProto_FLOAT) && t != int32(onnx.TensorProto_INT64)) {
					pull = p
					break
				}
				boundary = append(boundary, in)
			}
			if pull != nil {
				break
			}
		}
		if pull == nil {
			break
		}
		expand[pull] = true
	}

	// A boundary tensor crosses with a leading axis of 1 added: some are scalars (a scale gathered from "scales"),
	// and onnxruntime_go cannot hand back a tensor of rank 0.
	slices.Sort(boundary) // Cut orders the expansion's inputs so
	cut := &TextCut{}
	textOutputs := map[string]string{}
	sources := map[string]string{}
	for _, name := range boundary {
		textOutputs[name], sources[name] = name, name
		cut.Boundary = append(cut.Boundary, TextBoundaryPrefix+name)
	}
	cut.Text = onnxgraph.Cut(acoustic, textOutputs, nil, onnxgraph.Declared{Types: types})
	addLeadingAxis(cut.Text, sources, true)
	outputs := map[string]string{}
	for _, name := range graph.OutputNames() {
		outputs[name] = name
	}
	cut.Expand = onnxgraph.Cut(acoustic, outputs, sources, onnxgraph.Declared{Types: types})
	addLeadingAxis(cut.Expand, sources, false)
	// Cut orders its inputs: the sources by name, then the graph inputs it reads; the runs follow that.
	cut.TextInputs, cut.ExpandInput = cut.Text.GetGraph().InputNames(), cut.Expand.GetGraph().InputNames()
	if !slices.Equal(cut.ExpandInput[:len(cut.Boundary)], cut.Boundary) {
		return nil, fmt.Errorf("expansion inputs %v do not start with the boundary %v", cut.ExpandInput, cut.Boundary)
	}
	return cut, nil
}

// TextBoundaryPrefix names a boundary tensor as it crosses from the text part to the expansion.
const TextBoundaryPrefix = "text:"

// addLeadingAxis edits a part cut by CutText where the tensors named in crossing cross the cut. In the text part
// (textPart) each such output X becomes "text:X", X with a leading axis of 1 (Unsqueeze); in the expansion each
// such input X becomes "text:X", with a Squeeze giving X back. Only that side is edited: a crossing tensor may also
// be one of the expansion's own outputs (a voice whose Ceil writes "w_ceil" itself), which stays as it is.
func addLeadingAxis(part *onnx.ModelProto, crossing map[string]string, textPart bool) {
	graph := part.GetGraph()
	// Opset 13 moved Unsqueeze's and Squeeze's axes from an attribute to an input.
	axesInput := onnxgraph.DefaultOpset(part) >= 13
	const axes = "ttsgen_text_axis0"
	node := func(op, in, out string) *onnx.NodeProto {
		n := &onnx.NodeProto{Name: "ttsgen_" + op + "_" + out, OpType: op, Input: []string{in}, Output: []string{out}}
		if axesInput {
			n.Input = append(n.Input, axes)
		} else {
			n.Attribute = []*onnx.AttributeProto{{Name: "axes", Type: onnx.AttributeProto_INTS, Ints: []int64{0}}}
		}
		return n
	}
	if axesInput {
		graph.Initializer = append(graph.Initializer, &onnx.TensorProto{Name: axes, Dims: []int64{1},
			DataType: int32(onnx.TensorProto_INT64), Int64Data: []int64{0}})
	}
	for _, out := range graph.GetOutput() {
		if _, ok := crossing[out.GetName()]; ok && textPart {
			crossed := TextBoundaryPrefix + out.GetName()
			graph.Node = append(graph.Node, node("Unsqueeze", out.GetName(), crossed))
			out.Name = crossed
		}
	}
	var squeezes []*onnx.NodeProto
	for _, in := range graph.GetInput() {
		if _, ok := crossing[in.GetName()]; ok && !textPart {
			crossed := TextBoundaryPrefix + in.GetName()
			squeezes = append(squeezes, node("Squeeze", crossed, in.GetName()))
			in.Name = crossed
		}
	}
	graph.Node = append(squeezes, graph.Node...)
}

// fromConstants says whether node computes from initializers alone (a Constant, an Identity of a shared weight):
// the expansion recomputes such a tensor rather than have the text part hand it over.
func fromConstants(node *onnx.NodeProto, constant map[string]bool) bool {
	for _, in := range node.GetInput() {
		if in != "" && !constant[in] {
			return false
		}
	}
	return true
}
