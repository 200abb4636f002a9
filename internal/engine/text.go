package engine

import (
	"errors"
	"fmt"
	"slices"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"github.com/ttsgen/ttsgen/internal/onnxgraph"
	"github.com/ttsgen/ttsgen/internal/ort"
)

// The acoustic part of a VITS voice does two kinds of work. At the token rate, fixed by the phoneme ids alone:
// the text encoder (a transformer, in Piper's voices) and the duration predictor. At the frame rate, shaped by
// the predicted durations: expanding the text encoder's statistics to frames and drawing the latent. The first is
// most of the arithmetic and has shapes a GPU provider knows before it starts; the second is cheap but its
// shapes come from the durations, which a GPU provider would have to read back mid-run. So, with the acoustic
// part on the CPU, the engine can cut it once more, at the durations (cutText): the text part runs on the GPU,
// and the expansion, on the CPU, reads what the text part gives it.

// textCut is a split voice's acoustic graph cut at the durations.
type textCut struct {
	text        *onnx.ModelProto // the token-rate part: the voice's inputs (those it reads, textInputs) -> boundary
	textInputs  []string         // graph inputs the text part reads, in the voice's order
	boundary    []string         // tensors the text part hands the expansion, in order
	expand      *onnx.ModelProto // the frame-rate part: expandInput -> the acoustic graph's outputs
	expandInput []string         // boundary, then the voice's inputs that the expansion reads itself
}

// cutText cuts an acoustic graph (see splitGraph) at the output of its duration Ceil node: the expansion is every
// node that depends on the rounded durations, and the text part everything else the outputs need. The tensors
// the expansion reads from the text part (the encoder's statistics, the masks, the durations, the scales as
// gathered) become the text part's outputs. Such a tensor must be float32 or int64, the types a run hands
// back; any other (a boolean mask, say) is recomputed in the expansion from what it was made of, as is a tensor
// computed from constants alone.
func cutText(acoustic *onnx.ModelProto) (*textCut, error) {
	graph := acoustic.GetGraph()
	ceil := durationCeil(graph)
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
	cut := &textCut{}
	textOutputs := map[string]string{}
	sources := map[string]string{}
	for _, name := range boundary {
		textOutputs[name], sources[name] = name, name
		cut.boundary = append(cut.boundary, textBoundaryPrefix+name)
	}
	cut.text = onnxgraph.Cut(acoustic, textOutputs, nil, onnxgraph.Declared{Types: types})
	addLeadingAxis(cut.text, sources, true)
	outputs := map[string]string{}
	for _, name := range graph.OutputNames() {
		outputs[name] = name
	}
	cut.expand = onnxgraph.Cut(acoustic, outputs, sources, onnxgraph.Declared{Types: types})
	addLeadingAxis(cut.expand, sources, false)
	// Cut orders its inputs: the sources by name, then the graph inputs it reads; the runs follow that.
	cut.textInputs, cut.expandInput = cut.text.GetGraph().InputNames(), cut.expand.GetGraph().InputNames()
	if !slices.Equal(cut.expandInput[:len(cut.boundary)], cut.boundary) {
		return nil, fmt.Errorf("expansion inputs %v do not start with the boundary %v", cut.expandInput, cut.boundary)
	}
	return cut, nil
}

// textBoundaryPrefix names a boundary tensor as it crosses from the text part to the expansion.
const textBoundaryPrefix = "text:"

