package onnxgraph

import (
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"github.com/ttsgen/ttsgen/internal/ort"
	"github.com/ttsgen/ttsgen/internal/ort/orttest"
	"github.com/x448/float16"
	"google.golang.org/protobuf/proto"
)

// What ONNX Runtime's CPU provider (1.30, x86) does with a float16 graph, found by running one op at a time:
//   - It runs in float16 only the ops that move data (Identity, Transpose, Reshape, Concat, Slice, Unsqueeze,
//     Squeeze, Flatten, Gather, Expand, Split, DepthToSpace) and Clip, besides Cast.
//   - Every other op of halfOps (Conv, ConvTranspose, Add, Mul, LeakyRelu, Tanh, MatMul, Pad, Tile, Where, ...) has
//     no float16 kernel there: ORT wraps it in casts to float32, and then drops a Cast float32->float16 that is
//     directly followed by its own Cast back, so such an op reads the unrounded float32 values (its result can be
//     bit-identical to the float32 graph's). Such graphs still check that the rewrite is valid ONNX that ORT accepts
//     (ORT type-checks every node) and means the same, but not float16 arithmetic.
//   - Range on float16 is refused at load ("Type 'tensor(float16)' ... of operator (Range) is invalid"): ONNX
//     defines no float16 Range, which is why halfPrecision keeps it in float32.

// halfTestValue declares a tensor of the given type and shape (no dims: unknown shape).
func halfTestValue(name string, elem onnx.TensorProto_DataType, dims ...int64) *onnx.ValueInfoProto {
	shape := &onnx.TensorShapeProto{}
	for _, d := range dims {
		shape.Dim = append(shape.Dim, &onnx.TensorShapeProto_Dimension{
			Value: &onnx.TensorShapeProto_Dimension_DimValue{DimValue: d}})
	}
	return &onnx.ValueInfoProto{Name: name, Type: &onnx.TypeProto{Value: &onnx.TypeProto_TensorType{
		TensorType: &onnx.TypeProto_Tensor{ElemType: int32(elem), Shape: shape}}}}
}

func halfTestNode(op string, in []string, out string, attrs ...*onnx.AttributeProto) *onnx.NodeProto {
	return &onnx.NodeProto{Name: op + "_" + out, OpType: op, Input: in, Output: []string{out}, Attribute: attrs}
}

func halfTestFloats(name string, data []float32, dims ...int64) *onnx.TensorProto {
	return &onnx.TensorProto{Name: name, Dims: dims, DataType: int32(onnx.TensorProto_FLOAT), FloatData: data}
}

