// Package onnxgraph rewrites parsed ONNX models (gonnx's onnx.ModelProto, parsed once and encoded once for a
// session): generic passes that keep what a graph computes while changing how a provider runs it (float16
// arithmetic, fused LayerNorms, upsampling as Convs, no additions of zeros), and what those passes and their callers
// share: cutting a subgraph out, typed declarations, constant tensors.
package onnxgraph

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"google.golang.org/protobuf/proto"
)

// Parse decodes an ONNX model that has a graph.
func Parse(data []byte) (*onnx.ModelProto, error) {
	var model onnx.ModelProto
	if err := proto.Unmarshal(data, &model); err != nil {
		return nil, fmt.Errorf("not an ONNX model: %w", err)
	}
	if model.GetGraph() == nil {
		return nil, errors.New("not an ONNX model: no graph")
	}
	return &model, nil
}

// Encode encodes model for a session to read.
func Encode(model *onnx.ModelProto) ([]byte, error) {
	data, err := proto.Marshal(model)
	if err != nil {
		return nil, fmt.Errorf("encoding graph %q: %w", model.GetGraph().GetName(), err)
	}
	return data, nil
}

// DefaultOpset is the model's version of the default (ai.onnx) operator set.
func DefaultOpset(model *onnx.ModelProto) int64 {
	for _, o := range model.GetOpsetImport() {
		if o.GetDomain() == "" || o.GetDomain() == "ai.onnx" {
			return o.GetVersion()
		}
	}
	return 0
}

// FloatData reads a float tensor's values, stored either as float_data or as little-endian raw_data.
func FloatData(t *onnx.TensorProto) ([]float32, bool) {
	if len(t.GetFloatData()) > 0 {
		return t.GetFloatData(), true
	}
	raw := t.GetRawData()
	if len(raw)%4 != 0 || t.GetDataLocation() == onnx.TensorProto_EXTERNAL {
		return nil, false
	}
	v := make([]float32, len(raw)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return v, true
}

// FloatInit is a float32 initializer.
func FloatInit(name string, data []float32, dims ...int64) *onnx.TensorProto {
	return &onnx.TensorProto{Name: name, Dims: dims, DataType: int32(onnx.TensorProto_FLOAT), FloatData: data}
}

// IntInit is a rank-1 int64 initializer.
func IntInit(name string, data ...int64) *onnx.TensorProto {
	return &onnx.TensorProto{Name: name, Dims: []int64{int64(len(data))}, DataType: int32(onnx.TensorProto_INT64), Int64Data: data}
}

// IntsAttr is an attribute of integers.
func IntsAttr(name string, v ...int64) *onnx.AttributeProto {
	return &onnx.AttributeProto{Name: name, Type: onnx.AttributeProto_INTS, Ints: v}
}

// TypedTensor declares a tensor of the given element type (0: float).
func TypedTensor(name string, elemType int32) *onnx.ValueInfoProto {
	if elemType == 0 {
		elemType = int32(onnx.TensorProto_FLOAT)
	}
	return &onnx.ValueInfoProto{Name: name, Type: &onnx.TypeProto{Value: &onnx.TypeProto_TensorType{
		TensorType: &onnx.TypeProto_Tensor{ElemType: elemType}}}}
}

// FloatTensor declares a float tensor.
func FloatTensor(name string) *onnx.ValueInfoProto {
	return TypedTensor(name, int32(onnx.TensorProto_FLOAT))
}

// WithRank gives a tensor declaration rank dimensions of unknown size (rank 0: none, the rank unknown too).
//
// Why ranks: a GPU provider that runs Conv channels last (WebGPU) gets each Conv wrapped in Transposes, which ONNX
// Runtime's transpose optimizer then pushes through the ops between Convs until they cancel; through an
// elementwise op it goes only when it knows the rank of the op's other inputs, so a part whose inputs have no
// declared rank keeps Transposes around every Mul by a frame mask.
func WithRank(vi *onnx.ValueInfoProto, rank int) *onnx.ValueInfoProto {
	if rank > 0 {
		vi.GetType().GetTensorType().Shape = &onnx.TensorShapeProto{Dim: make([]*onnx.TensorShapeProto_Dimension, rank)}
		for i := range rank {
			vi.GetType().GetTensorType().Shape.Dim[i] = &onnx.TensorShapeProto_Dimension{}
		}
	}
	return vi
}

// DeclareInputRanks declares each of model's inputs named in ranks of that rank (see WithRank).
func DeclareInputRanks(model *onnx.ModelProto, ranks map[string]int) {
	for _, in := range model.GetGraph().GetInput() {
		if rank, ok := ranks[in.GetName()]; ok && in.GetType().GetTensorType() != nil {
			in.GetType().GetTensorType().Shape = nil
			WithRank(in, rank)
		}
	}
}

// ElemTypes works out the element type of every tensor of graph that the rules below know, from its inputs,
// initializers and nodes in order (ONNX keeps nodes topologically sorted): enough for the shape and arithmetic
// operators of a voice graph. Unknown tensors are absent (0).
func ElemTypes(graph *onnx.GraphProto) map[string]int32 {
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
