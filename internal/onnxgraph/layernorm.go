package onnxgraph

import (
	"slices"

	"github.com/advancedclimatesystems/gonnx/onnx"
)

// LayerNorm fusion for GPU sessions. Piper's exporter writes each LayerNorm of a VITS text encoder and duration
// predictor (opset 15, before ONNX had LayerNormalization) as nine operators:
//
//	m = ReduceMean(x, axes=[-1]); d = x - m; v = ReduceMean(Pow(d, 2), axes=[-1])
//	y = d / Sqrt(v + eps) * gamma + beta
//
// ONNX Runtime fuses that pattern back into one LayerNormalization for its CPU and CUDA providers, not for WebGPU,
// where each operator is a dispatch of its own: a Piper voice's text part has ~34 LayerNorms, 300 of its ~660
// dispatches, and a short sentence's text part is a GPU run bound by its dispatch count (most of its first
// audio's wait). FuseLayerNorms does the fusion in the graph, as opset 17's LayerNormalization (the version
// the WebGPU provider implements); the arithmetic is LayerNormalization's definition, the same as the nine
// operators'.

// layerNormOpset is the first ONNX opset with LayerNormalization.
const layerNormOpset = 17

// FuseLayerNorms replaces every decomposed LayerNorm of model (above; over the last axis, with constant exponent
// 2, epsilon, and a rank-1 gamma and beta) by a LayerNormalization node, raising the model's opset to 17 if it is
// lower, and says how many it fused. A model it cannot raise (opset before 13, where Squeeze, Unsqueeze, Split and
// ReduceSum took attributes that later became inputs, or with an operator whose meaning changed up to 17:
// changesMeaningBy17) is left as it is, with 0.
func FuseLayerNorms(model *onnx.ModelProto) int {
	g := model.GetGraph()
	opset := DefaultOpset(model)
	if opset < 13 || slices.ContainsFunc(g.GetNode(), changesMeaningBy17) {
		return 0
	}
	consts := constantTensors(g)
	consumers := map[string][]*onnx.NodeProto{}
	for _, n := range g.GetNode() {
		for _, in := range n.GetInput() {
			consumers[in] = append(consumers[in], n)
		}
	}
	graphOutputs := map[string]bool{}
	for _, o := range g.GetOutput() {
		graphOutputs[o.GetName()] = true
	}
	// only returns the one node that reads name, of type op, when nothing else (a node or the graph's outputs) does.
	only := func(name, op string) *onnx.NodeProto {
		if c := consumers[name]; len(c) == 1 && c[0].GetOpType() == op && !graphOutputs[name] {
			return c[0]
		}
		return nil
	}
	removed := map[*onnx.NodeProto]bool{}
	fused := map[*onnx.NodeProto]*onnx.NodeProto{} // the pattern's last Add -> its LayerNormalization
	for _, mean := range g.GetNode() {
		if mean.GetOpType() != "ReduceMean" || removed[mean] || !lastAxisMean(mean) {
			continue
		}
		x := mean.GetInput()[0]
		sub := only(mean.GetOutput()[0], "Sub")
		if sub == nil || len(sub.GetInput()) != 2 || sub.GetInput()[0] != x {
			continue
		}
		d := sub.GetOutput()[0]
		var pow, div *onnx.NodeProto
		for _, c := range consumers[d] {
			switch c.GetOpType() {
			case "Pow":
				pow = c
			case "Div":
				div = c
			}
		}
		if len(consumers[d]) != 2 || graphOutputs[d] || pow == nil || div == nil || pow.GetInput()[0] != d ||
			div.GetInput()[0] != d || !isScalar(consts, pow.GetInput()[1], 2) {
			continue
		}
		variance := only(pow.GetOutput()[0], "ReduceMean")
		if variance == nil || !lastAxisMean(variance) {
			continue
		}
		addEps := only(variance.GetOutput()[0], "Add")
		if addEps == nil {
			continue
		}
		eps, ok := scalarOperand(consts, addEps, variance.GetOutput()[0])
		if !ok {
			continue
		}
		sqrt := only(addEps.GetOutput()[0], "Sqrt")
		if sqrt == nil || only(sqrt.GetOutput()[0], "Div") != div || div.GetInput()[1] != sqrt.GetOutput()[0] {
			continue
		}
		mul := only(div.GetOutput()[0], "Mul")
		if mul == nil {
			continue
		}
		gamma, ok := vectorOperand(consts, mul, div.GetOutput()[0])
		if !ok {
			continue
		}
		add := only(mul.GetOutput()[0], "Add")
		if add == nil {
			continue
		}
		beta, ok := vectorOperand(consts, add, mul.GetOutput()[0])
		// A one-value gamma would broadcast over the axis in the Mul; LayerNormalization wants one per channel.
		if !ok || consts[gamma].size() < 2 || consts[beta].size() != consts[gamma].size() {
			continue
		}
		for _, n := range []*onnx.NodeProto{mean, sub, pow, variance, addEps, sqrt, div, mul, add} {
			removed[n] = true
		}
		fused[add] = &onnx.NodeProto{Name: add.GetName() + "/LayerNormalization", OpType: "LayerNormalization",
			Input: []string{x, gamma, beta}, Output: []string{add.GetOutput()[0]},
			Attribute: []*onnx.AttributeProto{
				{Name: "axis", Type: onnx.AttributeProto_INT, I: -1},
				{Name: "epsilon", Type: onnx.AttributeProto_FLOAT, F: eps},
			}}
	}
	if len(fused) == 0 {
		return 0
	}
	var nodes []*onnx.NodeProto
	for _, n := range g.GetNode() {
		if ln, ok := fused[n]; ok {
			nodes = append(nodes, ln) // where the pattern's output was made: its readers come after
		} else if !removed[n] {
			nodes = append(nodes, n)
		}
	}
	g.Node = nodes
	if opset < layerNormOpset {
		for _, o := range model.GetOpsetImport() {
			if o.GetDomain() == "" || o.GetDomain() == "ai.onnx" {
				o.Version = layerNormOpset
			}
		}
	}
	return len(fused)
}

