package onnxgraph

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"github.com/x448/float16"
	"google.golang.org/protobuf/proto"
)

// maxHalf is the largest finite float16 value.
const maxHalf = 65504

// halfOps are the operators HalfPrecision lets through: each is type-generic over float16 in ONNX and may appear in
// a VITS decoder (HiFi-GAN) or flow. Range (never defined for float16) and CumSum (float16 only from opset 14) are
// listed too: when they compute on floats they keep running in float32 between casts (halfIslands).
var halfOps = map[string]bool{
	"Conv": true, "ConvTranspose": true, "Add": true, "Sub": true, "Mul": true, "Div": true, "LeakyRelu": true,
	"Relu": true, "Tanh": true, "Sigmoid": true, "Exp": true, "Neg": true, "Pow": true, "Sqrt": true,
	"Reshape": true, "Transpose": true, "Slice": true, "Pad": true, "Concat": true, "Unsqueeze": true,
	"Squeeze": true, "Gather": true, "Shape": true, "Size": true, "Cast": true, "Constant": true,
	"ConstantOfShape": true, "Split": true, "Identity": true, "Expand": true, "Where": true, "MatMul": true,
	"Gemm": true, "Clip": true, "ReduceSum": true, "ReduceMean": true, "Softplus": true, "Range": true,
	"Equal": true, "Less": true, "Greater": true, "Not": true, "And": true, "Or": true, "Floor": true, "Ceil": true,
	"Erf": true, "Softmax": true, "Flatten": true, "Tile": true, "CumSum": true, "DepthToSpace": true,
	"SpaceToDepth": true,
}

// randomOps draw or build values of their own float type (their dtype attribute): a decoder should have none.
var randomOps = map[string]bool{
	"RandomNormal": true, "RandomNormalLike": true, "RandomUniform": true, "RandomUniformLike": true, "EyeLike": true,
}

// HalfPrecision returns a copy of model rewritten to compute in float16 (model is unchanged): every float32
// initializer and Constant becomes float16, Casts to float32 cast to float16 instead, and ConstantOfShape fills with float16. On
// a GPU with float16 arithmetic (WebGPU's shader-f16) a VITS decoder or flow then moves half the bytes through
// memory, which is what its convolutions are bound by.
//
// The interface stays float32: each float32 graph input is cast to float16 by a node placed first, and each float32
// graph output is cast back by a node placed last, so callers feed and read the same tensors as before. Integer and
// bool tensors are untouched, and so are attributes (LeakyRelu's alpha, Clip's bounds before opset 11). Range, which
// ONNX does not define for float16, and CumSum before opset 14 keep computing in float32 between casts when their
// inputs are floats. A cast of integers to float now gives float16, exact only up to 2048. value_info is dropped
// (ONNX Runtime infers it again).
//
// It refuses, with an error naming the culprit, rather than risk a wrong graph: an operator outside a list of those
// known to be float16-generic (the caller then keeps the float32 graph), a node with a subgraph, random or EyeLike
// nodes, weights stored outside the model, and any finite weight or constant beyond float16's range (±65504), which
// would silently become infinite.
func HalfPrecision(model *onnx.ModelProto) (*onnx.ModelProto, error) {
	if len(model.GetGraph().GetNode()) == 0 {
		return nil, fmt.Errorf("half precision: graph %q has no nodes", model.GetGraph().GetName())
	}
	model = proto.Clone(model).(*onnx.ModelProto) // the rewrite can fail half way: the caller keeps the float32 graph
	g := model.GetGraph()
	opset := DefaultOpset(model)
	if err := checkHalfOps(g); err != nil {
		return nil, err
	}
	if len(g.GetSparseInitializer()) > 0 {
		return nil, fmt.Errorf("half precision: sparse initializer %q is not supported", g.GetSparseInitializer()[0].GetValues().GetName())
	}
	types := ElemTypes(g) // the float32 graph's element types, read before any edit
	names := newNameSet(g)

	// Islands first: the float32 constants they read are copied before the originals turn float16.
	nodes, kept, keptInits, err := halfIslands(g, types, opset, names)
	if err != nil {
		return nil, err
	}
	initializers := map[string]bool{}
	for _, t := range g.GetInitializer() {
		initializers[t.GetName()] = true
		if err := halfTensor(t); err != nil {
			return nil, fmt.Errorf("half precision: initializer %q: %w", t.GetName(), err)
		}
	}
	g.Initializer = append(g.Initializer, keptInits...)
	for i, node := range nodes {
		if kept[node] {
			continue
		}
		if err := halfNode(node); err != nil {
			return nil, fmt.Errorf("half precision: %s: %w", nodeLabel(i, node), err)
		}
	}

	// Float32 outputs: the tensor is renamed inside the graph and a final Cast gives back the float32 original.
	var tail []*onnx.NodeProto
	graphInputs := map[string]bool{}
	for _, in := range g.GetInput() {
		graphInputs[in.GetName()] = true
	}
	done := map[string]bool{}
	for _, out := range g.GetOutput() {
		name := out.GetName()
		if done[name] || graphInputs[name] || declaredType(out, types) != onnx.TensorProto_FLOAT {
			continue // an input passed straight through is still the caller's float32 tensor
		}
		done[name] = true
		inner := names.fresh(name + "_fp16")
		renameTensor(nodes, name, inner, true)
		for _, t := range g.GetInitializer() {
			if t.GetName() == name {
				t.Name = inner
			}
		}
		tail = append(tail, castNode(names.fresh("ttsgen_half_output_"+name), inner, name, onnx.TensorProto_FLOAT))
	}

	// Float32 inputs: a first Cast feeds the float16 copy to every node that read the input.
	var head []*onnx.NodeProto
	for _, in := range g.GetInput() {
		name := in.GetName()
		if declaredType(in, types) != onnx.TensorProto_FLOAT {
			continue
		}
		if initializers[name] {
			// An initializer listed as an input (IR < 4): a weight with a default, not part of the interface.
			in.GetType().GetTensorType().ElemType = int32(onnx.TensorProto_FLOAT16)
			continue
		}
		inner := names.fresh(name + "_fp16")
		renameTensor(nodes, name, inner, false)
		head = append(head, castNode(names.fresh("ttsgen_half_input_"+name), name, inner, onnx.TensorProto_FLOAT16))
	}

	g.Node = append(append(head, nodes...), tail...)
	g.ValueInfo = nil
	return model, nil
}

