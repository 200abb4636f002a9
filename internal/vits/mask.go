package vits

import (
	"fmt"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"github.com/ttsgen/ttsgen/internal/onnxgraph"
	"google.golang.org/protobuf/proto"
)

// Padding masks for decoders that do not mask themselves.
//
// Run alone, a sentence's decoder sees zeros beyond both of its ends: every convolution pads with zeros. In a padded
// batch, or in a decoder window that reaches past the sentence, the frames beyond the end are zero only at the
// decoder's input: the first convolution's bias makes them non-zero, and each later convolution spreads them into
// the sentence's last (and, in a window, first) samples. Piper's decoders are not masked, so their batched audio
// differs from their batch-1 audio near the ends, by up to a third of full scale in a Piper-shaped random voice.
//
// The fix is a graph edit made when a voice is loaded: the input of every convolution of the decoder is multiplied by the
// sentence's mask at that layer's rate (samples per latent frame), so each convolution sees zeros where it would
// have padded. Elementwise layers need nothing: they do not mix positions. Batched and windowed audio then equal
// batch-1 audio up to rounding (the tests hold them to 1e-4).
//
// ttsgen's own voices mask every layer themselves, and there the masks would only cost time: the engine probes a
// decoder first and masks only one whose padding leaks.

// Names of the tensors that maskConvolutions adds.
const (
	InputFrameMask = "frame_mask" // [B, 1, frames] float: 1 on a sentence's frames, 0 elsewhere
	maskPrefix     = "ttsgen_mask"
)

// maskConvolutions edits graph so that every Conv and ConvTranspose computed from latent reads its input multiplied
// by frameMask (a tensor [B, 1, T] of the latent's frames) repeated to the input's rate. It checks first that every
// such layer keeps its length exactly (T x rate at each rate), which the masks rely on, and leaves the graph
// untouched with an error otherwise. The graph's opset must be 13 or later (Unsqueeze with an axes input).
func maskConvolutions(graph *onnx.GraphProto, latent, frameMask string) (masked int, err error) {
	convolutions := map[*onnx.NodeProto]int{} // -> the rate of its input
	err = walkDecoder(graph, latent, func(node *onnx.NodeProto, rate int) error {
		op := node.GetOpType()
		if op != "Conv" && op != "ConvTranspose" {
			return nil
		}
		k, stride, dilation, padLeft, _ := convGeometry(node) // walkDecoder checked it
		padRight := padLeft
		for _, a := range node.GetAttribute() {
			if a.GetName() == "pads" {
				padRight = int(a.GetInts()[1])
			}
		}
		if op == "Conv" {
			// Output length T + pads - (k-1)*dilation.
			if stride != 1 || padLeft+padRight != (k-1)*dilation {
				return fmt.Errorf("Conv %q changes the length (kernel %d, stride %d, dilation %d, pads %d+%d)",
					node.GetName(), k, stride, dilation, padLeft, padRight)
			}
		} else if dilation != 1 || padLeft+padRight != k-stride || hasOutputPadding(node) {
			// Output length (T-1)*stride + k - pads: T*stride when pads = k - stride.
			return fmt.Errorf("ConvTranspose %q does not upsample to exactly %d times the length (kernel %d, pads %d+%d)",
				node.GetName(), stride, k, padLeft, padRight)
		}
		convolutions[node] = rate
		return nil
	})
	if err != nil {
		return 0, err
	}
	if len(convolutions) == 0 {
		return 0, fmt.Errorf("no convolution reads the latent %q", latent)
	}

	var nodes []*onnx.NodeProto
	maskAt := map[int]string{} // rate -> [B, 1, T*rate] mask tensor
	maskedInput := map[string]string{}
	haveShapes := false // the initializers every rate's mask shares
	add := func(op, name string, inputs []string, attrs ...*onnx.AttributeProto) string {
		out := maskPrefix + "/" + name
		nodes = append(nodes, &onnx.NodeProto{Name: out, OpType: op, Input: inputs, Output: []string{out}, Attribute: attrs})
		return out
	}
	mask := func(rate int) string {
		if name, ok := maskAt[rate]; ok {
			return name
		}
		if rate == 1 {
			maskAt[1] = frameMask
			return frameMask
		}
		if !haveShapes {
			graph.Initializer = append(graph.Initializer, onnxgraph.IntInit(maskPrefix+"/axis3", 3), onnxgraph.IntInit(maskPrefix+"/flat", 0, 1, -1))
			haveShapes = true
		}
		// [B,1,T] -> [B,1,T,1] -> broadcast to [B,1,T,rate] -> [B,1,T*rate]: each frame's value repeated rate times.
		r := fmt.Sprint(rate)
		graph.Initializer = append(graph.Initializer, onnxgraph.IntInit(maskPrefix+"/repeat"+r, 1, 1, 1, int64(rate)))
		column := add("Unsqueeze", "column"+r, []string{frameMask, maskPrefix + "/axis3"})
		repeated := add("Expand", "repeated"+r, []string{column, maskPrefix + "/repeat" + r})
		maskAt[rate] = add("Reshape", "rate"+r, []string{repeated, maskPrefix + "/flat"})
		return maskAt[rate]
	}
	for _, node := range graph.GetNode() {
		rate, ok := convolutions[node]
		if !ok {
			nodes = append(nodes, node)
			continue
		}
		x := node.GetInput()[0]
		if m, ok := maskedInput[x]; ok {
			node.Input[0] = m
		} else {
			m := mask(rate)
			node.Input[0] = add("Mul", fmt.Sprintf("input%d", len(maskedInput)), []string{x, m})
			maskedInput[x] = node.Input[0]
		}
		nodes = append(nodes, node)
		masked++
	}
	graph.Node = nodes
	return masked, nil
}

