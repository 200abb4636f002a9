package gpu

import (
	"fmt"
	"math"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"google.golang.org/protobuf/proto"
)

// decoderReach works out from a voice graph how many latent frames on either side of a frame can change that
// frame's decoded samples: the margin a decoder window needs for its middle to equal the whole-sentence decoder's.
// It follows every tensor computed from the decoder's latent input, keeping two numbers per tensor: its rate
// (samples per latent frame) and its reach (in latent frames). A Conv adds its kernel's one-sided span at the
// tensor's rate; a ConvTranspose adds its own and multiplies the rate by its stride; any other operator takes the
// largest rate and reach of its inputs (elementwise arithmetic, activations, masks). The result is an upper
// bound: it assumes every tap matters. A graph with a strided Conv or a layer it cannot read is an error, and the
// caller keeps its default margin.
func decoderReach(onnxModel []byte) (int, error) {
	var model onnx.ModelProto
	if err := proto.Unmarshal(onnxModel, &model); err != nil {
		return 0, fmt.Errorf("not an ONNX model: %w", err)
	}
	type extent struct {
		rate  int     // samples per latent frame
		reach float64 // latent frames, one side
	}
	tracked := map[string]extent{}
	for _, node := range model.GetGraph().GetNode() {
		if node.GetName() == decoderEntry && len(node.GetInput()) > 0 {
			tracked[node.GetInput()[0]] = extent{rate: 1}
		}
	}
	if len(tracked) == 0 {
		return 0, fmt.Errorf("no decoder node %q", decoderEntry)
	}
	for _, node := range model.GetGraph().GetNode() {
		var in extent
		found := false
		for _, name := range node.GetInput() {
			if e, ok := tracked[name]; ok {
				in = extent{rate: max(in.rate, e.rate), reach: max(in.reach, e.reach)}
				found = true
			}
		}
		if !found {
			continue
		}
		out := in
		switch node.GetOpType() {
		case "Conv", "ConvTranspose":
			if x, ok := tracked[node.GetInput()[0]]; !ok || x.rate != in.rate {
				// The weights or bias come from the latent: not a decoder this reads.
				return 0, fmt.Errorf("%s %q: its weights depend on the latent", node.GetOpType(), node.GetName())
			}
			k, stride, dilation, padLeft, err := convGeometry(node)
			if err != nil {
				return 0, err
			}
			if node.GetOpType() == "Conv" {
				if stride != 1 {
					return 0, fmt.Errorf("Conv %q has stride %d", node.GetName(), stride)
				}
				// Output sample n reads inputs n - padLeft .. n - padLeft + (k-1)*dilation.
				span := max(padLeft, (k-1)*dilation-padLeft)
				out.reach += float64(span) / float64(in.rate)
			} else {
				if dilation != 1 {
					return 0, fmt.Errorf("ConvTranspose %q has dilation %d", node.GetName(), dilation)
				}
				// Output sample n reads inputs t with t*stride + j - padLeft = n, j < k: t within
				// (k-1-padLeft)/stride below n/stride and padLeft/stride above, plus one for rounding.
				span := float64(max(k-1-padLeft, padLeft))/float64(stride) + 1
				out.reach += span / float64(in.rate)
				out.rate = in.rate * stride
			}
		}
		for _, name := range node.GetOutput() {
			tracked[name] = out
		}
	}
	final, ok := tracked[outputAudio]
	if !ok {
		return 0, fmt.Errorf("the output %q does not depend on the decoder's latent", outputAudio)
	}
	return int(math.Ceil(final.reach - 1e-9)), nil
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