// checkHalfOps refuses a graph with a node HalfPrecision cannot convert.
func checkHalfOps(g *onnx.GraphProto) error {
	for i, node := range g.GetNode() {
		op := node.GetOpType()
		switch {
		case node.GetDomain() != "" && node.GetDomain() != "ai.onnx":
			return fmt.Errorf("half precision: %s: operator domain %q is not converted", nodeLabel(i, node), node.GetDomain())
		case randomOps[op]:
			return fmt.Errorf("half precision: %s: makes values of its own float type, which a decoder should not", nodeLabel(i, node))
		case !halfOps[op]:
			return fmt.Errorf("half precision: %s: operator %s is not known to run in float16", nodeLabel(i, node), op)
		}
		for _, a := range node.GetAttribute() {
			if a.GetType() == onnx.AttributeProto_GRAPH || a.GetType() == onnx.AttributeProto_GRAPHS ||
				a.GetG() != nil || len(a.GetGraphs()) > 0 {
				return fmt.Errorf("half precision: %s: subgraph attribute %q is not converted", nodeLabel(i, node), a.GetName())
			}
		}
	}
	return nil
}

func nodeLabel(i int, node *onnx.NodeProto) string {
	if node.GetName() != "" {
		return fmt.Sprintf("node %q (%s)", node.GetName(), node.GetOpType())
	}
	return fmt.Sprintf("node #%d (%s)", i, node.GetOpType())
}