// halfTestRaw stores data as little-endian raw_data, the other way float32 initializers come.
func halfTestRaw(name string, data []float32, dims ...int64) *onnx.TensorProto {
	raw := make([]byte, 4*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	return &onnx.TensorProto{Name: name, Dims: dims, DataType: int32(onnx.TensorProto_FLOAT), RawData: raw}
}

func halfTestInts(name string, data ...int64) *onnx.TensorProto {
	return &onnx.TensorProto{Name: name, Dims: []int64{int64(len(data))}, DataType: int32(onnx.TensorProto_INT64), Int64Data: data}
}

func halfTestAttr(name string, v any) *onnx.AttributeProto {
	switch v := v.(type) {
	case float32:
		return &onnx.AttributeProto{Name: name, Type: onnx.AttributeProto_FLOAT, F: v}
	case []float32:
		return &onnx.AttributeProto{Name: name, Type: onnx.AttributeProto_FLOATS, Floats: v}
	case int64:
		return &onnx.AttributeProto{Name: name, Type: onnx.AttributeProto_INT, I: v}
	case []int64:
		return &onnx.AttributeProto{Name: name, Type: onnx.AttributeProto_INTS, Ints: v}
	case *onnx.TensorProto:
		return &onnx.AttributeProto{Name: name, Type: onnx.AttributeProto_TENSOR, T: v}
	}
	panic("halfTestAttr: unsupported value")
}

func halfTestModel(opset int64, g *onnx.GraphProto) *onnx.ModelProto {
	if g.Name == "" {
		g.Name = "half_test"
	}
	return &onnx.ModelProto{IrVersion: 8, OpsetImport: []*onnx.OperatorSetIdProto{{Version: opset}}, Graph: g}
}

// halfTestInput is one float32 or int64 input of a test run.
type halfTestInput struct {
	name   string
	floats []float32
	ints   []int64
	shape  []int64
}

// runHalfTestGraph runs graph on ONNX Runtime's CPU provider and returns its float32 output named output.
func runHalfTestGraph(t *testing.T, graph *onnx.ModelProto, inputs []halfTestInput, output string) []float32 {
	t.Helper()
	names := make([]string, len(inputs))
	tensors := make([]ort.Tensor, len(inputs))
	for i, in := range inputs {
		names[i], tensors[i] = in.name, ort.Tensor{Shape: in.shape, F32: in.floats, I64: in.ints}
	}
	out := orttest.Run(t, graph, names, []string{output}, ort.DeviceCPU, tensors)
	if out[0].F32 == nil {
		t.Fatalf("output %q is not float32", output)
	}
	return out[0].F32
}

// halfRound is v rounded to float16 and back.
func halfRound(v float32) float32 { return float16.Frombits(halfBits(v)).Float32() }

func TestHalfBits(t *testing.T) {
	for _, c := range []struct {
		v    float32
		bits uint16
	}{
		{1, 0x3C00},
		{-2, 0xC000},
		{0.1, 0x2E66},
		{65504, 0x7BFF},
		{-65504, 0xFBFF},
		{6.103515625e-5, 0x0400},        // the smallest normal float16
		{6.1e-5, 0x03FF},                // just below it: the largest subnormal
		{5.960464477539063e-08, 0x0001}, // the smallest subnormal
		{1e-8, 0x0000},                  // below half the smallest subnormal: zero
		{-1e-8, 0x8000},                 // negative zero
		{1 + 1.0/2048, 0x3C00},          // a tie rounds to the even neighbour, down here
		{1 + 3.0/2048, 0x3C02},          // and up here
		{float32(math.Inf(1)), 0x7C00},  // infinities stay infinite
		{float32(math.Inf(-1)), 0xFC00}, //
		{0.333333333, 0x3555},           // rounds to nearest: 0x3555 = 0.33325, 0x3556 = 0.33350
		{float32(math.Copysign(0, -1)), 0x8000},
	} {
		if got := halfBits(c.v); got != c.bits {
			t.Errorf("halfBits(%g) = %#04x, want %#04x", c.v, got, c.bits)
		}
	}
	if nan := halfBits(float32(math.NaN())); nan&0x7C00 != 0x7C00 || nan&0x03FF == 0 {
		t.Errorf("halfBits(NaN) = %#04x, not a NaN", nan)
	}

	// Beyond 65504 halfPrecision refuses, even where rounding would give 65504 back (65519), and on either side.
	for _, v := range []float32{65519, 70000, -1e5, 3e38} {
		graph := halfTestModel(17, &onnx.GraphProto{
			Node:        []*onnx.NodeProto{halfTestNode("Mul", []string{"x", "big"}, "y")},
			Initializer: []*onnx.TensorProto{halfTestRaw("big", []float32{1, v}, 2)},
			Input:       []*onnx.ValueInfoProto{halfTestValue("x", onnx.TensorProto_FLOAT, 2)},
			Output:      []*onnx.ValueInfoProto{halfTestValue("y", onnx.TensorProto_FLOAT, 2)},
		})
		if _, err := HalfPrecision(graph); err == nil || !strings.Contains(err.Error(), `initializer "big"`) {
			t.Errorf("initializer holding %g: err = %v, want one naming the initializer", v, err)
		}
	}
}

// decoderLikeGraph is a small HiFi-GAN-shaped graph: Conv, LeakyRelu, Add of a Constant and of an int64 input cast
// to float, Conv, and a Shape/Reshape pair; latent [1, 4, 8] in, output of the same shape and its int64 shape out.
func decoderLikeGraph() (graph *onnx.ModelProto, w1, b1, w2 []float32) {
	w1 = make([]float32, 4*4*3)
	w2 = make([]float32, 4*4*3)
	for i := range w1 {
		w1[i] = float32(math.Sin(float64(i)*0.7)) * 0.3
		w2[i] = float32(math.Cos(float64(i)*1.3)) * 0.25
	}
	w1[5] = 1e-8    // underflows to zero
	w2[7] = 3e-6    // a subnormal
	w2[9] = -1000.5 // large, exact in float16
	b1 = []float32{0.1, -0.2, 0.3, 1.0 / 3}
	pads := halfTestAttr("pads", []int64{1, 1})
	graph = halfTestModel(17, &onnx.GraphProto{
		Node: []*onnx.NodeProto{
			halfTestNode("Shape", []string{"latent"}, "shape"),
			halfTestNode("Conv", []string{"latent", "w1", "b1"}, "h1", pads),
			halfTestNode("LeakyRelu", []string{"h1"}, "h2", halfTestAttr("alpha", float32(0.1))),
			halfTestNode("Constant", nil, "k", halfTestAttr("value", halfTestFloats("", []float32{0.5}, 1))),
			halfTestNode("Add", []string{"h2", "k"}, "h3"),
			halfTestNode("Cast", []string{"lengths"}, "lengths_f", halfTestAttr("to", int64(onnx.TensorProto_FLOAT))),
			halfTestNode("Add", []string{"h3", "lengths_f"}, "h4"),
			halfTestNode("Conv", []string{"h4", "w2"}, "h5", pads),
			halfTestNode("Reshape", []string{"h5", "shape"}, "output"),
		},
		Initializer: []*onnx.TensorProto{
			halfTestFloats("w1", w1, 4, 4, 3), halfTestRaw("b1", b1, 4), halfTestFloats("w2", w2, 4, 4, 3),
		},
		Input: []*onnx.ValueInfoProto{
			halfTestValue("latent", onnx.TensorProto_FLOAT, 1, 4, 8), halfTestValue("lengths", onnx.TensorProto_INT64, 1),
		},
		Output: []*onnx.ValueInfoProto{
			halfTestValue("output", onnx.TensorProto_FLOAT, 1, 4, 8), halfTestValue("shape", onnx.TensorProto_INT64, 3),
		},
		ValueInfo: []*onnx.ValueInfoProto{halfTestValue("h1", onnx.TensorProto_FLOAT, 1, 4, 8)},
	})
	return graph, w1, b1, w2
}

// wantHalfRaw is values as float16 raw_data, from halfBits value by value.
func wantHalfRaw(values []float32) []byte {
	raw := make([]byte, 0, 2*len(values))
	for _, v := range values {
		raw = binary.LittleEndian.AppendUint16(raw, halfBits(v))
	}
	return raw
}

// checkTopological fails unless every node input is a graph input, an initializer, or made by an earlier node, and
// every tensor is made once.
func checkTopological(t *testing.T, g *onnx.GraphProto) {
	t.Helper()
	known := map[string]bool{"": true}
	for _, in := range g.GetInput() {
		known[in.GetName()] = true
	}
	for _, init := range g.GetInitializer() {
		known[init.GetName()] = true
	}
	for i, node := range g.GetNode() {
		for _, in := range node.GetInput() {
			if !known[in] {
				t.Errorf("node %d %q (%s) reads %q before anything makes it", i, node.GetName(), node.GetOpType(), in)
			}
		}
		for _, out := range node.GetOutput() {
			if known[out] {
				t.Errorf("node %d %q (%s) makes %q, which already exists", i, node.GetName(), node.GetOpType(), out)
			}
			known[out] = true
		}
	}
	for _, out := range g.GetOutput() {
		if !known[out.GetName()] {
			t.Errorf("nothing makes the graph output %q", out.GetName())
		}
	}
}

func castTo(node *onnx.NodeProto) int64 {
	for _, a := range node.GetAttribute() {
		if a.GetName() == "to" {
			return a.GetI()
		}
	}
	return -1
}

func TestHalfPrecisionStructure(t *testing.T) {
	graph, w1, b1, w2 := decoderLikeGraph()
	float32Graph := proto.Clone(graph)
	half, err := HalfPrecision(graph)
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(graph, float32Graph) {
		t.Error("HalfPrecision changed the float32 graph it was given")
	}
	g := half.GetGraph()

	want := map[string][]float32{"w1": w1, "b1": b1, "w2": w2}
	if len(g.GetInitializer()) != len(want) {
		t.Errorf("%d initializers, want %d", len(g.GetInitializer()), len(want))
	}
	for _, init := range g.GetInitializer() {
		if init.GetDataType() != int32(onnx.TensorProto_FLOAT16) || len(init.GetFloatData()) > 0 {
			t.Errorf("initializer %q: type %d with %d float_data, want float16 raw_data", init.GetName(),
				init.GetDataType(), len(init.GetFloatData()))
		}
		if !slices.Equal(init.GetRawData(), wantHalfRaw(want[init.GetName()])) {
			t.Errorf("initializer %q: raw_data % x, want % x", init.GetName(), init.GetRawData(), wantHalfRaw(want[init.GetName()]))
		}
	}
	// Spot-check the bytes against hand-worked values, not only against halfBits.
	w1Raw, w2Raw := g.GetInitializer()[0].GetRawData(), g.GetInitializer()[2].GetRawData()
	if got := binary.LittleEndian.Uint16(w1Raw[10:]); got != 0 {
		t.Errorf("w1[5] = 1e-8 became %#04x, want 0", got)
	}
	if got := binary.LittleEndian.Uint16(w2Raw[14:]); got != 0x0032 { // 3e-6 / 2^-24 = 50.3
		t.Errorf("w2[7] = 3e-6 became %#04x, want the subnormal 0x0032", got)
	}
	if got := binary.LittleEndian.Uint16(w2Raw[18:]); got != 0xE3D1 { // -1000.5 = -(1 + 977/1024) x 2^9
		t.Errorf("w2[9] = -1000.5 became %#04x, want 0xe3d1", got)
	}

	for _, v := range g.GetInput() {
		wantType := map[string]int32{"latent": int32(onnx.TensorProto_FLOAT), "lengths": int32(onnx.TensorProto_INT64)}[v.GetName()]
		if got := v.GetType().GetTensorType().GetElemType(); got != wantType {
			t.Errorf("input %q has type %d, want %d", v.GetName(), got, wantType)
		}
	}
	for _, v := range g.GetOutput() {
		wantType := map[string]int32{"output": int32(onnx.TensorProto_FLOAT), "shape": int32(onnx.TensorProto_INT64)}[v.GetName()]
		if got := v.GetType().GetTensorType().GetElemType(); got != wantType {
			t.Errorf("output %q has type %d, want %d", v.GetName(), got, wantType)
		}
	}
	if len(g.GetValueInfo()) != 0 {
		t.Errorf("value_info kept: %v", g.GetValueInfo())
	}

	nodes := g.GetNode()
	var readsLatent, makesOutput, casts []*onnx.NodeProto
	for _, node := range nodes {
		if slices.Contains(node.GetInput(), "latent") {
			readsLatent = append(readsLatent, node)
		}
		if slices.Contains(node.GetOutput(), "output") {
			makesOutput = append(makesOutput, node)
		}
		if node.GetOpType() == "Cast" {
			casts = append(casts, node)
		}
		for _, in := range node.GetInput() {
			if in == "lengths" && node.GetOpType() == "Cast" && castTo(node) != int64(onnx.TensorProto_FLOAT16) {
				t.Errorf("the Cast of lengths casts to %d, want float16", castTo(node))
			}
		}
	}
	if len(readsLatent) != 1 || readsLatent[0] != nodes[0] || readsLatent[0].GetOpType() != "Cast" ||
		castTo(nodes[0]) != int64(onnx.TensorProto_FLOAT16) {
		t.Errorf("latent should be read only by a first node Cast(to=FLOAT16); read by %v", readsLatent)
	}
	if len(makesOutput) != 1 || makesOutput[0] != nodes[len(nodes)-1] || makesOutput[0].GetOpType() != "Cast" ||
		castTo(makesOutput[0]) != int64(onnx.TensorProto_FLOAT) {
		t.Errorf("output should be made by a last node Cast(to=FLOAT); made by %v", makesOutput)
	}
	if len(casts) != 3 { // latent's, output's, and the graph's own Cast of lengths: none for the int64 tensors
		t.Errorf("%d Cast nodes, want 3: %v", len(casts), casts)
	}
	for _, node := range nodes {
		if node.GetOpType() == "Constant" {
			k := node.GetAttribute()[0].GetT()
			if k.GetDataType() != int32(onnx.TensorProto_FLOAT16) || !slices.Equal(k.GetRawData(), []byte{0x00, 0x38}) {
				t.Errorf("Constant 0.5 became type %d raw % x, want float16 00 38", k.GetDataType(), k.GetRawData())
			}
		}
	}
	checkTopological(t, g)

	// ORT accepts it (it type-checks every node) and it computes the same, to float16's precision.
	orttest.Need(t)
	latent := make([]float32, 32)
	for i := range latent {
		latent[i] = float32(math.Sin(float64(i))) * 0.8
	}
	inputs := []halfTestInput{
		{name: "latent", floats: latent, shape: []int64{1, 4, 8}}, {name: "lengths", ints: []int64{3}, shape: []int64{1}},
	}
	want32 := runHalfTestGraph(t, graph, inputs, "output")
	got16 := runHalfTestGraph(t, half, inputs, "output")
	checkClose(t, got16, want32, 2e-3)
}

// checkClose fails unless got matches want to within rel, relative to the largest magnitude in want (float16
// rounds each value to 11 significant bits, 4.9e-4 relative; a few operations add a few such errors).
func checkClose(t *testing.T, got, want []float32, rel float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d values, want %d", len(got), len(want))
	}
	scale := 0.0
	for _, w := range want {
		scale = max(scale, math.Abs(float64(w)))
	}
	for i := range want {
		if d := math.Abs(float64(got[i]) - float64(want[i])); !(d <= rel*max(scale, 1e-3)) {
			t.Fatalf("value %d: %g, want %g (off by %g, tolerance %g)", i, got[i], want[i], d, rel*scale)
		}
	}
}

