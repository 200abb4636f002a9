package onnxgraph

import (
	"encoding/binary"
	"slices"

	"github.com/advancedclimatesystems/gonnx/onnx"
)

// Zero accumulators on a GPU. A VITS flow's WaveNet starts its skip sum from zeros (PyTorch's zeros_like, exported
// as ConstantOfShape(Shape(x)) added to the first layer's skip output). ONNX Runtime runs ConstantOfShape on the
// CPU, so each of a Piper voice's four WaveNets uploads a zero tensor of the whole batch ([B, 192, frames]) on every
// flow run, with the device held. Adding zeros changes nothing: the sum is
// the other operand, broadcast to the zeros' shape, which is what Expand gives, on the device, with no upload.

// DropZeroAdds replaces every Add of a ConstantOfShape of zeros and another tensor in model by an Expand of that
// tensor to the zeros' shape, drops the ConstantOfShape nodes nothing reads any more, and says how many it
// replaced.
func DropZeroAdds(model *onnx.ModelProto) int {
	g := model.GetGraph()
	zerosOfShape := map[string]string{} // a ConstantOfShape's output of zeros -> its shape input
	for _, n := range g.GetNode() {
		if n.GetOpType() == "ConstantOfShape" && len(n.GetInput()) == 1 && len(n.GetOutput()) == 1 && fillsZeros(n) {
			zerosOfShape[n.GetOutput()[0]] = n.GetInput()[0]
		}
	}
	replaced := 0
	for _, n := range g.GetNode() {
		if n.GetOpType() != "Add" || len(n.GetInput()) != 2 {
			continue
		}
		for i, in := range n.GetInput() {
			shape, ok := zerosOfShape[in]
			if !ok {
				continue
			}
			other := n.GetInput()[1-i]
			n.OpType, n.Input, n.Attribute = "Expand", []string{other, shape}, nil
			n.Name += "/zeros_dropped"
			replaced++
			break
		}
	}
	if replaced == 0 {
		return 0
	}
	// ONNX Runtime keeps a node nothing reads, and would still make the zeros on the CPU every run.
	read := map[string]bool{}
	for _, n := range g.GetNode() {
		for _, in := range n.GetInput() {
			read[in] = true
		}
	}
	for _, o := range g.GetOutput() {
		read[o.GetName()] = true
	}
	g.Node = slices.DeleteFunc(g.Node, func(n *onnx.NodeProto) bool {
		if n.GetOpType() != "ConstantOfShape" || len(n.GetOutput()) != 1 {
			return false
		}
		_, zeros := zerosOfShape[n.GetOutput()[0]]
		return zeros && !read[n.GetOutput()[0]]
	})
	return replaced
}

// fillsZeros says whether a ConstantOfShape node fills with a float or float16 zero (its default when it has no
// value); -0 counts, as x + -0 is x.
func fillsZeros(n *onnx.NodeProto) bool {
	for _, a := range n.GetAttribute() {
		if a.GetName() != "value" {
			continue
		}
		t := a.GetT()
		switch {
		case t == nil:
			return false
		case t.GetDataType() == int32(onnx.TensorProto_FLOAT):
			v, ok := FloatData(t)
			return ok && len(v) == 1 && v[0] == 0
		case t.GetDataType() == int32(onnx.TensorProto_FLOAT16):
			if raw := t.GetRawData(); len(raw) == 2 {
				return binary.LittleEndian.Uint16(raw)&0x7fff == 0
			}
			bits := t.GetInt32Data()
			return len(bits) == 1 && bits[0]&0x7fff == 0
		}
		return false
	}
	return true
}