// halfNode converts the float32 values and types a node makes itself: Constant's value, ConstantOfShape's fill
// value (float32 zero when absent) and Cast's target type.
func halfNode(node *onnx.NodeProto) error {
	switch node.GetOpType() {
	case "Cast":
		for _, a := range node.GetAttribute() {
			if a.GetName() == "to" && a.GetI() == int64(onnx.TensorProto_FLOAT) {
				a.I = int64(onnx.TensorProto_FLOAT16)
			}
		}
	case "Constant":
		for _, a := range node.GetAttribute() {
			var err error
			switch a.GetName() {
			case "value":
				err = halfTensor(a.GetT())
			case "value_float":
				err = halfAttr(a, []float32{a.GetF()}, nil)
			case "value_floats":
				err = halfAttr(a, a.GetFloats(), []int64{int64(len(a.GetFloats()))})
			case "sparse_value":
				if a.GetSparseTensor().GetValues().GetDataType() == int32(onnx.TensorProto_FLOAT) {
					err = fmt.Errorf("sparse float value is not converted")
				}
			}
			if err != nil {
				return fmt.Errorf("attribute %s: %w", a.GetName(), err)
			}
		}
	case "ConstantOfShape":
		for _, a := range node.GetAttribute() {
			if a.GetName() == "value" {
				if err := halfTensor(a.GetT()); err != nil {
					return fmt.Errorf("attribute value: %w", err)
				}
				return nil
			}
		}
		node.Attribute = append(node.Attribute, &onnx.AttributeProto{Name: "value", Type: onnx.AttributeProto_TENSOR,
			T: &onnx.TensorProto{Dims: []int64{1}, DataType: int32(onnx.TensorProto_FLOAT16), RawData: []byte{0, 0}}})
	}
	return nil
}

// halfAttr turns a Constant's value_float or value_floats attribute into an equivalent float16 value tensor.
func halfAttr(a *onnx.AttributeProto, values []float32, dims []int64) error {
	raw, err := halfBytes(values)
	if err != nil {
		return err
	}
	a.Name, a.Type, a.F, a.Floats = "value", onnx.AttributeProto_TENSOR, 0, nil
	a.T = &onnx.TensorProto{Dims: dims, DataType: int32(onnx.TensorProto_FLOAT16), RawData: raw}
	return nil
}