func TestHalfPrecisionNumerics(t *testing.T) {
	orttest.Need(t)
	x := make([]float32, 2*4*6)
	for i := range x {
		x[i] = float32(math.Sin(float64(i)*0.37))*1.7 + 0.01 // no value exactly a float16
	}
	rounded := make([]float32, len(x))
	for i, v := range x {
		rounded[i] = halfRound(v)
	}
	in := func(v []float32) []halfTestInput {
		return []halfTestInput{{name: "x", floats: v, shape: []int64{2, 4, 6}}}
	}

	// Ops the CPU provider runs in float16, moving data only: the float16 graph's output must be exactly the float32
	// graph's output for the input rounded to float16, and must differ from its output for the input itself (else
	// the values did not go through float16 at all).
	t.Run("data movement in float16", func(t *testing.T) {
		graph := halfTestModel(17, &onnx.GraphProto{
			Node: []*onnx.NodeProto{
				halfTestNode("Transpose", []string{"x"}, "t", halfTestAttr("perm", []int64{0, 2, 1})), // [2,6,4]
				halfTestNode("Slice", []string{"t", "s0", "s1", "s2"}, "s"),                           // [2,5,4]
				halfTestNode("Concat", []string{"s", "t"}, "c", halfTestAttr("axis", int64(1))),       // [2,11,4]
				halfTestNode("Reshape", []string{"c", "r"}, "r1"),                                     // [2,44]
				halfTestNode("Unsqueeze", []string{"r1", "ua"}, "u"),                                  // [2,1,44]
				halfTestNode("Gather", []string{"u", "gi"}, "g", halfTestAttr("axis", int64(2))),      // [2,1,5]
				halfTestNode("Expand", []string{"g", "es"}, "e"),                                      // [2,4,5]
				halfTestNode("Flatten", []string{"e"}, "f"),                                           // [2,20]
				halfTestNode("Clip", []string{"f", "", "hi"}, "cl"),
				halfTestNode("Identity", []string{"cl"}, "y"),
			},
			Initializer: []*onnx.TensorProto{
				halfTestInts("s0", 1), halfTestInts("s1", 6), halfTestInts("s2", 1), halfTestInts("r", 2, 44),
				halfTestInts("ua", 1), halfTestInts("gi", 0, 7, 13, 29, 43), halfTestInts("es", 2, 4, 5),
				halfTestFloats("hi", []float32{1.5}),
			},
			Input:  []*onnx.ValueInfoProto{halfTestValue("x", onnx.TensorProto_FLOAT, 2, 4, 6)},
			Output: []*onnx.ValueInfoProto{halfTestValue("y", onnx.TensorProto_FLOAT)},
		})
		half, err := HalfPrecision(graph)
		if err != nil {
			t.Fatal(err)
		}
		got := runHalfTestGraph(t, half, in(x), "y")
		want := runHalfTestGraph(t, graph, in(rounded), "y")
		if !slices.Equal(got, want) {
			t.Errorf("float16 graph gave %v\nwant the rounded input's %v", got, want)
		}
		if slices.Equal(got, runHalfTestGraph(t, graph, in(x), "y")) {
			t.Errorf("float16 graph gave exactly the float32 output: the values never went through float16")
		}
	})

	// Arithmetic (run by ORT through its own casts on the CPU, see the top of this file) and every node kind
	// halfPrecision edits: Constant value/value_float/value_floats, ConstantOfShape with and without a value, Cast to
	// float (of Size), Range on floats and CumSum before opset 14 (both kept in float32), Pow with an initializer exponent.
	t.Run("arithmetic", func(t *testing.T) {
		graph := halfTestModel(13, &onnx.GraphProto{
			Node: []*onnx.NodeProto{
				halfTestNode("Constant", nil, "two", halfTestAttr("value_float", float32(2))),
				halfTestNode("Constant", nil, "row", halfTestAttr("value_floats", []float32{0.1, 0.2, 0.3, 0.4, 0.5, 0.6})),
				halfTestNode("Constant", nil, "step", halfTestAttr("value", halfTestFloats("", []float32{0.1}))),
				halfTestNode("Mul", []string{"x", "two"}, "m"),
				halfTestNode("Add", []string{"m", "row"}, "a"),
				halfTestNode("LeakyRelu", []string{"a"}, "l", halfTestAttr("alpha", float32(0.2))),
				halfTestNode("Tanh", []string{"l"}, "th"),
				halfTestNode("Shape", []string{"x"}, "sh"),
				halfTestNode("ConstantOfShape", []string{"sh"}, "zeros"),
				halfTestNode("ConstantOfShape", []string{"sh"}, "quarters", halfTestAttr("value", halfTestFloats("", []float32{0.25}, 1))),
				halfTestNode("Add", []string{"th", "zeros"}, "tz"),
				halfTestNode("Add", []string{"tz", "quarters"}, "tq"),
				// Range(0, 0.5999, 0.1): 6 steps in float32; from float16's 0.600098 and 0.0999756 it would be 7.
				halfTestNode("Range", []string{"start", "limit", "step"}, "ramp"),
				halfTestNode("Add", []string{"tq", "ramp"}, "tr"),
				halfTestNode("CumSum", []string{"tr", "axis"}, "cs"),
				halfTestNode("Size", []string{"x"}, "size"),
				halfTestNode("Cast", []string{"size"}, "shf", halfTestAttr("to", int64(onnx.TensorProto_FLOAT))),
				halfTestNode("Div", []string{"cs", "shf"}, "d"),
				halfTestNode("Pow", []string{"d", "exponent"}, "p"),
				halfTestNode("Sigmoid", []string{"p"}, "sg"),
				halfTestNode("Transpose", []string{"sg"}, "y", halfTestAttr("perm", []int64{0, 2, 1})),
			},
			Initializer: []*onnx.TensorProto{
				halfTestFloats("start", []float32{0}), halfTestRaw("limit", []float32{0.5999}),
				halfTestInts("axis", 2), halfTestFloats("exponent", []float32{2}),
			},
			Input:  []*onnx.ValueInfoProto{halfTestValue("x", onnx.TensorProto_FLOAT, 2, 4, 6)},
			Output: []*onnx.ValueInfoProto{halfTestValue("y", onnx.TensorProto_FLOAT, 2, 6, 4)},
		})
		half, err := HalfPrecision(graph)
		if err != nil {
			t.Fatal(err)
		}
		checkTopological(t, half.GetGraph())
		checkClose(t, runHalfTestGraph(t, half, in(x), "y"), runHalfTestGraph(t, graph, in(x), "y"), 2e-3)
	})
}

