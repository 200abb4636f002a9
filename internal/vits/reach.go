package vits

import (
	"fmt"
	"math"

	"github.com/advancedclimatesystems/gonnx/onnx"
)

// DecoderReach works out from a voice graph how many latent frames on either side of a frame can change that
// frame's decoded samples: the margin a decoder window needs for its middle to equal the whole-sentence decoder's.
// It follows every tensor computed from the decoder's latent input, keeping two numbers per tensor: its rate
// (samples per latent frame) and its reach (in latent frames). A Conv adds its kernel's one-sided span at the
// tensor's rate; a ConvTranspose adds its own and multiplies the rate by its stride; any other operator takes the
// largest rate and reach of its inputs (elementwise arithmetic, activations, masks). The result is an upper
// bound: it assumes every tap matters. A graph with a strided Conv or a layer it cannot read is an error, and the
// caller keeps its default margin.
func DecoderReach(model *onnx.ModelProto) (int, error) {
	latent, err := decoderLatent(model.GetGraph())
	if err != nil {
		return 0, err
	}
	return reachFrom(model.GetGraph(), latent)
}

// walkDecoder calls visit, in graph order, for every node that reads a tensor computed from latent, with rate: the
// samples per latent frame of its data (the largest among its inputs; the latent's is 1). A ConvTranspose's output
// has its stride times the rate; every other node's keeps it. A convolution whose weights come from the latent, or
// whose geometry is not a 1-D layer's, is an error, as is any error visit returns.
func walkDecoder(graph *onnx.GraphProto, latent string, visit func(node *onnx.NodeProto, rate int) error) error {
	rates := map[string]int{latent: 1}
	for _, node := range graph.GetNode() {
		rate := 0
		for _, in := range node.GetInput() {
			rate = max(rate, rates[in])
		}
		if rate == 0 {
			continue
		}
		out := rate
		if op := node.GetOpType(); op == "Conv" || op == "ConvTranspose" {
			if rates[node.GetInput()[0]] != rate {
				return fmt.Errorf("%s %q: its weights depend on the latent", op, node.GetName())
			}
			_, stride, _, _, err := convGeometry(node)
			if err != nil {
				return err
			}
			if op == "ConvTranspose" {
				out = rate * stride
			}
		}
		if err := visit(node, rate); err != nil {
			return err
		}
		for _, name := range node.GetOutput() {
			rates[name] = out
		}
	}
	return nil
}

// convGeometry reads a 1-D Conv or ConvTranspose node's kernel size, stride, dilation and left padding.
func convGeometry(node *onnx.NodeProto) (k, stride, dilation, padLeft int, err error) {
	stride, dilation = 1, 1
	for _, a := range node.GetAttribute() {
		ints := a.GetInts()
		one := func() (int, bool) {
			if len(ints) != 1 {
				return 0, false
			}
			return int(ints[0]), true
		}
		ok := true
		switch a.GetName() {
		case "kernel_shape":
			k, ok = one()
		case "strides":
			stride, ok = one()
		case "dilations":
			dilation, ok = one()
		case "pads":
			ok = len(ints) == 2
			if ok {
				padLeft = int(ints[0])
			}
		case "auto_pad":
			ok = string(a.GetS()) == "" || string(a.GetS()) == "NOTSET"
		}
		if !ok {
			return 0, 0, 0, 0, fmt.Errorf("%s %q: attribute %s = %v is not a 1-D layer's", node.GetOpType(), node.GetName(), a.GetName(), ints)
		}
	}
	if k == 0 {
		return 0, 0, 0, 0, fmt.Errorf("%s %q has no kernel_shape", node.GetOpType(), node.GetName())
	}
	return k, stride, dilation, padLeft, nil
}

// reachFrom works out how many samples of start, on either side, can change an output sample of the graph: the
// margin a tile of start needs (DecoderReach's rule, from any tensor of the decoder).
func reachFrom(graph *onnx.GraphProto, start string) (int, error) {
	reach := map[string]float64{start: 0} // samples of start, one side
	err := walkDecoder(graph, start, func(node *onnx.NodeProto, rate int) error {
		var in float64
		for _, name := range node.GetInput() {
			in = max(in, reach[name])
		}
		switch node.GetOpType() {
		case "Conv":
			k, stride, dilation, padLeft, _ := convGeometry(node)
			if stride != 1 {
				return fmt.Errorf("Conv %q has stride %d", node.GetName(), stride)
			}
			// Output sample n reads inputs n - padLeft .. n - padLeft + (k-1)*dilation.
			in += float64(max(padLeft, (k-1)*dilation-padLeft)) / float64(rate)
		case "ConvTranspose":
			k, stride, dilation, padLeft, _ := convGeometry(node)
			if dilation != 1 {
				return fmt.Errorf("ConvTranspose %q has dilation %d", node.GetName(), dilation)
			}
			// Output sample n reads inputs t with t*stride + j - padLeft = n, j < k: t within
			// (k-1-padLeft)/stride below n/stride and padLeft/stride above, plus one for rounding.
			in += (float64(max(k-1-padLeft, padLeft))/float64(stride) + 1) / float64(rate)
		}
		for _, name := range node.GetOutput() {
			reach[name] = in
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	final, ok := reach[OutputAudio]
	if !ok {
		return 0, fmt.Errorf("the output %q does not depend on %q", OutputAudio, start)
	}
	return int(math.Ceil(final - 1e-9)), nil
}