// halfTensor converts a float32 tensor in place to float16 stored as raw_data; other types are left alone.
func halfTensor(t *onnx.TensorProto) error {
	if t == nil || t.GetDataType() != int32(onnx.TensorProto_FLOAT) {
		return nil
	}
	if t.GetDataLocation() == onnx.TensorProto_EXTERNAL {
		return fmt.Errorf("stored in an external file, not converted")
	}
	values := t.GetFloatData()
	if len(values) == 0 {
		raw := t.GetRawData()
		if len(raw)%4 != 0 {
			return fmt.Errorf("raw_data of %d bytes is not float32", len(raw))
		}
		values = make([]float32, len(raw)/4)
		for i := range values {
			values[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	}
	raw, err := halfBytes(values)
	if err != nil {
		return err
	}
	t.DataType = int32(onnx.TensorProto_FLOAT16)
	t.FloatData = nil
	t.RawData = raw
	return nil
}

// halfBytes encodes values as little-endian float16, refusing a finite value beyond float16's range.
func halfBytes(values []float32) ([]byte, error) {
	raw := make([]byte, 2*len(values))
	for i, v := range values {
		if abs := math.Abs(float64(v)); abs > maxHalf && !math.IsInf(abs, 0) {
			return nil, fmt.Errorf("value %g at index %d is beyond float16's range (±%d)", v, i, maxHalf)
		}
		binary.LittleEndian.PutUint16(raw[2*i:], halfBits(v))
	}
	return raw, nil
}

// halfBits is v as IEEE binary16 bits, rounded to nearest even (github.com/x448/float16: subnormals, ±Inf and NaN
// follow IEEE 754; values past 65504 that round up become infinite, which halfBytes checks for first).
func halfBits(v float32) uint16 {
	return float16.Fromfloat32(v).Bits()
}

// halfIslands returns g's nodes with each Range on floats (ONNX defines Range for no float16) and, before opset 14,
// each CumSum on floats wrapped in casts, so that they keep computing in float32 inside the float16 graph. A float32
// initializer or Constant such a node reads is copied (kept: the copies, which must stay float32) rather than cast
// back from float16, so that a Range's step, say 0.1, keeps its value and the Range its length. kept also holds the
// added casts to float32, which the float16 rewrite must leave alone.
func halfIslands(g *onnx.GraphProto, types map[string]int32, opset int64, names nameSet) (
	nodes []*onnx.NodeProto, kept map[*onnx.NodeProto]bool, keptInits []*onnx.TensorProto, err error,
) {
	initializers := map[string]*onnx.TensorProto{}
	for _, t := range g.GetInitializer() {
		initializers[t.GetName()] = t
	}
	constants := map[string]*onnx.NodeProto{}
	for _, node := range g.GetNode() {
		if node.GetOpType() == "Constant" && len(node.GetOutput()) == 1 {
			constants[node.GetOutput()[0]] = node
		}
	}
	kept = map[*onnx.NodeProto]bool{}
	nodes = make([]*onnx.NodeProto, 0, len(g.GetNode()))
	for i, node := range g.GetNode() {
		island := false
		switch node.GetOpType() {
		case "Range":
			island = true
		case "CumSum":
			island = opset < 14
		}
		if island && len(node.GetInput()) > 0 {
			switch types[node.GetInput()[0]] {
			case int32(onnx.TensorProto_FLOAT):
			case 0:
				return nil, nil, nil, fmt.Errorf("half precision: %s: cannot tell the type of its input %q",
					nodeLabel(i, node), node.GetInput()[0])
			default:
				island = false
			}
		}
		if !island {
			nodes = append(nodes, node)
			continue
		}
		for j, in := range node.GetInput() {
			if in == "" || types[in] != int32(onnx.TensorProto_FLOAT) {
				continue
			}
			wide := names.fresh(in + "_fp32")
			switch {
			case initializers[in] != nil:
				t := proto.Clone(initializers[in]).(*onnx.TensorProto)
				t.Name = wide
				keptInits = append(keptInits, t)
			case constants[in] != nil:
				c := proto.Clone(constants[in]).(*onnx.NodeProto)
				c.Name, c.Output = names.fresh("ttsgen_half_keep_"+in), []string{wide}
				kept[c] = true
				nodes = append(nodes, c)
			default:
				widen := castNode(names.fresh("ttsgen_half_widen_"+in), in, wide, onnx.TensorProto_FLOAT)
				kept[widen] = true
				nodes = append(nodes, widen)
			}
			node.Input[j] = wide
		}
		nodes = append(nodes, node)
		for j, o := range node.GetOutput() {
			if o == "" {
				continue
			}
			wide := names.fresh(o + "_fp32")
			node.Output[j] = wide
			nodes = append(nodes, castNode(names.fresh("ttsgen_half_narrow_"+o), wide, o, onnx.TensorProto_FLOAT16))
		}
	}
	return nodes, kept, keptInits, nil
}

// declaredType is a graph input's or output's element type as declared, else as inferred.
func declaredType(v *onnx.ValueInfoProto, types map[string]int32) onnx.TensorProto_DataType {
	if t := v.GetType().GetTensorType().GetElemType(); t != 0 {
		return onnx.TensorProto_DataType(t)
	}
	if v.GetType().GetValue() != nil {
		return 0 // a sequence, map or optional: not a tensor
	}
	return onnx.TensorProto_DataType(types[v.GetName()])
}

// renameTensor renames tensor from to to in the nodes' inputs and, with producer, in the node outputs too.
func renameTensor(nodes []*onnx.NodeProto, from, to string, producer bool) {
	for _, node := range nodes {
		for i, in := range node.GetInput() {
			if in == from {
				node.Input[i] = to
			}
		}
		if producer {
			for i, o := range node.GetOutput() {
				if o == from {
					node.Output[i] = to
				}
			}
		}
	}
}

func castNode(name, from, to string, elemType onnx.TensorProto_DataType) *onnx.NodeProto {
	return &onnx.NodeProto{Name: name, OpType: "Cast", Input: []string{from}, Output: []string{to},
		Attribute: []*onnx.AttributeProto{{Name: "to", Type: onnx.AttributeProto_INT, I: int64(elemType)}}}
}

// nameSet holds the tensor and node names of a graph, so that added ones are unique.
type nameSet map[string]bool

func newNameSet(g *onnx.GraphProto) nameSet {
	names := nameSet{}
	for _, v := range g.GetInput() {
		names[v.GetName()] = true
	}
	for _, v := range g.GetOutput() {
		names[v.GetName()] = true
	}
	for _, v := range g.GetValueInfo() {
		names[v.GetName()] = true
	}
	for _, t := range g.GetInitializer() {
		names[t.GetName()] = true
	}
	for _, node := range g.GetNode() {
		names[node.GetName()] = true
		for _, n := range node.GetInput() {
			names[n] = true
		}
		for _, n := range node.GetOutput() {
			names[n] = true
		}
	}
	return names
}

// fresh returns base, or base with a number appended, whichever the graph does not use yet, and reserves it.
func (names nameSet) fresh(base string) string {
	name := base
	for i := 2; names[name]; i++ {
		name = fmt.Sprintf("%s_%d", base, i)
	}
	names[name] = true
	return name
}