// changesMeaningBy17 says whether node means something else, or is invalid, once its model's opset is raised from
// 13-16 to 17: RoiAlign (its default coordinate mode changed at 16) and BatchNormalization with the training
// outputs that opset 14 removed.
func changesMeaningBy17(n *onnx.NodeProto) bool {
	return n.GetOpType() == "RoiAlign" || n.GetOpType() == "BatchNormalization" && len(n.GetOutput()) > 1
}

// lastAxisMean says whether node (a ReduceMean) averages over the last axis only, keeping it: axes [-1] as an
// attribute (before opset 18) and keepdims unset or 1.
func lastAxisMean(node *onnx.NodeProto) bool {
	if len(node.GetInput()) != 1 {
		return false // opset 18's axes input: not what Piper's exporter writes
	}
	axes := false
	for _, a := range node.GetAttribute() {
		switch a.GetName() {
		case "axes":
			axes = slices.Equal(a.GetInts(), []int64{-1})
		case "keepdims":
			if a.GetI() != 1 {
				return false
			}
		default:
			return false
		}
	}
	return axes
}

// constTensor is a float tensor known when the graph is loaded: an initializer or a Constant node's value.
type constTensor struct {
	dims   []int64
	values []float32
}

func (c constTensor) size() int { return len(c.values) }

// constantTensors returns the graph's float initializers, Constant nodes' float values and Identity nodes' copies
// of either (PyTorch's exporter shares equal weights that way), by name.
func constantTensors(g *onnx.GraphProto) map[string]constTensor {
	consts := map[string]constTensor{}
	add := func(name string, t *onnx.TensorProto) {
		if t.GetDataType() != int32(onnx.TensorProto_FLOAT) {
			return
		}
		if v, ok := FloatData(t); ok {
			consts[name] = constTensor{dims: t.GetDims(), values: v}
		}
	}
	for _, t := range g.GetInitializer() {
		add(t.GetName(), t)
	}
	for _, n := range g.GetNode() {
		if n.GetOpType() == "Identity" && len(n.GetInput()) == 1 && len(n.GetOutput()) == 1 {
			if c, ok := consts[n.GetInput()[0]]; ok {
				consts[n.GetOutput()[0]] = c
			}
		}
		if n.GetOpType() != "Constant" || len(n.GetOutput()) != 1 {
			continue
		}
		for _, a := range n.GetAttribute() {
			switch {
			case a.GetName() == "value" && a.GetT() != nil:
				add(n.GetOutput()[0], a.GetT())
			case a.GetName() == "value_float":
				consts[n.GetOutput()[0]] = constTensor{values: []float32{a.GetF()}}
			}
		}
	}
	return consts
}

// isScalar says whether name is a one-value constant equal to want.
func isScalar(consts map[string]constTensor, name string, want float32) bool {
	c, ok := consts[name]
	return ok && c.size() == 1 && len(c.dims) <= 1 && c.values[0] == want
}

// scalarOperand returns the value of node's other input than operand, when it is a one-value constant.
func scalarOperand(consts map[string]constTensor, node *onnx.NodeProto, operand string) (float32, bool) {
	other, ok := otherInput(node, operand)
	if !ok {
		return 0, false
	}
	c, ok := consts[other]
	if !ok || c.size() != 1 || len(c.dims) > 1 {
		return 0, false
	}
	return c.values[0], true
}

// vectorOperand returns the name of node's other input than operand, when it is a rank-1 constant (a LayerNorm's
// gamma or beta over the last axis).
func vectorOperand(consts map[string]constTensor, node *onnx.NodeProto, operand string) (string, bool) {
	other, ok := otherInput(node, operand)
	if !ok {
		return "", false
	}
	c, ok := consts[other]
	return other, ok && len(c.dims) == 1
}

// otherInput returns the input of a two-input node that is not operand.
func otherInput(node *onnx.NodeProto, operand string) (string, bool) {
	in := node.GetInput()
	switch {
	case len(in) != 2 || in[0] == in[1]:
		return "", false
	case in[0] == operand:
		return in[1], true
	case in[1] == operand:
		return in[0], true
	}
	return "", false
}