func hasOutputPadding(node *onnx.NodeProto) bool {
	for _, a := range node.GetAttribute() {
		if a.GetName() == "output_padding" || a.GetName() == "output_shape" {
			for _, v := range a.GetInts() {
				if v != 0 {
					return true
				}
			}
		}
	}
	return false
}

// MaskWholeGraph returns a copy of a whole voice graph with padding masks (model is unchanged): the frame mask is
// worked out inside the graph from each item's frame count (the sum of its rounded durations, as a runner
// counts them) and the latent's length.
func MaskWholeGraph(model *onnx.ModelProto) (*onnx.ModelProto, int, error) {
	if err := maskable(model); err != nil {
		return nil, 0, err
	}
	model = proto.Clone(model).(*onnx.ModelProto) // edited before maskConvolutions can refuse it
	graph := model.GetGraph()
	latent, err := decoderLatent(graph)
	if err != nil {
		return nil, 0, err
	}
	ceil := DurationCeil(graph)
	if ceil == "" {
		return nil, 0, fmt.Errorf("no duration Ceil node")
	}
	p := maskPrefix + "/frames/"
	scalar := func(name string, v int64) *onnx.TensorProto { // rank 0, as Range wants
		return &onnx.TensorProto{Name: name, DataType: int32(onnx.TensorProto_INT64), Int64Data: []int64{v}}
	}
	graph.Initializer = append(graph.Initializer, onnxgraph.IntInit(p+"axes12", 1, 2), onnxgraph.IntInit(p+"axis0", 0),
		onnxgraph.IntInit(p+"axis1", 1), scalar(p+"index2", 2), scalar(p+"zero", 0), scalar(p+"one", 1))
	var added []*onnx.NodeProto
	node := func(op, name string, inputs []string, attrs ...*onnx.AttributeProto) string {
		out := p + name
		added = append(added, &onnx.NodeProto{Name: out, OpType: op, Input: inputs, Output: []string{out}, Attribute: attrs})
		return out
	}
	castTo := func(t onnx.TensorProto_DataType) *onnx.AttributeProto {
		return &onnx.AttributeProto{Name: "to", Type: onnx.AttributeProto_INT, I: int64(t)}
	}
	// lengths [B,1] = sum of the rounded durations over phonemes; frames [1,T] = 0..T-1; mask [B,1,T] = frames < lengths.
	lengths := node("ReduceSum", "lengths", []string{ceil, p + "axes12"}, &onnx.AttributeProto{Name: "keepdims", Type: onnx.AttributeProto_INT, I: 0})
	lengths = node("Unsqueeze", "lengths_column", []string{lengths, p + "axis1"})
	shape := node("Shape", "latent_shape", []string{latent})
	count := node("Gather", "latent_frames", []string{shape, p + "index2"}, &onnx.AttributeProto{Name: "axis", Type: onnx.AttributeProto_INT, I: 0})
	frames := node("Range", "frame_numbers", []string{p + "zero", count, p + "one"})
	frames = node("Cast", "frame_numbers_float", []string{frames}, castTo(onnx.TensorProto_FLOAT))
	frames = node("Unsqueeze", "frame_row", []string{frames, p + "axis0"})
	inside := node("Less", "inside", []string{frames, lengths})
	inside = node("Cast", "inside_float", []string{inside}, castTo(onnx.TensorProto_FLOAT))
	frameMask := node("Unsqueeze", "mask", []string{inside, p + "axis1"})
	// They read the durations and the latent, so they go right before the decoder's first layer, which comes after
	// both: the node list stays in topological order.
	var ordered []*onnx.NodeProto
	for _, n := range graph.GetNode() {
		if n.GetName() == DecoderEntry {
			ordered = append(ordered, added...)
		}
		ordered = append(ordered, n)
	}
	graph.Node = ordered
	masked, err := maskConvolutions(graph, latent, frameMask)
	if err != nil {
		return nil, 0, err
	}
	return model, masked, nil
}

// MaskDecoderGraph adds padding masks to a split voice's decoder graph, which gets a second input, "frame_mask"
// [B, 1, frames], that the caller fills for each window. A decoder it refuses is left as it was.
func MaskDecoderGraph(decoder *onnx.ModelProto) (int, error) {
	if err := maskable(decoder); err != nil {
		return 0, err
	}
	graph := decoder.GetGraph()
	masked, err := maskConvolutions(graph, OutputLatent, InputFrameMask)
	if err != nil {
		return 0, err
	}
	graph.Input = append(graph.Input, onnxgraph.WithRank(onnxgraph.FloatTensor(InputFrameMask), 3)) // [B, 1, frames], as the engine fills it; see WithRank
	return masked, nil
}

// maskable says why the mask edits cannot edit model, if they cannot: they need opset 13 or later (Unsqueeze with
// an axes input).
func maskable(model *onnx.ModelProto) error {
	if opset := onnxgraph.DefaultOpset(model); opset != 0 && opset < 13 { // none (0): left to ONNX Runtime to refuse
		return fmt.Errorf("opset %d is older than 13", opset)
	}
	return nil
}

// LatentChannels reads the decoder's input channel count from its first convolution's weight.
func LatentChannels(decoder *onnx.ModelProto) (int, error) {
	var weight string
	for _, node := range decoder.GetGraph().GetNode() {
		if node.GetName() == DecoderEntry && len(node.GetInput()) > 1 {
			weight = node.GetInput()[1]
		}
	}
	for _, init := range decoder.GetGraph().GetInitializer() {
		if init.GetName() == weight && len(init.GetDims()) == 3 {
			return int(init.GetDims()[1]), nil
		}
	}
	return 0, fmt.Errorf("%s's weight %q is not a constant of 3 dimensions", DecoderEntry, weight)
}