func TestHalfPrecisionRefuses(t *testing.T) {
	graph := func(nodes []*onnx.NodeProto, inits ...*onnx.TensorProto) *onnx.ModelProto {
		return halfTestModel(17, &onnx.GraphProto{
			Node: nodes, Initializer: inits,
			Input:  []*onnx.ValueInfoProto{halfTestValue("x", onnx.TensorProto_FLOAT, 1, 4, 8)},
			Output: []*onnx.ValueInfoProto{halfTestValue("y", onnx.TensorProto_FLOAT)},
		})
	}
	relu := halfTestNode("Relu", []string{"x"}, "r")
	for _, c := range []struct {
		name  string
		graph *onnx.ModelProto
		want  []string
	}{
		{"an op outside the list", graph([]*onnx.NodeProto{relu,
			{Name: "/enc/lstm", OpType: "LSTM", Input: []string{"r", "w", "rw"}, Output: []string{"y"}}}),
			[]string{`"/enc/lstm"`, "LSTM"}},
		{"RandomNormalLike", graph([]*onnx.NodeProto{
			{Name: "/dp/noise", OpType: "RandomNormalLike", Input: []string{"x"}, Output: []string{"n"}},
			halfTestNode("Add", []string{"x", "n"}, "y")}),
			[]string{`"/dp/noise"`, "RandomNormalLike"}},
		{"RandomUniform with a float dtype", graph([]*onnx.NodeProto{
			{OpType: "RandomUniform", Output: []string{"n"}, Attribute: []*onnx.AttributeProto{
				halfTestAttr("dtype", int64(onnx.TensorProto_FLOAT)), halfTestAttr("shape", []int64{1, 4, 8})}},
			halfTestNode("Add", []string{"x", "n"}, "y")}),
			[]string{"node #0", "RandomUniform"}},
		{"a subgraph", graph([]*onnx.NodeProto{
			{Name: "branch", OpType: "Identity", Input: []string{"x"}, Output: []string{"y"}, Attribute: []*onnx.AttributeProto{
				{Name: "then_branch", Type: onnx.AttributeProto_GRAPH, G: &onnx.GraphProto{Name: "b"}}}}}),
			[]string{`"branch"`, "subgraph"}},
		{"a custom domain", graph([]*onnx.NodeProto{
			{Name: "fused", OpType: "Conv", Domain: "com.microsoft", Input: []string{"x"}, Output: []string{"y"}}}),
			[]string{`"fused"`, "com.microsoft"}},
		{"an initializer beyond float16", graph([]*onnx.NodeProto{halfTestNode("Mul", []string{"x", "/dec/gain"}, "y")},
			halfTestFloats("/dec/gain", []float32{1, 2, 1e6}, 3)),
			[]string{`initializer "/dec/gain"`, "1e+06", "index 2"}},
		{"a Constant beyond float16", graph([]*onnx.NodeProto{
			halfTestNode("Constant", nil, "mask_value", halfTestAttr("value_float", float32(-1e9))),
			halfTestNode("Add", []string{"x", "mask_value"}, "y")}),
			[]string{`"Constant_mask_value"`, "-1e+09"}},
	} {
		_, err := HalfPrecision(c.graph)
		if err == nil {
			t.Errorf("%s: converted, want an error", c.name)
			continue
		}
		for _, w := range append(c.want, "half precision") {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not mention %s", c.name, err, w)
			}
		}
	}
}