// addLeadingAxis edits a part cut by cutText where the tensors named in crossing cross the cut. In the text part
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
			crossed := textBoundaryPrefix + out.GetName()
			graph.Node = append(graph.Node, node("Unsqueeze", out.GetName(), crossed))
			out.Name = crossed
		}
	}
	var squeezes []*onnx.NodeProto
	for _, in := range graph.GetInput() {
		if _, ok := crossing[in.GetName()]; ok && !textPart {
			crossed := textBoundaryPrefix + in.GetName()
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

// A batch's text part can run in pieces (runTextPieces): each sentence's row of the token-rate tensors depends on
// that sentence alone (the padding is masked), and the pieces keep the batch's padded width, so their outputs
// join back into the batch's along the sentence axis.

// textInputRows returns the text part's inputs (named names) for sentences lo to hi: the rows of the per-sentence
// inputs (ids, lengths, speakers); the scales, shared by the batch, whole.
func textInputRows(names []string, in []ort.Tensor, lo, hi int) []ort.Tensor {
	out := make([]ort.Tensor, len(in))
	for i, t := range in {
		if names[i] == inputScales {
			out[i] = t
			continue
		}
		out[i] = sliceRows(t, lo, hi)
	}
	return out
}

// sliceRows returns rows lo to hi of t (along its first axis).
func sliceRows(t ort.Tensor, lo, hi int) ort.Tensor {
	row := 1
	for _, d := range t.Shape[1:] {
		row *= int(d)
	}
	shape := slices.Clone(t.Shape)
	shape[0] = int64(hi - lo)
	out := ort.Tensor{Shape: shape}
	if t.F32 != nil {
		out.F32 = t.F32[lo*row : hi*row]
	} else {
		out.I64 = t.I64[lo*row : hi*row]
	}
	return out
}

// joinTextRows joins the text part's outputs of consecutive pieces of a batch: per-sentence outputs (perRow) along
// their sentence axis, axis 1 (axis 0 being the one cutText adds for the crossing); the batch's shared outputs
// from the first piece.
func joinTextRows(parts [][]ort.Tensor, perRow []bool) ([]ort.Tensor, error) {
	out := make([]ort.Tensor, len(perRow))
	for i, rows := range perRow {
		first := parts[0][i]
		if !rows {
			out[i] = first
			continue
		}
		joined := ort.Tensor{Shape: slices.Clone(first.Shape)}
		joined.Shape[1] = 0
		for _, part := range parts {
			t := part[i]
			if len(t.Shape) != len(first.Shape) || !slices.Equal(t.Shape[2:], first.Shape[2:]) || (t.F32 == nil) != (first.F32 == nil) {
				return nil, fmt.Errorf("pieces of the batch gave output %d of shapes %v and %v", i, first.Shape, t.Shape)
			}
			joined.Shape[1] += t.Shape[1]
			joined.F32 = append(joined.F32, t.F32...)
			joined.I64 = append(joined.I64, t.I64...)
		}
		out[i] = joined
	}
	return out, nil
}

// textPieceOutputs says, for each of a text part's outputs, whether it holds a row per sentence: from runs of r on
// one and then two sentences, an output is per sentence if its sentence axis follows the batch, and shared if it
// is the same in both. Any other output (a sentence axis elsewhere) and the text part cannot run in pieces: ok
// false.
func textPieceOutputs(r graphRunner, cut *textCut, io modelIO) (perRow []bool, ok bool, err error) {
	var outs [2][]ort.Tensor
	for size := 1; size <= 2; size++ {
		args := pick(byInputName(io, acousticInputs(trialBatch(size, 8), io)), cut.textInputs)
		if outs[size-1], err = r.Run(args); err != nil {
			return nil, false, fmt.Errorf("text part on %d sentences: %w", size, err)
		}
	}
	for i := range outs[0] {
		one, two := outs[0][i], outs[1][i]
		switch {
		case len(one.Shape) >= 2 && len(two.Shape) == len(one.Shape) && one.Shape[1] == 1 && two.Shape[1] == 2:
			perRow = append(perRow, true)
		case slices.Equal(one.Shape, two.Shape) && slices.Equal(one.F32, two.F32) && slices.Equal(one.I64, two.I64):
			perRow = append(perRow, false)
		default:
			return nil, false, nil
		}
	}
	return perRow, true, nil
}

// byInputName maps a voice's input tensors (in io's order) by name.
func byInputName(io modelIO, voiceInputs []ort.Tensor) map[string]ort.Tensor {
	byName := map[string]ort.Tensor{}
	for i, name := range io.inputNames() {
		byName[name] = voiceInputs[i]
	}
	return byName
}

// pick returns the tensors of byName named names, in that order.
func pick(byName map[string]ort.Tensor, names []string) []ort.Tensor {
	out := make([]ort.Tensor, len(names))
	for i, name := range names {
		out[i] = byName[name]
	}
	return out
}
